"""Column tools of the trace analysis (:mod:`.local`): dictionary and integer columns from
pyarrow, stable orders, segmented scans over rows sorted into segments (runs, tasks), exact
integer arithmetic that never wraps, and joins by packed keys.

A *segmented scan* answers "the last (or first) row with X at or before this row, inside its
segment" for every row at once: a running maximum (minimum) of positions clipped at the
segment's start (end), the numpy form of a SQL window function partitioned by run.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from wheelspec.spec.errors import UserError


def dict_codes(col: pa.ChunkedArray | pa.Array, allowed: tuple[str, ...] | None, what: str,
           null_as: str | None = None) -> tuple[np.ndarray, list[Any]]:
    """Dictionary codes of a string column (numpy int32) and the dictionary.  ``allowed``: map
    onto that fixed list (unknown values are a user error)."""
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if null_as is not None:
        arr = pc.fill_null(arr, null_as)
    enc = pc.dictionary_encode(arr)
    idx = enc.indices.to_numpy(zero_copy_only=False)
    values = enc.dictionary.to_pylist()
    if allowed is None:
        return idx.astype(np.int64), values
    table = np.empty(max(1, len(values)), np.int64)
    for i, v in enumerate(values):
        if v not in allowed:
            raise UserError(f"trace column {what!r} has an unknown value {v!r} (expected one of {', '.join(allowed)})")
        table[i] = allowed.index(v)
    return table[idx], values


def int_column(col: pa.ChunkedArray, fill: int = 0) -> tuple[np.ndarray, np.ndarray]:
    arr = col.combine_chunks()
    valid = ~arr.is_null().to_numpy(zero_copy_only=False)
    return pc.fill_null(arr, fill).to_numpy(zero_copy_only=False).astype(np.int64), valid


def stable_order(primary: np.ndarray, secondary: np.ndarray) -> np.ndarray:
    """Stable order by (primary, secondary); a packed int64 key when it fits (10x faster)."""
    if primary.size == 0:
        return np.zeros(0, np.int64)
    lo = int(secondary.min())
    span = int(secondary.max()) - lo
    pb, sb = int(primary.max()).bit_length(), max(1, span.bit_length())
    if pb + sb <= 62:
        return np.argsort((primary << sb) | (secondary - lo), kind="stable")
    return np.lexsort((secondary, primary))


def ffill(valid: np.ndarray, seg_start: np.ndarray, inclusive: bool = True) -> np.ndarray:
    """Index of the last ``valid`` row at (or strictly before) each row inside its segment; -1."""
    n = valid.size
    pos = np.where(valid, np.arange(n), -1)
    np.maximum.accumulate(pos, out=pos)
    if not inclusive:
        pos = np.r_[-1, pos[:-1]]
    pos[pos < seg_start] = -1
    return pos


def bfill(valid: np.ndarray, seg_end: np.ndarray, strict: bool = True) -> np.ndarray:
    """Index of the first ``valid`` row strictly after (or at) each row inside its segment; -1.
    ``seg_end``: exclusive end of each row's segment."""
    n = valid.size
    pos = np.where(valid, np.arange(n), n)
    pos = np.minimum.accumulate(pos[::-1])[::-1]
    if strict:
        pos = np.r_[pos[1:], n]
    pos = pos.copy()
    pos[pos >= seg_end] = -1
    return pos


def segments(*keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and exclusive end of every row's segment, for rows sorted by ``keys``."""
    n = keys[0].size
    change = np.zeros(n, bool)
    if n:
        change[0] = True
        for k in keys:
            change[1:] |= k[1:] != k[:-1]
    idx = np.arange(n)
    start = np.maximum.accumulate(np.where(change, idx, 0)) if n else idx
    ends = np.r_[np.flatnonzero(change)[1:], n]
    end = ends[np.cumsum(change) - 1] if n else idx
    return start, end


#: int64 arithmetic on operands below this magnitude cannot wrap (a sum or difference of two, a
#: floor to a multiple of a tick); traces holding larger values are computed in Python ints
SAFE_MAGNITUDE = 2**62


def exact_ints(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """``arrays`` as they are if int64 arithmetic on them cannot wrap, else as Python-int object
    arrays (exact, slower): a deadline of 2^63-1 plus one is 2^63, not -2^63."""
    big = any(a.size and (int(a.max()) >= SAFE_MAGNITUDE or int(a.min()) <= -SAFE_MAGNITUDE)
              for a in arrays if a.dtype != object)
    return tuple(a.astype(object) for a in arrays) if big else arrays


def minus(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a - b`` without wrapping (int64, or Python ints when it could wrap)."""
    a, b = exact_ints(a, b)
    return a - b


def plus(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a + b`` without wrapping (int64, or Python ints when it could wrap)."""
    a, b = exact_ints(a, b)
    return a + b


def within(a: np.ndarray, bounds: tuple[int, int]) -> np.ndarray:
    """``lo <= a <= hi`` per row (comparisons only: nothing to wrap)."""
    return (a >= bounds[0]) & (a <= bounds[1])


def wrap64(v: int) -> int:
    """``v`` as a Java ``long`` (or numpy int64) sum would hold it: wrapped to 64 bits."""
    return (v + 2**63) % 2**64 - 2**63


def pair_codes(*pairs: tuple[np.ndarray, np.ndarray]) -> list[np.ndarray]:
    """One int64 code per (r, x) pair, equal iff the pairs are equal, across all ``pairs``."""
    r = np.concatenate([a for a, _ in pairs])
    x = np.concatenate([b for _, b in pairs])
    if r.size and x.min() >= 0 and int(x.max()).bit_length() <= 40 and int(r.max()).bit_length() <= 22:
        codes = (r << 40) | x
    elif r.size:
        codes = np.unique(np.stack([r, x], 1), axis=0, return_inverse=True)[1].ravel().astype(np.int64)
    else:
        codes = np.zeros(0, np.int64)
    return np.split(codes, np.cumsum([a.size for a, _ in pairs])[:-1])


def lookup_unique(keys: np.ndarray, values: np.ndarray, query: np.ndarray, missing: int = -1) -> np.ndarray:
    """values[i] where keys[i] == query (keys unique), else ``missing``."""
    if keys.size == 0:
        return np.full(query.size, missing, np.int64)
    o = np.argsort(keys, kind="stable")
    ks, vs = keys[o], values[o]
    i = np.clip(np.searchsorted(ks, query), 0, ks.size - 1)
    return np.where(ks[i] == query, vs[i], missing)
