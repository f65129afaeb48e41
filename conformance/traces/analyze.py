"""``wheelspec analyze TRACES``: judge a trace dataset with set-based queries, on Spark or locally.

Both engines run the algorithm of :mod:`.rules` and return the same JSON: per property
the number of violations and the first violating rows, lateness distributions per
implementation, wheel level and profile, and throughput over virtual time.  ``--out DIR`` also
writes ``analysis.json``, ``report.html`` (plots embedded) and the plots as PNG files.

This module is imported for every ``wheelspec`` invocation (the CLI builds all parsers), so it
imports pyarrow, numpy, matplotlib and pyspark only inside :func:`run_analyze`.
"""

from __future__ import annotations

import time
from typing import Any

from wheelspec.conformance.traces.rules import check_options
from wheelspec.spec.errors import UserError


def analyze(paths: list[str], *, engine: str = "local", master: str | None = None, driver_memory: str = "4g",
            lateness_ms: int | None = None, max_rows: int = 20, spark: Any = None,
            conf: dict[str, str] | None = None) -> dict[str, Any]:
    """Analyze trace files; returns the JSON-able result (``engine``, ``clock`` and ``seconds`` added, and
    ``session_seconds`` and ``spark`` when this call started the SparkSession: ``spark`` holds its
    master and, for each ``conf`` key (``--conf``), the value the session ended up with)."""
    check_options(lateness_ms, max_rows)   # before a trace is read or Spark starts
    t0 = time.perf_counter()
    session_seconds: float | None = None
    if engine == "local":
        from wheelspec.conformance.traces.format import read_trace
        from wheelspec.conformance.traces.local import analyze_table

        table = read_trace(paths)
        result = analyze_table(table, lateness_ms=lateness_ms, max_rows=max_rows, source=", ".join(map(str, paths)))
    elif engine == "spark":
        from wheelspec.conformance.traces.spark import analyze_dataframe, load, unreadable_files_as_user_errors
        from wheelspec.conformance.traces.spark_session import get_session, session_info

        given = spark
        if spark is None:
            spark = get_session(master, driver_memory=driver_memory, extra=conf)
            session_seconds = time.perf_counter() - t0
            t0 = time.perf_counter()
        with unreadable_files_as_user_errors():
            result = analyze_dataframe(spark, load(spark, list(paths)), lateness_ms=lateness_ms, max_rows=max_rows)
        if given is None:   # the session this call asked for: its master, and what --conf set
            result["spark"] = session_info(spark, conf or {})
    else:
        raise UserError(f"--engine must be local or spark, got {engine!r}")
    result["engine"] = engine
    result["clock"] = trace_clock(paths)
    result["seconds"] = round(time.perf_counter() - t0, 3)      # the analysis, without Spark's start-up
    if session_seconds is not None:
        result["session_seconds"] = round(session_seconds, 3)
    return result


def trace_clock(paths: list[str]) -> str:
    """Which clock the trace's ``time`` reads, from each file's :data:`.format.CLOCK_KEY`:
    ``virtual`` or ``real`` when every file says so, ``mixed`` when files disagree (their lateness
    must not be pooled), ``unstated`` when some file does not say (a third party's trace)."""
    import pyarrow.parquet as pq

    from wheelspec.conformance.traces.format import CLOCK_KEY, trace_files

    said = set()
    for f in trace_files(paths):
        meta = pq.read_schema(f).metadata or {}
        said.add(meta.get(CLOCK_KEY, b"").decode(errors="replace") or None)
    if len(said - {None}) > 1:
        return "mixed"
    if None in said or not said:
        return "unstated"
    return said.pop() or "unstated"

