"""Stage 1: read Kafka spec files leniently, the way Kafka's own Jackson reader does.

Kafka's specs are JSON with comments, and a few files carry quirks that Jackson tolerates
(trailing tokens, string-typed ``tag``/``ignorable``, numeric or boolean defaults). This
module turns each file into plain JSON data in one normal form; ``schema`` checks it next.
It holds every file to the caps of ``limits`` on sizes, nesting and texts, before a hostile
one can cost a traceback or gigabytes.
"""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Sequence

from .errors import SpecError, each
from .limits import MAX_JSON_DEPTH, MAX_SPEC_BYTES, MAX_TEXT_CHARS

ARCHIVE_SUFFIXES = (".zip", ".jar")

# One alternation so that a comment marker inside a string literal is never seen as a
# comment: the regex engine consumes a whole string before it can look inside it.
_STRING_OR_COMMENT = re.compile(
    r"""
      "(?:[^"\\\n]|\\.)*"        # a string literal, escapes included
    | //[^\n]*                   # a line comment
    | /\*(?s:.*?)(?:\*/|\Z)      # a block comment (or an unterminated one)
    """,
    re.VERBOSE,
)
#: A string literal (skipped whole) or a bracket: what the nesting check looks at.
_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\\n]|\\.)*"|[\[\]{}]')
_JSON_WHITESPACE = " \t\n\r"
_NOT_NEWLINE = re.compile(r"[^\n]")
_DIGITS = re.compile(r"[0-9]+")
_BOOLEAN_WORDS = {"true": True, "false": False}


@dataclass(frozen=True)
class RawSpec:
    """One spec file as JSON data, before validation."""

    source: str  # display path, e.g. "message/FetchRequest.json" or "x.jar!/FetchRequest.json"
    data: dict[str, Any]
    warnings: tuple[str, ...]
    notes: str = ""
    """The spec's own comments before its first field (e.g. its version history), licence
    headers left out: they become part of the generated class's docstring."""


def parse_spec_text(text: str, source: str) -> RawSpec:
    """Parse the text of one spec file: strip comments, decode, normalise."""
    json_text = _blank_out_comments(text, source)
    _check_depth(json_text, source)
    # raw_decode reads only the first value (2.8.0's DescribeProducersRequest.json has
    # trailing tokens) but, unlike json.loads, does not skip leading whitespace.
    start = _skip_whitespace(json_text, 0)
    decoder = json.JSONDecoder(parse_constant=_reject_non_json_constant)
    try:
        data, end = decoder.raw_decode(json_text, start)
    except json.JSONDecodeError as error:
        raise SpecError(
            source,
            "json-syntax",
            f"line {error.lineno}, column {error.colno}: {error.msg}",
        ) from None
    except _NonJsonConstant as error:
        raise SpecError(source, "json-syntax", f"{error} is not valid JSON") from None
    if not isinstance(data, dict):
        raise SpecError(
            source,
            "root-not-object",
            f"the root must be a JSON object, not {_json_kind(data)}",
        )
    name = data.get("name")
    short = isinstance(name, str) and len(name) <= MAX_TEXT_CHARS
    _check_texts(data, source, struct=name if short else None)
    warnings = _trailing_tokens_warnings(json_text, end, source)
    notes = _leading_notes(text, json_text)
    if len(notes) > MAX_TEXT_CHARS:
        raise SpecError(
            source,
            "text-size",
            f"the comments before the first field are {len(notes)} characters, over the cap "
            f"of {MAX_TEXT_CHARS}",
        )
    return RawSpec(
        source=source,
        data=_normalise_message(data),
        warnings=warnings,
        notes=notes,
    )


def load_path(path: Path) -> list[RawSpec]:
    """Load one spec file, every ``*.json`` under a folder, or every ``*.json`` in a zip/jar."""
    if path.is_dir():
        specs = _load_folder(path)
    elif path.is_file() and path.suffix.lower() in ARCHIVE_SUFFIXES:
        specs = _load_archive(path)
    elif path.is_file():
        specs = [_parse_bytes(_read_file(path, path.name), path.name)]
    else:
        raise SpecError(str(path), "no-specs", "no such file or folder")
    if not specs:
        raise SpecError(str(path), "no-specs", "no *.json spec files found")
    return specs


def load_paths(paths: Sequence[Path]) -> list[RawSpec]:
    """Load several inputs, in the order given."""
    return [spec for specs in each(paths, load_path) for spec in specs]


# --- reading files ---------------------------------------------------------------------


def _load_folder(folder: Path) -> list[RawSpec]:
    # Sort by the displayed relative path so the order is the same on every machine.
    files = {
        file.relative_to(folder).as_posix(): file
        for file in folder.rglob("*.json")
        if file.is_file()
    }
    return each(
        sorted(files), lambda source: _parse_bytes(_read_file(files[source], source), source)
    )


def _load_archive(archive: Path) -> list[RawSpec]:
    try:
        with zipfile.ZipFile(archive) as zipped:
            members = sorted(
                (info for info in zipped.infolist() if info.filename.endswith(".json")),
                key=lambda info: info.filename,
            )

            def parse(info: zipfile.ZipInfo) -> RawSpec:
                source = f"{archive.name}!/{info.filename}"
                if info.file_size > MAX_SPEC_BYTES:
                    raise _too_big(source, f"zip entry of {info.file_size} bytes")
                with zipped.open(info) as stream:
                    return _parse_bytes(_read_capped(stream, source, "zip entry"), source)

            return each(members, parse)
    except zipfile.BadZipFile as error:
        raise SpecError(
            archive.name, "bad-archive", f"not a readable zip/jar archive: {error}"
        ) from None


def _read_file(path: Path, source: str) -> bytes:
    size = path.stat().st_size
    if size > MAX_SPEC_BYTES:
        raise _too_big(source, f"file of {size} bytes")
    with path.open("rb") as stream:
        return _read_capped(stream, source, "file")


def _read_capped(stream: IO[bytes], source: str, what: str) -> bytes:
    """At most the cap, and one byte more to tell that there is more (a file that grew, a
    zip entry whose header understates it)."""
    content = stream.read(MAX_SPEC_BYTES + 1)
    if len(content) > MAX_SPEC_BYTES:
        raise _too_big(source, f"{what} of more than {MAX_SPEC_BYTES} bytes")
    return content


def _too_big(source: str, what: str) -> SpecError:
    return SpecError(
        source, "spec-size", f"{what}, over the cap of {MAX_SPEC_BYTES} bytes per spec file"
    )


def _parse_bytes(content: bytes, source: str) -> RawSpec:
    try:
        # Jackson skips a UTF-8 byte-order mark; so do we.
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = content.count(b"\n", 0, error.start) + 1
        raise SpecError(
            source,
            "encoding",
            f"line {line}: not valid UTF-8 (byte offset {error.start})",
        ) from None
    return parse_spec_text(text, source)


# --- text level --------------------------------------------------------------------------


def _blank_out_comments(text: str, source: str) -> str:
    """Replace comments by spaces (newlines kept) so JSON error positions stay right."""

    def blank(match: re.Match[str]) -> str:
        found = match.group()
        if found.startswith('"'):
            return found
        if found.startswith("/*") and (len(found) < 4 or not found.endswith("*/")):
            line, column = _line_and_column(text, match.start())
            raise SpecError(
                source,
                "json-syntax",
                f"line {line}, column {column}: unterminated /* comment",
            )
        return _NOT_NEWLINE.sub(" ", found)

    return _STRING_OR_COMMENT.sub(blank, text)


def _check_depth(json_text: str, source: str) -> None:
    """Refuse nesting past the cap before the JSON decoder (which recurses) sees it."""
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(json_text):
        token = match.group()
        if token == "[" or token == "{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                line, column = _line_and_column(json_text, match.start())
                raise SpecError(
                    source,
                    "json-depth",
                    f"line {line}, column {column}: arrays and objects nested deeper than "
                    f"the cap of {MAX_JSON_DEPTH} levels",
                )
        elif token == "]" or token == "}":
            depth -= 1


def _check_texts(
    value: Any, source: str, key: str = "", struct: str | None = None, field: str | None = None
) -> None:
    """Refuse any string or key past the cap, naming the field or common struct it is in
    and the key it is under. The nesting is capped already, so this recursion is too."""
    what = None
    if isinstance(value, str) and len(value) > MAX_TEXT_CHARS:
        what = f"{key or 'a string'} is {len(value)} characters"
    elif isinstance(value, dict):
        what = next(
            (f"a key of {len(k)} characters" for k in value if len(k) > MAX_TEXT_CHARS), None
        )
    if what is not None:
        message = f"{what}, over the cap of {MAX_TEXT_CHARS}"
        raise SpecError(source, "text-size", message, struct=struct, field=field)
    if isinstance(value, list):
        for item in value:
            name = item.get("name") if isinstance(item, dict) else None
            if not isinstance(name, str) or len(name) > MAX_TEXT_CHARS:
                name = None  # a name past the cap is reported by the walk into the item
            if key == "fields":
                _check_texts(item, source, key, struct, name or field)
            elif key == "commonStructs":
                _check_texts(item, source, key, name or struct, None)
            else:
                _check_texts(item, source, key, struct, field)
    elif isinstance(value, dict):
        for child_key, item in value.items():
            _check_texts(item, source, child_key, struct, field)


def _leading_notes(text: str, json_text: str) -> str:
    """The ``//`` comments before the first field: one paragraph per group of lines
    (an empty ``//`` line separates groups); a run of comments holding a licence is left out."""
    fields = re.search(r'"fields"\s*:\s*\[\s*\{', json_text)
    cut = fields.end() if fields else len(text)
    runs: list[list[str]] = []  # runs of comment lines with nothing but whitespace between
    last_end = -1
    for match in _STRING_OR_COMMENT.finditer(text, 0, cut):
        comment = match.group()
        if not comment.startswith("//"):
            continue
        if (
            last_end < 0
            or text[last_end : match.start()].strip()
            or text[last_end : match.start()].count("\n") > 1
        ):
            runs.append([])
        runs[-1].append(comment[2:].strip())
        last_end = match.end()
    paragraphs: list[str] = []
    for run in runs:
        if any(_LICENCE in line for line in run):
            continue
        # An empty comment line ends a paragraph, and so does the start of a version note.
        text_of_run = " ".join(
            "\n" if not line else f"\n{line}" if _VERSION_NOTE.match(line) else line for line in run
        )
        paragraphs += [p for p in text_of_run.split("\n") if p.strip()]
    return "\n\n".join(" ".join(p.split()) for p in paragraphs)


_LICENCE = "Licensed to the Apache Software Foundation"
_VERSION_NOTE = re.compile(r"(Versions? \d|Starting (in|with) [Vv]ersion)")


class _NonJsonConstant(ValueError):
    """NaN or Infinity: Python's json accepts them, JSON (and Kafka's reader) does not."""


def _reject_non_json_constant(name: str) -> Any:
    raise _NonJsonConstant(name)  # the json module gives no position for these


def _trailing_tokens_warnings(text: str, end: int, source: str) -> tuple[str, ...]:
    leftover = text[end:].strip(_JSON_WHITESPACE)
    if not leftover:
        return ()
    line, column = _line_and_column(text, _skip_whitespace(text, end))
    shown = leftover if len(leftover) <= 40 else leftover[:37] + "..."
    return (
        f"{source}: line {line}, column {column}: ignored trailing tokens after the root "
        f"object: {shown!r} [rule: trailing-tokens]",
    )


def _skip_whitespace(text: str, offset: int) -> int:
    while offset < len(text) and text[offset] in _JSON_WHITESPACE:
        offset += 1
    return offset


def _line_and_column(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def _json_kind(value: object) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    return "a boolean" if isinstance(value, bool) else "a number"


# --- normalisation (what Kafka's own JSON reader accepts) ---------------------------------
# Each function builds new containers, so the caller's data is never changed.


def _normalise_message(message: dict[str, Any]) -> dict[str, Any]:
    result = dict(message)
    _coerce_boolean_word(result, "latestVersionUnstable")
    if "fields" in result:
        result["fields"] = _normalise_fields(result["fields"])
    if isinstance(result.get("commonStructs"), list):
        result["commonStructs"] = [
            _normalise_struct(struct) if isinstance(struct, dict) else struct
            for struct in result["commonStructs"]
        ]
    return result


def _normalise_struct(struct: dict[str, Any]) -> dict[str, Any]:
    result = dict(struct)
    if "fields" in result:
        result["fields"] = _normalise_fields(result["fields"])
    return result


def _normalise_fields(fields: Any) -> Any:
    # Anything that is not a list of objects is left for the schema to reject.
    if not isinstance(fields, list):
        return fields
    return [_normalise_field(field) if isinstance(field, dict) else field for field in fields]


def _normalise_field(field: dict[str, Any]) -> dict[str, Any]:
    result = _normalise_struct(field)
    tag = result.get("tag")
    if isinstance(tag, str) and _DIGITS.fullmatch(tag):
        result["tag"] = int(tag)
    _coerce_boolean_word(result, "ignorable")
    _normalise_default(result)
    return result


def _coerce_boolean_word(obj: dict[str, Any], key: str) -> None:
    value = obj.get(key)
    if isinstance(value, str) and value.lower() in _BOOLEAN_WORDS:
        obj[key] = _BOOLEAN_WORDS[value.lower()]


def _normalise_default(field: dict[str, Any]) -> None:
    if "default" not in field:
        return
    default = field["default"]
    if default is None:
        del field["default"]  # JSON null means "no default", unlike the string "null"
    elif isinstance(default, bool):
        field["default"] = "true" if default else "false"
    elif isinstance(default, (int, float)):
        field["default"] = str(default)
