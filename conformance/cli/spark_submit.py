"""The Python file to give ``spark-submit``: runs a ``wheelspec`` command inside the submitted
driver.

``spark-submit`` takes a Python *file* as its application (the ``wheelspec`` console script is a
launcher it cannot run: "Failed to get main class").  This module is that file; the arguments
after it are a ``wheelspec`` command line, ``analyze`` or ``campaign`` with ``--engine spark``::

    spark-submit --master spark://host:7077 --conf spark.executor.memory=8g \\
        "$(wheelspec spark-entry)" analyze --engine spark hdfs:///traces/2024-06/

``wheelspec spark-entry`` prints this file's path (so does ``python -m
wheelspec.conformance.cli.spark_submit --path``).  Under the submit the session is the one
``spark-submit`` configured: its master, deploy mode, memory and ``--conf`` settings
(:func:`wheelspec.conformance.traces.spark_session.get_session`); ``--master`` and
``--driver-memory`` of the wheelspec command are refused there, because the submit has decided
them already.  Spark's log is held at WARN from before the context starts unless the command has
``-v`` (:func:`~wheelspec.conformance.traces.spark_session.set_submit_verbosity`).  The exit code is
the command's (docs/guides/SPARK.md).
"""

from __future__ import annotations

import sys

#: the commands that run on Spark; any other one has nothing to do under spark-submit
SPARK_COMMANDS = ("analyze", "campaign")


def main(argv: list[str] | None = None) -> int:
    """Run ``wheelspec ARGV`` in this (submitted) driver; ``--engine spark`` is implied."""
    from wheelspec.conformance.cli import main as cli_main

    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--path"]:
        print(__file__)
        return 0
    if not args or args[0] not in SPARK_COMMANDS:
        got = repr(args[0]) if args else "nothing"
        print(f"wheelspec spark-submit entry: give a command after this file: {' or '.join(SPARK_COMMANDS)} "
              f"(got {got}); e.g. spark-submit \"$(wheelspec spark-entry)\" analyze TRACES", file=sys.stderr)
        return 2
    for opt in ("--master", "--driver-memory"):
        if any(a == opt or a.startswith(opt + "=") for a in args[1:]):
            print(f"wheelspec {args[0]}: error: {opt} is spark-submit's under spark-submit: give it before "
                  f"the file (spark-submit {opt} ... FILE {args[0]} ...)", file=sys.stderr)
            return 2
    if not any(a == "--engine" or a.startswith("--engine=") for a in args[1:]):
        args[1:1] = ["--engine", "spark"]
    from wheelspec.conformance.traces.spark_session import set_submit_verbosity

    # before the command starts the SparkContext: its start-up log is INFO, and -v is the way to see it
    set_submit_verbosity(verbose=any(a in ("-v", "--verbose") or (a.startswith("-v") and set(a[1:]) == {"v"})
                                    for a in args[1:]))
    return cli_main(args)


if __name__ == "__main__":
    sys.exit(main())
