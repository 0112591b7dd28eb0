"""Stage 1: read Kafka spec files leniently, the way Kafka's own Jackson reader does.

Kafka's specs are JSON with comments, and a few files carry quirks that Jackson tolerates
(trailing tokens, string-typed ``tag``/``ignorable``, numeric or boolean defaults). This
module turns each file into plain JSON data in one normal form; ``schema`` checks it next.
"""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from .errors import SpecError, each

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
    warnings = _trailing_tokens_warnings(json_text, end, source)
    return RawSpec(
        source=source,
        data=_normalise_message(data),
        warnings=warnings,
        notes=_leading_notes(text, json_text),
    )


def load_path(path: Path) -> list[RawSpec]:
    """Load one spec file, every ``*.json`` under a folder, or every ``*.json`` in a zip/jar."""
    if path.is_dir():
        specs = _load_folder(path)
    elif path.is_file() and path.suffix.lower() in ARCHIVE_SUFFIXES:
        specs = _load_archive(path)
    elif path.is_file():
        specs = [_parse_bytes(path.read_bytes(), path.name)]
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
    return each(sorted(files), lambda source: _parse_bytes(files[source].read_bytes(), source))


def _load_archive(archive: Path) -> list[RawSpec]:
    try:
        with zipfile.ZipFile(archive) as zipped:
            members = sorted(
                name
                for name in zipped.namelist()
                if name.endswith(".json") and not name.endswith("/")
            )
            return each(
                members,
                lambda member: _parse_bytes(zipped.read(member), f"{archive.name}!/{member}"),
            )
    except zipfile.BadZipFile as error:
        raise SpecError(
            archive.name, "bad-archive", f"not a readable zip/jar archive: {error}"
        ) from None


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
