"""The specs shipped with kafka-specgen: package data (JSON), nothing to import."""
