"""The embedded Spark default: one SparkSession, local and quiet unless told otherwise.

Measured on this machine (docs/guides/SPARK.md): PySpark 4.x local mode starts in 11-12 s by default,
because Spark leaves loopback and does a reverse-DNS lookup; with ``SPARK_LOCAL_IP=127.0.0.1``
it starts in about 5 s and never touches the network.  The driver's default 1 GB made 10 M-row
queries about 40% slower than 4 GB.  So, with no ``--master``: ``local[*]``, loopback only, no
UI, no ivy (no ``spark.jars.packages``: nothing is downloaded), WARN-free logs, 4 GB driver.
With ``--master spark://host:7077``, only the memory and log settings are ours; the cluster's
own configuration wins for the rest.  Under ``spark-submit`` (:func:`submitted`) the submit's
configuration is used as given (:func:`_submitted_session`).  ``--conf KEY=VALUE`` of the
commands (:func:`conf_item`) goes to the session last, over every default.

The log4j2 settings reach the JVM as a file: :func:`_log4j_file` writes it into a private
directory made by :func:`tempfile.mkdtemp` (mode 0700, a fresh random name: nothing planted in the
temp directory is followed or overwritten), once per process, and the directory is removed when
the process exits (docs/guides/ENVIRONMENT.md lists every temporary file wheelspec writes).

Import of this module is cheap: pyspark is imported inside :func:`get_session`.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from wheelspec.spec.errors import UserError

_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.spark.name = org.apache.spark
logger.spark.level = error
# A task that fails (a corrupt trace file mid-job) is logged by the executor and the scheduler
# with its Java stack; wheelspec reports the failure itself, in one line when it is the input's.
logger.executor.name = org.apache.spark.executor.Executor
logger.executor.level = fatal
logger.tasks.name = org.apache.spark.scheduler.TaskSetManager
logger.tasks.level = fatal
"""


#: The private directory holding this process's log4j2 file (None until the first session), and
#: the process that made it: a forked child inherits both and must not remove the parent's.
_log4j_dir: Path | None = None
_log4j_pid = 0
_LOG4J_NAME = "log4j2.properties"


def _log4j_file() -> str:
    """The log4j2 properties file for the JVM's command line, in this process's private
    directory (made on first use, and again if something removed it).

    The directory is new and only ours (``mkdtemp``: a random name, mode 0700), and the file is
    created in it with ``O_EXCL | O_NOFOLLOW``: nothing another user placed in the temp directory
    (a file, a symlink) is read, followed or written.  It is kept until the process exits, not
    removed when a session stops: JVMs started later in the session (the executors of a
    ``local-cluster`` or dynamically allocated ones) read it when they start, and the next
    session of the process uses it again."""
    global _log4j_dir, _log4j_pid
    if _log4j_dir is None or not (_log4j_dir / _LOG4J_NAME).is_file():
        _remove_log4j_dir()
        _log4j_dir, _log4j_pid = Path(tempfile.mkdtemp(prefix="wheelspec-spark-")), os.getpid()
        fd = os.open(_log4j_dir / _LOG4J_NAME, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                     0o600)
        with os.fdopen(fd, "w") as f:
            f.write(_LOG4J)
    return str(_log4j_dir / _LOG4J_NAME)


def _remove_log4j_dir() -> None:
    """Remove the directory :func:`_log4j_file` made in this process (that one only: its path is
    the one kept)."""
    global _log4j_dir
    d, _log4j_dir = _log4j_dir, None
    if d is not None and _log4j_pid == os.getpid():
        shutil.rmtree(d, ignore_errors=True)


atexit.register(_remove_log4j_dir)  # does nothing unless a session was started


def get_session(master: str | None = None, *, driver_memory: str = "4g", app: str = "wheelspec",
                shuffle_partitions: int | None = None, extra: dict[str, str] | None = None) -> Any:
    """The SparkSession wheelspec uses (an existing active session is reused, e.g. under
    ``spark-submit``).  ``master`` None means the embedded ``local[*]`` default."""
    from wheelspec.conformance.optional import require

    SparkSession = require("pyspark.sql", "spark", "--engine spark").SparkSession
    active = SparkSession.getActiveSession()
    if active is not None:
        _set_runtime(active, extra or {})
        return active
    if submitted():
        return _submitted_session(SparkSession, extra or {})
    local = master is None or master.startswith("local")
    if local:
        # Stay on loopback: avoids the reverse-DNS lookup that doubles start-up time, and any network.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    log = f"-Dlog4j2.configurationFile=file:{_log4j_file()} -Dlog4j.configurationFile=file:{_log4j_file()}"
    b = (SparkSession.builder.appName(app)
         .config("spark.driver.memory", driver_memory)
         .config("spark.driver.extraJavaOptions", log)
         .config("spark.executor.extraJavaOptions", log)
         .config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.sql.adaptive.enabled", "true")
         .config("spark.sql.execution.arrow.pyspark.enabled", "true"))
    if master is not None:
        b = b.master(master)
    elif "PYSPARK_SUBMIT_ARGS" not in os.environ and not os.environ.get("SPARK_MASTER"):
        b = b.master("local[*]")
    if local:
        b = (b.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.sql.shuffle.partitions", str(shuffle_partitions or 8)))
    elif shuffle_partitions:
        b = b.config("spark.sql.shuffle.partitions", str(shuffle_partitions))
    for k, v in (extra or {}).items():
        b = b.config(k, v)
    try:
        spark = b.getOrCreate()
    except Exception as e:  # noqa: BLE001 - Java missing, bad master URL: one line for the user
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UserError(f"could not start Spark (master {master or 'local[*]'}): {first}") from None
    spark.sparkContext.setLogLevel("ERROR")
    return spark


#: settings of :func:`get_session` that do not depend on where Spark runs; under spark-submit they
#: apply only where the submit's own configuration says nothing
_SQL_DEFAULTS = {"spark.ui.showConsoleProgress": "false", "spark.sql.session.timeZone": "UTC",
                 "spark.sql.adaptive.enabled": "true", "spark.sql.execution.arrow.pyspark.enabled": "true"}


def submitted() -> bool:
    """Whether this Python process was started by ``spark-submit`` (or the ``pyspark`` shell): its
    JVM is already running, with the master, deploy mode, driver memory and ``--conf`` settings
    the submit was given, which wheelspec must not override (PySpark's launcher hands the running
    JVM to Python through ``PYSPARK_GATEWAY_PORT``)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


#: whether Spark's log is held at WARN under spark-submit (:func:`set_submit_verbosity`); ``-v`` keeps it
_quiet_submit = True


def set_submit_verbosity(verbose: bool) -> None:
    """Under ``spark-submit``: whether the session :func:`get_session` starts keeps Spark's own log
    levels (``verbose``, the command's ``-v``) or holds them at WARN (``spark.log.level``, applied
    as the SparkContext starts: of its ~45 start-up INFO lines, 3 are printed before it takes effect)."""
    global _quiet_submit
    _quiet_submit = not verbose


def _submitted_session(session_cls: Any, extra: dict[str, str]) -> Any:
    """The session under ``spark-submit``: the submit's configuration as given (no ``local[*]``,
    no loopback binding, no driver memory or log4j file: the JVM has started already, and a path
    on this machine means nothing to a cluster's executors), :data:`_SQL_DEFAULTS` where it says
    nothing, and the ``--conf`` settings of the wheelspec command on top."""
    from pyspark import SparkConf

    given = SparkConf()   # spark-submit's --master, --conf and spark-defaults.conf, read from its JVM
    b = session_cls.builder
    for k, v in _SQL_DEFAULTS.items():
        if not given.contains(k):
            b = b.config(k, v)
    if _quiet_submit and not given.contains("spark.log.level"):
        b = b.config("spark.log.level", "WARN")  # the submit's own choice of level wins
    for k, v in extra.items():
        b = b.config(k, v)
    try:
        spark = b.getOrCreate()
    except Exception as e:  # noqa: BLE001 - a bad --conf value, an unreachable master: one line
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UserError(f"could not start Spark under spark-submit (master {given.get('spark.master', '?')}): "
                        f"{first}") from None
    return spark


def _set_runtime(spark: Any, extra: dict[str, str]) -> None:
    """``--conf`` on a session that is running already (a notebook's, a test's): the settings
    Spark lets a running session change (SQL ones) are set; any other is one line, never ignored."""
    for k, v in extra.items():
        try:
            spark.conf.set(k, v)
        except Exception as e:  # noqa: BLE001 - Spark's AnalysisException for a static setting
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise UserError(f"--conf {k}: cannot be changed in the running Spark session ({first})") from None


def conf_item(text: str) -> tuple[str, str]:
    """``--conf KEY=VALUE`` of ``analyze`` and ``campaign`` (an argparse ``type``): a Spark
    setting passed to the session as given, as ``spark-submit --conf`` does; the value may hold
    ``=`` and may be empty, the key may not."""
    import argparse

    key, eq, value = text.partition("=")
    key = key.strip()
    if not eq or not key or any(c.isspace() for c in key):
        raise argparse.ArgumentTypeError(f"must be KEY=VALUE with a key and no space in it "
                                         f"(e.g. spark.executor.memory=8g), got {text!r}")
    return key, value


#: Spark's size suffixes (``JavaUtils.byteStringAs``) in bytes; a bare number is MiB, as
#: ``spark.driver.memory`` reads it
_SIZE_BYTES = {"": 2**20, "b": 1, "k": 2**10, "kb": 2**10, "m": 2**20, "mb": 2**20, "g": 2**30, "gb": 2**30,
               "t": 2**40, "tb": 2**40, "p": 2**50, "pb": 2**50}
#: the smallest driver heap Spark starts with: ``UnifiedMemoryManager`` refuses a heap under 1.5 x
#: its 300 MiB reserve (450 MiB), and the JVM reports a little less than ``-Xmx``
MIN_DRIVER_MIB = 512


def memory_size(text: str) -> str:
    """``--driver-memory``: a whole number with an optional Spark size suffix (``4g``, ``512m``,
    ``2048``: MiB), at least :data:`MIN_DRIVER_MIB` MiB; returned as given.  A bad size is refused
    here, in one line, instead of by the JVM after Spark has started."""
    import argparse
    import re

    m = re.fullmatch(r"\s*([0-9]{1,30})([a-zA-Z]*)\s*", text)
    unit = m.group(2).lower() if m else ""
    if m is None or unit not in _SIZE_BYTES:
        raise argparse.ArgumentTypeError(f"must be a size such as 4g, 512m or 2048 (MiB), got {text!r}")
    if int(m.group(1)) * _SIZE_BYTES[unit] < MIN_DRIVER_MIB * 2**20:
        raise argparse.ArgumentTypeError(f"must be at least {MIN_DRIVER_MIB}m (Spark needs a 450 MiB heap), "
                                         f"got {text!r}")
    return text


def session_info(spark: Any, extra: dict[str, str]) -> dict[str, Any]:
    """Where a command ran, for its JSON result: the master, and each ``--conf`` key with the value
    the session holds (what Spark applied, not what was asked)."""
    return {"master": spark.sparkContext.master, "submitted": submitted(),
            "conf": {k: spark.conf.get(k, None) for k in extra}}

