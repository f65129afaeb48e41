"""The trace format: histories and verdicts as Arrow tables / Parquet datasets.

One row per event of a :class:`~wheelspec.spec.history.History` (the events of
:mod:`wheelspec.spec.events`), flat and columnar so that Spark and pyarrow can judge billions of
rows with set-based queries (:mod:`.analyze`).  The format is documented for third parties in
``docs/guides/TRACE_FORMAT.md``; :data:`TRACE_SCHEMA` is the normative definition.

Design choices (the *why*):

* one flat schema for every event kind: unused columns are null, which Parquet stores in a few
  bits per row and which lets a query filter on ``kind`` without unions;
* ``seq`` (the event's position in its run) carries the order; ``time`` (the virtual clock
  ``now``) need not be unique.  A request's caused events (fire, complete, expire, purge) come
  before its own result event, exactly as in a History;
* watch keys are str or int in the semantics; the trace stores each key as its JSON text
  (``"a"`` with quotes, ``7`` bare) so that the round trip is lossless and keys stay one type;
* run-level facts (implementation, claimed profile, tick, wheel size, seed) are repeated per row:
  Parquet's dictionary and run-length encoding make that almost free, and every row is then
  self-describing when a dataset is filtered or repartitioned.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from wheelspec.spec import events as ev
from wheelspec.spec.errors import UserError
from wheelspec.spec.events import CAUSED_KINDS
from wheelspec.spec.history import History
from wheelspec.spec.limits import MIN_WHEEL_SIZE
from wheelspec.spec.profiles import KAFKA, PROFILE_NAMES, behaviour

FORMAT_VERSION = 1

#: The normative trace schema (docs/guides/TRACE_FORMAT.md explains every column per event kind).
TRACE_SCHEMA = pa.schema([
    pa.field("run", pa.string(), nullable=False),     # one history = one run id
    pa.field("impl", pa.string()),                   # implementation name
    pa.field("profile", pa.string()),                # claimed profile: kafka | strict | strict-gt
    pa.field("tick_ms", pa.int64()),                 # the tick the kafka profile uses (1 if none)
    pa.field("wheel_size", pa.int64()),              # buckets per wheel, if the impl has a wheel
    pa.field("seed", pa.int64()),                    # campaign seed, if the run is generated
    pa.field("thread", pa.int64()),                  # recording thread (0 for sequential runs)
    pa.field("seq", pa.int64(), nullable=False),     # position of the event in its run, from 0
    pa.field("kind", pa.string(), nullable=False),   # the event kind (spec.events ``kind``)
    pa.field("id", pa.int64()),                      # task id (timer events) or operation id
    pa.field("key", pa.string()),                    # check / cancel_for_key: the key, JSON text
    pa.field("keys", pa.list_(pa.string())),         # watch / resubmit: the keys, JSON text each
    pa.field("time", pa.int64(), nullable=False),    # the virtual clock reading ``now`` (ms)
    pa.field("delay", pa.int64()),                   # add: delay; watch: timeout; fire: its add's
    pa.field("deadline", pa.int64()),                # add/fire: exp; watch/complete/expire: now+timeout
    pa.field("flag", pa.bool_()),                    # cancel.pending, watch.result, resubmit.result,
                                                     # set_completable.value, force_complete.result,
                                                     # try_complete.result
    pa.field("value", pa.int64()),                   # observe.value, check.completed, purge.purged
    pa.field("label", pa.string()),                  # observe.what, complete.via
    pa.field("ops", pa.list_(pa.int64())),           # cancel_for_key: the operations returned
    pa.field("estimated", pa.int64()),               # purge: estimated before the reset
    pa.field("delayed", pa.int64()),                 # purge: numDelayed
    pa.field("wall_ns", pa.int64()),                 # optional wall-clock stamp (real-time traces)
], metadata={b"wheelspec.trace": str(FORMAT_VERSION).encode()})

#: file metadata key naming the clock ``time`` reads: ``virtual`` (a test drove the clock, as in every
#: trace this project writes: campaigns, synthetic traces) or ``real`` (wall-clock milliseconds).
#: Lateness on a virtual clock is how far the test moved the clock past a deadline, not a measured
#: delay, so reports label it by this key; a file without it states no clock.
CLOCK_KEY = b"wheelspec.clock"
CLOCKS = ("virtual", "real")


def with_clock(schema: pa.Schema, clock: str) -> pa.Schema:
    """``schema`` with :data:`CLOCK_KEY` set to ``clock`` (one of :data:`CLOCKS`)."""
    if clock not in CLOCKS:
        raise ValueError(f"clock must be one of {', '.join(CLOCKS)}, got {clock!r}")
    return schema.with_metadata({**(schema.metadata or {}), CLOCK_KEY: clock.encode()})


#: columns a third-party trace must have; every other column may be absent (read as nulls)
REQUIRED = ("run", "seq", "kind", "time")

#: The schema of each event kind: the columns its rows must fill (non-null), beyond
#: :data:`REQUIRED`; every other column of the row may be null.  Fire rows' ``delay`` and
#: complete / expire rows' ``deadline`` are enrichment (:func:`history_rows`) and may be null.
KIND_COLUMNS: dict[str, tuple[str, ...]] = {
    "add": ("id", "delay", "deadline"),
    "fire": ("id", "deadline"),
    "cancel": ("id", "flag"),
    "advance": (),
    "observe": ("label", "value"),
    "complete": ("id", "label"),
    "expire": ("id",),
    "watch": ("id", "delay", "keys", "flag"),
    "set_completable": ("id", "flag"),
    "check": ("key", "value"),
    "cancel_for_key": ("key", "ops"),
    "force_complete": ("id", "flag"),
    "purge": ("estimated", "delayed", "value"),
    "resubmit": ("id", "keys", "flag"),
    "try_complete": ("id", "flag"),
}

#: The verdict schema: one row per (run, property) judged.
VERDICT_SCHEMA = pa.schema([
    pa.field("run", pa.string(), nullable=False),
    pa.field("impl", pa.string()),
    pa.field("kind", pa.string()),                   # campaign kind (timer / purgatory) or trace
    pa.field("seed", pa.int64()),
    pa.field("property", pa.string(), nullable=False),
    pa.field("passed", pa.bool_(), nullable=False),
    pa.field("violations", pa.int64()),
    pa.field("message", pa.string()),
    pa.field("counterexample", pa.string()),         # path of the shrunk scenario file, if any
    pa.field("ops", pa.int64()),                     # operations in the (unshrunk) schedule
    pa.field("shape", pa.string()),                  # failure class: "<prop>:<op kinds of the shrunk case>"
], metadata={b"wheelspec.verdicts": str(FORMAT_VERSION).encode()})

EVENT_KINDS = tuple(ev.EVENTS)
assert set(KIND_COLUMNS) == set(EVENT_KINDS), "every event kind has a row schema"


def key_text(k: Any) -> str:
    """A watch key (str or int) as the trace stores it: its JSON text."""
    return json.dumps(k)


def key_value(s: str) -> Any:
    v = json.loads(s)
    if isinstance(v, bool) or not isinstance(v, (str, int)):
        raise ValueError(f"a key must be the JSON text of a string or an integer, got {s!r}")
    return v


# ------------------------------------------------------------------ History -> rows ------------
def _event_row(e: Any) -> dict[str, Any]:
    """The per-event columns of one event (run-level columns are added by the caller)."""
    k = e.kind
    r: dict[str, Any] = {"kind": k, "time": e.now}
    if k == "add":
        r.update(id=e.task, delay=e.delay, deadline=e.exp)
    elif k == "fire":
        r.update(id=e.task, deadline=e.exp)
    elif k == "cancel":
        r.update(id=e.task, flag=e.pending)
    elif k == "observe":
        r.update(label=e.what, value=e.value)
    elif k == "complete":
        r.update(id=e.op, label=e.via)
    elif k == "expire":
        r.update(id=e.op)
    elif k == "watch":
        r.update(id=e.op, delay=e.delay, deadline=e.now + e.delay, keys=[key_text(x) for x in e.keys],
                 flag=e.result)
    elif k == "set_completable":
        r.update(id=e.op, flag=e.value)
    elif k == "check":
        r.update(key=key_text(e.key), value=e.completed)
    elif k == "cancel_for_key":
        r.update(key=key_text(e.key), ops=list(e.ops))
    elif k == "force_complete":
        r.update(id=e.op, flag=e.result)
    elif k == "purge":
        r.update(estimated=e.estimated, delayed=e.delayed, value=e.purged)
    elif k == "resubmit":
        r.update(id=e.op, keys=[key_text(x) for x in e.keys], flag=e.result)
    elif k == "try_complete":
        r.update(id=e.op, flag=e.result)
    elif k == "advance":
        pass
    else:  # pragma: no cover - the registry and this table must list the same kinds
        raise ValueError(f"no trace mapping for event kind {k!r}")
    return r


def history_rows(history: Iterable[Any], *, run: str, impl: str = "", profile: str = KAFKA,
                 tick_ms: int = 1, wheel_size: int | None = None, seed: int | None = None,
                 thread: int = 0) -> list[dict[str, Any]]:
    """Rows of one history.  Fire rows get their schedule's ``delay`` and complete/expire rows
    their operation's ``deadline`` (enrichment for lateness by level and no-early-expire: a
    third party may leave them null).  A resubmit that leaves its operation uncompleted re-times
    it (SEMANTICS.md, "Resubmit"): its row gets the watch's timeout as ``delay`` and the new
    ``deadline``, which later complete / expire rows of the operation carry."""
    rows = []
    add_delay: dict[int, int] = {}
    deadline_of: dict[int, int] = {}
    timeout_of: dict[int, int] = {}           # op -> its watch's timeout (a resubmit re-uses it)
    done: set[int] = set()                    # ops completed so far
    window_fires: list[dict[str, Any]] = []   # fires since the last request result
    for i, e in enumerate(history):
        r = _event_row(e)
        k = r["kind"]
        if k == "add":
            add_delay[e.task] = e.delay
            for f in window_fires:  # a fire inside this add (it precedes the Add event) is its own
                if f["id"] == e.task and f["deadline"] == e.exp:
                    f["delay"] = e.delay
        elif k == "fire":
            r["delay"] = add_delay.get(e.task)
            window_fires.append(r)
        elif k == "watch":
            deadline_of[e.op] = r["deadline"]
            timeout_of[e.op] = e.delay
        elif k == "resubmit" and e.op in timeout_of and e.op not in done:
            r.update(delay=timeout_of[e.op], deadline=e.now + timeout_of[e.op])
            deadline_of[e.op] = r["deadline"]
        elif k in ("complete", "expire"):
            r["deadline"] = deadline_of.get(e.op)
            done.add(e.op)
        if k not in CAUSED_KINDS:
            window_fires = []
        r.update(run=run, impl=impl, profile=profile, tick_ms=tick_ms, wheel_size=wheel_size, seed=seed,
                 thread=thread, seq=i)
        rows.append(r)
    # a watch's result follows its in-add completions: fill those deadlines now that all are known
    for r in rows:
        if r["kind"] in ("complete", "expire") and r.get("deadline") is None:
            r["deadline"] = deadline_of.get(r["id"])
    return rows


def history_to_table(history: Iterable[Any], **run_info: Any) -> pa.Table:
    """One history as a trace table (``run_info``: see :func:`history_rows`)."""
    return rows_to_table(history_rows(history, **run_info))


def rows_to_table(rows: list[dict[str, Any]]) -> pa.Table:
    cols = {f.name: [r.get(f.name) for r in rows] for f in TRACE_SCHEMA}
    return pa.table(cols, schema=TRACE_SCHEMA)


# ------------------------------------------------------------------ rows -> History ------------
def _event_from_row(r: Mapping[str, Any], where: str) -> Any:
    k = r["kind"]
    now = r["time"]

    def need(col: str) -> Any:
        v = r.get(col)
        if v is None:
            raise UserError(f"{where}: a {k!r} row needs column {col!r}, which is null")
        return v

    try:
        if k == "add":
            return ev.Add(now, need("id"), need("delay"), need("deadline"))
        if k == "fire":
            return ev.Fire(now, need("id"), need("deadline"))
        if k == "cancel":
            return ev.Cancel(now, need("id"), need("flag"))
        if k == "advance":
            return ev.Advance(now)
        if k == "observe":
            return ev.Observe(now, need("label"), need("value"))
        if k == "complete":
            return ev.Complete(now, need("id"), need("label"))
        if k == "expire":
            return ev.Expire(now, need("id"))
        if k == "watch":
            return ev.TryCompleteElseWatch(now, need("id"), need("delay"),
                                           tuple(key_value(x) for x in need("keys")), need("flag"))
        if k == "set_completable":
            return ev.SetCompletable(now, need("id"), need("flag"))
        if k == "check":
            return ev.CheckAndComplete(now, key_value(need("key")), need("value"))
        if k == "cancel_for_key":
            return ev.CancelForKey(now, key_value(need("key")), tuple(need("ops")))
        if k == "force_complete":
            return ev.ForceComplete(now, need("id"), need("flag"))
        if k == "purge":
            return ev.Purge(now, need("estimated"), need("delayed"), need("value"))
        if k == "resubmit":
            return ev.Resubmit(now, need("id"), tuple(key_value(x) for x in need("keys")), need("flag"))
        if k == "try_complete":
            return ev.TryComplete(now, need("id"), need("flag"))
    except ValueError as e:
        raise UserError(f"{where}: {e}") from None
    raise UserError(f"{where}: unknown event kind {k!r} (expected one of {', '.join(EVENT_KINDS)})")


def table_to_histories(table: pa.Table, source: str = "<trace>") -> dict[str, History]:
    """Split a trace table into one History per run (events ordered by ``seq``)."""
    table = conform(table, source)
    order = pc.sort_indices(table, [("run", "ascending"), ("seq", "ascending")])
    rows = table.take(order).to_pylist()
    out: dict[str, History] = {}
    for r in rows:
        out.setdefault(r["run"], History())(_event_from_row(r, f"{source}: run {r['run']!r} seq {r['seq']}"))
    return out


# ------------------------------------------------------------------ files ----------------------
def check_required(columns: Iterable[str], source: str) -> None:
    """Raise a one-line :class:`UserError` naming the first required column ``columns`` lacks."""
    have = set(columns)
    for c in REQUIRED:
        if c not in have:
            raise UserError(f"{source}: the trace has no column {c!r} (required: {', '.join(REQUIRED)})")


def _where(table: pa.Table, i: int, source: str) -> str:
    """``source: row i, run 'r' seq 3``: a row named for a person (rows count from 0)."""
    return f"{source}: row {i}, run {table.column('run')[i].as_py()!r} seq {table.column('seq')[i].as_py()}"


def _first(mask: pa.ChunkedArray | pa.Array) -> int | None:
    """Index of the first true value of a boolean column (nulls count as false), or None."""
    idx = pc.indices_nonzero(pc.fill_null(mask, False))
    return idx[0].as_py() if len(idx) else None


def validate_rows(table: pa.Table, source: str, present: Iterable[str]) -> None:
    """Check every row against the schema of its event kind (:data:`KIND_COLUMNS`) and the
    run-level columns' ranges; a :class:`UserError` names the file, the row and the column.
    ``present``: the columns the file had (an absent one is reported as absent, not as null)."""
    present = set(present)
    kind = table.column("kind")
    i = _first(pc.invert(pc.is_in(kind, value_set=pa.array(EVENT_KINDS))))
    if i is not None:
        raise UserError(f"{_where(table, i, source)}: column 'kind' has an unknown value "
                        f"{kind[i].as_py()!r} (expected one of {', '.join(EVENT_KINDS)})")
    for c, lo in (("tick_ms", 1), ("wheel_size", MIN_WHEEL_SIZE)):
        i = _first(pc.less(table.column(c), lo))
        if i is not None:
            raise UserError(f"{_where(table, i, source)}: column {c!r} has a value {table.column(c)[i].as_py()} "
                            f"< {lo}")
    prof = table.column("profile")
    i = _first(pc.and_(pc.is_valid(prof), pc.invert(pc.is_in(prof, value_set=pa.array(PROFILE_NAMES)))))
    if i is not None:   # a null profile is kafka's (docs/guides/TRACE_FORMAT.md)
        raise UserError(f"{_where(table, i, source)}: column 'profile' has an unknown value "
                        f"{prof[i].as_py()!r} (expected one of {', '.join(PROFILE_NAMES)})")
    needs: dict[str, list[str]] = {}
    for k, cols in KIND_COLUMNS.items():
        for c in cols:
            needs.setdefault(c, []).append(k)
    for c, kinds in needs.items():
        i = _first(pc.and_(pc.is_in(kind, value_set=pa.array(kinds)), pc.is_null(table.column(c))))
        if i is None:
            continue
        k = kind[i].as_py()
        if c not in present:
            raise UserError(f"{_where(table, i, source)}: a {k!r} row needs column {c!r}, which the trace "
                            f"does not have ({k!r} rows need {', '.join(KIND_COLUMNS[k])})")
        raise UserError(f"{_where(table, i, source)}: a {k!r} row needs column {c!r}, which is null")


def conform(table: pa.Table, source: str = "<trace>", *, rows: bool = True) -> pa.Table:
    """Check a (third-party) table against :data:`TRACE_SCHEMA`: required columns present,
    present columns castable, every row filled as its event kind needs (:func:`validate_rows`;
    ``rows=False`` skips that, for a projection of rows validated before); absent optional
    columns added as nulls; columns in schema order."""
    names = set(table.column_names)
    check_required(names, source)
    cols = []
    for f in TRACE_SCHEMA:
        if f.name in names:
            col = table.column(f.name)
            if col.type != f.type:
                try:
                    col = col.cast(f.type)
                except pa.ArrowException as e:
                    raise UserError(f"{source}: column {f.name!r} has type {col.type}, expected {f.type} "
                                    f"({str(e).splitlines()[0]})") from None
            if not f.nullable and col.null_count:
                i = _first(pc.is_null(col))
                raise UserError(f"{source}: row {i}: column {f.name!r} has {col.null_count} null value(s); "
                                "it is required")
        else:
            col = pa.nulls(table.num_rows, f.type)
        cols.append(col)
    out = pa.Table.from_arrays(cols, schema=TRACE_SCHEMA)
    if rows:
        validate_rows(out, source, names)
    return out


def write_trace(table: pa.Table, path: str | Path, clock: str = "virtual") -> Path:
    """Write a trace table as one Parquet file (zstd), stating its ``clock`` (:data:`CLOCK_KEY`)."""
    p = Path(path)
    if p.parent and not p.parent.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
    t = conform(table, str(p))
    pq.write_table(t.replace_schema_metadata(with_clock(t.schema, clock).metadata), p, compression="zstd")
    return p


def trace_files(paths: Iterable[str | Path]) -> list[Path]:
    """Expand files and directories (every ``*.parquet`` below a directory) to a sorted list."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(q for q in p.rglob("*.parquet") if q.is_file())
            if not found:
                raise UserError(f"{p}: no *.parquet files in this directory")
            out.extend(found)
        elif p.is_file():
            out.append(p)
        else:
            raise UserError(f"{p}: no such trace file or directory")
    if not out:
        raise UserError("no trace files given")
    return out


def read_trace(paths: Iterable[str | Path] | str | Path, columns: list[str] | None = None) -> pa.Table:
    """Read trace files / directories into one table conforming to :data:`TRACE_SCHEMA`."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    tables = []
    for p in trace_files(paths):
        try:
            t = pq.read_table(p)
        except (pa.ArrowException, OSError) as e:
            raise UserError(f"{p}: not a readable Parquet file ({str(e).splitlines()[0]})") from None
        t = conform(t, str(p))
        tables.append(t.select(columns) if columns else t)
    return pa.concat_tables(tables) if len(tables) > 1 else tables[0]


def write_history(history: Iterable[Any], path: str | Path, **run_info: Any) -> Path:
    """Record one history as a Parquet trace (what ``wheelspec check --write traces=DIR`` writes)."""
    return write_trace(history_to_table(history, **run_info), path)


class TraceWriter:
    """Accumulate many runs' histories and write them as one Parquet file (row groups per flush)."""

    def __init__(self, path: str | Path, flush_rows: int = 1_000_000) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.flush_rows = flush_rows
        self._rows: list[dict[str, Any]] = []
        self._writer: pq.ParquetWriter | None = None
        self.rows_written = 0

    def add(self, history: Iterable[Any], **run_info: Any) -> None:
        self._rows.extend(history_rows(history, **run_info))
        if len(self._rows) >= self.flush_rows:
            self.flush()

    def add_schedule(self, history: Iterable[Any], *, impl: str, kind: str, seed: int, config: Any,
                     profile: str, wheel: bool = True) -> None:
        """One campaign schedule's run, named ``<impl>/<kind>/<seed>`` (what ``wheelspec check
        --write traces=DIR`` and ``wheelspec campaign --write traces=DIR`` record).  The analysis places fire
        windows by tick only under a profile that ``uses_tick`` (kafka); the others fire on exact
        expirations, so their runs are recorded with tick 1.  ``wheel``: the implementation has a
        timing wheel; a heap timer's runs get no ``wheel_size`` (it has no levels to report)."""
        self.add(history, run=f"{impl}/{kind}/{seed}", impl=impl, profile=profile,
                 tick_ms=config.tick_ms if behaviour(profile).uses_tick else 1,
                 wheel_size=config.wheel_size if wheel else None, seed=seed)

    def flush(self) -> None:
        if not self._rows:
            return
        t = rows_to_table(self._rows)
        if self._writer is None:
            self._writer = pq.ParquetWriter(self.path, with_clock(TRACE_SCHEMA, "virtual"), compression="zstd")
        self._writer.write_table(t)
        self.rows_written += t.num_rows
        self._rows = []

    def close(self) -> Path:
        self.flush()
        if self._writer is None:  # an empty trace is still a valid file
            pq.write_table(with_clock(TRACE_SCHEMA, "virtual").empty_table(), self.path)
        else:
            self._writer.close()
        return self.path

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def verdicts_table(rows: list[dict[str, Any]]) -> pa.Table:
    cols = {f.name: [r.get(f.name) for r in rows] for f in VERDICT_SCHEMA}
    return pa.table(cols, schema=VERDICT_SCHEMA)
