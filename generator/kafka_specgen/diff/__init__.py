"""``kafka-specgen diff OLD NEW``: what changed between two spec sets, and is it legal?

Both sides go through the same stages as ``generate`` (load -> schema -> model), so the
comparison is between models, not JSON text: comments, key order, string-vs-number
defaults and the like never show up as changes.

Every change has a severity:

- ``violation``: breaks one of Kafka's evolution rules (the generator's checks and
  what the wire format implies): the api key or message type changed, the highest valid
  version went down, a version present on both sides changed its wire layout (a field
  added, removed, retyped or (un)tagged in it, its flexibility changed, a nullable
  struct's null marker came or went), a tag moved or was given to another field, a
  default changed.
- ``breaking``: legal, but generated code or its users notice: versions removed (Kafka
  4.0 removed old versions this way), a message or field removed, a field renamed (the
  wire is the same, the Python attribute is not).
- ``info``: versions added, fields added in new versions, tagged fields added, nullability
  widened, documentation-level facts (deprecated versions, unstable latest version).
"""

from __future__ import annotations

from .changes import SEVERITIES, Change, MessageDiff, SpecDiff
from .command import register
from .compare import diff_models, diff_paths, load_model
from .report import render, render_markdown, render_text

__all__ = [
    "SEVERITIES",
    "Change",
    "MessageDiff",
    "SpecDiff",
    "diff_models",
    "diff_paths",
    "load_model",
    "register",
    "render",
    "render_markdown",
    "render_text",
]
