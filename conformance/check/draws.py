"""The schedule generator's random source: ``random.Random`` with its two most frequent draws made cheap.

:mod:`.generate` draws a schedule from ``randrange(start, stop)`` and ``choice(seq)`` thousands of
times a second; in CPython each goes through two or three Python frames (``randrange`` ->
``_randbelow`` -> ``getrandbits``).  :class:`Draws` computes them in one frame, from the same
Mersenne Twister words by the same rejection rule (``k = n.bit_length()``, draw ``k`` bits until
the value is below ``n``), so every value, and every later draw, is the one ``random.Random``
gives: a seed's schedule does not change (``tests/test_draws.py`` holds the two side by side).
Only the forms the generator uses are offered: ``randrange`` with a start and a stop, ``choice``
of a non-empty sequence; anything else is refused rather than drawn differently.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from _typeshed import SupportsLenAndGetItem

T = TypeVar("T")


class Draws(random.Random):
    """``random.Random`` (seeded the same way) whose ``randrange(start, stop)`` and ``choice``
    return what the standard ones return, faster."""

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:
        """A random integer in ``[start, stop)``, as ``random.Random.randrange(start, stop)``."""
        if stop is None or step != 1 or type(start) is not int or type(stop) is not int:
            raise TypeError("Draws.randrange takes two integers (start, stop)")
        n = stop - start
        if n <= 0:
            raise ValueError(f"empty range in randrange({start}, {stop})")
        k = n.bit_length()
        bits = self.getrandbits
        r = bits(k)
        while r >= n:
            r = bits(k)
        return start + r

    def choice(self, seq: SupportsLenAndGetItem[T]) -> T:
        """A random element of the non-empty ``seq``, as ``random.Random.choice``."""
        n = len(seq)
        if not n:
            raise IndexError("Cannot choose from an empty sequence")
        k = n.bit_length()
        bits = self.getrandbits
        r = bits(k)
        while r >= n:
            r = bits(k)
        return seq[r]
