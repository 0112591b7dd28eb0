"""Entry script for ``spark-submit`` (which takes a file, not a module)::

    PYSPARK_DRIVER_PYTHON=.venv/bin/python spark-submit --master spark://HOST:7077 \\
        pipeline/submit.py --input /shared/captures --out /shared/kafka-tables

The arguments are those of ``kafka-specgen pipeline``; the master comes from spark-submit.
"""

import sys

from kafka_specgen.cli import main

if __name__ == "__main__":
    sys.exit(main(["pipeline", *sys.argv[1:]]))
