"""Reports that last: a directory per run, ``reports/latest``, failures recorded, ``--output``."""
from __future__ import annotations

from datetime import datetime

import pandas as pd
import pytest

from ir_schemas import REPORT_SCHEMA
from solar_assets import __version__
from solar_assets.cli import main
from solar_assets.report.run_dir import latest_run, new_run_dir, point_latest
from solar_assets.report.writers import read_report
from workload_texts import TINY_LINEAR_RELU

SCALED = TINY_LINEAR_RELU.replace("import torch.nn as nn\n", "import torch.nn as nn\n\nBATCH = 8\n"
                                  "SOLAR_VALIDATION_SIZES = {\"BATCH\": 3}\n").replace(
    "torch.randn(8, 32)", "torch.randn(BATCH, 32)")


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("SOLAR_HOME", str(home))
    monkeypatch.setenv("DAGSTER_HOME", str(home / "dagster"))
    return home


def files(directory):
    return {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file()}


@pytest.mark.slow
def test_a_failed_run_leaves_the_previous_report_in_its_own_directory(home, tmp_path, capsys):
    good = tmp_path / "tiny_mlp.py"
    good.write_text(TINY_LINEAR_RELU)
    assert main(["analyze", str(good), "--no-dagster", "--no-progress"]) == 0
    reports = home / "reports"
    first = latest_run(reports)
    assert first is not None and first.parent == reports
    datetime.strptime(first.name, "%Y%m%dT%H%M%SZ")  # named by the time of the run
    before = files(first)
    assert {"report.json", "report.csv", "report.md", "failures.csv", "per_op.csv", "report_roofline.png"} <= set(before)
    doc = read_report(first / "report.json")
    assert (doc.schema_, doc.solar_version) == (REPORT_SCHEMA, __version__)
    datetime.strptime(doc.created, "%Y-%m-%dT%H:%M:%SZ")
    assert [r.workload for r in doc.rows] == ["tiny_mlp"] and doc.failures == []
    assert {p.node for p in doc.per_op} == {"addmm", "relu"}

    broken = tmp_path / "broken.py"
    broken.write_text("import torch\n\ndef get_inputs(:\n")
    assert main(["analyze", str(broken), "--no-dagster", "--no-progress"]) == 1
    second = latest_run(reports)
    assert second != first and second.parent == reports
    assert files(first) == before  # the good report is intact, byte for byte
    doc = read_report(second / "report.json")
    assert doc.rows == [] and len(doc.failures) == 1
    failure = doc.failures[0]
    assert (failure.workload, failure.source, failure.status, failure.stage) == ("broken", str(broken), "failed", "trace")
    assert str(broken) in failure.reason and "SyntaxError" in failure.reason
    csv = pd.read_csv(second / "failures.csv")
    assert list(csv["workload"]) == ["broken"] and list(csv["stage"]) == ["trace"]
    assert str(broken) in (second / "report.md").read_text()
    capsys.readouterr()


@pytest.mark.slow
def test_output_dir_and_the_latest_pointer_stays(home, tmp_path, capsys):
    good = tmp_path / "tiny_mlp.py"
    good.write_text(TINY_LINEAR_RELU)
    out = tmp_path / "my_report"
    assert main(["analyze", str(good), "--no-dagster", "--no-progress", "--output", str(out), "--per-op", "all"]) == 0
    printed = capsys.readouterr().out
    assert "Per-op breakdown" in printed and "addmm" in printed and "relu" in printed
    assert read_report(out / "report.json").rows[0].workload == "tiny_mlp"
    assert set(pd.read_csv(out / "per_op.csv")["node"]) == {"addmm", "relu"}
    assert latest_run(home / "reports") is None  # --output does not move reports/latest
    assert not (out / "skislope").exists()  # on demand only


@pytest.mark.slow
def test_the_ski_slope_is_written_when_asked(home, tmp_path, capsys):
    good = tmp_path / "tiny_mlp.py"
    good.write_text(TINY_LINEAR_RELU)
    out = tmp_path / "my_report"
    assert main(["analyze", str(good), "--no-dagster", "--no-progress", "--output", str(out), "--ski-slope"]) == 0
    assert "skislope/<workload>.{csv,png}" in capsys.readouterr().out
    rows = pd.read_csv(out / "skislope" / "tiny_mlp.csv")
    assert len(rows) > 1 and (out / "skislope" / "tiny_mlp.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow
def test_progress_says_why_a_second_trace_runs(home, tmp_path, capsys):
    scaled = tmp_path / "scaled_mlp.py"
    scaled.write_text(SCALED)
    assert main(["analyze", str(scaled), "--no-dagster"]) == 0
    err = capsys.readouterr().err
    assert "[1/1] scaled_mlp: trace…" in err
    assert "[1/1] scaled_mlp: trace at validation size BATCH=3…" in err
    assert "overall" in err  # elapsed time with each line


def test_run_dirs_do_not_collide_and_latest_is_replaced(tmp_path):
    now = datetime(2026, 12, 1, 9, 30, 0)
    a, b = new_run_dir(tmp_path, now), new_run_dir(tmp_path, now)
    assert (a.name, b.name) == ("20261201T093000Z", "20261201T093000Z-2")
    point_latest(tmp_path, a)
    point_latest(tmp_path, b)
    assert latest_run(tmp_path) == b.resolve()
    assert sorted(p.name for p in tmp_path.iterdir()) == [a.name, b.name, "latest"]


def test_progress_on_a_terminal_is_a_tqdm_bar_with_elapsed_time_and_eta():
    import io

    from solar_assets.cli import Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    from solar_assets.progress import FINISHED

    stream = Terminal()
    progress = Progress(["a", "b"], stream=stream)
    progress("a", "trace")
    progress("a", "trace at BATCH=3")
    progress("a", FINISHED)
    progress("b", "golden at BATCH=3")
    progress("b", FINISHED)
    progress.done()
    text = stream.getvalue()
    assert "1/2 workloads" in text and "elapsed" in text and "ETA" in text
    assert "a: trace at validation size BATCH=3…" in text and "b: golden at validation size BATCH=3…" in text
    assert "[1/2] a: " in text and "[2/2] b: " in text  # a line per finished workload


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _eta_seconds(line: str) -> float:
    import re

    m = re.search(r"ETA (?:(\d+):)?(\d+):(\d+)", line)
    assert m, line
    return int(m[1] or 0) * 3600 + int(m[2]) * 60 + int(m[3])


def test_the_eta_after_two_of_ten_equal_files_is_within_a_factor_two_of_the_truth(monkeypatch):
    """One worker, ten files of 10 s each (the clock is the test's): after two have finished the
    line's ETA is the 80 s left, not a figure from the count of stage switches."""
    import io

    from solar_assets import cli
    from solar_assets.progress import FINISHED

    clock = _Clock()
    monkeypatch.setattr(cli.time, "perf_counter", clock)
    stream = io.StringIO()
    names = [f"w{i}" for i in range(10)]
    progress = cli.Progress(names, stream=stream)
    lines = []
    for i, name in enumerate(names):
        for stage in ("trace", "size", "golden", "size", "validate", "graph", "bounds H100_SXM"):
            progress(name, stage)
            clock.now += 10 / 7
        progress(name, FINISHED)
        if i == 1:
            progress(names[2], "trace")
            lines.append(stream.getvalue().splitlines()[-1])
    truth = 80.0
    assert truth / 2 <= _eta_seconds(lines[0]) <= truth * 2
    first = stream.getvalue().splitlines()[0]
    assert "ETA after the first file" in first  # none before a file finished
    assert sum(": size…" in line for line in stream.getvalue().splitlines() if line.startswith("[1/10] w0")) == 1


def test_two_workers_interleaving_stages_do_not_count_as_finished_files(monkeypatch):
    """Two workers, their stages alternating: the count and the ETA follow the results (the
    counting of switches made ``[70/270] … ETA -00:14``)."""
    import io

    from solar_assets import cli
    from solar_assets.progress import FINISHED

    clock = _Clock()
    monkeypatch.setattr(cli.time, "perf_counter", clock)
    stream = io.StringIO()
    names = [f"w{i}" for i in range(6)]
    progress = cli.Progress(names, stream=stream)
    for pair in ((0, 1), (2, 3)):  # each pair runs side by side for 20 s
        for stage in ("trace", "golden", "validate", "bounds H100_SXM"):
            for i in pair:
                progress(names[i], stage)
            clock.now += 5
        for i in pair:
            progress(names[i], FINISHED)
    assert progress.finished == 4
    progress(names[4], "trace")
    last = stream.getvalue().splitlines()[-1]
    assert 20 / 2 <= _eta_seconds(last) <= 20 * 2  # two files left at two files per 20 s


def test_a_run_whose_files_would_be_the_newest_ones_names_them(tmp_path):
    from solar_assets.report.run_dir import mark_run, report_key, unchanged_run

    run = new_run_dir(tmp_path, datetime(2026, 12, 1, 9, 30, 0))
    assert unchanged_run(tmp_path, report_key(["rows"])) is None  # no run yet
    mark_run(run, report_key(["rows", "per-op"]))
    point_latest(tmp_path, run)
    assert unchanged_run(tmp_path, report_key(["rows", "per-op"])) == run.resolve()
    assert unchanged_run(tmp_path, report_key(["rows", "per-op", "another row"])) is None
    assert report_key(["ab", "c"]) != report_key(["a", "bc"])  # the parts are kept apart


@pytest.mark.slow
def test_a_call_that_changes_nothing_makes_no_new_directory(home, tmp_path, capsys):
    good = tmp_path / "tiny_mlp.py"
    good.write_text(TINY_LINEAR_RELU)
    assert main(["analyze", str(good), "--no-dagster", "--no-progress"]) == 0
    first = latest_run(home / "reports")
    before = files(first)
    capsys.readouterr()
    assert main(["analyze", str(good), "--no-dagster", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert f"report (unchanged: that call's files, nothing they show changed): {first}/" in out
    assert sorted(p.name for p in (home / "reports").iterdir()) == [first.name, "latest"]
    assert latest_run(home / "reports") == first and files(first) == before
    # an edited workload: its rows change, so a new directory with them
    good.write_text(TINY_LINEAR_RELU.replace("torch.randn(8, 32)", "torch.randn(16, 32)"))
    assert main(["analyze", str(good), "--no-dagster", "--no-progress"]) == 0
    second = latest_run(home / "reports")
    assert second != first and files(first) == before
    assert read_report(second / "report.json").rows != read_report(first / "report.json").rows


def test_the_eta_weighs_files_by_their_expected_seconds_when_the_costly_ones_go_first(monkeypatch):
    """Workers take the costliest files first (``workers.order``): one file expected to take ten
    times the others finishes first, after 100 s; ten files expected at a tenth of it are left, so
    100 s remain, where counting files says 1,000 s (a cold KernelBench run read ``ETA 2:42:00``
    after five minutes of a 28-minute run)."""
    import io

    from solar_assets import cli
    from solar_assets.progress import FINISHED

    clock = _Clock()
    monkeypatch.setattr(cli.time, "perf_counter", clock)
    names = ["big", *(f"small{i}" for i in range(10))]
    for expected, truth in (([100.0] + [10.0] * 10, 100.0), (None, 1000.0)):
        stream = io.StringIO()
        progress = cli.Progress(names, stream=stream, expected=expected)
        progress("big", "trace")
        clock.now += 100
        progress("big", FINISHED)
        progress("small0", "trace")
        assert _eta_seconds(stream.getvalue().splitlines()[-1]) == truth


def test_the_expected_seconds_of_a_call_come_from_the_homes_record_else_the_source(tmp_path):
    from solar_assets import cli
    from solar_assets.workers.order import save_durations

    timed, new = tmp_path / "timed.py", tmp_path / "new.py"
    for path in (timed, new):
        path.write_text("import torch\n")
    save_durations(tmp_path / "home" / "cache", {str(timed): 42.0})
    expected = cli._expected_seconds([timed, new], tmp_path / "home")
    assert expected[0] == 42.0
    assert 0 < expected[1] < 42.0


def test_files_answered_by_their_records_are_left_out_of_the_eta(monkeypatch):
    """A warm call: 269 files unchanged (answered at once after the call's 9 s of set-up) and one
    file timed at 3 s before. The ETA after the unchanged ones is still 'after the first file',
    not 9 s over 3 s of work times the 2,870 s they once took (a warm KernelBench call read
    ``ETA 13:10:10``)."""
    import io

    from solar_assets import cli
    from solar_assets.progress import FINISHED, UNCHANGED

    clock = _Clock()
    monkeypatch.setattr(cli.time, "perf_counter", clock)
    names = [f"w{i}" for i in range(270)]
    stream = io.StringIO()
    progress = cli.Progress(names, stream=stream, expected=[10.0] * 269 + [3.0])
    clock.now += 9
    for name in names[:269]:
        progress(name, UNCHANGED)
        progress(name, FINISHED)
    progress(names[-1], "trace")
    assert "ETA after the first file" in stream.getvalue().splitlines()[-1]
    clock.now += 3
    progress(names[-1], FINISHED)
    assert progress.finished == 270


def test_the_expected_seconds_are_asked_for_only_once_a_file_did_work(monkeypatch):
    """A warm call whose files are all unchanged never reads their sources for the ETA."""
    import io

    from solar_assets import cli
    from solar_assets.progress import FINISHED, UNCHANGED

    asked = []
    progress = cli.Progress(["a", "b"], stream=io.StringIO(), expected=lambda: asked.append(1) or [1.0, 1.0])
    for name in ("a", "b"):
        progress(name, UNCHANGED)
        progress(name, FINISHED)
    assert asked == []
    progress = cli.Progress(["a", "b"], stream=io.StringIO(), expected=lambda: asked.append(1) or [1.0, 3.0])
    progress("a", "trace")
    progress("a", FINISHED)
    progress("b", "trace")
    assert asked == [1] and progress.weight == {"a": 1.0, "b": 3.0}
