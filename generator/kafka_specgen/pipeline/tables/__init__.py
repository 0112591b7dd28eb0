"""The pipeline's output tables, one module per table (``batches`` writes two).

Each module declares its rows (a ``NamedTuple`` of ``capture.columns`` types: the
names, Spark DDL and Arrow schema of its columns) as a ``Table``, and has the one function
that writes it from the decoded frames (``Staged``). The job (``pipeline.job``) calls them
in order; ``all_tables()`` lists them all.

=====================  =============================================================
``errors/``            ``errors``: frames that did not decode, batches not read
``conformance/``       ``conformance``: per api key, direction and version
``usage/``             ``usage``: per client, api key and version
``batches/``           ``batches``: one row per record batch
``record_usage/``      ``batches``: per client, direction, magic and codec
``readiness/``         ``readiness``: per client and API, judged against a target
``messages/<Name>/``   ``messages``: the decoded bodies, one table per message
=====================  =============================================================

A client is an app: its software's name and version (KIP-511) and its address (the host
it connects from); an app that reports no software is told apart by its client id as well,
so two such apps on one host are never one client. Where a capture gives no address
(capture files from before 0.2.0), the client id stands in for it.
"""

from __future__ import annotations

from . import batches, conformance, errors, messages, readiness, usage
from .clients import with_clients
from .table import Staged, Table

__all__ = ["Staged", "Table", "all_tables", "with_clients"]


def all_tables() -> tuple[Table, ...]:
    return (
        usage.TABLE,
        conformance.TABLE,
        messages.TABLE,
        errors.TABLE,
        batches.TABLE,
        batches.RECORD_USAGE,
        readiness.TABLE,
    )
