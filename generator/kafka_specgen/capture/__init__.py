"""Captured Kafka traffic, standard library only: recording it and reading it as rows.

- ``proxy``: ``kafka-specgen capture``, the recording TCP proxy (TLS on either side);
- ``frames``: the capture format: frames cut out of streams, request headers, pairing
  responses with requests, capture-file lines (written and read) as ``Row``\\ s;
- ``pcap`` (with ``pcapfile``, ``streams``): pcap and pcapng files, their TCP streams
  reassembled and cut into frames; ``tls``: TLS connections decrypted with a key log;
- ``requestlog``: a broker's request log as rows (usage without bytes);
- ``inputs``: which input files hold what, checked before anything reads them;
- ``columns``: the column types rows are declared with (Spark DDL and Arrow schemas).

The PySpark pipeline (``kafka_specgen.pipeline``) and the fake broker's ``record`` option
import this package; it imports neither.
"""
