"""The caps on what a spec may hold.

A spec over one is refused with one line that names the file, what is over and the cap:
never a ``RecursionError`` traceback, never gigabytes of memory. Each cap is far above
anything in Kafka's own specs (in brackets: the most any release from 2.4 to 4.3 has).
"""

MAX_SPEC_BYTES = 1024 * 1024
"""Bytes of one spec file, or of one entry of a zip or jar of them [9,798]."""
MAX_JSON_DEPTH = 64
"""Arrays and objects inside each other in one spec file [10]."""
MAX_STRUCT_DEPTH = 32
"""Structs inside each other, through common structs too [4]."""
MAX_TEXT_CHARS = 16 * 1024
"""Characters of any one string of a spec (``about``, a default, a name, a key), and of the
comments before its first field (they become the class docstring) [1,557]."""
