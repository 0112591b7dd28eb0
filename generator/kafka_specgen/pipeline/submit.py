"""Entry script for ``spark-submit`` (which takes a file, not a module)::

    PYSPARK_DRIVER_PYTHON=.venv/bin/python spark-submit --master spark://HOST:7077 \\
        pipeline/submit.py --input /shared/captures --out /shared/kafka-tables

The arguments are those of ``kafka-specgen pipeline``; the master comes from spark-submit.
"""

import runpy
import sys

if __name__ == "__main__":
    # ``kafka-specgen pipeline ARGS``: the command line module run as a script
    sys.argv = ["kafka-specgen", "pipeline", *sys.argv[1:]]
    runpy.run_module("kafka_specgen.cli", run_name="__main__", alter_sys=True)
