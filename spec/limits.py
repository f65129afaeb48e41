"""The ranges wheelspec accepts, and the validation every implementation shares.

Stock Kafka does not bound its inputs: ``delayMs + now`` is computed in a Java ``long``, so a delay
of ``Long.MAX_VALUE`` wraps negative and runs at once, a delay near 5e18 produces a bucket whose
expiration is 0 (the reaper then spins with the write lock held) and a delay of 8e18 or more
overflows the interval of a new overflow wheel to 0, and ``add`` divides by zero (SEMANTICS.md,
"Ranges").  Kafka's own callers only pass int-sized timeouts.

wheelspec *refuses* what it cannot honour, like Jane Street's ``timing_wheel``: every bound
below is chosen so that every intermediate value of the wheel's arithmetic (expiration, bucket
start, ``currentTime + interval`` of the highest wheel that can ever be created) fits in a signed
64-bit integer.  The proof is ``spec/lemmas.py`` ("no int64 overflow inside the range"):

* expiration = now + delay  <  2**43 + 2**40  <  2**44;
* an overflow wheel is created only when ``exp - currentTime >= interval`` of the wheel below, so
  every interval is at most ``wheel_size * 2**44 <= 2**60``, and ``currentTime + interval < 2**61``.
"""

from __future__ import annotations

from numbers import Integral

from .errors import RangeError

#: Largest accepted tick, in ms (about 17.5 minutes).
MAX_TICK_MS: int = 2**20
#: Smallest and largest accepted number of buckets per wheel.
MIN_WHEEL_SIZE: int = 2
MAX_WHEEL_SIZE: int = 2**16
#: Largest accepted |delay|, in ms (about 34.8 years).
MAX_DELAY_MS: int = 2**40 - 1
MIN_DELAY_MS: int = -MAX_DELAY_MS
#: Largest accepted clock reading, in ms (epoch milliseconds up to the year 2248).
MAX_TIME_MS: int = 2**43 - 1
#: Largest accepted purge interval (Kafka's default is 1000).
MAX_PURGE_INTERVAL: int = 2**31 - 1
#: Java's ``Integer.MAX_VALUE``: Kafka's ``wheelSize`` is a Java ``int``.
JAVA_INT_MAX: int = 2**31 - 1
#: Largest task id and operation id (ids fit an int32 row index, like a Java ``int``).
MAX_ID: int = JAVA_INT_MAX
#: Every expiration the ranges allow is within this distance of any clock reading the ranges
#: allow: ``|exp - now| < EXP_SPAN``.  Engines size their arithmetic by it (int64 with room for
#: ``currentTime + interval`` of the highest wheel, see the module docstring).
EXP_SPAN: int = 2**44

# The relations the docstring's bounds rest on, checked whenever the limits are imported.
assert MAX_TIME_MS + MAX_DELAY_MS < EXP_SPAN, "an expiration now + delay must stay below EXP_SPAN"
assert MAX_WHEEL_SIZE * EXP_SPAN <= 2**60, "every wheel interval must stay below 2**60"


def _int(name: str, value: object) -> int:
    if type(value) is int:  # the common case, without the slower Integral check below
        return value
    # bool is an int in Python; a True tick is a bug, not a 1.
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    return int(value)


def check_range(name: str, value: object, lo: int, hi: int) -> int:
    """Return ``value`` as an int if ``lo <= value <= hi``; otherwise raise naming ``name``."""
    v = _int(name, value)
    if not lo <= v <= hi:
        raise RangeError(f"{name}={v} is outside the allowed range [{lo}, {hi}]")
    return v


def check_tick(tick_ms: object) -> int:
    return check_range("tick_ms", tick_ms, 1, MAX_TICK_MS)


def check_wheel_size(wheel_size: object) -> int:
    return check_range("wheel_size", wheel_size, MIN_WHEEL_SIZE, MAX_WHEEL_SIZE)


def check_delay(delay_ms: object) -> int:
    return check_range("delay_ms", delay_ms, MIN_DELAY_MS, MAX_DELAY_MS)


def check_time(name: str, time_ms: object) -> int:
    return check_range(name, time_ms, 0, MAX_TIME_MS)


def check_purge_interval(purge_interval: object) -> int:
    return check_range("purge_interval", purge_interval, 0, MAX_PURGE_INTERVAL)


def check_flag(name: str, value: object) -> bool:
    """A flag (``completable``, ``value``, ``debug``...) is a real bool: ``True``, ``False`` or
    numpy's scalar bool.  Anything else is refused, where ``bool(value)`` would quietly make the
    string ``"no"`` true and the int 2 a flag."""
    if isinstance(value, bool):
        return value
    t = type(value)
    # numpy's scalar bool (``numpy.bool``, ``numpy.bool_`` before numpy 2), recognised without
    # importing numpy: spec/ depends on nothing.
    if t.__module__ == "numpy" and t.__name__ in ("bool", "bool_"):
        return bool(value)
    raise TypeError(f"{name} must be a bool, got {t.__name__} {value!r}")


def check_key(key: object) -> str | int:
    """Watch keys are ``str`` or ``int`` (hashable, stable across processes, JSON-representable)."""
    if isinstance(key, bool) or not isinstance(key, (str, int)):
        raise TypeError(f"watch key must be str or int, got {type(key).__name__} {key!r}")
    if isinstance(key, int):
        check_range("watch key", key, -(2**63), 2**63 - 1)
    return key


def check_keys(keys: object) -> tuple[str | int, ...]:
    if isinstance(keys, (str, bytes)) or not hasattr(keys, "__iter__"):
        raise TypeError(f"watch_keys must be a sequence of keys, got {type(keys).__name__}")
    out = tuple(check_key(k) for k in keys)
    if not out:
        # Kafka: IllegalArgumentException("The watch key list can't be empty")
        raise ValueError("watch_keys must not be empty")
    return out
