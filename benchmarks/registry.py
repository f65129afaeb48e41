"""Every implementation ``wheelspec bench`` can measure, by name: the in-process drivers of
:mod:`.drivers` and the native peers of :mod:`.native.drivers` (Netty, the JDK's executor and
DelayQueue, tokio-util's DelayQueue), which subclass the same :class:`~.drivers.Driver`."""

from __future__ import annotations

from .drivers import IN_PROCESS_DRIVERS, Driver
from .native.drivers import NATIVE_DRIVERS

DRIVERS: dict[str, type[Driver]] = {**IN_PROCESS_DRIVERS, **NATIVE_DRIVERS}
