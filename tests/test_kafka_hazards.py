"""Stock Kafka outside wheelspec's ranges, for every tick and wheel size (SEMANTICS.md, "Ranges").

Kafka's ``TimingWheel`` computes in Java ``long``: ``interval = tickMs * wheelSize`` and the
overflow wheel's tick wrap once a level's span passes 2^63, and from there the levels are garbage.
Five outcomes follow, each pinned here on an emulation of that arithmetic (wrapping ``+`` and
``*``, division and remainder truncating toward zero, one recursion step per level) and, with a
JDK, re-derived by ``tests/fixtures/KafkaWheelHazards.java``, whose array bounds, stack and
exceptions are the JVM's:

* ``due``: ``delayMs + now`` wraps negative, the task runs at once (``Long.MAX_VALUE``);
* ``hang``: a garbage level gives the bucket expiration 0 (or another reading already passed);
  ``advanceClock`` re-adds the entry into the same bucket and polls it for ever;
* ``ArithmeticException``: a level's tick wraps to exactly 0 (``tick * wheel^k == 0 mod 2^64``,
  possible only for an even wheel size): ``startMs % tickMs`` divides by zero;
* ``ArrayIndexOutOfBoundsException``: a negative garbage tick makes ``virtualId = exp / tick``
  negative, and so the bucket index ``virtualId % wheelSize``;
* ``StackOverflowError``: for an odd wheel size no tick is ever 0, and an expiration
  within about 10^15 of ``Long.MAX_VALUE`` fits no level (nothing is above ``Long.MAX_VALUE``), so
  ``add`` creates overflow wheels without end (``OutOfMemoryError`` first for large wheels).

Inside wheelspec's ranges none of them can happen (``spec/lemmas.py``: ``no-int64-overflow``,
``interval-positive``); the last test checks the emulation there against the same predicate.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from wheelspec.spec.limits import MAX_DELAY_MS, MAX_TICK_MS, MAX_TIME_MS, MAX_WHEEL_SIZE, MIN_WHEEL_SIZE

LONG_MAX = 2**63 - 1
NOW = 1_700_000_000_000  # an epoch-millisecond reading
JAVA = Path(__file__).parent / "fixtures" / "KafkaWheelHazards.java"
#: levels the emulation climbs before it calls the recursion endless (the JVM's default stack
#: holds a few thousand frames of TimingWheel.add)
ENDLESS = 3000


def wrap(x: int) -> int:
    x %= 2**64
    return x - 2**64 if x >= 2**63 else x


def jdiv(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError("/ by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def jmod(a: int, b: int) -> int:
    return wrap(a - wrap(jdiv(a, b) * b))


class _Wheel:
    def __init__(self, tick: int, size: int, start: int, queue: list, level: int) -> None:
        self.tick, self.size, self.level = tick, size, level
        self.interval = wrap(tick * size)
        self.current = wrap(start - jmod(start, tick))  # ZeroDivisionError: Java's / by zero
        self.buckets: dict[int, list] = {}  # made on first use: a level may have 65536
        self.queue = queue
        self.overflow: _Wheel | None = None

    def add(self, exp: int) -> bool:
        if exp < wrap(self.current + self.tick):
            return False
        if exp < wrap(self.current + self.interval):
            vid = jdiv(exp, self.tick)
            index = jmod(vid, self.size)
            if index < 0:
                raise IndexError(f"Index {index} out of bounds for length {self.size} (level {self.level})")
            bucket = self.buckets.setdefault(index, [-1, []])
            bucket[1].append(exp)
            if bucket[0] != wrap(vid * self.tick):
                bucket[0] = wrap(vid * self.tick)
                self.queue.append(bucket)
            return True
        if self.level >= ENDLESS:
            raise RecursionError("overflow wheels without end")
        if self.overflow is None:
            self.overflow = _Wheel(self.interval, self.size, self.current, self.queue, self.level + 1)
        return self.overflow.add(exp)

    def advance_clock(self, t: int) -> None:
        if t >= wrap(self.current + self.tick):
            self.current = wrap(t - jmod(t, self.tick))
            if self.overflow is not None:
                self.overflow.advance_clock(self.current)


def kafka_outcome(now: int, delay: int, tick: int, size: int) -> str:
    """What stock Kafka's ``SystemTimer.add`` (then ``advanceClock`` at ``now``) does, by the names
    ``KafkaWheelHazards.java`` prints."""
    queue: list = []
    try:
        wheel = _Wheel(tick, size, now, queue, 0)
        if not wheel.add(wrap(delay + now)):
            return "due"
        for _ in range(1000):  # SystemTimer's poll loop: buckets due at now, in expiration order
            due = [b for b in queue if b[0] <= now]
            if not due:
                return "accepted"
            bucket = min(due, key=lambda b: b[0])
            queue.remove(bucket)
            wheel.advance_clock(bucket[0])
            flushed, bucket[1], bucket[0] = bucket[1], [], -1
            for exp in flushed:
                wheel.add(exp)
        return "hang"
    except ZeroDivisionError:
        return "ArithmeticException"
    except IndexError:
        return "ArrayIndexOutOfBoundsException"
    except RecursionError:
        return "StackOverflowError"


# (now, delay, tick, wheel size, outcome): every hazard, in several configurations
CASES = [
    (NOW, LONG_MAX, 1, 20, "due"),
    (NOW, LONG_MAX, 1000, 3, "due"),
    (NOW, 5 * 10**18, 1, 20, "hang"),
    (NOW, 2 * 10**18, 1, 20, "hang"),
    (NOW, 8 * 10**18, 1, 20, "ArithmeticException"),      # 20^32 == 0 mod 2^64
    (NOW, LONG_MAX - NOW, 1, 20, "ArithmeticException"),  # exp == Long.MAX: even wheel
    (0, LONG_MAX, 1, 2, "ArithmeticException"),           # 2^64 == 0: level 64
    (0, LONG_MAX, 1, 256, "ArithmeticException"),
    (0, LONG_MAX, 7, 65536, "ArithmeticException"),
    (NOW, 2**62, 10, 20, "ArrayIndexOutOfBoundsException"),
    (NOW, 2**62, 1, 3, "ArrayIndexOutOfBoundsException"),
    (NOW, 10**18, 1, 255, "ArrayIndexOutOfBoundsException"),
    (NOW, 10**18, 1, 65535, "ArrayIndexOutOfBoundsException"),
    (NOW, 8 * 10**18, 1000, 5, "ArrayIndexOutOfBoundsException"),
    (0, LONG_MAX, 1, 3, "StackOverflowError"),            # exp == Long.MAX: odd wheel
    (NOW, LONG_MAX - NOW - 1000, 1, 3, "StackOverflowError"),
    (0, LONG_MAX - 10**15, 1, 5, "StackOverflowError"),
    (0, LONG_MAX - 10**12, 1000001, 255, "StackOverflowError"),
    (NOW, MAX_DELAY_MS, 1, 20, "accepted"),
    (NOW, 10**18, 1, 20, "accepted"),                     # level 13: 20^14 still fits
]


@pytest.mark.parametrize("now, delay, tick, size, want", CASES,
                         ids=[f"{c[4]}-d{c[1]}-t{c[2]}-w{c[3]}" for c in CASES])
def test_stock_kafka_outcome(now, delay, tick, size, want):
    assert kafka_outcome(now, delay, tick, size) == want


def test_a_tick_wraps_to_zero_only_for_an_even_wheel():
    """Level k's tick is tick * wheel^k mod 2^64: zero iff 2^64 divides it; a tick below 2^20 has
    fewer than 20 factors 2, so the wheel size must supply the rest."""
    for tick in (1, 3, 1000, 2**19, 2**20 - 1):
        for size in (2, 3, 20, 255, 256, 65535, 65536):
            zero = any(wrap(tick * size**k) == 0 for k in range(1, 70))
            assert zero == (size % 2 == 0), (tick, size)
    # and Long.MAX_VALUE is above no long, so it fits no level: the climb ends only at a zero tick
    assert all(not LONG_MAX < x for x in (LONG_MAX, wrap(LONG_MAX + 1), 0))


def test_inside_the_ranges_there_is_no_hazard():
    for tick in (1, 10, MAX_TICK_MS):
        for size in (MIN_WHEEL_SIZE, 3, 20, MAX_WHEEL_SIZE - 1, MAX_WHEEL_SIZE):
            for now in (0, NOW, MAX_TIME_MS):
                for delay in (-MAX_DELAY_MS, 0, 1, MAX_DELAY_MS):
                    assert kafka_outcome(now, delay, tick, size) in ("due", "accepted"), (now, delay, tick, size)


@pytest.mark.slow
@pytest.mark.external("java")
def test_the_jvm_agrees(tmp_path):
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.fail("no JDK on PATH: this test re-derives Kafka's long arithmetic on the JVM "
                    "(Java 17 is assumed; apt-get install -y openjdk-17-jdk-headless)")
    shutil.copy(JAVA, tmp_path / JAVA.name)
    subprocess.run(["javac", JAVA.name], cwd=tmp_path, check=True, timeout=120)
    lines = "".join(f"{now} {delay} {tick} {size}\n" for now, delay, tick, size, _ in CASES)
    out = subprocess.run(["java", "-Xss512k", "-Xmx256m", "-cp", ".", JAVA.stem], cwd=tmp_path, input=lines,
                         capture_output=True, text=True, check=True, timeout=300).stdout.split()
    assert out == [c[4] for c in CASES]
    # a large odd wheel runs out of heap (65535 lists per level) before it runs out of stack
    big = subprocess.run(["java", "-Xss512k", "-Xmx256m", "-cp", ".", JAVA.stem], cwd=tmp_path,
                         input=f"0 {LONG_MAX} 1 65535\n", capture_output=True, text=True, check=True,
                         timeout=300).stdout.split()
    assert big == ["OutOfMemoryError"]
