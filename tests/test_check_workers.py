"""`wheelspec check --workers N`: the campaign's seeds judged on N processes give the reports one
process gives (outcomes in seed order, coverage, counterexamples, the failure budget's stop),
an adapter error in a worker ends the campaign as it would on one process, and a signal stops the
workers and keeps what was judged."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_check_report_counts import crashy  # noqa: F401 - a fixture

from wheelspec.conformance.cli import main

#: The figures of a report that depend on the clock, not on the verdicts.
_TIMINGS = {"seconds", "schedules_per_s", "ops_per_s", "wall_seconds", "started", "finished"}


def _without_timings(x: object) -> object:
    if isinstance(x, dict):
        return {k: _without_timings(v) for k, v in x.items() if k not in _TIMINGS}
    if isinstance(x, list):
        return [_without_timings(v) for v in x]
    return x


def _report(tmp_path: Path, name: str, *argv: str) -> tuple[int, dict, Path]:
    j, out = tmp_path / f"{name}.json", tmp_path / f"{name}-out"
    code = main(["check", *argv, "--json", str(j), "--out", str(out)])
    doc = json.loads(j.read_text())
    return code, doc, out


def _same_reports(tmp_path: Path, *argv: str) -> tuple[dict, dict, Path, Path]:
    c1, one, out1 = _report(tmp_path, "one", *argv, "--workers", "1")
    c2, two, out2 = _report(tmp_path, "two", *argv, "--workers", "2")
    assert c1 == c2
    for doc, out in ((one, out1), (two, out2)):  # the same files, under each run's --out
        for impl in doc["implementations"]:
            impl["counterexamples"] = [os.path.relpath(p, out) for p in impl["counterexamples"]]
            for fp in impl["properties"]:  # failures grouped by property name the same files
                fp["counterexample"] = fp["counterexample"] and os.path.relpath(fp["counterexample"], out)
    assert _without_timings(one["implementations"]) == _without_timings(two["implementations"])
    return one, two, out1, out2


def test_two_workers_judge_like_one(tmp_path: Path) -> None:
    one, two, _, _ = _same_reports(tmp_path, "--impl", "reference", "--no-corpus", "--schedules", "40")
    (impl,) = two["implementations"]
    assert impl["status"] == "pass" and impl["campaign"]["schedules"] == 80
    assert impl["coverage"] == one["implementations"][0]["coverage"] and impl["coverage"]


@pytest.mark.slow
def test_two_workers_stop_a_failing_kind_at_the_same_seed_with_the_same_counterexamples(tmp_path: Path) -> None:
    one, two, out1, out2 = _same_reports(
        tmp_path, "--impl", "tests.fixtures.variants:fifo_ties", "--no-corpus", "--schedules", "300",
        "--kinds", "timer", "--max-failures", "2")
    (impl,) = two["implementations"]
    assert impl["status"] == "fail"
    (stop,) = impl["stopped"]
    assert stop["reason"] == "max-failures" and stop["schedules"] < 300
    failed = [o["seed"] for o in impl["campaign"]["failures"]]
    assert len(failed) == 2 and failed == sorted(failed) and stop["after_seed"] >= failed[-1]
    files1 = sorted(p.relative_to(out1) for p in out1.rglob("*.json"))
    files2 = sorted(p.relative_to(out2) for p in out2.rglob("*.json"))
    assert files1 == files2 and len(files1) == 2
    for rel in files1:
        assert json.loads((out1 / rel).read_text()) == json.loads((out2 / rel).read_text())


def test_an_adapter_error_in_a_worker_ends_the_campaign(tmp_path: Path, crashy: str, capsys) -> None:  # noqa: F811
    code, doc, _ = _report(tmp_path, "r", "--impl", crashy, "--no-corpus", "--schedules", "200", "--kinds", "timer",
                           "--workers", "2")
    err = capsys.readouterr().err
    assert code == 2 and doc["exit_code"] == 2
    (impl,) = doc["implementations"]
    judged = impl["campaign"]["schedules"]
    assert impl["status"] == "error" and 0 < judged < 200
    assert impl["stopped"] == [{"kind": "timer", "reason": "error", "after_seed": judged - 1,
                                "schedules": judged, "planned": 200}]
    assert "request #300" in err


def test_workers_argument_errors_are_one_line(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(["check", "--workers", "0"])
    assert e.value.code == 2 and "--workers" in capsys.readouterr().err
    code = main(["check", "--workers", "2", "--log-protocol", str(tmp_path / "log.txt"), "--no-corpus",
                 "--schedules", "1"])
    err = capsys.readouterr().err
    assert code == 2 and err.strip().splitlines() == [
        "wheelspec check: error: --log-protocol records the adapters of this process only: give it with --workers 1"]
    assert not (tmp_path / "log.txt").exists()  # refused before the file is opened


def _children(pid: int) -> set[int]:
    """Every descendant of ``pid`` (Linux /proc)."""
    out: set[int] = set()
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            kids = Path(f"/proc/{p}/task/{p}/children").read_text().split()
        except OSError:
            continue
        for k in map(int, kids):
            out.add(k)
            todo.append(k)
    return out


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="reads the process tree from /proc (Linux only)")
def test_sigterm_stops_the_workers_and_keeps_the_verdicts(tmp_path: Path) -> None:
    j = tmp_path / "r.json"
    argv = [sys.executable, "-m", "wheelspec", "check", "--impl", "reference", "--no-corpus",
            "--schedules", "100000", "--workers", "2", "--json", str(j), "--out", str(tmp_path / "out")]
    proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    workers: set[int] = set()
    while time.monotonic() < deadline and proc.poll() is None:
        workers = _children(proc.pid)
        if len(workers) >= 3:  # the fork server and two workers are up
            break
        time.sleep(0.1)
    time.sleep(3.0)  # judging
    assert proc.poll() is None, proc.communicate()
    workers = _children(proc.pid)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert err.strip().splitlines()[-1] == "wheelspec check: interrupted by SIGTERM"
    (impl,) = json.loads(j.read_text())["implementations"]
    judged = impl["campaign"]["schedules"]
    assert judged > 0 and impl["status"] == "incomplete"
    assert impl["stopped"][0] == {"kind": "timer", "reason": "interrupted", "after_seed": judged - 1,
                                  "schedules": judged, "planned": 100000}
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [p for p in workers if _alive(p)], "worker processes outlived wheelspec check"
    assert os.path.exists(j)


_PROBE_POOL = """
import sys
from wheelspec.conformance.adapters.resolve import resolve
from wheelspec.conformance.check.parallel import SeedPool, WorkerSetup
from wheelspec.conformance.check.compiled_oracle import _kernels_loaded

if __name__ == "__main__":
    caps = resolve("reference")().hello().capabilities
    setup = WorkerSetup("reference", 10.0, 30.0, caps, "reference", False)
    with SeedPool(setup, 2, oracle_kernels=sys.argv[1] == "1") as pool:
        print(sorted({pool._pool.apply_async(_kernels_loaded).get() for _ in range(4)}))
"""


@pytest.mark.parametrize("preload", [True, False])
def test_workers_are_forked_with_the_oracle_kernels_when_the_campaign_pays(tmp_path: Path, preload: bool) -> None:
    """A campaign large enough for the compiled oracle (compiled_oracle.worth_loading) has its
    fork server load the kernels once: every worker starts with them (a fresh process: the fork
    server of this one may be running already, with other preloads)."""
    script = tmp_path / "probe_pool.py"
    script.write_text(_PROBE_POOL)
    out = subprocess.run([sys.executable, str(script), "1" if preload else "0"], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert out.strip() == str([preload])
