"""A fake Kafka cluster in one process, speaking the wire protocol of a chosen release.

::

    with FakeCluster(release="3.0", brokers=3, topics={"orders": 6}) as cluster:
        run_my_client(bootstrap=cluster.bootstrap)

Built on a package generated from the release's own bundled spec data (its
``connection.ServerConnection``, its message classes and ``records``), or from ``specs``,
a user's spec set. It behaves as the brokers of ``release`` (0.8.0 to 4.3, ZooKeeper or
KRaft: ``release.py``): exactly their ApiVersions answer, or none before 0.10, what they
refuse, their feature levels (``features.py``: UpdateFeatures). KIP-97's test plan for a
client is then: run it against each release, and expect the obsolete-broker error where
the release lacks something the client needs. ``kafka_specgen.pytest_plugin`` does that
for pytest (``--kafka-release``).

The modules:

- ``cluster``: ``FakeCluster``; ``command``: the ``fake-broker`` command;
- ``loop`` (one event loop, timers, no locks), ``server`` (listeners, accepting, idle
  connections), ``channel`` (one connection: buffers, muting, in-order answers, waiting
  answers), ``dispatch`` (which handler answers what, the hooks);
- one module per API family, each declaring its ``HANDLERS`` with the versions they
  implement: ``produce`` (with ``batches``), ``fetch``, ``list_offsets``, ``metadata``,
  ``topics``, ``configs`` (with ``config_defaults``), ``coordinator``, ``groups`` (with
  ``rebalance``), ``offsets``, ``group_admin``, ``consumer_groups`` (KIP-848, with
  ``modern``, ``modern_groups``, ``assignors``, ``topic_regex``), ``share_groups``,
  ``share_fetch`` and ``share_offsets`` (KIP-932, with ``share_state``), ``txn``,
  ``txn_admin``, ``maintenance`` (retention, DeleteRecords, compaction),
  ``partition_admin``, ``cluster_admin``, ``features`` (UpdateFeatures);
- ``state`` and ``log`` (what the cluster remembers), ``call`` (what a handler gets),
  ``waiting`` (``Wait``, ``Signal``), ``clock`` (timers on the loop), ``shapes`` (field
  names across releases), ``limits``, ``errors``, ``release`` (``ApiKey`` is the tool's,
  ``kafka_specgen.api_keys``).

Hooks for tests: ``control(api_key, fn)`` answers an API your way (``fn(call)`` returns a
response, ``DISCONNECT``, or None for the usual answer), ``inject(api_key, error_code)``
makes the next answers carry an error, ``throttle_ms`` throttles every answer, and
``record`` writes every frame as a capture file the pipeline reads.
"""

from __future__ import annotations

from ..api_keys import ApiKey
from .call import Call
from .cluster import ConnectionInfo, FakeBrokerError, FakeCluster
from .dispatch import DISCONNECT
from .limits import Limits
from .waiting import Signal, Wait

__all__ = [
    "DISCONNECT",
    "ApiKey",
    "Call",
    "ConnectionInfo",
    "FakeBrokerError",
    "FakeCluster",
    "Limits",
    "Signal",
    "Wait",
]
