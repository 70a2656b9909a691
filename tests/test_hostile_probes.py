"""Hostile probes of issue 25, each written as a new user would try it: storage that cannot be used,
a file that moves the working directory, a file name at the file system's limit, a workload that
raises KeyboardInterrupt, malformed measurement and bounds files, an implausible spec.

Each test runs ``solar`` through ``main`` (the worker processes, the Dagster path where it matters)
and checks what a user sees: one line naming the file and the remedy, the table still printed, no
traceback, the other rows intact.
"""
from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path

import pytest

from solar_assets.cli import main
from workload_texts import TINY_LINEAR_RELU, TINY_LINEAR_RELU_MACS


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("SOLAR_HOME", str(home))
    monkeypatch.setenv("DAGSTER_HOME", str(home / "dagster"))
    return home


def _errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("solar: error:")]


def _json_rows(out: str) -> list[dict]:
    return json.loads(out)["rows"]


# ---------------------------------------------------------------------------- rows 5 and 7: storage
@pytest.mark.parametrize("where", ["home is a file", "cache is a file"])
@pytest.mark.slow
def test_an_unusable_home_costs_no_rows(tmp_path, monkeypatch, capsys, where):
    """A home that is a file, or whose ``cache/`` is (what a read-only or broken mount looks like
    to root, who may write anywhere): one line naming it and the remedy, the rows still computed and
    printed, the report written to the fallback directory the line names."""
    workload = tmp_path / "tiny_linear.py"
    workload.write_text(TINY_LINEAR_RELU)
    home = tmp_path / "home"
    if where == "home is a file":
        home.write_text("not a directory")
        bad = home
    else:
        home.mkdir()
        (home / "cache").write_text("not a directory")
        bad = home / "cache"
    monkeypatch.setenv("SOLAR_HOME", str(home))
    code = main(["analyze", str(workload), "--hardware", "H100_SXM", "--no-progress", "--json"])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    errors = _errors(captured.err)
    assert len(errors) == 1 and f"{bad} is a file, not a directory" in errors[0]
    assert "set SOLAR_HOME (or --home) to a writable directory" in errors[0]
    fallback = Path(errors[0].split("this run uses ", 1)[1].split(" instead", 1)[0])
    rows = _json_rows(captured.out)
    assert [r["macs"] for r in rows] == [TINY_LINEAR_RELU_MACS]
    assert list(fallback.glob("reports/*/report.json"))  # the report is where the line says
    assert code == 1


# ---------------------------------------------------------------------------- row 8: os.chdir
@pytest.mark.slow
@pytest.mark.parametrize("plain", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["dagster", "no-dagster"])
def test_a_relative_path_to_a_file_that_moves_the_working_directory(tmp_path, monkeypatch, home, capsys, plain):
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "wanders.py").write_text(TINY_LINEAR_RELU + "\nimport os\nos.chdir('/')\n")
    monkeypatch.chdir(tmp_path / "work")
    code = main(["analyze", "wanders.py", "--hardware", "H100_SXM", "--no-progress", "--json",
                 *(["--no-dagster"] if plain else [])])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert [r["macs"] for r in _json_rows(captured.out)] == [TINY_LINEAR_RELU_MACS]


# ---------------------------------------------------------------------------- row 10: a long name
@pytest.mark.slow
def test_a_file_name_at_the_file_systems_limit(tmp_path, home, capsys):
    name = "w" + "x" * 236  # 240 bytes with ".py": legal on ext4, too long with any suffix added
    workload = tmp_path / f"{name}.py"
    workload.write_text(TINY_LINEAR_RELU)
    for extra in ([], ["--no-dagster"]):
        code = main(["analyze", str(workload), "--hardware", "H100_SXM", "--no-progress", "--json", *extra])
        captured = capsys.readouterr()
        assert code == 0, captured.err
        rows = _json_rows(captured.out)
        assert [(r["workload"], r["macs"]) for r in rows] == [(name, TINY_LINEAR_RELU_MACS)]


# ---------------------------------------------------------------------------- row 13: a signal raised
@pytest.mark.slow
def test_keyboard_interrupt_in_workload_code_is_named_with_its_stage(tmp_path, home, capsys):
    interrupted = tmp_path / "interrupted.py"
    interrupted.write_text(TINY_LINEAR_RELU.replace("def get_inputs():\n", "def get_inputs():\n"
                                                    "    raise KeyboardInterrupt\n"))
    fine = tmp_path / "tiny_linear.py"
    fine.write_text(TINY_LINEAR_RELU)
    code = main(["analyze", str(interrupted), str(fine), "--hardware", "H100_SXM", "--no-progress", "--json"])
    captured = capsys.readouterr()
    assert code == 1
    assert _errors(captured.err) == [f"solar: error: {interrupted}: the workload raised KeyboardInterrupt during trace"]
    assert [r["workload"] for r in _json_rows(captured.out)] == ["tiny_linear"]


def test_an_implausible_capacity_is_refused(tmp_path):
    from solar_assets.errors import SolarError
    from solar_assets.hardware import load_hardware

    shipped = Path(__file__).resolve().parents[1] / "hardware" / "H100_SXM.yaml"
    text = shipped.read_text()
    spec_dir = tmp_path / "hw"
    spec_dir.mkdir()
    line = next(line for line in text.splitlines() if line.startswith("dram_capacity_bytes:"))
    (spec_dir / "H100_SXM.yaml").write_text(text.replace(line, f"dram_capacity_bytes: {10**42}"))
    with pytest.raises(SolarError, match="outside the plausible range for a DRAM capacity"):
        load_hardware("H100_SXM", spec_dir)


# ---------------------------------------------------------------------------- row 11: solar headroom
def _headroom_files(tmp_path, bounds: object, measurements: object) -> tuple[Path, Path]:
    from test_gpu_runner import bounds_row, measurement, timing  # noqa: F401 - the shapes of valid files

    b, m = tmp_path / "bounds.json", tmp_path / "meas.json"
    for path, data in ((b, bounds), (m, measurements)):
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data if isinstance(data, str) else json.dumps(data))
    return b, m


def _valid(**timing_changes) -> tuple[list[dict], dict]:
    from test_gpu_runner import bounds_row, measurement, timing

    t = {**timing("torch_eager", [2e-3, 3e-3, 4e-3]), **timing_changes}
    return [bounds_row()], measurement([{"workload": "matmul_relu", "path": "kb/matmul_relu.py", "timings": [t]}])


def _case(case: str) -> tuple[object, object]:
    from test_gpu_runner import bounds_row

    bounds, meas = _valid()
    if case == "binary bounds":
        return b"\x89PNG\r\n\x1a\n\xff\xfe\x00" * 50, meas
    if case == "deeply nested measurements":
        return bounds, "[" * 200_000 + "]" * 200_000
    if case == "a median that is text":
        return _valid(median_s="fast")
    if case == "NaN timings":
        return _valid(times_s=[math.nan, math.nan], median_s=math.nan, p10_s=math.nan, p90_s=math.nan)
    if case == "a negative bound":
        return [bounds_row(sol_fused_s=-1.0)], _valid(times_s=[1e-12], median_s=1e-12, p10_s=1e-12,
                                                       p90_s=1e-12)[1]
    if case == "a NaN bound":
        return [bounds_row(sol_fused_s=math.nan)], meas
    raise AssertionError(case)


@pytest.mark.parametrize("case", ["binary bounds", "deeply nested measurements", "a median that is text",
                                  "NaN timings", "a negative bound", "a NaN bound"])
def test_headroom_rejects_a_malformed_file_with_one_line(tmp_path, capsys, case):
    bounds, meas = _case(case)
    b, m = _headroom_files(tmp_path, bounds, meas)
    code = main(["headroom", "--bounds", str(b), "--measurements", str(m)])
    captured = capsys.readouterr()
    assert code == 2, captured
    assert "Traceback" not in captured.err and "violation(s)" not in captured.out
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("solar: error:"), lines
    assert (str(b) if "bound" in case and "binary" in case else "") in lines[0]


def test_headroom_still_joins_a_valid_pair(tmp_path, capsys):
    bounds, meas = _valid()
    b, m = _headroom_files(tmp_path, bounds, meas)
    assert main(["headroom", "--bounds", str(b), "--measurements", str(m)]) == 0
    assert "0 violation(s)" in capsys.readouterr().out


# ---------------------------------------------------------------------------- row 4: concurrent calls
def _cli(home: Path, *args: str, cwd: Path | None = None):
    import subprocess
    import sys

    env = {**__import__("os").environ, "SOLAR_HOME": str(home), "DAGSTER_HOME": str(home / "dagster")}
    return subprocess.Popen([sys.executable, "-m", "solar", *args], env=env, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
@pytest.mark.parametrize("calls", [3, pytest.param(10, marks=pytest.mark.slow)])
def test_concurrent_calls_on_a_fresh_home_all_succeed(tmp_path, calls):
    """``solar analyze`` started several times at once on a home no call has used: every call
    gets its row, and the instance works for the next call (it once raced Dagster's schema
    creation and its dynamic-partition table, and stayed broken)."""
    workload = tmp_path / "tiny_linear.py"
    workload.write_text(TINY_LINEAR_RELU)
    home = tmp_path / "home"
    procs = [_cli(home, "analyze", str(workload), "--hardware", "H100_SXM", "--no-progress", "--json")
             for _ in range(calls)]
    outs = [p.communicate(timeout=900) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-2000:]
        assert [r["macs"] for r in _json_rows(out)] == [TINY_LINEAR_RELU_MACS]
    again = _cli(home, "analyze", str(workload), "--hardware", "H100_SXM", "--no-progress", "--json")
    out, err = again.communicate(timeout=900)
    assert again.returncode == 0, err[-2000:]
    assert [r["macs"] for r in _json_rows(out)] == [TINY_LINEAR_RELU_MACS]


# ---------------------------------------------------------------------------- row 9: a killed call's run
DOOMED_RUN = '''
import os, signal, sys
from pathlib import Path

import dagster as dg

from solar_assets.dagster_defs.instance import process_tags, solar_instance


@dg.asset
def doomed():
    os.kill(os.getpid(), signal.SIGKILL)  # kill -9 of the process, in the middle of its run


dg.materialize([doomed], instance=solar_instance(Path(sys.argv[1])), tags=process_tags())
'''


@pytest.mark.slow
def test_a_run_whose_process_was_killed_is_marked_failed_by_the_next_call(tmp_path, home, capsys):
    import subprocess
    import sys

    import dagster as dg

    from solar_assets.dagster_defs.instance import solar_instance

    done = subprocess.run([sys.executable, "-c", DOOMED_RUN, str(home)], capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ})
    assert done.returncode == -9, done.stderr[-2000:]
    with solar_instance(home) as instance:
        [run] = instance.get_runs()
        assert run.status == dg.DagsterRunStatus.STARTED  # what the killed call left: "running" forever
    workload = tmp_path / "tiny_linear.py"
    workload.write_text(TINY_LINEAR_RELU)
    assert main(["analyze", str(workload), "--hardware", "H100_SXM", "--no-progress"]) == 0
    with solar_instance(home) as instance:
        assert instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.FAILURE
        assert all(r.status != dg.DagsterRunStatus.STARTED for r in instance.get_runs())


# ---------------------------------------------------------------------------- row 12: contained processes
SPAWNER = TINY_LINEAR_RELU.replace("import torch\n", '''import socket
import subprocess

import torch
''', 1).replace("def get_inputs():\n", '''def get_inputs():
    subprocess.Popen(["sleep", "300"], start_new_session=True)  # leaves its session: outlives a process group
    try:
        socket.create_connection(("192.0.2.1", 9), timeout=0.1)  # TEST-NET-1: never answers
    except OSError:
        pass
    with open(OUTSIDE, "w") as f:
        f.write("written outside")
''', 1)


def _sleepers() -> set[int]:
    import subprocess

    found = subprocess.run(["pgrep", "-f", "^sleep 300$"], capture_output=True, text=True).stdout.split()
    return {int(p) for p in found}


@pytest.mark.slow
@pytest.mark.parametrize("hang", [False, pytest.param(True, marks=pytest.mark.slow)],
                         ids=["file done", "killed at its time limit"])
def test_what_a_workload_starts_dies_with_it_and_is_noted(tmp_path, home, capsys, caplog, hang):
    import logging

    import uuid

    if not Path("/var/tmp").is_dir():
        pytest.skip("no /var/tmp: no place outside the temp dir to write to")
    outside = Path("/var/tmp") / f"solar-probe-{uuid.uuid4().hex}.txt"  # not the temp dir, the home or the file's
    text = f"OUTSIDE = {str(outside)!r}\n" + SPAWNER
    if hang:
        text = text.replace("        f.write(\"written outside\")\n", "        f.write(\"written outside\")\n"
                            "    import time\n    time.sleep(3600)\n")
    workload = tmp_path / "spawner.py"
    workload.write_text(text)
    before = _sleepers()
    with caplog.at_level(logging.INFO, logger="solar_assets.workers.pool"):
        code = main(["analyze", str(workload), "--hardware", "H100_SXM", "--no-progress", "-v", "--json",
                     *(["--timeout", "20"] if hang else [])])
    assert code == (1 if hang else 0)
    outside.unlink(missing_ok=True)
    assert _sleepers() - before == set()  # no sleeper outlived its worker
    logged = caplog.text
    assert "stopped" in logged and "sleep 300" in logged
    if not hang:
        network = "used the network: connect ('192.0.2.1', 9)"
        wrote = f"wrote outside its directory, the home and the temp dir: {outside.resolve()}"
        assert network in logged and wrote in logged
        rows = _json_rows(capsys.readouterr().out)
        assert rows and all(network in r["notes"] and wrote in r["notes"] and "sleep 300" in r["notes"] for r in rows)
        # a repeat call answered from the record: the rows are the recorded run's, notes included
        assert main(["analyze", str(workload), "--hardware", "H100_SXM", "--no-progress", "--json"]) == 0
        again = _json_rows(capsys.readouterr().out)
        assert [r["notes"] for r in again] == [r["notes"] for r in rows]
        outside.unlink(missing_ok=True)


# ---------------------------------------------------------------------------- rows 1 and 2: replaced code
PATCHES_MATMUL = TINY_LINEAR_RELU.replace("import torch.nn as nn\n", '''import torch.nn as nn

torch.matmul = lambda *args, **kwargs: torch.zeros(8, 16)  # what a careless "mock" leaves behind
''', 1)
USES_MATMUL = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(32, 64))

    def forward(self, x):
        return torch.matmul(x, self.w)


def get_inputs():
    return [torch.randn(8, 32)]


def get_init_inputs():
    return []
'''
PATCHES_VALIDATOR = TINY_LINEAR_RELU.replace("import torch.nn as nn\n", '''import torch.nn as nn

import solar_assets.validate.compare as compare

compare._check_one = lambda *args, **kwargs: None  # every output "matches"
''', 1)
NONDETERMINISTIC = TINY_LINEAR_RELU.replace("import torch\n", "import random\n\nimport torch\n", 1).replace(
    "return torch.relu(self.fc(x))", "return torch.relu(self.fc(x)) * random.random()")


@pytest.mark.slow
@pytest.mark.parametrize("plain", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["dagster", "no-dagster"])
def test_a_file_that_replaces_torch_code_changes_no_other_result(tmp_path, home, capsys, plain):
    """File B replaces ``torch.matmul``; file C, next in the same worker, uses it: C gets its own
    true count, B is refused as untrusted, and nothing B computed is reused by a later call."""
    b, c = tmp_path / "b_patches.py", tmp_path / "c_uses.py"
    b.write_text(PATCHES_MATMUL)
    c.write_text(USES_MATMUL)
    extra = ["--no-dagster"] if plain else []
    code = main(["analyze", str(b), str(c), "--hardware", "H100_SXM", "--no-progress", "--json", "--jobs", "1", *extra])
    captured = capsys.readouterr()
    assert code == 1
    [error] = _errors(captured.err)
    assert f"{b}: the workload replaced torch.matmul" in error and "not trusted" in error
    assert [(r["workload"], r["macs"]) for r in _json_rows(captured.out)] == [("c_uses", 8 * 32 * 64)]
    code = main(["analyze", str(c), "--hardware", "H100_SXM", "--no-progress", "--json", *extra])  # alone, same home
    assert code == 0
    assert [r["macs"] for r in _json_rows(capsys.readouterr().out)] == [8 * 32 * 64]
    assert main(["analyze", str(b), "--hardware", "H100_SXM", "--no-progress", *extra]) == 1  # not from a cache
    assert "the workload replaced torch.matmul" in capsys.readouterr().err


@pytest.mark.slow
def test_a_file_that_replaces_solars_validator_is_refused_and_the_next_file_is_checked(tmp_path, home, capsys):
    b, c = tmp_path / "b_validator.py", tmp_path / "c_random.py"
    b.write_text(PATCHES_VALIDATOR)
    c.write_text(NONDETERMINISTIC)
    code = main(["analyze", str(b), str(c), "--hardware", "H100_SXM", "--no-progress", "--json", "--jobs", "1"])
    captured = capsys.readouterr()
    assert code == 1
    errors = _errors(captured.err)
    assert any(f"{b}: the workload replaced solar_assets.validate.compare._check_one" in e for e in errors), errors
    assert any(f"{c}: the tracer IR failed validation" in e for e in errors), errors  # checked by the real validator
    assert _json_rows(captured.out) == []


# ---------------------------------------------------------------------------- row 3: what a file reads
SIZED = """\
{reader}
import torch
import torch.nn as nn

batch_size = 8
in_features = {size}


class Model(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out)

    def forward(self, x):
        return torch.relu(self.fc(x))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, 16]
"""
READS_ENV = SIZED.format(reader="import os\n", size='int(os.environ.get("SOLAR_PROBE_DIM", "32"))')
READS_FILE = SIZED.format(reader="import json\n", size="json.load(open(SIZES))['in_features']")


@pytest.mark.slow
@pytest.mark.parametrize("plain", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["dagster", "no-dagster"])
@pytest.mark.parametrize("source", ["environment", "data file"])
def test_what_a_workload_reads_is_in_its_key(tmp_path, home, monkeypatch, capsys, source, plain):
    """A size read from an environment variable, or from a data file outside the workload's
    directory: changing it changes the result on the same home (it was served stale from the caches)."""
    sizes = tmp_path / "elsewhere" / "sizes.json"
    sizes.parent.mkdir()
    (tmp_path / "kb").mkdir()
    workload = tmp_path / "kb" / "sized.py"
    workload.write_text(READS_ENV if source == "environment" else f"SIZES = {str(sizes)!r}\n" + READS_FILE)
    extra = ["--no-dagster"] if plain else []
    seen = []
    for dim in (32, 64, 32):
        if source == "environment":
            monkeypatch.setenv("SOLAR_PROBE_DIM", str(dim))
        else:
            sizes.write_text(json.dumps({"in_features": dim}))
        assert main(["analyze", str(workload), "--hardware", "H100_SXM", "--no-progress", "--json", *extra]) == 0
        seen.append([r["macs"] for r in _json_rows(capsys.readouterr().out)])
    assert seen == [[8 * 32 * 16], [8 * 64 * 16], [8 * 32 * 16]]
    # the record of what it reads gone (wiped, evicted), the value changed: the entries made at 32
    # are not met again under a key that no longer shows the variable
    shutil.rmtree(home / "cache" / "reads")
    if source == "environment":
        monkeypatch.setenv("SOLAR_PROBE_DIM", "48")
    else:
        sizes.write_text(json.dumps({"in_features": 48}))
    assert main(["analyze", str(workload), "--hardware", "H100_SXM", "--no-progress", "--json", *extra]) == 0
    assert [r["macs"] for r in _json_rows(capsys.readouterr().out)] == [8 * 48 * 16]


# ---------------------------------------------------------------------------- row 6: a full disk
@pytest.fixture
def small_disk(tmp_path) -> Path:
    """A 600 KiB tmpfs: full before the run ends (needs root and a kernel that lets it mount)."""
    import subprocess

    where = tmp_path / "small"
    where.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", str(where)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (not root, or no mount permission)")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


@pytest.mark.slow
def test_a_disk_that_fills_during_the_run_loses_no_rows(tmp_path, small_disk, monkeypatch, capsys):
    workload = tmp_path / "tiny_linear.py"
    workload.write_text(TINY_LINEAR_RELU)
    monkeypatch.setenv("SOLAR_HOME", str(small_disk / "home"))
    code = main(["analyze", str(workload), "--hardware", "H100_SXM", "--no-progress"])
    captured = capsys.readouterr()
    assert code == 1 and "Traceback" not in captured.err
    errors = _errors(captured.err)
    assert errors and all("remove it" not in e for e in errors)  # the database is fine: the disk is full
    assert any("the disk is full" in e or "No space left on device" in e for e in errors), errors
    report = next(e for e in errors if "the report could not be written" in e)
    fallback = Path(report.split("this run's report is in ", 1)[1])
    assert (fallback / "report.json").is_file()
    assert "tiny_linear" in captured.out and "1/1 workloads bounded" in captured.out


# ---------------------------------------------------------------------------- item 1: the verdict's process
LOOSENS_TOLERANCE = TINY_LINEAR_RELU.replace("import torch\n", "import random\n\nimport torch\n", 1).replace(
    "        return torch.relu(self.fc(x))",
    "        from solar_assets.validate import compare\n"
    "        compare.TOLERANCES.update((k, (1e300, 1e300)) for k in compare.TOLERANCES)  # in place: no identity changes\n"
    "        return torch.relu(self.fc(x)) * random.random()")
PATCHES_LINEAR = TINY_LINEAR_RELU.replace("import torch.nn as nn\n", '''import math

import torch.nn as nn

nn.Linear.forward = lambda self, x: x.new_zeros(*x.shape[:-1], self.out_features)
math.prod = lambda *args, **kwargs: 1  # what the next file's bounds are computed with
''', 1)


@pytest.mark.slow
def test_a_replaced_framework_method_or_library_function_is_found(tmp_path, home, capsys):
    """A class's method (``nn.Linear.forward``) and a standard-library function solar computes
    with (``math.prod``), replaced by one file: it is refused, and the next file in the same
    worker gets its true count."""
    b, c = tmp_path / "b_linear.py", tmp_path / "c_uses.py"
    b.write_text(PATCHES_LINEAR)
    c.write_text(USES_MATMUL)
    code = main(["analyze", str(b), str(c), "--hardware", "H100_SXM", "--no-progress", "--json", "--jobs", "1"])
    captured = capsys.readouterr()
    assert code == 1
    [error] = _errors(captured.err)
    assert f"{b}: the workload replaced math.prod, torch.nn.Linear.forward" in error and "not trusted" in error
    assert [(r["workload"], r["macs"]) for r in _json_rows(captured.out)] == [("c_uses", 8 * 32 * 64)]


@pytest.mark.slow
def test_the_verdict_is_not_reached_by_what_the_workload_left_in_its_process(tmp_path, home, capsys):
    """The file loosens the comparison's tolerance table in place (data mutated in place has no
    identity for the tamper snapshot to compare) and returns a different random number at each
    run: its IR must fail validation. It does, because the IR runs and is compared in the worker's
    checker process, which never imported the file."""
    workload = tmp_path / "loosens.py"
    workload.write_text(LOOSENS_TOLERANCE)
    code = main(["analyze", str(workload), "--hardware", "H100_SXM", "--no-progress", "--json"])
    captured = capsys.readouterr()
    assert code == 1
    assert any(f"{workload}: the tracer IR failed validation" in e for e in _errors(captured.err)), captured.err
    assert _json_rows(captured.out) == []


@pytest.fixture
def read_only_home(tmp_path) -> Path:
    """A home on a tmpfs remounted read-only (root writes anywhere else, whatever the modes say)."""
    import subprocess

    where = tmp_path / "ro"
    where.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(where)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here (not root, or no mount permission)")
    try:
        (where / "home" / "cache").mkdir(parents=True)
        if subprocess.run(["mount", "-o", "remount,ro", str(where)], capture_output=True).returncode:
            pytest.skip("cannot remount it read-only")
        yield where / "home"
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


@pytest.mark.slow
def test_a_read_only_home_costs_no_rows(tmp_path, read_only_home, monkeypatch, capsys):
    workload = tmp_path / "tiny_linear.py"
    workload.write_text(TINY_LINEAR_RELU)
    monkeypatch.setenv("SOLAR_HOME", str(read_only_home))
    code = main(["analyze", str(workload), "--hardware", "H100_SXM", "--no-progress", "--json"])
    captured = capsys.readouterr()
    assert code == 1 and "Traceback" not in captured.err
    [error] = _errors(captured.err)
    assert f"{read_only_home} is not writable (Read-only file system)" in error and "this run uses" in error
    assert [r["macs"] for r in _json_rows(captured.out)] == [TINY_LINEAR_RELU_MACS]


def test_numbas_probe_of_solars_own_cache_is_not_the_workloads_write(tmp_path, monkeypatch):
    """numba checks that a solar kernel's ``__pycache__`` is writable with an unnamed temporary file
    the first time a fresh worker calls it: that file's rows must not say it wrote into solar's
    package. A named file written there, or a probe anywhere else outside its lane, is still noted."""
    import tempfile
    import uuid

    from solar_assets.workers import containment

    if not Path("/var/tmp").is_dir() or not hasattr(os, "O_TMPFILE"):
        pytest.skip("no /var/tmp or no O_TMPFILE here")
    package = Path("/var/tmp") / f"solar-package-{uuid.uuid4().hex}"  # outside the temp dir and the home
    (package / "__pycache__").mkdir(parents=True)
    (package / "other").mkdir()
    try:
        monkeypatch.setattr(containment, "_SOLAR_PACKAGES", (str(package.resolve()) + os.sep,))
        watch = containment.Watch()
        watch.begin(str(tmp_path / "w.py"), None)
        tempfile.TemporaryFile(dir=package / "__pycache__").close()  # numba's probe
        assert watch.end().lines() == []
        watch.begin(str(tmp_path / "w.py"), None)
        (package / "__pycache__" / "planted.nbi").write_bytes(b"x")
        tempfile.TemporaryFile(dir=package / "other").close()
        lines = watch.end().lines()
        assert len(lines) == 1 and "planted.nbi" in lines[0] and str((package / "other").resolve()) in lines[0]
    finally:
        shutil.rmtree(package, ignore_errors=True)
