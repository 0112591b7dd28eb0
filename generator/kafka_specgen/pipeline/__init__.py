"""Captured Kafka traffic: the recording proxy (``capture``), capture files and pcap input
(``frames``, ``pcap``), the PySpark pipeline over them (``job``, ``decode``, ``readiness``)
and its HTML report (``report``). Importing this package imports nothing heavy."""
