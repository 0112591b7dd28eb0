"""The one error type every stage raises for a bad spec."""

from __future__ import annotations


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
