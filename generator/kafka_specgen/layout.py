"""Black's layout, emulated for the few shapes the templates emit.

Black formats every generated file, and it is most of a generation's time; on text that
already looks as black would write it, it runs about twice as fast. So the templates lay
out their long lines here the way black would: string quotes, signatures, calls, tuple
literals, and multi-target assignments. This is only about speed: black still
formats the result, so a shape emulated imperfectly costs time, never correctness
(``tests/test_layout.py`` holds the emulation to black's own output).
"""

from __future__ import annotations

from dataclasses import dataclass

WIDTH = 100


@dataclass(frozen=True)
class Code:
    """Python source text, used as it is (a name, a number, an expression)."""

    text: str


@dataclass(frozen=True)
class Tup:
    """A tuple display."""

    items: tuple[object, ...]


@dataclass(frozen=True)
class Kwarg:
    """A keyword argument ``name=value`` of a call."""

    name: str
    value: object


@dataclass(frozen=True)
class Call:
    """A call ``name(args)``; keyword arguments are ``Code("key=value")`` items."""

    name: str
    args: tuple[object, ...]
    explode: bool = False
    """Always one argument per line, with a trailing comma (black then keeps it so)."""


def pystr(value: str) -> str:
    """A string literal with black's quotes: double, unless that needs more escapes."""
    return _double_quoted(repr(str(value)), "")


def pybytes(value: bytes) -> str:
    """A bytes literal with black's quotes."""
    return _double_quoted(repr(value)[1:], "b")


def _double_quoted(literal: str, prefix: str) -> str:
    """``literal`` (a ``repr`` without its prefix) in double quotes where black wants
    them: whenever that does not take more escaped quotes."""
    if literal[0] == '"':
        return prefix + literal
    inner = literal[1:-1]
    doubled = inner.replace("\\'", "'").replace('"', '\\"')
    if doubled.count('\\"') > inner.count("\\'"):
        return prefix + literal
    return f'{prefix}"{doubled}"'


def flat(value: object) -> str:
    """``value`` on one line."""
    if isinstance(value, Code):
        return value.text
    if isinstance(value, str):
        return pystr(value)
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return repr(value)
    if isinstance(value, Tup):
        items = ", ".join(flat(item) for item in value.items)
        return f"({items},)" if len(value.items) == 1 else f"({items})"
    if isinstance(value, Call):
        return f"{value.name}(" + ", ".join(flat(arg) for arg in value.args) + ")"
    if isinstance(value, Kwarg):
        return f"{value.name}={flat(value.value)}"
    raise TypeError(f"no layout for {value!r}")


def lay_out(value: object, indent: int = 0, before: int = 0, after: int = 0) -> str:
    """``value`` as black lays it out on a line indented ``indent``, with ``before``
    characters ahead of it and ``after`` behind it on that line. Continuation lines are
    indented relative to that line (the template indents the whole statement)."""
    return _lay_out(value, indent, before, after)


def _lay_out(value: object, indent: int, before: int, after: int, depth: int = 0) -> str:
    one_line = flat(value)
    fits = indent + before + len(one_line) + after <= WIDTH
    explode = isinstance(value, Call) and value.explode
    if fits and not explode:
        return one_line
    pad = " " * (depth + 4)
    close = " " * depth
    width = indent + 4

    def item(x: object, head: int = 0) -> str:
        if isinstance(x, Kwarg):
            return f"{x.name}=" + _lay_out(x.value, width, head + len(x.name) + 1, 1, depth + 4)
        return _lay_out(x, width, head, 1, depth + 4)

    if isinstance(value, Call):
        if not value.args:
            return one_line
        hugged = ", ".join(flat(arg) for arg in value.args)
        if not explode and width + len(hugged) <= WIDTH and len(value.args) > 1:
            return f"{value.name}(\n{pad}{hugged}\n{close})"
        lines = [f"{pad}{item(arg)}," for arg in value.args]
        return f"{value.name}(\n" + "\n".join(lines) + f"\n{close})"
    if isinstance(value, Tup) and value.items:
        lines = [f"{pad}{item(x)}," for x in value.items]
        return "(\n" + "\n".join(lines) + f"\n{close})"
    return one_line


def signature(name: str, params: str, returns: str, indent: int = 0) -> str:
    """``def name(params) -> returns:`` on one line, or split as black splits it."""
    pad = " " * indent
    line = f"{pad}def {name}({params}) -> {returns}:"
    if len(line) <= WIDTH:
        return line
    if len(pad) + 4 + len(params) <= WIDTH and len(f"{pad}) -> {returns}:") <= WIDTH:
        return f"{pad}def {name}(\n{pad}    {params}\n{pad}) -> {returns}:"
    body = "".join(f"{pad}    {param.strip()},\n" for param in params.split(","))
    return f"{pad}def {name}(\n{body}{pad}) -> {returns}:"


def targets(names: list[str], rhs: str, indent: int) -> str:
    """``a, b = rhs`` (a name or a call) as black splits it when too long: a call's
    arguments on a line of their own, else the call in parentheses, else the targets
    exploded."""
    lhs = f"({names[0]},)" if len(names) == 1 else ", ".join(names)
    line = f"{lhs} = {rhs}"
    if indent + len(line) <= WIDTH:
        return line
    call, paren, args = rhs.partition("(")
    if paren and indent + len(f"{lhs} = {call}(") <= WIDTH:
        return f"{lhs} = {call}(\n    {args[:-1]}\n)"
    if paren and indent + len(lhs) + 4 <= WIDTH:
        return f"{lhs} = (\n    {rhs}\n)"
    return "(\n" + "".join(f"    {name},\n" for name in names) + f") = {rhs}"


def assignment(target: str, expr: str, indent: int) -> str:
    """``target = expr``; when too long, the expression in parentheses on a line of its
    own, and a conditional expression that still does not fit split before ``if`` and
    ``else`` (as black does, for the expressions the templates write)."""
    line = f"{target} = {expr}"
    if indent + len(line) <= WIDTH:
        return line
    if indent + 4 + len(expr) <= WIDTH or " if " not in expr:
        return f"{target} = (\n    {expr}\n)"
    value, _, rest = expr.partition(" if ")
    condition, _, other = rest.partition(" else ")
    if indent + 4 + len(f"if {condition}") > WIDTH:
        for operator in (" or ", " is ", " == "):  # black splits the loosest operator next
            left, found, right = condition.partition(operator)
            if found:
                condition = f"{left}\n    {operator.strip()} {right}"
                break
    return f"{target} = (\n    {value}\n    if {condition}\n    else {other}\n)"


def import_from(module: str, names: str) -> str:
    """``from module import names``, one name per line when the line is too long."""
    line = f"from {module} import {names}"
    if len(line) <= WIDTH:
        return line
    body = "".join(f"    {name.strip()},\n" for name in names.split(","))
    return f"from {module} import (\n{body})"


def statement(line: str, indent: int) -> str:
    """A statement ending in a call (``x, pos = f(a, b)``, ``f(a, b)``, ``raise f(a)``)
    split as black splits it when too long: the arguments on a line of their own (one per
    line if they do not fit), or, when even ``x = f(`` is too long, the call in
    parentheses. Continuation lines are relative to the statement's indentation."""
    if indent + len(line) <= WIDTH or not line.endswith(")"):
        return line
    depth = 0
    for start in range(len(line) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(line[start], 0)
        if depth == 0:
            break
    head, args = line[: start + 1], line[start + 1 : -1]
    if args and indent + len(head) <= WIDTH:  # an empty call is not split open
        if indent + 4 + len(args) <= WIDTH:
            return f"{head}\n    {args}\n)"
        return head + "".join(f"\n    {arg.strip()}," for arg in args.split(",")) + "\n)"
    target, equals, call = line.partition(" = ")
    if equals and indent + len(target) + 4 <= WIDTH:
        inner = statement(call, indent + 4).replace("\n", "\n    ")
        return f"{target} = (\n    {inner}\n)"
    if not equals:  # the last resort: split at the call even though its head is too long
        return f"{head}\n    {args}\n)"
    return line


def annotated(name: str, annotation: str, rest: str, indent: int) -> str:
    """``name: annotation<rest>`` (``rest``: `` = default,`` or nothing) as black splits it
    when too long: inside the annotation's last subscript, else the annotation in
    parentheses."""
    line = f"{name}: {annotation}{rest}"
    if indent + len(line) <= WIDTH:
        return line
    if annotation.endswith("]"):
        cut = annotation.index("[") + 1
        return f"{name}: {annotation[:cut]}\n    {annotation[cut:-1]}\n]{rest}"
    return f"{name}: (\n    {annotation}\n){rest}"


def condition(test: str, indent: int) -> str:
    """``if test:`` as black splits it when too long: in parentheses, one operand per line,
    at the loosest operator (``or`` before comparisons)."""
    line = f"if {test}:"
    if indent + len(line) <= WIDTH:
        return line
    for operator in (" or ", " is not ", " != ", " is ", " == "):
        left, found, right = test.partition(operator)
        if found:
            return f"if (\n    {left}\n    {operator.strip()} {right}\n):"
    return line
