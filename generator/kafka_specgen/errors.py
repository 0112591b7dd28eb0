"""The one error type every stage raises for a bad spec."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


class SpecError(Exception):
    """A spec was rejected: names the file, struct, field and the rule it broke."""

    def __init__(
        self,
        source: str,
        rule: str,
        message: str,
        *,
        struct: str | None = None,
        field: str | None = None,
    ) -> None:
        self.source = source
        self.rule = rule
        self.struct = struct
        self.field = field
        self.message = message
        where = source
        if struct:
            where += f": struct {struct}"
        if field:
            where += f", field {field}"
        super().__init__(f"{where}: {message} [rule: {rule}]")


#: A run reports at most this many spec errors.
MAX_ERRORS = 50


class SpecErrors(SpecError):
    """Every independent spec error of a run (at most ``MAX_ERRORS``), one per line."""

    def __init__(self, errors: list[SpecError]) -> None:
        self.errors = errors[:MAX_ERRORS]
        first = self.errors[0]
        lines = [str(e) for e in self.errors]
        if len(errors) > MAX_ERRORS:
            lines.append(f"... and {len(errors) - MAX_ERRORS} more spec errors")
        Exception.__init__(self, "\n".join(lines))
        self.source, self.rule, self.message = first.source, first.rule, first.message
        self.struct, self.field = first.struct, first.field


def raise_all(errors: list[SpecError]) -> None:
    """Raise ``errors``: nothing when empty, the error itself when alone, else together."""
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise SpecErrors(errors)


def each(items: Iterable[T], action: Callable[[T], R]) -> list[R]:
    """``action`` on every item, collecting the spec errors instead of stopping at the
    first; raises them together at the end."""
    results: list[R] = []
    errors: list[SpecError] = []
    for item in items:
        try:
            results.append(action(item))
        except SpecErrors as exc:
            errors += exc.errors
        except SpecError as exc:
            errors.append(exc)
    raise_all(errors)
    return results
