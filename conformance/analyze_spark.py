"""``wheelspec analyze --engine spark``: the property queries of :mod:`.analyze_rules` as Spark
DataFrame jobs (window functions, joins, group-bys), for traces larger than one machine.

Every step mirrors :mod:`.analyze_local` (same algorithm, same JSON): positions become ``seq`` or
a ``row_number`` inside a window; "the next X after me" (which Spark computes quadratically over
an ``unbounded following`` frame) is computed as "the last X before me" over the reversed order.
Import is cheap; pyspark is imported when a function runs.
"""

from __future__ import annotations

from typing import Any

from .analyze_rules import CAUSED, PROFILES, ROW_COLUMNS, THROUGHPUT_BUCKETS, VIAS, finish, level_thresholds
from .errors import UserError
from .trace import EVENT_KINDS, TRACE_SCHEMA

BIG = 2**62


def load(spark: Any, paths: list[str]) -> Any:
    """The trace files as one DataFrame with :data:`TRACE_SCHEMA`'s columns (absent optional
    columns as nulls, present ones cast), checked like :func:`.trace.conform`."""
    from pyspark.sql import functions as F
    from pyspark.sql.utils import AnalysisException

    from .trace import check_required, trace_files

    files = [str(p) for p in trace_files(paths)]
    try:
        df = spark.read.option("mergeSchema", "true").parquet(*files)
    except AnalysisException as e:
        raise UserError(f"could not read the trace with Spark: {str(e).splitlines()[0]}") from None
    have = set(df.columns)
    check_required(have, files[0])
    from pyspark.sql.types import _parse_datatype_string  # noqa: F401 - keeps the import cost here

    cols = []
    for f in TRACE_SCHEMA:
        t = _spark_type(f.type)
        cols.append((F.col(f.name).cast(t) if f.name in have else F.lit(None).cast(t)).alias(f.name))
    return df.select(*cols)


def _spark_type(t: Any) -> str:
    import pyarrow as pa

    if pa.types.is_list(t):
        return f"array<{_spark_type(t.value_type)}>"
    return {pa.int64(): "bigint", pa.string(): "string", pa.bool_(): "boolean"}[t]


def analyze_dataframe(spark: Any, df: Any, *, lateness_ms: int | None = None, max_rows: int = 20) -> dict[str, Any]:
    from pyspark.sql import Window as W
    from pyspark.sql import functions as F

    col, lit, when = F.col, F.lit, F.when
    UP, CUR = W.unboundedPreceding, W.currentRow

    # ---- summary and validation (one pass) ----------------------------------------------------
    base = df.select(
        "run", "seq", "kind", "time", "id", "delay", "deadline", "flag", "value", "label", "key", "keys", "ops",
        F.coalesce("impl", lit("")).alias("impl"), F.coalesce("profile", lit("kafka")).alias("prof"),
        F.coalesce("tick_ms", lit(1)).alias("tick"), col("wheel_size").alias("wheel"))
    # base is not materialised: re-reading Parquet (column-pruned) is cheaper than caching 10 M wide rows
    agg = base.agg(F.count(lit(1)).alias("rows"), F.countDistinct("run").alias("runs"),
                   F.min("time").alias("tmin"), F.max("time").alias("tmax"), F.min("tick").alias("tickmin"),
                   F.collect_set("prof").alias("profs"), F.collect_set("impl").alias("impls"),
                   F.sum(F.col("run").isNull().cast("int") + F.col("seq").isNull().cast("int")
                         + F.col("kind").isNull().cast("int") + F.col("time").isNull().cast("int")).alias("nulls")
                   ).first()
    if agg["rows"] == 0:
        raise UserError("the trace has no rows")
    if agg["nulls"]:
        raise UserError(f"the trace has {agg['nulls']} null value(s) in its required columns run, seq, kind, time")
    kinds = {r["kind"]: r["count"] for r in base.groupBy("kind").count().collect()}
    for k in kinds:
        if k not in EVENT_KINDS:
            raise UserError(f"trace column 'kind' has an unknown value {k!r} (expected one of {', '.join(EVENT_KINDS)})")
    for p in agg["profs"]:
        if p not in PROFILES:
            raise UserError(f"trace column 'profile' has an unknown value {p!r} (expected one of {', '.join(PROFILES)})")
    if agg["tickmin"] < 1:
        raise UserError(f"trace column 'tick_ms' has a value {agg['tickmin']} < 1")

    def kafka_floor(exp: Any) -> Any:  # floor division on bigints, exact (no doubles)
        return F.expr(f"({exp} - pmod({exp}, tick))")

    def earliest_exact(exp: str) -> Any:
        return (when(col("prof") == "kafka", kafka_floor(exp))
                .when(col("prof") == "strict", col(exp)).otherwise(col(exp) + 1))

    parts: list[Any] = []   # (prop, part, rows DataFrame)

    def report(prop: str, rows: Any) -> None:
        parts.append(rows.select(lit(prop).alias("prop"), lit(len(parts)).alias("part"), *ROW_COLUMNS))

    # ---- per run, by seq: lag/lead, request group, last advance -----------------------------------
    wr = W.partitionBy("run").orderBy("seq")
    caused = col("kind").isin(*CAUSED)
    g1 = base.withColumn("caused", caused).select(
        "*",
        F.lag("time").over(wr).alias("prev_time"),
        F.lag("kind").over(wr).alias("prev_kind"), F.lag("id").over(wr).alias("prev_id"),
        F.lag("label").over(wr).alias("prev_label"),
        F.lead("kind").over(wr).alias("next_kind"), F.lead("id").over(wr).alias("next_id"),
        F.coalesce(F.sum((~col("caused")).cast("long")).over(wr.rowsBetween(UP, -1)), lit(0)).alias("g"),
        F.last(when(col("kind") == "advance", F.struct(col("seq").alias("s"), col("time").alias("t"))),
               ignorenulls=True).over(wr.rowsBetween(UP, -1)).alias("prev_adv"))
    g1 = g1.localCheckpoint(eager=True)
    run_last_adv = (g1.filter(col("kind") == "advance").groupBy("run")
                    .agg(F.max(F.struct(col("seq").alias("s"), col("time").alias("t"))).alias("last_adv")))
    reqs = g1.filter(~col("caused")).select(
        "run", "g", col("seq").alias("req_seq"), col("kind").alias("req_kind"), col("id").alias("req_id"),
        col("delay").alias("req_delay"), col("deadline").alias("req_dl"))
    need = ((col("kind") == "fire") & (col("delay").isNull() | (col("delay") <= 0)
                                       | (col("deadline").isNotNull() & (col("time") <= col("deadline"))))) \
        | (col("kind") == "complete")
    # only the rows that need their request are joined (and materialised); the rest stay lazy
    needed = g1.filter(need).join(reqs, ["run", "g"], "left").localCheckpoint(eager=True)
    rows = needed.unionByName(g1.filter(~need).select("*", *[lit(None).cast(t).alias(c) for c, t in (
        ("req_seq", "bigint"), ("req_kind", "string"), ("req_id", "bigint"), ("req_delay", "bigint"),
        ("req_dl", "bigint"))]))

    # ---- well-formed ----------------------------------------------------------------------------
    report("well-formed", g1.filter(col("prev_time").isNotNull() & (col("time") < col("prev_time"))))
    report("well-formed", g1.filter(col("kind").isin("add", "watch") & col("delay").isNotNull()
                                    & col("deadline").isNotNull() & (col("deadline") != col("time") + col("delay"))))
    report("well-formed", g1.filter((col("kind") == "complete") & (col("label").isNull() | ~col("label").isin(*VIAS))))
    ww = W.partitionBy("run", "id").orderBy("seq")
    watches = g1.filter((col("kind") == "watch") & col("id").isNotNull()).withColumn("wrn", F.row_number().over(ww))
    report("well-formed", watches.filter(col("wrn") >= 2))
    first_watch = watches.filter(col("wrn") == 1).select("run", "id", col("seq").alias("wseq1"))
    opr = rows.filter(col("kind").isin("complete", "set_completable", "force_complete") & col("id").isNotNull())
    at = when(col("kind") == "complete", F.coalesce(col("req_seq"), lit(BIG))).otherwise(col("seq"))
    report("well-formed", opr.join(first_watch, ["run", "id"], "left")
           .filter(col("wseq1").isNull() | (col("wseq1") > at)))

    # ---- timer rows by (run, id, effective seq) ------------------------------------------------
    gt = col("prof") == "strict-gt"
    t0 = rows.filter(col("kind").isin("add", "fire", "cancel") & col("id").isNotNull()).select(
        "run", "seq", "kind", "time", "id", "delay", "deadline", "flag", "prof", "tick", "prev_adv",
        "req_seq", "req_kind", "req_id", "req_delay", "req_dl")
    in_add = F.coalesce((col("kind") == "fire") & (col("req_kind") == "add") & (col("req_id") == col("id")), lit(False))
    t0 = t0.withColumn("eff", when(in_add, col("req_seq") * 2 + 1).otherwise(col("seq") * 2))
    wt = W.partitionBy("run", "id").orderBy("eff", "seq")
    supersede = (col("kind") == "add") & ~(gt & col("delay").isNotNull() & (col("delay") <= 0))
    in_add0 = in_add & F.coalesce(col("req_delay") <= 0, lit(False))
    ex_cand = in_add0 & gt & F.coalesce(col("deadline") == col("req_dl"), lit(False))
    t1 = t0.select("*", F.row_number().over(wt).alias("rn"), supersede.alias("sup"), in_add0.alias("in_add0"),
                   ex_cand.alias("ex_cand"))
    t1 = t1.select(
        "*",
        F.last(when(col("sup"), col("rn")), ignorenulls=True).over(wt.rowsBetween(UP, CUR)).alias("sched"),
        F.last(when(col("sup"), F.struct(col("deadline").alias("d"))), ignorenulls=True)
        .over(wt.rowsBetween(UP, CUR)).alias("sx"),
        (F.coalesce(F.lag("ex_cand").over(wt), lit(False))
         & (F.lag("req_seq").over(wt) == col("req_seq"))).alias("prev_same"),
        F.last(when(col("kind") == "cancel", col("rn")), ignorenulls=True).over(wt.rowsBetween(UP, -1)).alias("last_cancel"))
    exempt = col("ex_cand") & ~F.coalesce(col("prev_same"), lit(False))
    sched_exp = col("sx.d")
    same_exp = col("sx").isNotNull() & sched_exp.isNotNull() & col("deadline").isNotNull() & (col("deadline") == sched_exp)
    t1 = t1.withColumn("exempt", exempt).withColumn(
        "match", (col("kind") == "fire") & ~col("exempt") & col("sched").isNotNull() & same_exp)
    t1 = t1.withColumn("cm", F.sum(col("match").cast("long")).over(wt.rowsBetween(UP, CUR)))
    t1 = t1.withColumn("cm_s", F.last(when(col("sup"), col("cm")), ignorenulls=True).over(wt.rowsBetween(UP, CUR)))
    t1 = t1.withColumn("rank", when(col("sched").isNotNull(), col("cm") - col("cm_s")).otherwise(lit(0)))
    after_cancel = col("match") & (col("rank") == 1) & col("last_cancel").isNotNull() & (col("last_cancel") > col("sched"))
    t1 = t1.withColumn("after_cancel", after_cancel).withColumn(
        "good", col("match") & (col("rank") == 1) & ~col("after_cancel"))
    t1 = t1.localCheckpoint(eager=True)
    fires = col("kind") == "fire"
    report("fire-once", t1.filter(fires & ~col("exempt") & (col("sched").isNull() | ~same_exp
                                                           | (col("match") & (col("rank") >= 2)))))
    report("no-fire-after-cancel", t1.filter(col("after_cancel")))
    report("no-early-fire", t1.filter(col("good") & (col("time") < earliest_exact("deadline"))))
    bp = t1.filter(col("good")).agg(
        F.sum((col("time") < kafka_floor("deadline")).cast("long")).alias("kafka"),
        F.sum((col("time") < col("deadline")).cast("long")).alias("strict"),
        F.sum(((col("time") <= col("deadline")) & ~col("in_add0")).cast("long")).alias("gt")).first()
    by_profile = {"kafka": int(bp["kafka"] or 0), "strict": int(bp["strict"] or 0), "strict-gt": int(bp["gt"] or 0)}
    if lateness_ms is not None:
        report("late-fire", t1.filter(col("good") & (col("time") - col("deadline") > lateness_ms)))
    live = (col("sched").isNotNull() & (col("cm") - col("cm_s") == 0)
            & (col("last_cancel").isNull() | (col("last_cancel") < col("sched"))))
    report("cancel-result", t1.filter((col("kind") == "cancel") & col("flag").isNotNull() & (col("flag") != live)))

    # no-lost-task: reversed order gives "the first end row / superseding add after me"
    wrev = W.partitionBy("run", "id").orderBy(col("eff").desc(), col("seq").desc())
    end_row = (col("kind") == "cancel") | (col("match") & (col("rank") == 1))
    t2 = t1.select(
        "*",
        F.last(when(end_row & col("sched").isNotNull(), F.struct(col("sched").alias("sc"), col("prev_adv").alias("a"))),
               ignorenulls=True).over(wrev.rowsBetween(UP, -1)).alias("next_end"),
        F.last(when(col("sup"), F.struct(col("prev_adv").alias("a"))), ignorenulls=True)
        .over(wrev.rowsBetween(UP, -1)).alias("next_sup"))
    adds = t2.filter(col("sup") & col("deadline").isNotNull()).join(F.broadcast(run_last_adv), ["run"], "left")
    A = (when(col("next_end").isNotNull() & (col("next_end.sc") == col("rn")), col("next_end.a"))
         .when(col("next_sup").isNotNull(), col("next_sup.a")).otherwise(col("last_adv")))
    adds = adds.withColumn("A", A)
    report("no-lost-task", adds.filter(col("A").isNotNull() & (col("A.s") > col("seq"))
                                       & (col("A.t") >= earliest_exact("deadline"))))
    fired_in = t1.filter(col("in_add0")).select("run", col("req_seq").alias("seq")).distinct()
    nonpos = t1.filter((col("kind") == "add") & gt & col("delay").isNotNull() & (col("delay") <= 0))
    report("no-lost-task", nonpos.join(fired_in, ["run", "seq"], "left_anti"))

    # ---- purgatory ----------------------------------------------------------------------------
    wc = W.partitionBy("run", "id").orderBy("seq")
    comp = rows.filter((col("kind") == "complete") & col("id").isNotNull()).withColumn("crn", F.row_number().over(wc))
    comp = comp.localCheckpoint(eager=True)
    report("complete-once", comp.filter(col("crn") >= 2))
    first_done = comp.filter(col("crn") == 1).select("run", "id", col("seq").alias("fd"))
    is_cexp = (col("kind") == "complete") & (col("label") == "expire")
    report("expire-rule", g1.filter((col("kind") == "expire") & ~(
        F.coalesce((col("prev_kind") == "complete") & (col("prev_label") == "expire") & col("prev_id").isNotNull()
                   & col("id").isNotNull() & (col("prev_id") == col("id")), lit(False)))))
    report("expire-rule", g1.filter(is_cexp & ~F.coalesce(
        (col("next_kind") == "expire") & col("next_id").isNotNull() & (col("next_id") == col("id")), lit(False))))
    in_watch0 = (col("req_kind") == "watch") & col("req_id").isNotNull() & (col("req_id") == col("id")) \
        & col("req_delay").isNotNull() & (col("req_delay") <= 0)
    report("no-early-expire", comp.filter((col("crn") == 1) & is_cexp & col("deadline").isNotNull()
                                          & (col("time") < earliest_exact("deadline"))
                                          & ~(gt & F.coalesce(in_watch0, lit(False)))))

    def completed_in(label: str) -> Any:
        return (comp.filter((col("label") == label) & col("req_seq").isNotNull() & col("req_id").isNotNull()
                            & (col("req_id") == col("id"))).select("run", col("req_seq").alias("seq")).distinct()
                .withColumn(f"by_{label}", lit(True)))

    by_try = completed_in("try")
    wt_rows = g1.filter(col("kind") == "watch").join(by_try, ["run", "seq"], "left") \
        .withColumn("by_try", F.coalesce(col("by_try"), lit(False)))
    wt_rows = wt_rows.localCheckpoint(eager=True)
    report("watch-result", wt_rows.filter(col("flag").isNotNull() & (col("flag") != col("by_try"))))
    watched_ops = g1.filter((col("kind") == "watch") & col("id").isNotNull()).select("run", "id").distinct()
    force = (g1.filter((col("kind") == "force_complete") & col("flag").isNotNull() & col("id").isNotNull())
             .join(watched_ops, ["run", "id"], "left_semi")
             .join(completed_in("force"), ["run", "seq"], "left").join(first_done, ["run", "id"], "left")
             .withColumn("mine", F.coalesce(col("by_force"), lit(False))))
    was_done = col("fd").isNotNull() & (col("fd") < col("seq")) & ~col("mine")
    report("force-result", force.filter((col("flag") != col("mine")) | (col("flag") == was_done)))
    ccount = (comp.filter((col("label") == "check") & col("req_seq").isNotNull())
              .groupBy("run", col("req_seq").alias("seq")).agg(F.count(lit(1)).alias("cc")))
    checks = g1.filter((col("kind") == "check") & col("value").isNotNull()).join(ccount, ["run", "seq"], "left")
    report("check-count", checks.filter(F.coalesce(col("cc"), lit(0)) != col("value")))

    # no-lost-wakeup
    W_ = (wt_rows.filter(col("id").isNotNull() & ~(F.coalesce(col("flag"), lit(False)) & col("by_try")))
          .select("run", col("seq").alias("wseq"), col("id").alias("op"), F.explode("keys").alias("key")))
    C_ = g1.filter((col("kind") == "check") & col("key").isNotNull()).select(
        "run", "key", col("seq").alias("cseq"), *[col(c).alias("c_" + c) for c in ROW_COLUMNS if c not in ("run", "seq")])
    fd2 = first_done.select("run", col("id").alias("op"), "fd")
    pairs = (W_.join(C_, ["run", "key"]).filter(col("wseq") < col("cseq")).join(fd2, ["run", "op"], "left")
             .filter(col("fd").isNull() | (col("fd") > col("cseq"))).withColumn("pid", F.monotonically_increasing_id()))
    F_ = g1.filter(col("kind") == "cancel_for_key").select(col("run").alias("frun"), col("key").alias("fkey"),
                                                           col("seq").alias("fseq"))
    pairs = pairs.join(F_, (col("run") == col("frun")) & (col("key") == col("fkey")) & (col("fseq") > col("wseq"))
                       & (col("fseq") < col("cseq")), "left_anti")
    S_ = g1.filter((col("kind") == "set_completable") & col("id").isNotNull() & col("flag").isNotNull()).select(
        "run", col("id").alias("op"), col("seq").alias("sseq"), col("flag").alias("sflag"))
    lw = (pairs.join(S_, ["run", "op"]).filter((col("sseq") > col("wseq")) & (col("sseq") < col("cseq")))
          .groupBy("pid", "run", "cseq", *["c_" + c for c in ROW_COLUMNS if c not in ("run", "seq")])
          .agg(F.max(F.struct("sseq", "sflag")).alias("last")).filter(col("last.sflag")))
    lw = lw.localCheckpoint(eager=True)
    lost_wakeups = lw.count()
    lw_rows = lw.select("run", col("cseq").alias("seq"), *[col("c_" + c).alias(c) for c in ROW_COLUMNS
                                                           if c not in ("run", "seq")]).distinct()

    # no-lost-operation
    w2 = (g1.filter((col("kind") == "watch") & col("id").isNotNull() & col("delay").isNotNull())
          .join(first_done, ["run", "id"], "left").filter(col("fd").isNull() | (col("fd") > col("seq"))))
    cf = g1.filter(col("kind") == "cancel_for_key").select("run", col("seq").alias("fseq"), F.explode("ops").alias("id"))
    w2c = (w2.select("run", "id", col("seq").alias("wseq")).join(cf, ["run", "id"])
           .filter(col("fseq") > col("wseq")).groupBy("run", "id", "wseq").agg(F.min("fseq").alias("fp")))
    w2 = w2.join(w2c.withColumnRenamed("wseq", "seq"), ["run", "id", "seq"], "left")
    w2 = w2.withColumn("end", when(col("fp").isNotNull() & (col("fd").isNull() | (col("fp") < col("fd"))), col("fp"))
                       .otherwise(col("fd")))
    ends = g1.select("run", col("seq").alias("end"), col("prev_adv").alias("end_adv"))
    w2 = w2.join(ends, ["run", "end"], "left").join(F.broadcast(run_last_adv), ["run"], "left")
    w2 = w2.withColumn("A", when(col("end").isNotNull(), col("end_adv")).otherwise(col("last_adv")))
    nonpos_w = gt & (col("delay") <= 0)
    E = F.expr("time + delay")
    w2 = w2.withColumn("dlw", E)
    report("no-lost-operation", w2.filter(nonpos_w))
    report("no-lost-operation", w2.filter(~nonpos_w & col("A").isNotNull() & (col("A.s") > col("seq"))
                                          & (col("A.t") >= earliest_exact("dlw"))))

    # ---- collect violations -------------------------------------------------------------------
    allv = parts[0]
    for p in parts[1:]:
        allv = allv.unionByName(p)
    allv = allv.dropDuplicates(["prop", "part", "run", "seq"]).localCheckpoint(eager=True)
    counts = {r["prop"]: r["n"] for r in allv.groupBy("prop").agg(F.count(lit(1)).alias("n")).collect()}
    wp = W.partitionBy("prop").orderBy("run", "seq")
    top = allv.withColumn("k", F.row_number().over(wp)).filter(col("k") <= max_rows).collect()
    viol: dict[str, tuple[int, list[dict[str, Any]]]] = {}
    for prop, n in counts.items():
        viol[prop] = (int(n), [])
    for r in top:
        viol[r["prop"]][1].append({c: r[c] for c in ROW_COLUMNS})
    if lost_wakeups:
        viol["no-lost-wakeup"] = (int(lost_wakeups), [
            {c: r[c] for c in ROW_COLUMNS} for r in lw_rows.orderBy("run", "seq").limit(max_rows).collect()])

    # ---- lateness and throughput ----------------------------------------------------------------
    fr = base.filter((col("kind") == "fire") & col("deadline").isNotNull())
    pairs_tw = fr.filter(col("delay").isNotNull() & col("wheel").isNotNull()).select("tick", "wheel").distinct().collect()
    level = lit(-1).cast("bigint")
    for r in pairs_tw:
        thr = level_thresholds(int(r["tick"]), int(r["wheel"]))
        expr = lit(0).cast("bigint")
        for t in thr:
            expr = expr + (col("delay") >= lit(t)).cast("bigint")
        level = when((col("tick") == r["tick"]) & (col("wheel") == r["wheel"]) & col("delay").isNotNull(), expr) \
            .otherwise(level)
    hist = [(r["impl"], int(r["level"]), r["prof"], int(r["late"]), int(r["c"])) for r in
            fr.select("impl", "prof", level.alias("level"), (col("time") - col("deadline")).alias("late"))
            .groupBy("impl", "level", "prof", "late").agg(F.count(lit(1)).alias("c")).collect()]
    tmin, tmax = int(agg["tmin"]), int(agg["tmax"])
    width = max(1, -(-(tmax - tmin + 1) // THROUGHPUT_BUCKETS))
    tp = (base.select("impl", F.expr(f"(time - ({tmin})) div {width}").alias("bucket"),
                      (col("kind") == "fire").cast("long").alias("fire"))
          .groupBy("impl", "bucket").agg(F.count(lit(1)).alias("events"), F.sum("fire").alias("fires")).collect())
    series = sorted(({"impl": r["impl"], "bucket": int(r["bucket"]), "events": int(r["events"]),
                      "fires": int(r["fires"])} for r in tp), key=lambda d: (d["impl"], d["bucket"]))
    summary = {"rows": int(agg["rows"]), "runs": int(agg["runs"]), "impls": sorted(agg["impls"]),
               "profiles": sorted(agg["profs"]), "kinds": {k: int(kinds[k]) for k in sorted(kinds, key=EVENT_KINDS.index)}}
    return finish(summary, viol, by_profile, hist, {"bucket_ms": width, "start": tmin, "series": series},
                  max_rows, lateness_ms)
