"""``wheelspec campaign`` resumes only the campaign that wrote its output folder (the manifest
``OUT/campaign.json``), never gives a verdict of another implementation, deletes with ``--fresh``
only what it wrote, stops a kind at its failure budget, and survives an interruption with every
finished range kept.  All on ``--engine local`` (the Spark engine: tests/test_spark_campaign.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wheelspec.conformance.cli import main
from wheelspec.conformance.traces import spark_campaign
from wheelspec.conformance.traces.campaign_store import owned
from wheelspec.conformance.traces.spark_campaign import collect_verdicts

ROOT = Path(__file__).resolve().parents[1]
BROKEN = "tests.fixtures.broken:fires_twice"


@pytest.fixture(autouse=True)
def _fixtures_importable(monkeypatch):
    # `--impl tests.fixtures.broken:...` imports from the project root, whatever the cwd.
    monkeypatch.syspath_prepend(str(ROOT))


def campaign(capsys, *args: str, seeds: int = 8, chunk: int = 4, kinds: str = "timer") -> tuple[int, dict, str]:
    """Run ``wheelspec campaign ... --json`` in-process: (exit code, summary, stderr)."""
    argv = ["campaign", "--kinds", kinds, "--schedules", str(seeds), "--chunk", str(chunk), "--engine", "local",
            "--workers", "1", "--json", "-", *args]
    code = main(argv)
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else {}), err


def files_below(d: Path) -> set[str]:
    return {str(p.relative_to(d)) for p in d.rglob("*") if p.is_file()}


def verdict_rows(out: Path, kinds: list[str], seeds: int, chunk: int) -> list[dict]:
    return collect_verdicts(out, kinds, 0, seeds, chunk).to_pylist()


# ------------------------------------------------------------------ no false PASS ------------
def test_a_broken_timer_never_resumes_a_correct_timers_campaign(tmp_path, capsys):
    out = str(tmp_path / "c")
    code, first, _ = campaign(capsys, "--impl", "reference", "--out", out)
    assert code == 0 and first["schedules"] == 8 and first["failed"] == 0
    before = files_below(tmp_path / "c")
    code, summary, err = campaign(capsys, "--impl", BROKEN, "--out", out)
    assert code == 2 and summary == {}
    assert err.count("\n") == 1 and "different --impl" in err and "--fresh" in err and "reference" in err
    assert files_below(tmp_path / "c") == before        # refused: nothing written, nothing deleted


def test_the_default_output_folder_is_per_implementation(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, good, _ = campaign(capsys, "--impl", "reference")
    assert code == 0 and good["failed"] == 0
    code, bad, _ = campaign(capsys, "--impl", BROKEN)
    assert code == 1 and bad["failed"] > 0 and bad["ranges_skipped"] == 0
    assert good["out"] != bad["out"]
    assert Path(good["out"]) == Path("wheelspec-campaign", "reference")
    assert Path(bad["out"]).parent == Path("wheelspec-campaign") and "fires_twice" in bad["out"]


def test_a_changed_implementation_source_is_refused(tmp_path, capsys, monkeypatch):
    mod = tmp_path / "campaign_resume_impl.py"
    mod.write_text("from wheelspec.conformance.adapters import reference_adapter\n\n\n"
                   "def make():\n    return reference_adapter()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    impl = "campaign_resume_impl:make"
    out = str(tmp_path / "c")
    assert campaign(capsys, "--impl", impl, "--out", out)[0] == 0
    assert campaign(capsys, "--impl", impl, "--out", out)[1]["ranges_skipped"] == 2   # unchanged: resumes
    mod.write_text(mod.read_text() + "# the timer after a fix\n")
    code, _, err = campaign(capsys, "--impl", impl, "--out", out)
    assert code == 2 and "implementation source" in err


@pytest.mark.parametrize("change, field", [(("--chunk", "2"), "--chunk"), (("--no-shrink",), "shrinking"),
                                           (("--write", "traces={tmp}/elsewhere"), "--write traces=DIR")])
def test_other_parameters_are_part_of_the_identity(tmp_path, capsys, change, field):
    out = str(tmp_path / "c")
    assert campaign(capsys, "--impl", "reference", "--out", out)[0] == 0
    argv = ["campaign", "--kinds", "timer", "--schedules", "8", "--engine", "local", "--workers", "1", "--json", "-",
            "--impl", "reference", "--out", out, *(c.format(tmp=tmp_path) for c in change)]
    if "--chunk" not in change:
        argv += ["--chunk", "4"]
    assert main(argv) == 2
    assert f"different {field}" in capsys.readouterr().err


def test_kinds_are_part_of_the_identity(tmp_path, capsys):
    out = str(tmp_path / "c")
    assert campaign(capsys, "--impl", "reference", "--out", out)[0] == 0
    code, _, err = campaign(capsys, "--impl", "reference", "--out", out, kinds="timer,purgatory")
    assert code == 2 and "different --kinds" in err


# ------------------------------------------------------------------ --fresh -------------------
@pytest.mark.slow
def test_fresh_starts_over_and_deletes_only_its_own_files(tmp_path, capsys):
    out = tmp_path / "c"
    assert campaign(capsys, "--impl", "reference", "--out", str(out))[0] == 0
    mine = [out / "notes.txt", out / "verdicts" / "timer" / "my-analysis.parquet",
            out / "counterexamples" / "keep" / "README", out / "verdicts" / "timer" / "range-1-2.parquet"]
    for p in mine:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("the user's")
    outside = tmp_path / "elsewhere.parquet"
    outside.write_text("not in the folder")
    link = out / "verdicts" / "timer" / "range-000000000098-000000000099.parquet"   # a name the tool uses
    link.symlink_to(outside)
    code, summary, _ = campaign(capsys, "--impl", BROKEN, "--out", str(out), "--fresh")
    assert code == 1 and summary["ranges_skipped"] == 0 and summary["ranges_run"] == 2 and summary["failed"] > 0
    assert all(p.read_text() == "the user's" for p in mine)
    assert link.is_symlink() and outside.read_text() == "not in the folder"
    manifest = json.loads((out / "campaign.json").read_text())
    assert manifest["identity"]["impl"] == BROKEN
    # and the folder is BROKEN's now: the next plain run resumes it
    assert campaign(capsys, "--impl", BROKEN, "--out", str(out))[1]["ranges_skipped"] == 2


@pytest.mark.parametrize("path, ours", [
    ("campaign.json", True), ("campaign.json.tmp12", True),
    ("verdicts/timer/range-000000000000-000000000004.parquet", True),
    ("verdicts/timer/range-000000000000-000000000004.parquet.tmp9", True),
    ("traces/purgatory/range-000000000000-000000000004.parquet", True),
    ("counterexamples/reference/timer-5.json", True), ("counterexamples/reference/timer-5.json.tmp3", True),
    ("counterexamples/reference/notes-2024.json", False), ("verdicts/wheel/range-000000000000-000000000004.parquet",
                                                           False),
    ("verdicts/timer/range-1-2.parquet", False), ("verdicts/range-000000000000-000000000004.parquet", False),
    ("notes.txt", False), ("campaign.json.bak", False)])
def test_the_names_fresh_may_delete(path, ours):
    assert owned(Path(path)) is ours


def test_fresh_refuses_a_folder_of_someone_elses_files(tmp_path, capsys):
    out = tmp_path / "c"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    code, _, err = campaign(capsys, "--impl", "reference", "--out", str(out), "--fresh")
    assert code == 2 and "no campaign manifest" in err and "nothing is deleted" in err
    assert files_below(out) == {"thesis.tex"}


def test_a_folder_of_results_without_a_manifest_is_refused_then_fresh_clears_it(tmp_path, capsys):
    out = tmp_path / "c"
    assert campaign(capsys, "--impl", "reference", "--out", str(out))[0] == 0
    (out / "campaign.json").unlink()          # what a campaign without a manifest leaves
    code, _, err = campaign(capsys, "--impl", BROKEN, "--out", str(out))
    assert code == 2 and "without a manifest" in err and "--fresh" in err
    code, summary, _ = campaign(capsys, "--impl", BROKEN, "--out", str(out), "--fresh")
    assert code == 1 and summary["ranges_skipped"] == 0


def test_a_manifest_that_is_not_ours_is_never_overwritten(tmp_path, capsys):
    out = tmp_path / "c"
    out.mkdir()
    (out / "campaign.json").write_text('{"budget": 3}')
    for extra in ((), ("--fresh",)):
        code, _, err = campaign(capsys, "--impl", "reference", "--out", str(out), *extra)
        assert code == 2 and "not a wheelspec campaign manifest" in err
    assert (out / "campaign.json").read_text() == '{"budget": 3}'


# ------------------------------------------------------------------ resume = uninterrupted ----
@pytest.mark.slow
def test_a_resumed_campaign_equals_an_uninterrupted_one(tmp_path, capsys, monkeypatch):
    kinds = ["timer", "purgatory"]
    common = ("--impl", BROKEN, "--max-failures", "none")
    whole_out = str(tmp_path / "whole")
    code, whole, _ = campaign(capsys, *common, "--out", whole_out, seeds=8, chunk=2, kinds="timer,purgatory")
    assert code == 1
    # Interrupted after two ranges (what Ctrl-C does inside a range: the exception, no file).
    real, calls = spark_campaign.run_range, []

    def interrupted_after_two(task):
        calls.append(task)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(task)

    monkeypatch.setattr(spark_campaign, "run_range", interrupted_after_two)
    parts = str(tmp_path / "parts")
    code, cut, _ = campaign(capsys, *common, "--out", parts, seeds=8, chunk=2, kinds="timer,purgatory")
    assert code == 130 and cut["interrupted"] == {"signal": "SIGINT", "exit_code": 130}
    assert cut["exit_code"] == 130 and cut["ok"] is False and cut["ranges_run"] == 2 and cut["ranges_pending"] == 6
    assert cut["schedules"] == 4
    monkeypatch.setattr(spark_campaign, "run_range", real)
    # then a smaller span, then the whole span again
    code, small, _ = campaign(capsys, *common, "--out", parts, seeds=2, chunk=2, kinds="timer,purgatory")
    assert small["ranges_skipped"] == 2 and small["ranges_run"] == 0
    code, resumed, _ = campaign(capsys, *common, "--out", parts, seeds=8, chunk=2, kinds="timer,purgatory")
    assert code == 1 and resumed["ranges_skipped"] == 2 and resumed["ranges_run"] == 6 and resumed["resumed"]
    assert verdict_rows(tmp_path / "parts", kinds, 8, 2) == verdict_rows(tmp_path / "whole", kinds, 8, 2)
    for k in ("schedules", "failed", "failure_classes"):
        assert resumed[k] == whole[k]
    assert files_below(tmp_path / "parts") == files_below(tmp_path / "whole")


def test_interrupted_terminal_summary_says_how_to_resume(tmp_path, capsys, monkeypatch):
    def interrupt(task):
        raise KeyboardInterrupt

    monkeypatch.setattr(spark_campaign, "run_range", interrupt)
    code = main(["campaign", "--impl", "reference", "--kinds", "timer", "--schedules", "8", "--chunk", "4",
                 "--engine", "local", "--workers", "1", "--out", str(tmp_path / "c")])
    out, err = capsys.readouterr()
    assert code == 130
    assert "interrupted: 2 ranges not finished; rerun the same command" in out
    assert "interrupted" in err


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_sigterm_stops_the_worker_pool_and_keeps_finished_ranges(tmp_path):
    out = tmp_path / "c"
    entry = "import sys; from wheelspec.conformance.cli import main; sys.exit(main())"
    cmd = [sys.executable, "-c", entry, "campaign", "--impl", "reference", "--kinds", "timer", "--schedules", "4000",
           "--chunk", "10", "--engine", "local", "--workers", "2", "--out", str(out), "--json", "-"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    verdicts = out / "verdicts" / "timer"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(verdicts.glob("*.parquet"))) < 2 and proc.poll() is None:
        time.sleep(0.1)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, stderr
    summary = json.loads(stdout)
    assert summary["interrupted"] == {"signal": "SIGTERM", "exit_code": 143} and summary["exit_code"] == 143
    assert 0 < summary["ranges_run"] < 400
    done = sorted(verdicts.glob("*.parquet"))
    time.sleep(1.0)
    assert sorted(verdicts.glob("*.parquet")) == done          # no worker left writing
    assert summary["schedules"] == 10 * len(done) and summary["ranges_run"] == len(done)
    assert "interrupted by SIGTERM" in stderr and "Traceback" not in stderr


# ------------------------------------------------------------------ failure budget ------------
@pytest.mark.slow
def test_the_failure_budget_is_per_kind_and_says_where_it_stopped(tmp_path, capsys):
    def run(out, budget):
        return campaign(capsys, "--impl", BROKEN, "--out", str(out), "--max-failures", budget, "--no-shrink",
                        seeds=20, chunk=5, kinds="timer,purgatory")

    out = tmp_path / "c"
    code, s, _ = run(out, "3")
    assert code == 1
    timer = s["stopped_early"]["timer"]
    assert timer["reason"] == "max-failures" and timer["max_failures"] == 3 and timer["failed"] >= 3
    assert timer["ranges_not_run"] >= 1 and timer["seeds_not_run"] == 5 * timer["ranges_not_run"]
    # the purgatory campaign is not cut by the timer's failures
    assert "purgatory" not in s["stopped_early"]
    runs = {(r["kind"], r["seed"]) for r in verdict_rows(out, ["timer", "purgatory"], 20, 5)}
    assert {seed for k, seed in runs if k == "purgatory"} == set(range(20))
    assert len({seed for k, seed in runs if k == "timer"}) == 20 - timer["seeds_not_run"]
    n_timer_files = len(list((out / "verdicts" / "timer").glob("*.parquet")))
    assert n_timer_files == 4 - timer["ranges_not_run"]           # a range not run has no file
    # resumed with the same budget: nothing more runs, the same cut is reported
    code, again, _ = run(out, "3")
    assert again["ranges_run"] == 0 and again["stopped_early"] == s["stopped_early"]
    # a larger budget runs the rest; the result equals an unbudgeted campaign
    code, rest, _ = run(out, "none")
    assert rest["ranges_run"] == timer["ranges_not_run"] and rest["stopped_early"] == {}
    code, whole, _ = run(tmp_path / "w", "none")
    assert rest["failed"] == whole["failed"] and rest["failure_classes"] == whole["failure_classes"]


@pytest.mark.slow
def test_the_terminal_summary_names_the_kind_that_stopped(tmp_path, capsys):
    code = main(["campaign", "--impl", BROKEN, "--kinds", "timer", "--schedules", "20", "--chunk", "5", "--engine",
                 "local", "--workers", "1", "--max-failures", "1", "--out", str(tmp_path / "c")])
    out = capsys.readouterr().out
    assert code == 1
    assert "timer: stopped early:" in out and "--max-failures 1 (per kind)" in out and "not run" in out


@pytest.mark.parametrize("argv, what", [(["--workers", "-3"], "--workers: must be an integer >= 1"),
                                        (["--workers", "0"], "--workers: must be an integer >= 1"),
                                        (["--max-failures", "0"], "--max-failures: must be an integer >= 1"),
                                        (["--kinds", ","], "--kinds: must be a comma-separated list")])
def test_bad_arguments_are_one_line(tmp_path, capsys, argv, what):
    with pytest.raises(SystemExit) as e:
        main(["campaign", "--engine", "local", "--out", str(tmp_path / "c"), *argv])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1 and what in err, err
    assert not (tmp_path / "c").exists()


def test_the_pipeline_window_is_not_part_of_the_identity():
    """How many requests an adapter takes in flight changes how fast a campaign runs, not what
    it judges: a campaign resumes across a kit that starts declaring a pipeline."""
    import dataclasses

    from wheelspec.conformance.adapters.protocol import Capabilities, Hello
    from wheelspec.conformance.traces.campaign_store import identity

    plain = Hello("x", Capabilities(protocol=2), "1")
    piped = dataclasses.replace(plain, capabilities=Capabilities(protocol=2, pipeline=64))
    args = dict(kinds=["timer"], shrink=True, trace=False, chunk=100)
    assert identity("cmd:x", plain, **args) == identity("cmd:x", piped, **args)
    assert identity("cmd:x", plain, **args) != identity(
        "cmd:x", dataclasses.replace(plain, capabilities=Capabilities(protocol=2, profile="strict")), **args)
