"""What a spec comparison finds: changes with a severity, per message and in all."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

SEVERITIES = ("violation", "breaking", "info")


@dataclass(frozen=True)
class Change:
    severity: str
    rule: str
    detail: str
    path: str = ""
    """The field path inside the message (``Topics.Partitions.Index``), or empty."""

    def text(self) -> str:
        where = f"{self.path}: " if self.path else ""
        return f"{where}{self.detail}"


@dataclass
class MessageDiff:
    name: str
    type: str
    api_key: int | None
    api_name: str
    status: str
    """``added``, ``absent`` (not in the new set), ``changed`` or ``unchanged``."""
    old_versions: str | None
    new_versions: str | None
    old_flexible: str | None
    new_flexible: str | None
    changes: list[Change] = field(default_factory=list)

    def add(self, severity: str, rule: str, detail: str, path: str = "") -> None:
        self.changes.append(Change(severity, rule, detail, path))

    @property
    def group(self) -> tuple[int, int, str]:
        """Sort key: APIs by key first, then other kinds by name."""
        if self.type in ("request", "response") and self.api_key is not None:
            return (0, self.api_key, self.api_name)
        order = {
            "header": 1,
            "metadata": 2,
            "coordinator-key": 3,
            "coordinator-value": 3,
            "data": 4,
        }.get(self.type, 5)
        return (order, self.api_key if self.api_key is not None else -1, self.name)

    @property
    def group_title(self) -> str:
        if self.type in ("request", "response") and self.api_key is not None:
            return f"API {self.api_key} {self.api_name}"
        if self.type == "metadata":
            key = "" if self.api_key is None else f" (record type {self.api_key})"
            return f"metadata record {self.name}{key}"
        if self.type.startswith("coordinator-"):
            return f"coordinator record {self.name} (record type {self.api_key})"
        return f"{self.type} {self.name}"


@dataclass
class SpecDiff:
    old: str
    new: str
    messages: list[MessageDiff]

    @property
    def changes(self) -> list[tuple[MessageDiff, Change]]:
        return [(m, c) for m in self.messages for c in m.changes]

    def count(self, severity: str) -> int:
        return sum(1 for _, c in self.changes if c.severity == severity)

    def message(self, name: str) -> MessageDiff:
        for m in self.messages:
            if m.name == name:
                return m
        raise KeyError(name)

    def summary(self) -> dict[str, int]:
        statuses = [m.status for m in self.messages]
        return {
            "added": statuses.count("added"),
            "absent": statuses.count("absent"),
            "changed": statuses.count("changed"),
            "unchanged": statuses.count("unchanged"),
            **{f"{s}s": self.count(s) for s in SEVERITIES},
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "old": self.old,
            "new": self.new,
            "summary": self.summary(),
            "messages": [
                {**asdict(m), "changes": [asdict(c) for c in m.changes]}
                for m in self.messages
                if m.status != "unchanged"
            ],
        }
