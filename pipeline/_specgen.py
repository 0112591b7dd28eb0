"""The parts of kafka_specgen's own library that the pipeline uses (driver side only).

At run time the repo's folders are one import namespace, ``kafka_specgen`` (pyproject's
``package-dir``: ``generator/`` is ``kafka_specgen``, ``pipeline/`` is
``kafka_specgen.pipeline``). ``mypy pipeline`` checks this folder as a top-level package
and has no such mapping, so for type checking the very same files are imported by their
folder name, ``generator``: the types are the real ones, nothing is silenced.

Executors never import this module (they get ``kafka_specgen/__init__`` and the pipeline
only, see ``job.zip_pipeline``).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from generator.format import write_package
    from generator.library import bundled_specs, load_specs, package_files
    from generator.spark_schema import spark_schemas
    from generator.versions import Versions
else:
    from kafka_specgen.format import write_package
    from kafka_specgen.library import bundled_specs, load_specs, package_files
    from kafka_specgen.spark_schema import spark_schemas
    from kafka_specgen.versions import Versions

__all__ = [
    "Versions",
    "bundled_specs",
    "load_specs",
    "package_files",
    "spark_schemas",
    "write_package",
]
