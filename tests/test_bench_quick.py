"""``wheelspec bench --quick``: the cells it runs, chosen so that it takes about 2 minutes on 2 loaded
cores (benchmarks/time_estimates.py measures it): small sizes, the in-process implementations, no
JIT probe; ``--impl`` and ``--sizes`` still choose others."""

from __future__ import annotations

from wheelspec.conformance.cli import build_parser
from wheelspec.conformance.cli.bench import IMPLS, NATIVE_IMPLS, QUICK_IMPLS, options_from_args


def test_quick_runs_small_sizes_of_the_in_process_implementations_without_the_jit_probe() -> None:
    opts = options_from_args(build_parser().parse_args(["bench", "--quick"]))
    assert opts.sizes == [1_000, 10_000]
    assert opts.impls == list(QUICK_IMPLS) and not set(opts.impls) & set(NATIVE_IMPLS)
    assert set(opts.impls) | set(NATIVE_IMPLS) == set(IMPLS)
    assert opts.jit is False and opts.curve_rounds == 0 and opts.repeat <= 2


def test_quick_keeps_the_implementations_and_sizes_asked_for() -> None:
    opts = options_from_args(build_parser().parse_args(["bench", "--quick", "--impl", "netty", "--sizes", "1e5"]))
    assert opts.impls == ["netty"] and opts.sizes == [100_000]


def test_a_full_run_keeps_every_implementation_and_the_jit_probe() -> None:
    opts = options_from_args(build_parser().parse_args(["bench"]))
    assert opts.impls == list(IMPLS) and opts.jit is True
