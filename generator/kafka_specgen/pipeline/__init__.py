"""The PySpark pipeline over captured traffic (read by ``kafka_specgen.capture``): the job
(``job``, ``datasource``, ``decode``), its tables (``tables``), the readiness verdict
(``readiness``, ``verdict``, ``advice``) and its HTML report (``report``). Importing this
package imports nothing heavy."""
