"""Captured Kafka traffic: the recording proxy (``pipeline.capture``) and, later, the
PySpark pipeline over capture files. Importing this package imports nothing heavy."""
