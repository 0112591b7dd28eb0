"""Comparing two spec sets' models, message by message and field by field, under
Kafka's evolution rules. All version arithmetic is ``Versions`` and ``VersionSet``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from ..library import SpecSource, load_specs, spec_set
from ..model import Field, Message, Struct
from ..versions import MAX_VERSION, Versions, VersionSet
from .changes import MessageDiff, SpecDiff


def shape(f: Field) -> str:
    """The type as the wire sees it: struct names do not matter, their fields do."""
    if f.type.is_struct:
        return "struct"
    if f.type.is_struct_array:
        return "[]struct"
    # records is a bytes blob with another name: the same wire format.
    return "bytes" if f.type.text == "records" else f.type.text


def fmt_default(value: Any) -> str:
    return repr(value)


def regular(f: Field, common: Versions) -> VersionSet:
    """The versions of ``common`` in which ``f`` is a regular (untagged) wire field."""
    present = VersionSet.of(f.versions.intersect(common))
    return present - VersionSet.of(f.tagged_versions) if f.tag is not None else present


def tagged(f: Field, common: Versions) -> VersionSet:
    if f.tag is None:
        return VersionSet()
    return VersionSet.of(f.versions.intersect(common).intersect(f.tagged_versions))


def declared(versions: Versions, floor: int) -> Versions:
    """Declared versions from ``floor`` (the higher of the two sides' lowest versions) on:
    versions removed from the bottom of a message are reported once, for the message."""
    return versions.intersect(Versions(floor, MAX_VERSION))


class UnstableAware:
    """Adds changes to a MessageDiff; a message whose latest version was unstable may
    still change that version, so wire-layout violations there are downgraded."""

    def __init__(self, md: MessageDiff, old: Message) -> None:
        self.md = md
        self.unstable = old.latest_version_unstable

    def add(self, severity: str, rule: str, detail: str, path: str = "") -> None:
        if severity == "violation" and self.unstable and rule not in LASTING_RULES:
            severity = "breaking"
            detail += " (allowed: the old latest version was marked unstable)"
        self.md.add(severity, rule, detail, path)


#: Violations that an unstable latest version does not excuse.
LASTING_RULES = frozenset({"type-changed", "api-key-changed", "max-version-lowered", "tag-reused"})


class Differ:
    def __init__(self, md: MessageDiff, old: Message, new: Message) -> None:
        self.md: Any = UnstableAware(md, old)
        self.old = old
        self.new = new
        self.common = old.valid_versions.intersect(new.valid_versions)
        self.floor = max(old.valid_versions.lo, new.valid_versions.lo)

    def run(self) -> None:
        md, old, new = self.md, self.old, self.new
        if new.removed or old.removed:
            self.removal()
            return
        if old.type == "data" and new.type.startswith("coordinator-"):
            # Kafka 4.1 declared what its coordinator records always were. A key's old
            # validVersions (and its fields' versions) were its record type ids, so the
            # key is not compared version by version.
            md.add(
                "info",
                "coordinator-record-declared",
                f"now a {new.type} record, record type {new.api_key}",
            )
            if new.type == "coordinator-key":
                return
        elif old.type != new.type:
            md.add("violation", "type-changed", f"message type changed: {old.type} -> {new.type}")
        elif old.api_key != new.api_key:
            md.add(
                "violation", "api-key-changed", f"api key changed: {old.api_key} -> {new.api_key}"
            )
        self.versions()
        self.flexible()
        self.facts()
        self.struct(old.root, new.root, "")

    def removal(self) -> None:
        """An API removed upstream keeps its key with no versions (Kafka 4.0, KIP-896)."""
        old, new = self.old, self.new
        if old.removed and new.removed:
            return
        if new.removed:
            self.md.add(
                "breaking",
                "api-removed",
                f"every version removed (had versions {old.valid_versions}); the api key "
                "stays reserved",
            )
        else:
            self.md.add(
                "info", "api-restored", f"a removed API is back, versions {new.valid_versions}"
            )

    def versions(self) -> None:
        md, old, new = self.md, self.old.valid_versions, self.new.valid_versions
        added = VersionSet.of(new) - VersionSet.of(old)
        removed = VersionSet.of(old) - VersionSet.of(new)
        if removed:
            md.add("breaking", "versions-removed", f"versions {removed} removed")
        if added:
            md.add("info", "versions-added", f"versions {added} added")
        if new.hi < old.hi:
            md.add(
                "violation",
                "max-version-lowered",
                f"the highest version went down: {old.hi} -> {new.hi}",
            )
        if new.lo > old.lo and not self.common:
            md.add("breaking", "no-common-version", "no version is on both sides")

    def flexible(self) -> None:
        md, old, new = self.md, self.old.flexible_versions, self.new.flexible_versions
        if old == new:
            return
        md.add("info", "flexible-versions-changed", f"flexible versions {old} -> {new}")
        lost = VersionSet.of(old.intersect(self.common)) - VersionSet.of(new)
        gained = VersionSet.of(new.intersect(self.common)) - VersionSet.of(old)
        if lost:
            md.add(
                "violation",
                "flexible-versions-shrunk",
                f"versions {lost} are no longer flexible (flexible versions may "
                "only grow, into new versions)",
            )
        if gained:
            md.add(
                "violation",
                "flexible-versions-changed-existing",
                f"existing versions {gained} became flexible (their wire format " "changes)",
            )

    def facts(self) -> None:
        md, old, new = self.md, self.old, self.new
        if old.deprecated_versions != new.deprecated_versions:
            md.add(
                "info",
                "deprecated-versions-changed",
                f"deprecated versions {old.deprecated_versions} -> {new.deprecated_versions}",
            )
        if old.latest_version_unstable != new.latest_version_unstable:
            state = "unstable" if new.latest_version_unstable else "stable"
            md.add(
                "info",
                "latest-version-unstable-changed",
                f"the latest version is now marked {state}",
            )
        if set(old.listeners) != set(new.listeners):
            md.add(
                "info",
                "listeners-changed",
                f"listeners {sorted(old.listeners)} -> {sorted(new.listeners)}",
            )

    def struct(self, old: Struct, new: Struct, prefix: str) -> None:
        old_fields = {f.name: f for f in old.fields}
        new_fields = {f.name: f for f in new.fields}
        removed = [f for f in old.fields if f.name not in new_fields]
        added = [f for f in new.fields if f.name not in old_fields]
        renames: list[tuple[Field, Field]] = []
        fl = self.floor
        for r in list(removed):
            for a in added:
                same_declared = declared(a.declared_versions, fl) == declared(
                    r.declared_versions, fl
                ) and declared(a.nullable_versions.intersect(a.declared_versions), fl) == (
                    declared(r.nullable_versions.intersect(r.declared_versions), fl)
                )
                same_wire = bool(regular(a, self.common)) and (
                    regular(a, self.common) == regular(r, self.common)
                    and tagged(a, self.common) == tagged(r, self.common)
                )
                if shape(a) == shape(r) and a.tag == r.tag and (same_declared or same_wire):
                    renames.append((r, a))
                    removed.remove(r)
                    added.remove(a)
                    break
        for r, a in renames:
            self.md.add(
                "breaking",
                "field-renamed",
                f"field renamed {r.name} -> {a.name} (same wire format; the Python "
                f"attribute changes: {r.attr} -> {a.attr})",
                prefix + a.name,
            )
            self.field(r, a, prefix + a.name, renamed=True)
        for a in added:
            self.field_added(a, prefix + a.name)
        for r in removed:
            self.field_removed(r, prefix + r.name)
        for name, o in old_fields.items():
            if name in new_fields:
                self.field(o, new_fields[name], prefix + name)
        self.tags(old, new, renames, prefix)

    def field_added(self, f: Field, path: str) -> None:
        where = regular(f, self.common)
        kind = f"tagged field (tag {f.tag})" if f.tag is not None else "field"
        self.md.add(
            "info",
            "field-added",
            f"{kind} added, {f.type.text}, versions {f.declared_versions}",
            path,
        )
        if where:
            self.md.add(
                "violation",
                "field-added-to-existing-version",
                f"a regular field added to existing version(s) {where}",
                path,
            )

    def field_removed(self, f: Field, path: str) -> None:
        where = regular(f, self.common)
        self.md.add(
            "breaking",
            "field-removed",
            f"field removed ({f.type.text}, versions {f.declared_versions})",
            path,
        )
        if where:
            self.md.add(
                "violation",
                "field-removed-from-existing-version",
                f"a regular field removed from version(s) {where} that remain",
                path,
            )

    def field(self, o: Field, n: Field, path: str, renamed: bool = False) -> None:
        md, common = self.md, self.common
        if o.type.text != n.type.text:
            if shape(o) == shape(n) and o.struct is None:
                md.add(
                    "info",
                    "field-retyped-compatible",
                    f"type changed {o.type.text} -> {n.type.text} (same wire format)",
                    path,
                )
            elif shape(o) == shape(n):
                md.add(
                    "info",
                    "struct-type-renamed",
                    f"struct type renamed {o.type.text} -> {n.type.text}",
                    path,
                )
            else:
                both = VersionSet.of(o.versions.intersect(n.versions).intersect(common))
                severity = "violation" if both else "breaking"
                md.add(
                    severity,
                    "field-retyped",
                    f"type changed {o.type.text} -> {n.type.text}"
                    + (f" in existing version(s) {both}" if both else ""),
                    path,
                )
        fl = self.floor
        if declared(o.declared_versions, fl) != declared(n.declared_versions, fl):
            md.add(
                "info",
                "field-versions-changed",
                f"versions {declared(o.declared_versions, fl)} -> "
                f"{declared(n.declared_versions, fl)}",
                path,
            )
        uo, un = regular(o, common), regular(n, common)
        if uo != un:
            md.add(
                "violation",
                "field-layout-changed",
                f"present as a regular field in {uo} before, {un} now "
                f"(within the common versions {common})",
                path,
            )
        if o.tag != n.tag and o.tag is not None and n.tag is not None:
            md.add("violation", "tag-changed", f"tag changed {o.tag} -> {n.tag}", path)
        elif o.tag != n.tag:
            md.add(
                "info",
                "tagging-changed",
                f"tag {o.tag} -> {n.tag}; tagged versions {o.tagged_versions} -> "
                f"{n.tagged_versions}",
                path,
            )
        if o.tagged_versions != n.tagged_versions and o.tag == n.tag and o.tag is not None:
            md.add(
                "info",
                "tagged-versions-changed",
                f"tagged versions {o.tagged_versions} -> {n.tagged_versions}",
                path,
            )
        no_decl = declared(o.nullable_versions.intersect(o.declared_versions), fl)
        nn_decl = declared(n.nullable_versions.intersect(n.declared_versions), fl)
        if no_decl != nn_decl:
            md.add("info", "nullability-changed", f"nullable in {no_decl} -> {nn_decl}", path)
            no = VersionSet.of(o.nullable_versions.intersect(o.versions))
            nn = VersionSet.of(n.nullable_versions.intersect(n.versions))
            changed = (no ^ nn) & VersionSet.of(common) & uo & un
            if changed and shape(n) == "struct":
                md.add(
                    "violation",
                    "nullable-struct-changed",
                    f"null marker of a struct added/removed in existing version(s) " f"{changed}",
                    path,
                )
        if o.default != n.default and shape(o) == shape(n):
            # The default is on the wire's side when a decoder fills it in: for a version
            # of the message that lacks the field. Otherwise only new objects see it.
            absent = VersionSet.of(self.new.valid_versions) - VersionSet.of(n.versions)
            md.add(
                "violation" if absent else "breaking",
                "default-changed",
                f"default changed {fmt_default(o.default)} -> {fmt_default(n.default)}",
                path,
            )
        if o.ignorable != n.ignorable:
            md.add("info", "ignorable-changed", f"ignorable {o.ignorable} -> {n.ignorable}", path)
        if o.flexible_versions != n.flexible_versions:
            md.add(
                "info",
                "field-flexible-versions-changed",
                f"field flexible versions {o.flexible_versions} -> {n.flexible_versions}",
                path,
            )
        if o.struct is not None and n.struct is not None:
            self.struct(o.struct, n.struct, path + ".")

    def tags(
        self, old: Struct, new: Struct, renames: list[tuple[Field, Field]], prefix: str
    ) -> None:
        """A tag once used by one field must never name another."""
        renamed = {a.name: r.name for r, a in renames}
        old_tags = {f.tag: f.name for f in old.fields if f.tag is not None}
        for f in new.fields:
            if f.tag is None or f.tag not in old_tags:
                continue
            before = old_tags[f.tag]
            if before != renamed.get(f.name, f.name):
                self.md.add(
                    "violation",
                    "tag-reused",
                    f"tag {f.tag} belonged to {before}, now to {f.name}",
                    prefix + f.name,
                )


def diff_models(
    old: Sequence[Message],
    new: Sequence[Message],
    old_label: str = "OLD",
    new_label: str = "NEW",
) -> SpecDiff:
    olds = {m.name: m for m in old}
    news = {m.name: m for m in new}
    # A request or response that vanished while another with the same api key appeared
    # was renamed (e.g. ListClientMetricsResources -> ListConfigResources, api key 74).
    renamed: dict[str, str] = {}
    gone: dict[tuple[str, int | None], str] = {
        (m.type, m.api_key): m.name
        for m in old
        if m.name not in news and m.type in ("request", "response") and m.api_key is not None
    }
    for m in new:
        if m.name not in olds and (m.type, m.api_key) in gone:
            renamed[m.name] = gone[(m.type, m.api_key)]
    result: list[MessageDiff] = []
    for name in sorted((olds.keys() - set(renamed.values())) | news.keys()):
        o, n = olds.get(renamed.get(name, name)), news.get(name)
        ref = n or o
        assert ref is not None
        md = MessageDiff(
            name=name,
            type=ref.type,
            api_key=ref.api_key,
            api_name=ref.api_name,
            status="changed",
            old_versions=str(o.valid_versions) if o else None,
            new_versions=str(n.valid_versions) if n else None,
            old_flexible=str(o.flexible_versions) if o else None,
            new_flexible=str(n.flexible_versions) if n else None,
        )
        if o is None:
            assert n is not None
            md.status = "added"
            md.add(
                "info",
                "message-added",
                f"new {n.type} message, versions {n.valid_versions}, flexible "
                f"{n.flexible_versions}",
            )
        elif n is None:
            # A file the new set does not ship: Kafka removes an API by keeping its file
            # with no versions (api-removed), so an absent file is usually a smaller set
            # (kafka-python's), not a break of the protocol.
            md.status = "absent"
            md.add(
                "info",
                "message-absent",
                f"{o.type} message not in the new set (had versions {o.valid_versions}); a "
                "package generated from it has no class for it",
            )
        else:
            if name in renamed:
                md.add(
                    "breaking",
                    "message-renamed",
                    f"renamed from {renamed[name]} (same api key {n.api_key}); the "
                    "Python class and module change",
                )
            Differ(md, o, n).run()
            if not md.changes:
                md.status = "unchanged"
        result.append(md)
    result.sort(key=lambda m: (m.group, m.name))
    return SpecDiff(old_label, new_label, result)


def load_model(specs: Path | SpecSource) -> list[Message]:
    """The model of a spec folder, file or zip/jar (or any spec set), as ``generate``
    builds it."""
    return load_specs(spec_set(specs), warn=False)[0]


def diff_paths(old: Path | SpecSource, new: Path | SpecSource) -> SpecDiff:
    """Compare two spec sets: paths or ``library.SpecSet`` (e.g. two bundled releases),
    each labelled as commands print it."""
    old_set, new_set = spec_set(old), spec_set(new)
    return diff_models(load_model(old_set), load_model(new_set), old_set.label, new_set.label)
