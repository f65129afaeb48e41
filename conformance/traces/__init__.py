"""Histories as Parquet traces, and their set-based analysis behind ``wheelspec analyze`` and
``wheelspec campaign``.

===================== ==========================================================================
module                what it owns
===================== ==========================================================================
:mod:`.format`        the trace schema (``docs/guides/TRACE_FORMAT.md``), writing and reading traces
:mod:`.synth`         seeded synthetic traces, optionally with planted violations
:mod:`.rules`         what the analysis computes, shared by both engines
:mod:`.local`         the analysis with pyarrow and numpy in this process (no Java)
:mod:`.spark`         the same analysis as Spark jobs, for traces larger than one machine
:mod:`.analyze`       choose an engine, run it, return the JSON result
:mod:`.html_report`   the self-contained HTML report with its plots
:mod:`.spark_session` one configured SparkSession (local by default, a cluster by ``--master``)
:mod:`.spark_campaign` random campaigns split into seed ranges run as Spark tasks, resumable
:mod:`.campaign_store` a campaign's output folder: its manifest (what it judged), file names, ``--fresh``
===================== ==========================================================================
"""
