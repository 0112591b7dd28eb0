"""Regular expressions of consumer groups' ``SubscribedTopicRegex`` (KIP-848), in the syntax
Kafka reads them with (RE2/J), matched in time linear in the topic name.

Kafka compiles the regex with Google's RE2/J, which has no backtracking: a hostile pattern
cannot stall the coordinator. Python's ``re`` backtracks (``(a|a)*b`` takes exponential
time), so this module parses the pattern itself and runs it as a Thompson NFA (a Pike VM).

Supported (RE2's syntax, the part a topic name can use): literals and ``.``; classes
``[a-z]``, ``[^...]``, ``[[:alpha:]]`` (POSIX names), ``\\d \\w \\s`` and their negations;
groups ``(...)``, ``(?:...)``, ``(?P<name>...)``, ``(?<name>...)``; alternation; ``* + ?
{n} {n,} {n,m}`` (at most 1000) and their lazy forms; flags ``(?i)``, ``(?s)``, ``(?m)``,
``(?U)`` and ``(?i:...)``; anchors ``^ $ \\A \\z \\b \\B``; escapes ``\\Q...\\E``, ``\\xHH``,
``\\x{H...}``, ``\\t \\n \\r \\f \\v \\a`` and escaped punctuation. As in RE2, backreferences,
lookaround, atomic groups and possessive quantifiers are errors. Unicode classes (``\\pL``,
``\\p{Greek}``) are errors here, though RE2 has them. The whole name must match (Java's
``Matcher.matches``, which Kafka uses).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: RE2's limit on a counted repetition
MAX_REPEAT = 1000
#: the most instructions one pattern may compile to (bounds matching time and memory)
MAX_PROGRAM = 20_000
MAX_PATTERN = 10_000

_POSIX = {
    "alnum": [("0", "9"), ("A", "Z"), ("a", "z")],
    "alpha": [("A", "Z"), ("a", "z")],
    "ascii": [("\x00", "\x7f")],
    "blank": [("\t", "\t"), (" ", " ")],
    "cntrl": [("\x00", "\x1f"), ("\x7f", "\x7f")],
    "digit": [("0", "9")],
    "graph": [("!", "~")],
    "lower": [("a", "z")],
    "print": [(" ", "~")],
    "punct": [("!", "/"), (":", "@"), ("[", "`"), ("{", "~")],
    "space": [("\t", "\r"), (" ", " ")],
    "upper": [("A", "Z")],
    "word": [("0", "9"), ("A", "Z"), ("a", "z"), ("_", "_")],
    "xdigit": [("0", "9"), ("A", "F"), ("a", "f")],
}
_PERL = {"d": _POSIX["digit"], "w": _POSIX["word"], "s": [("\t", "\n"), ("\f", "\r"), (" ", " ")]}
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}


class RegexError(ValueError):
    """A pattern RE2/J would not compile (or this module does not support)."""


@dataclass(frozen=True)
class _Class:
    ranges: tuple[tuple[int, int], ...]
    negated: bool
    fold: bool

    def test(self, ch: str) -> bool:
        found = self._has(ord(ch))
        if not found and self.fold and ch.lower() != ch.upper():
            found = self._has(ord(ch.lower())) or self._has(ord(ch.upper()))
        return found != self.negated

    def _has(self, code: int) -> bool:
        return any(low <= code <= high for low, high in self.ranges)


# AST: ("class", _Class) | ("any", dotall) | ("assert", kind) | ("cat", [..]) | ("alt", [..])
#      | ("rep", node, min, max or -1)
Node = tuple[Any, ...]


class _Parser:
    def __init__(self, pattern: str) -> None:
        self.p, self.i = pattern, 0
        self.flags = {"i": False, "s": False}

    def fail(self, why: str) -> RegexError:
        return RegexError(f"{why} at position {self.i} of {self.p!r}")

    def peek(self, n: int = 0) -> str:
        return self.p[self.i + n] if self.i + n < len(self.p) else ""

    def parse(self) -> Node:
        node = self.alternation()
        if self.i < len(self.p):
            raise self.fail("unmatched ')'")
        return node

    def alternation(self) -> Node:
        branches = [self.concat()]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.concat())
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def concat(self) -> Node:
        items: list[Node] = []
        while self.i < len(self.p) and self.peek() not in "|)":
            atom = self.atom()
            if atom is not None:
                items.append(self.repeat(atom))
        return ("cat", items)

    def repeat(self, atom: Node) -> Node:
        while True:
            ch = self.peek()
            if ch in ("*", "+", "?"):
                self.i += 1
                low, high = {"*": (0, -1), "+": (1, -1), "?": (0, 1)}[ch]
            elif ch == "{" and self._counted():
                low, high = self._count()
            else:
                return atom
            if atom[0] == "rep":
                raise self.fail("bad repetition operator")
            if self.peek() == "?":
                self.i += 1  # lazy: the same strings match
            elif self.peek() == "+":
                raise self.fail("possessive quantifiers are not supported (RE2)")
            atom = ("rep", atom, low, high)

    def _counted(self) -> bool:
        j = self.i + 1
        while j < len(self.p) and (self.p[j].isdigit() or self.p[j] == ","):
            j += 1
        body = self.p[self.i + 1 : j]
        return j < len(self.p) and self.p[j] == "}" and bool(body) and body[0].isdigit()

    def _count(self) -> tuple[int, int]:
        end = self.p.index("}", self.i)
        body = self.p[self.i + 1 : end]
        self.i = end + 1
        low_text, comma, high_text = body.partition(",")
        try:
            low = int(low_text)
            high = int(high_text) if high_text else (-1 if comma else low)
        except ValueError:
            raise self.fail("bad repetition count") from None
        if low > MAX_REPEAT or high > MAX_REPEAT or (high != -1 and high < low):
            raise self.fail(f"bad repetition count {{{body}}} (at most {MAX_REPEAT})")
        return low, high

    def atom(self) -> Node | None:
        ch = self.peek()
        self.i += 1
        if ch == "(":
            return self.group()
        if ch == "[":
            return ("class", self.bracket())
        if ch == ".":
            return ("any", self.flags["s"])
        if ch == "^":
            return ("assert", "begin")
        if ch == "$":
            return ("assert", "end")
        if ch == "\\":
            return self.escape()
        if ch in "*+?":
            raise self.fail("missing argument to repetition operator")
        return self.literal(ch)

    def literal(self, ch: str) -> Node:
        return ("class", _Class(((ord(ch), ord(ch)),), False, self.flags["i"]))

    def group(self) -> Node | None:
        saved = dict(self.flags)
        if self.peek() == "?":
            self.i += 1
            if self.p.startswith("P<", self.i) or (
                self.peek() == "<" and self.peek(1) not in ("=", "!")
            ):
                self.i = self.p.index(">", self.i) + 1 if ">" in self.p[self.i :] else len(self.p)
            elif self.peek() in ("=", "!", "<", ">", "(") or self.p.startswith("P=", self.i):
                raise self.fail("lookaround, atomic and conditional groups are not supported (RE2)")
            else:
                scoped = self._flags()
                if not scoped:  # (?i): for the rest of the enclosing group
                    return None
        node = self.alternation()
        if self.peek() != ")":
            raise self.fail("missing ')'")
        self.i += 1
        self.flags = saved
        return node

    def _flags(self) -> bool:
        """Read ``flags)`` or ``flags:``; True for a group that follows (``(?i:...)``)."""
        on = True
        while self.i < len(self.p):
            ch = self.peek()
            self.i += 1
            if ch == "-":
                on = False
            elif ch in "ims":
                if ch != "m":
                    self.flags[ch] = on
            elif ch == "U":
                pass  # ungreedy: the same strings match
            elif ch == ":":
                return True
            elif ch == ")":
                return False
            else:
                break
        raise self.fail("bad flags")

    def escape(self) -> Node:
        ch = self.peek()
        self.i += 1
        if not ch:
            raise self.fail("trailing backslash")
        if ch in _PERL or ch.lower() in _PERL:
            return ("class", self._perl(ch))
        if ch in ("A", "z"):
            return ("assert", "begin" if ch == "A" else "end")
        if ch in ("b", "B"):
            return ("assert", "word" if ch == "b" else "not-word")
        if ch == "Q":
            end = self.p.find("\\E", self.i)
            text = self.p[self.i : end if end >= 0 else len(self.p)]
            self.i = end + 2 if end >= 0 else len(self.p)
            return ("cat", [self.literal(c) for c in text])
        code = self._char_escape(ch)
        return ("class", _Class(((code, code),), False, self.flags["i"]))

    def _perl(self, ch: str) -> _Class:
        return _Class(_ranges(_PERL[ch.lower()]), ch.isupper(), False)

    def _char_escape(self, ch: str) -> int:
        if ch in _ESCAPES:
            return ord(_ESCAPES[ch])
        if ch == "x":
            if self.peek() == "{":
                end = self.p.find("}", self.i)
                digits, self.i = self.p[self.i + 1 : end], end + 1
            else:
                digits, self.i = self.p[self.i : self.i + 2], self.i + 2
            try:
                return int(digits, 16)
            except ValueError:
                raise self.fail("bad \\x escape") from None
        if ch.isdigit():
            raise self.fail("backreferences are not supported (RE2)")
        if ch in ("p", "P"):
            raise self.fail("Unicode classes (\\p) are not supported here")
        if ch.isalnum():
            raise self.fail(f"invalid escape \\{ch}")
        return ord(ch)

    def bracket(self) -> _Class:
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        ranges: list[tuple[int, int]] = []
        first = True
        while True:
            ch = self.peek()
            if not ch:
                raise self.fail("missing ']'")
            if ch == "]" and not first:
                self.i += 1
                break
            first = False
            if self.p.startswith("[:", self.i):
                end = self.p.find(":]", self.i)
                name = self.p[self.i + 2 : end] if end >= 0 else ""
                negate = name.startswith("^")
                if name.lstrip("^") not in _POSIX:
                    raise self.fail("bad POSIX class")
                self.i = end + 2
                found = _ranges(_POSIX[name.lstrip("^")])
                ranges += _complement(found) if negate else found
                continue
            low = self._class_char()
            if isinstance(low, _Class):
                ranges += _complement(low.ranges) if low.negated else low.ranges
                continue
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.i += 1
                high = self._class_char()
                if isinstance(high, _Class) or high < low:
                    raise self.fail("bad character class range")
                ranges.append((low, high))
            else:
                ranges.append((low, low))
        return _Class(tuple(ranges), negated, self.flags["i"])

    def _class_char(self) -> int | _Class:
        ch = self.peek()
        self.i += 1
        if ch != "\\":
            return ord(ch)
        esc = self.peek()
        self.i += 1
        if esc.lower() in _PERL:
            return self._perl(esc)
        return self._char_escape(esc)


def _ranges(pairs: list[tuple[str, str]]) -> tuple[tuple[int, int], ...]:
    return tuple((ord(low), ord(high)) for low, high in pairs)


def _complement(ranges: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    out, start = [], 0
    for low, high in sorted(ranges):
        if low > start:
            out.append((start, low - 1))
        start = max(start, high + 1)
    out.append((start, 0x10FFFF))
    return out


# --- compiling to a program and running it -------------------------------------------------


class _Compiler:
    def __init__(self) -> None:
        self.prog: list[list[Any]] = []

    def emit(self, *inst: object) -> int:
        if len(self.prog) >= MAX_PROGRAM:
            raise RegexError(f"the pattern is too large (over {MAX_PROGRAM} instructions)")
        self.prog.append(list(inst))
        return len(self.prog) - 1

    def compile(self, node: Node) -> None:
        kind = node[0]
        if kind in ("class", "any", "assert"):
            self.emit(*node)
        elif kind == "cat":
            for item in node[1]:
                self.compile(item)
        elif kind == "alt":
            jumps = []
            for n, branch in enumerate(node[1]):
                if n < len(node[1]) - 1:
                    split = self.emit("split", 0, 0)
                    self.prog[split][1] = len(self.prog)
                    self.compile(branch)
                    jumps.append(self.emit("jmp", 0))
                    self.prog[split][2] = len(self.prog)
                else:
                    self.compile(branch)
            for jump in jumps:
                self.prog[jump][1] = len(self.prog)
        else:  # rep
            _, inner, low, high = node
            for _ in range(low):
                self.compile(inner)
            if high == -1:
                split = self.emit("split", len(self.prog) + 1, 0)
                self.compile(inner)
                self.emit("jmp", split)
                self.prog[split][2] = len(self.prog)
            else:
                splits = []
                for _ in range(high - low):
                    splits.append(self.emit("split", len(self.prog) + 1, 0))
                    self.compile(inner)
                for split in splits:
                    self.prog[split][2] = len(self.prog)


class TopicRegex:
    """A compiled pattern: ``matches(name)`` tells whether the whole name matches."""

    def __init__(self, pattern: str) -> None:
        if len(pattern) > MAX_PATTERN:
            raise RegexError(f"the pattern is longer than {MAX_PATTERN} characters")
        compiler = _Compiler()
        compiler.compile(_Parser(pattern).parse())
        compiler.emit("match")
        self.pattern = pattern
        self._prog = compiler.prog

    def matches(self, text: str) -> bool:
        prog = self._prog
        current = self._closure([0], 0, text)
        for pos, ch in enumerate(text):
            following = []
            for pc in current:
                inst = prog[pc]
                if (inst[0] == "class" and inst[1].test(ch)) or (
                    inst[0] == "any" and (inst[1] or ch != "\n")
                ):
                    following.append(pc + 1)
            if not following:
                return False
            current = self._closure(following, pos + 1, text)
        return any(prog[pc][0] == "match" for pc in current)

    def _closure(self, start: list[int], pos: int, text: str) -> list[int]:
        prog, seen, out, stack = self._prog, set(), [], list(reversed(start))
        while stack:
            pc = stack.pop()
            if pc in seen:
                continue
            seen.add(pc)
            inst = prog[pc]
            kind = inst[0]
            if kind == "jmp":
                stack.append(inst[1])
            elif kind == "split":
                stack += (inst[2], inst[1])
            elif kind == "assert":
                if _holds(inst[1], pos, text):
                    stack.append(pc + 1)
            else:
                out.append(pc)
        return out


def _holds(kind: str, pos: int, text: str) -> bool:
    if kind == "begin":
        return pos == 0
    if kind == "end":
        return pos == len(text)
    before = pos > 0 and (text[pos - 1].isalnum() or text[pos - 1] == "_")
    after = pos < len(text) and (text[pos].isalnum() or text[pos] == "_")
    return (before != after) == (kind == "word")


def compile_regex(pattern: str) -> TopicRegex:
    """``TopicRegex(pattern)``; ``RegexError`` for a pattern RE2/J would refuse."""
    return TopicRegex(pattern)
