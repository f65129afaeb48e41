"""``wheelspec spark-entry``: print the path of the Python file to give ``spark-submit``
(:mod:`.spark_submit`), for::

    spark-submit --master spark://host:7077 "$(wheelspec spark-entry)" analyze --engine spark TRACES

Light at import: the path is found without importing the module (or pyspark).
"""

from __future__ import annotations

import argparse

from wheelspec.spec.errors import UserError

ENTRY = "wheelspec.conformance.cli.spark_submit"


def configure_spark_entry(p: argparse.ArgumentParser) -> None:
    from wheelspec.conformance.cli.args import describe

    describe(p, [('spark-submit --master "local[2]" "$(wheelspec spark-entry)" analyze --engine spark traces/',
                  "judge a trace dataset inside a submitted Spark application (docs: wheelspec docs SPARK)"),
                 ('spark-submit --master spark://host:7077 "$(wheelspec spark-entry)" campaign --engine spark '
                  "--schedules 100000 --out /shared/campaign", "a campaign on a cluster")],
             ["0    the path was printed"])


def run_spark_entry(args: argparse.Namespace) -> int:
    import importlib.util

    spec = importlib.util.find_spec(ENTRY)
    if spec is None or not spec.origin:
        raise UserError(f"{ENTRY} is not installed (reinstall wheelspec)")
    print(spec.origin)
    return 0
