"""kafka-specgen: Kafka JSON message specs in, a typed pure-Python codec package out.

The stages run in one direction: ``load`` -> ``schema`` -> ``model`` -> ``catalog`` ->
``plan`` -> ``views`` (``package_views``) -> ``render`` -> ``format``; ``facts`` reads the
facts tables beside the specs, ``selection`` keeps part of a spec set, ``limits`` caps what
a spec may hold. ``library`` runs them, ``cli`` is the command line. Side tools that use a generated package or compare spec
sets live in the subpackages ``diff``, ``broker_versions``, ``fake_broker`` and
``pipeline``.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("kafka-specgen")
except PackageNotFoundError:  # imported from a checkout that was never installed
    __version__ = "0+unknown"
