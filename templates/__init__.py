"""The templates and runtime sources that every generated package is made from.

Package data of the generator: ``*.j2`` are jinja2 templates for what depends on the specs;
``runtime/`` holds the hand-written modules copied verbatim into every generated package.
"""
