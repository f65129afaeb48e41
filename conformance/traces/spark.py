"""``wheelspec analyze --engine spark``: the analysis of :mod:`.rules` as a handful of
Spark jobs, for traces larger than one machine.

The work splits by what each part needs (docs/guides/SPARK.md, "How the analysis runs"):

* **order-free parts are Spark SQL aggregations** over the column-pruned Parquet scan: the
  summary and input validation (one aggregation), the exact lateness histogram (a group-by of
  integer lateness per implementation, wheel level and profile) and throughput over virtual time
  (a group-by of time buckets);
* **the order-dependent properties** (every property of the history checker: which request a
  fire belongs to, the schedule a fire matches, the last advance before a schedule ends, ...) are
  one per-run Arrow function inside the executors: the dataset is hash-partitioned by ``run``
  once (so each partition holds whole runs) and ``mapInArrow`` runs :func:`.local.judge_table`
  -- the numpy segmented-scan algorithm of the local engine -- on each partition, returning only
  violation counts, the first violating rows and per-profile early-fire counts.  Runs never
  interact, so the driver's sum of the partitions' results is the whole dataset's result, and it
  is identical to ``--engine local`` by construction.

The first design expressed those properties as window functions too: about 100 jobs and several
sorts of the whole dataset by (run, seq), (run, id, seq) forwards and backwards; 10 M rows did not
finish in 720 s.  One shuffle by run and a linear-time pass per partition replace all of them.
Import is cheap; pyspark is imported when a function runs.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import Iterator
from functools import partial
from typing import Any

from wheelspec.conformance.adapters.protocol import clean_text
from wheelspec.conformance.traces.format import EVENT_KINDS, KIND_COLUMNS, TRACE_SCHEMA
from wheelspec.conformance.traces.rules import (
    DEADLINE_RANGE,
    PROFILES,
    ROW_COLUMNS,
    TIME_RANGE,
    bucket_width,
    check_options,
    finish,
    level_thresholds,
)
from wheelspec.spec.errors import UserError
from wheelspec.spec.limits import MIN_WHEEL_SIZE
from wheelspec.spec.profiles import KAFKA

log = logging.getLogger(__name__)

#: the columns :func:`.local.judge_table` reads; only these are shuffled (impl and wheel_size
#: only matter to the lateness and throughput aggregations, which are SQL)
JUDGE_COLUMNS = ("run", "seq", "kind", "time", "id", "delay", "deadline", "value", "flag", "profile", "tick_ms",
                 "label", "key", "keys", "ops")
#: closed-vocabulary string columns go to the Python workers as small integer codes (validated in
#: job 1): moving rows from Spark into Arrow costs about twice as much per string as per number
CODED_COLUMNS = {"kind": EVENT_KINDS, "profile": PROFILES}
#: list columns go to the Python workers as JSON text: Spark 4.x converts array columns to Arrow
#: about 20x slower than strings (measured here: 22 s vs 1.5 s per million rows, even all null)
LIST_COLUMNS = ("keys", "ops")
#: rows per partition of the by-run shuffle: bounds a Python worker's memory (about 0.7 KB per row
#: in the numpy pass) while keeping per-partition overhead small
ROWS_PER_PARTITION = 1_000_000
#: what each partition returns: one row per (property, count), one per example row, the per-profile
#: early-fire counts and the partition's number of runs.  A row's deadline may be an exact sum past
#: int64 (:data:`.rules.ROW_COLUMNS`), hence a decimal
RESULT_DDL = ("prop string, n long, run string, seq long, kind string, id long, time long, deadline decimal(20,0), "
              "why string")
#: the columns that some event kind needs (:data:`.format.KIND_COLUMNS`), null-counted in job 1
KIND_NEEDS = tuple(sorted({c for need in KIND_COLUMNS.values() for c in need}))
#: differences of two int64 columns (lateness, time since the first row) are computed in this
#: type: exact over the whole int64 range, where bigint arithmetic would overflow (ANSI mode) or wrap
WIDE = "decimal(20,0)"


def load(spark: Any, paths: list[str]) -> Any:
    """The trace files as one DataFrame with :data:`TRACE_SCHEMA`'s columns (absent optional
    columns as nulls, present ones cast), checked like :func:`.format.conform`."""
    from pyspark.sql import functions as F
    from pyspark.sql.utils import AnalysisException

    from wheelspec.conformance.traces.format import check_required, trace_files

    files = [str(p) for p in trace_files(paths)]
    try:
        df = spark.read.option("mergeSchema", "true").parquet(*files)
    except AnalysisException as e:
        raise UserError(f"could not read the trace with Spark: {str(e).splitlines()[0]}") from None
    have = set(df.columns)
    check_required(have, files[0])
    where = files[0] if len(files) == 1 else f"{files[0]} (and {len(files) - 1} more)"
    cols = []
    for f in TRACE_SCHEMA:
        t = _spark_type(f.type)
        if f.name not in have:
            cols.append(F.lit(None).cast(t).alias(f.name))
            continue
        src = df.schema[f.name].dataType.simpleString()
        if src != t:
            _check_cast(df, f.name, src, t, where)
        cols.append(F.col(f.name).cast(t).alias(f.name))
    return df.select(*cols)   # rows are checked per event kind by analyze_dataframe's first job


def _check_cast(df: Any, name: str, src: str, target: str, where: str) -> None:
    """A column of another type than the schema's is cast only if every value survives the cast
    (as pyarrow's safe cast in the local engine): a string ``seq`` of digits is read, ``"soon"``
    is a one-line error here, not a Java exception in the middle of a job."""
    from pyspark.errors import AnalysisException, PySparkException
    from pyspark.sql import functions as F

    try:
        cast = F.expr(f"try_cast(`{name}` as {target})")
        lossy = F.col(name).isNotNull() & (cast.isNull() | (cast.cast(src) != F.col(name)))
        bad = df.filter(lossy).select(F.col(name).cast("string"), "run", "seq", F.input_file_name()).first()
    except AnalysisException:
        raise UserError(f"{where}: column {name!r} has type {src}, expected {target}") from None
    except PySparkException as e:
        raise UserError(f"{where}: column {name!r} has type {src}, expected {target} "
                        f"({_first_line(e)})") from None
    if bad is not None:
        raise UserError(f"{bad[3] or where}: run {bad[1]!r} seq {bad[2]}: column {name!r} has type {src}, expected "
                        f"{target}; the value {bad[0]!r} is not one")


def _first_line(e: BaseException, text: str | None = None) -> str:
    """The first line of ``text`` (by default ``str(e)``), at most 300 characters."""
    return ((str(e) if text is None else text).strip().splitlines() or [type(e).__name__])[0][:300]


#: what Spark's failure says when a file of the trace cannot be read (truncated, corrupt, not
#: Parquet): its error classes and the Java exceptions it may carry as a cause
_UNREADABLE = ("FAILED_READ_FILE", "CANNOT_READ_FILE_FOOTER", "ParquetDecodingException", "is not a Parquet file")


@contextlib.contextmanager
def unreadable_files_as_user_errors() -> Iterator[None]:
    """A trace file Spark cannot read, met when a job runs (at the start, reading footers, or in
    the middle, reading a corrupt page), is one line naming it (:class:`UserError`), not a Java
    stack; any other failure of Spark's goes on as it is: a bug to report, not the user's input."""
    from py4j.protocol import Py4JJavaError

    try:
        yield
    except Py4JJavaError as e:
        text = str(e)  # py4j puts the whole Java stack here, causes included
        if not any(k in text for k in _UNREADABLE):
            raise
        try:
            message = str(e.java_exception.getMessage())
        except Exception:  # noqa: BLE001 - the JVM may be gone; the text has the message too
            message = text
        raise UserError(f"could not read the trace with Spark: {clean_text(_first_line(e, message))}") from None


def _spark_type(t: Any) -> str:
    import pyarrow as pa

    if pa.types.is_list(t):
        return f"array<{_spark_type(t.value_type)}>"
    return {pa.int64(): "bigint", pa.string(): "string", pa.bool_(): "boolean"}[t]


def _lists_from_json(col: Any, typ: Any) -> Any:
    """A JSON-text column (Spark's ``to_json`` of an array) back as an Arrow list column."""
    import json

    import pyarrow as pa

    col = col.combine_chunks()
    if col.null_count == len(col):
        return pa.nulls(len(col), typ)
    return pa.array([None if v is None else json.loads(v) for v in col.to_pylist()], typ)


def judge_partition(batches: Iterator[Any], lateness_ms: int | None, max_rows: int) -> Iterator[Any]:
    """The per-partition function of ``mapInArrow``: all of a partition's rows (whole runs) as one
    Arrow table, judged by :func:`.local.judge_table`; yields the violations as a few small rows
    (:data:`RESULT_DDL`).  A module-level function, so executors import it rather than unpickle it."""
    import pyarrow as pa

    from wheelspec.conformance.traces.format import conform
    from wheelspec.conformance.traces.local import _Rows, judge_table

    chunks = [b for b in batches if b.num_rows]
    if not chunks:
        return
    table = pa.Table.from_batches(chunks)
    del chunks
    for name in LIST_COLUMNS:   # shipped as JSON text (see LIST_COLUMNS); back to lists
        i = table.schema.get_field_index(name)
        table = table.set_column(i, name, _lists_from_json(table.column(name), TRACE_SCHEMA.field(name).type))
    for name, vocabulary in CODED_COLUMNS.items():   # shipped as codes (see CODED_COLUMNS); back to strings
        i = table.schema.get_field_index(name)
        codes = table.column(name).combine_chunks().cast(pa.int32())
        table = table.set_column(i, name, pa.DictionaryArray.from_arrays(codes, pa.array(vocabulary)).cast(pa.string()))
    table = conform(table, "<partition>", rows=False)   # rows validated by job 1, on the whole dataset
    R = _Rows(table)
    viol, by_profile = judge_table(R, lateness_ms=lateness_ms, max_rows=max_rows)
    out: dict[str, list[Any]] = {c: [] for c in ("prop", "n", *ROW_COLUMNS)}

    def row(prop: str, n: int | None, r: dict[str, Any] | None) -> None:
        out["prop"].append(prop)
        out["n"].append(n)
        for c in ROW_COLUMNS:
            out[c].append(None if r is None else r[c])

    for prop, (n, rows) in viol.items():
        row(prop, n, None)
        for r in rows:
            row(prop, None, r)
    for prof, n in by_profile.items():
        row("by_profile:" + prof, n, None)
    row("runs", len(R.run_names), None)
    types = {"prop": pa.string(), "n": pa.int64(), "run": pa.string(), "seq": pa.int64(), "kind": pa.string(),
             "id": pa.int64(), "time": pa.int64(), "deadline": pa.decimal128(20, 0), "why": pa.string()}
    yield pa.RecordBatch.from_pydict(out, schema=pa.schema([(c, types[c]) for c in out]))


def analyze_dataframe(spark: Any, df: Any, *, lateness_ms: int | None = None, max_rows: int = 20,
                      partitions: int | None = None) -> dict[str, Any]:
    """Judge a trace DataFrame (as :func:`load` returns it); the JSON of :func:`.local.analyze_table`.
    ``partitions``: partitions of the by-run shuffle (default: the cores, or more for big traces)."""
    check_options(lateness_ms, max_rows)
    groups = _summary_job(df)
    rows_total = _check_groups(df, groups)
    if partitions is None:
        partitions = max(spark.sparkContext.defaultParallelism, math.ceil(rows_total / ROWS_PER_PARTITION))
    viol, by_profile, runs = _judge_job(df, partitions, lateness_ms, max_rows)
    hist = _lateness_job(df, {(int(g["tick"]), int(g["tw_wheel"])) for g in groups if g["tw_wheel"] is not None})
    times = [g for g in groups if g["tmin"] is not None]
    tmin, tmax = min(int(g["tmin"]) for g in times), max(int(g["tmax"]) for g in times)
    width, series = _throughput_job(df, tmin, tmax)
    kinds = {k: sum(int(g["rows"]) for g in groups if g["kind"] == k) for k in EVENT_KINDS}
    summary = {"rows": rows_total, "runs": runs, "impls": sorted({g["impl"] for g in groups}),
               "profiles": sorted({g["prof"] for g in groups}), "kinds": {k: n for k, n in kinds.items() if n}}
    return finish(summary, viol, by_profile, hist, {"bucket_ms": width, "start": tmin, "series": series},
                  max_rows, lateness_ms)


def _profile_col() -> Any:
    """The ``profile`` column, ``kafka`` where null (docs/guides/TRACE_FORMAT.md)."""
    from pyspark.sql import functions as F

    return F.coalesce("profile", F.lit(KAFKA))


def _impl_col() -> Any:
    """The ``impl`` column, ``""`` where null."""
    from pyspark.sql import functions as F

    return F.coalesce("impl", F.lit(""))


def _summary_job(df: Any) -> list[Any]:
    """Job 1: one aggregation row per (kind, profile, impl, tick, wheel size of a judged fire)."""
    from pyspark.sql import functions as F

    col, lit, when = F.col, F.lit, F.when
    t0 = time.perf_counter()
    # A group-by on a few low-cardinality columns (no count-distinct: the number of runs comes from
    # job 2, whose partitions hold whole runs); the driver derives the summary from its rows.
    tw = ((col("kind") == "fire") & col("deadline").isNotNull() & col("delay").isNotNull()
          & col("wheel_size").isNotNull())
    groups = (df.groupBy(col("kind"), _profile_col().alias("prof"), _impl_col().alias("impl"),
                         F.coalesce("tick_ms", lit(1)).alias("tick"), when(tw, col("wheel_size")).alias("tw_wheel"))
              .agg(F.count(lit(1)).alias("rows"), F.min("time").alias("tmin"), F.max("time").alias("tmax"),
                   F.sum(col("run").isNull().cast("long") + col("seq").isNull().cast("long")
                         + col("time").isNull().cast("long")).alias("nulls"),
                   F.min("wheel_size").alias("wheel_min"),
                   *[F.sum(col(c).isNull().cast("long")).alias(f"null_{c}") for c in KIND_NEEDS])
              .collect())
    log.info("job 1 (summary, validation): %.1f s", time.perf_counter() - t0)
    return groups


def _check_groups(df: Any, groups: list[Any]) -> int:
    """The rows' validation (:func:`.format.conform`'s, on the whole dataset) from job 1; the row count."""
    from pyspark.sql import functions as F

    rows_total = sum(int(g["rows"]) for g in groups)
    if rows_total == 0:
        raise UserError("the trace has no rows")
    nulls = sum(int(g["nulls"]) for g in groups) + sum(int(g["rows"]) for g in groups if g["kind"] is None)
    if nulls:
        raise UserError(f"the trace has {nulls} null value(s) in its required columns run, seq, kind, time")
    for k in sorted({g["kind"] for g in groups} - set(EVENT_KINDS)):
        raise UserError(f"trace column 'kind' has an unknown value {k!r} (expected one of {', '.join(EVENT_KINDS)})")
    for p in sorted({g["prof"] for g in groups} - set(PROFILES)):
        raise UserError(f"trace column 'profile' has an unknown value {p!r} (expected one of {', '.join(PROFILES)})")
    tickmin = min(int(g["tick"]) for g in groups)
    if tickmin < 1:
        raise UserError(f"trace column 'tick_ms' has a value {tickmin} < 1")
    wheels = [int(g["wheel_min"]) for g in groups if g["wheel_min"] is not None]
    if wheels and min(wheels) < MIN_WHEEL_SIZE:
        raise UserError(f"trace column 'wheel_size' has a value {min(wheels)} < {MIN_WHEEL_SIZE}")
    for g in sorted(groups, key=lambda g: EVENT_KINDS.index(g["kind"])):
        for c in KIND_COLUMNS[g["kind"]]:
            if g[f"null_{c}"]:
                hit = (df.filter((F.col("kind") == g["kind"]) & F.col(c).isNull())
                       .select("run", "seq", F.input_file_name()).first())
                at = f"{hit[2]}: run {hit[0]!r} seq {hit[1]}" if hit is not None else "the trace"
                raise UserError(f"{at}: a {g['kind']!r} row needs column {c!r}, which is null "
                                f"({g[f'null_{c}']} such rows)")
    return rows_total


def _shipped(c: str) -> Any:
    """Column ``c`` as job 2 ships it to the Python workers (see :data:`LIST_COLUMNS`, :data:`CODED_COLUMNS`)."""
    from pyspark.sql import functions as F

    if c in LIST_COLUMNS:
        return F.to_json(c).alias(c)
    if c in CODED_COLUMNS:
        vocabulary = CODED_COLUMNS[c]
        expr = _profile_col() if c == "profile" else F.col(c)
        code = F.array(*[F.lit(v) for v in vocabulary])
        return (F.array_position(code, expr) - 1).cast("tinyint").alias(c)
    return F.col(c)


def _judge_job(df: Any, partitions: int, lateness_ms: int | None,
               max_rows: int) -> tuple[dict[str, tuple[int, list[dict[str, Any]]]], dict[str, int], int]:
    """Job 2: every property of :func:`.local.judge_table`, one numpy pass per partition of whole runs,
    added up: the violations, the good fires each profile would call early, the number of runs."""
    t0 = time.perf_counter()
    judged = (df.select(*[_shipped(c) for c in JUDGE_COLUMNS]).repartition(partitions, "run")
              .mapInArrow(partial(judge_partition, lateness_ms=lateness_ms, max_rows=max_rows), RESULT_DDL).collect())
    log.info("job 2 (properties, %d partitions): %.1f s", partitions, time.perf_counter() - t0)
    viol: dict[str, tuple[int, list[dict[str, Any]]]] = {}
    by_profile = {p: 0 for p in PROFILES}
    runs = 0
    for r in judged:
        prop = r["prop"]
        if prop == "runs":
            runs += int(r["n"])
            continue
        if prop.startswith("by_profile:"):
            by_profile[prop.split(":", 1)[1]] += int(r["n"])
            continue
        n, rows = viol.get(prop, (0, []))
        if r["n"] is not None:
            viol[prop] = (n + int(r["n"]), rows)
        else:
            rows.append({c: int(r[c]) if c == "deadline" and r[c] is not None else r[c] for c in ROW_COLUMNS})
            viol[prop] = (n, rows)
    return viol, by_profile, runs


def _lateness_job(df: Any, tick_wheel: set[tuple[int, int]]) -> list[tuple[str, int, str, int, int]]:
    """Job 3: the exact lateness histogram, :func:`.local.lateness_histogram` as a SQL group-by."""
    from pyspark.sql import functions as F

    col, lit, when = F.col, F.lit, F.when
    t0 = time.perf_counter()
    # fires whose time or deadline lie outside the protocol's ranges are well-formed findings, not lateness
    fr = df.filter((col("kind") == "fire") & col("deadline").isNotNull() & col("time").between(*TIME_RANGE)
                   & col("deadline").between(*DEADLINE_RANGE))
    tick = F.coalesce("tick_ms", lit(1))
    level = lit(-1).cast("bigint")
    for tk, wh in sorted(tick_wheel):
        expr = lit(0).cast("bigint")
        for t in level_thresholds(tk, wh):
            expr = expr + (col("delay") >= lit(t)).cast("bigint")
        level = when((tick == tk) & (col("wheel_size") == wh) & col("delay").isNotNull(), expr).otherwise(level)
    hist = [(r["impl"], int(r["level"]), r["prof"], int(r["late"]), int(r["c"])) for r in
            fr.select(_impl_col().alias("impl"), _profile_col().alias("prof"), level.alias("level"),
                      (col("time").cast(WIDE) - col("deadline").cast(WIDE)).alias("late"))
            .groupBy("impl", "level", "prof", "late").agg(F.count(lit(1)).alias("c")).collect()]
    log.info("job 3 (lateness): %.1f s", time.perf_counter() - t0)
    return hist


def _throughput_job(df: Any, tmin: int, tmax: int) -> tuple[int, list[dict[str, Any]]]:
    """Job 4: throughput over virtual time, a SQL group-by of time buckets; the bucket width and the series."""
    from pyspark.sql import functions as F

    t0 = time.perf_counter()
    width = bucket_width(tmax - tmin + 1)
    tp = (df.select(_impl_col().alias("impl"), F.expr(f"(cast(time as {WIDE}) - ({tmin})) div {width}").alias("bucket"),
                    (F.col("kind") == "fire").cast("long").alias("fire"))
          .groupBy("impl", "bucket").agg(F.count(F.lit(1)).alias("events"), F.sum("fire").alias("fires")).collect())
    log.info("job 4 (throughput): %.1f s", time.perf_counter() - t0)
    series = sorted(({"impl": r["impl"], "bucket": int(r["bucket"]), "events": int(r["events"]),
                      "fires": int(r["fires"])} for r in tp), key=lambda d: (d["impl"], d["bucket"]))
    return width, series
