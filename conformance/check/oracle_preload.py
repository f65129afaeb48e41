"""Importing this module loads the compiled oracle's kernels (:mod:`.compiled_oracle`) into the
process: the fork server of ``wheelspec check --workers N`` imports it when the campaign is large
enough for the compiled oracle to pay (:func:`.compiled_oracle.worth_loading`), so that every
worker is forked with the kernels loaded instead of loading them itself (about 0.8-1.3 s of CPU
per process on the reference machine: numba's import and its cache)."""

from __future__ import annotations

from wheelspec.conformance.check import compiled_oracle

compiled_oracle.load()
