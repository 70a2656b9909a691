"""Hostile and careless workload files: each costs only its own row, and nothing it did reaches
another file, a later run, the partition table or stdout (issue 13, items 1, 2, 3, 6, 7).

Each test runs ``solar analyze`` as a user would (``main``, so through the worker processes) on
files written in KernelBench's style, and would fail without the isolation it checks: in one
process the SIGKILL would end the test run, the sleeper would hang it, the float64 default would
turn the next row float64.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from solar_assets.cli import main
from workload_texts import TINY_LINEAR_RELU, TINY_LINEAR_RELU_MACS

REPO = Path(__file__).resolve().parents[1]

SLEEPER = TINY_LINEAR_RELU.replace("def get_inputs():\n", "def get_inputs():\n    import time\n    time.sleep(3600)\n")
KILLED = TINY_LINEAR_RELU.replace("import torch\n", "import os\nimport signal\n\nimport torch\n", 1) + \
    "\nos.kill(os.getpid(), signal.SIGKILL)  # what the OOM killer does\n"
MEMORY_HOG = TINY_LINEAR_RELU.replace("def get_inputs():\n", '''def get_inputs():
    import time
    import numpy as np
    hoard = []
    for _ in range(64):  # 64 x 64 MiB, touched: far past the test's limit
        hoard.append(np.ones(8 << 20))
        time.sleep(0.02)
''')
FLOAT64_DEFAULT = TINY_LINEAR_RELU.replace("import torch.nn as nn\n", "import torch.nn as nn\n\n"
                                           "torch.set_default_dtype(torch.float64)\n", 1)
CHDIR_ROOT = TINY_LINEAR_RELU.replace("import torch\n", "import os\n\nimport torch\n", 1) + "\nos.chdir('/')\n"
PRINTER = TINY_LINEAR_RELU.replace("import torch\n", "import os\nimport sys\n\nimport torch\n", 1).replace(
    "    def forward(self, x):\n", "    def forward(self, x):\n        print('forward says hello')\n") + '''
print("hello from the workload")
print("and to stderr", file=sys.stderr)
os.write(1, b"a C library writes to fd 1\\n")
'''
HELPER_USER = '''\
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from blocks import HIDDEN  # noqa: E402

batch_size = 8
in_features = 32


class Model(nn.Module):
    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.fc = nn.Linear(n_in, n_hidden)

    def forward(self, x):
        return torch.relu(self.fc(x))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, HIDDEN]
'''


def analyze(*args: str) -> int:
    return main(["analyze", *args, "--no-progress", "--hardware", "H100_SXM"])


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("SOLAR_HOME", str(home))
    monkeypatch.setenv("DAGSTER_HOME", str(home / "dagster"))
    return home


def latest_report(home: Path, name: str) -> str:
    """A file of the newest run's report directory (``reports/latest``)."""
    from solar_assets.report.run_dir import latest_run

    return (latest_run(home / "reports") / name).read_text()


def report_rows(home: Path) -> list[dict]:
    """The rows of the newest run's report (``reports/latest/report.json``)."""
    from solar_assets.report.run_dir import latest_run
    from solar_assets.report.writers import read_report

    return [r.model_dump() for r in read_report(latest_run(home / "reports") / "report.json").rows]


def errors_of(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("solar: error:")]


# ---------------------------------------------------------------------------- 1: a worker per file
@pytest.mark.slow
@pytest.mark.parametrize("dagster", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["plain", "dagster"])
def test_hang_crash_and_memory_cost_only_their_own_rows(home, tmp_path, capsys, dagster):
    """A sleeper (time limit), a SIGKILL (the OOM killer's signal), a memory hog (the memory limit)
    and a FIFO named like a workload, beside a good file: one error line each naming the file,
    the stage and why; the good row lands and the report files are written. Both paths."""
    folder = tmp_path / "hostile"
    folder.mkdir()
    for name, text in (("a_sleeper", SLEEPER), ("b_killed", KILLED), ("c_memory", MEMORY_HOG),
                       ("d_tiny", TINY_LINEAR_RELU)):
        (folder / f"{name}.py").write_text(text)
    os.mkfifo(folder / "e_fifo.py")  # discovery must skip it without opening it (a read blocks forever)
    code = analyze(str(folder), "--json", "--timeout", "25", "--memory-limit", "1500M",
                   *(() if dagster else ("--no-dagster",)))
    out, err = capsys.readouterr()
    assert code == 1
    rows = json.loads(out)["rows"]
    assert [r["workload"] for r in rows] == ["d_tiny"] and rows[0]["macs"] == TINY_LINEAR_RELU_MACS
    assert [r["workload"] for r in report_rows(home)] == ["d_tiny"]
    errors = errors_of(err)
    assert len(errors) == 3, err
    sleeper, killed, memory = errors
    assert str(folder / "a_sleeper.py") in sleeper and "timed out after 25 s during trace" in sleeper
    assert str(folder / "b_killed.py") in killed and "killed by SIGKILL (out of memory?)" in killed
    assert str(folder / "c_memory.py") in memory and "exceeded the memory limit of 1.5 GiB" in memory
    assert "during trace" in memory
    markdown = latest_report(home, "report.md")
    assert all(name in markdown for name in ("a_sleeper.py", "b_killed.py", "c_memory.py"))


# ---------------------------------------------------------------------------- 2: cache keys
@pytest.mark.slow
def test_a_helper_module_edit_changes_the_result(home, tmp_path, capsys):
    """The workload imports HIDDEN from lib/blocks.py (a path it adds to sys.path): editing the
    helper must give new MACs, not the cached IR of the old helper."""
    from solar_assets.workloads.imports import local_modules

    folder = tmp_path / "with_helper"
    (folder / "lib").mkdir(parents=True)
    (folder / "lib" / "blocks.py").write_text("HIDDEN = 16\n")
    workload = folder / "uses_helper.py"
    workload.write_text(HELPER_USER)
    assert local_modules(workload) == [(folder / "lib" / "blocks.py").resolve()]
    macs = []
    for hidden in (16, 24):
        (folder / "lib" / "blocks.py").write_text(f"HIDDEN = {hidden}\n")
        assert analyze(str(workload), "--json", "--no-dagster") == 0
        (row,) = json.loads(capsys.readouterr().out)["rows"]
        macs.append(row["macs"])
    assert macs == [8 * 32 * 16, 8 * 32 * 24]


# ---------------------------------------------------------------------------- 3: leaked state
@pytest.mark.slow
def test_default_dtype_and_cwd_do_not_cross_files(home, tmp_path, capsys, monkeypatch):
    """``torch.set_default_dtype(torch.float64)`` in one file and ``os.chdir('/')`` in another
    leave the next file's row float32 and its (relative) path readable, in a batch and alone."""
    monkeypatch.chdir(tmp_path)
    folder = Path("leaky")
    folder.mkdir()
    for name, text in (("a_float64", FLOAT64_DEFAULT), ("b_tiny", TINY_LINEAR_RELU), ("c_chdir", CHDIR_ROOT),
                       ("d_tiny", TINY_LINEAR_RELU.replace("[32, 16]", "[32, 8]"))):
        (folder / f"{name}.py").write_text(text)
    analyze(str(folder), "--json", "--no-dagster")
    out, err = capsys.readouterr()
    rows = {r["workload"]: r for r in json.loads(out)["rows"]}
    assert rows["b_tiny"]["dtype"] == "float32" and rows["d_tiny"]["dtype"] == "float32", err
    assert rows["d_tiny"]["macs"] == 8 * 32 * 8
    # a file may break itself (c_chdir reads its own relative path again after moving), never the next
    assert all("a_float64.py" in e or "c_chdir.py" in e for e in errors_of(err)), err
    assert analyze(str(folder / "b_tiny.py"), "--json", "--no-dagster") == 0  # alone, from the same caches
    (alone,) = json.loads(capsys.readouterr().out)["rows"]
    assert alone["dtype"] == "float32" and alone["bytes_fused"] == 4 * (8 * 32 + 32 * 16 + 16 + 8 * 16)


# ---------------------------------------------------------------------------- 4: partition keys
@pytest.mark.slow
def test_any_file_name_gets_its_own_partition(home, tmp_path, capsys):
    """``pipe|name.py`` and a stem with a newline run through Dagster and print on one line each;
    ``other/gemm.py`` gets a partition of its own, not the shipped ``gemm``."""
    from solar_assets.dagster_defs.partitions import WORKLOAD_PARTITIONS_NAME
    from solar_assets.dagster_defs.runner import solar_instance

    folder = tmp_path / "other"
    folder.mkdir()
    for name in ("pipe|name", "new\nline", "gemm"):
        (folder / f"{name}.py").write_text(TINY_LINEAR_RELU)
    assert analyze(str(folder)) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    table = out.split("\n\n", 1)[0].splitlines()
    rule = next(i for i, line in enumerate(table) if set(line) <= {"-", " "})
    body = table[rule + 1:]  # the table: (group line,) header, rule, then one line per row
    assert sorted(line.split()[0] for line in body) == ["gemm", "new\\nline", "pipe|name"]
    with solar_instance(home) as instance:
        keys = instance.get_dynamic_partitions(WORKLOAD_PARTITIONS_NAME)
    assert "gemm" not in keys and len(keys) == 3
    assert sorted(keys) == ["other.gemm", "other.new%0Aline", "other.pipe%7Cname"]  # the dir, then the escaped stem


# ---------------------------------------------------------------------------- 5: stdout
def test_a_workload_that_prints_leaves_json_stdout_clean(home, tmp_path, capfd):
    """Prints at import and in forward, to stdout, stderr and fd 1 directly: stdout is only the JSON."""
    workload = tmp_path / "chatty.py"
    workload.write_text(PRINTER)
    assert analyze(str(workload), "--json", "--no-dagster") == 0
    out, err = capfd.readouterr()
    (row,) = json.loads(out)["rows"]
    assert row["workload"] == "chatty" and row["macs"] == TINY_LINEAR_RELU_MACS
    assert "hello" not in out and "hello" not in err  # it goes to the log (shown with -v)


# ---------------------------------------------------------------------------- 6: Dagster's database
def test_a_corrupt_dagster_database_is_one_line_and_the_rows_still_land(home, tmp_path, capsys):
    """A runs.db that is not SQLite: one error line naming it and the remedy; the row is computed
    (without Dagster) and lands in stdout and the report files."""
    workload = tmp_path / "tiny.py"
    workload.write_text(TINY_LINEAR_RELU)
    runs_db = home / "dagster" / "history" / "runs.db"
    runs_db.parent.mkdir(parents=True)
    runs_db.write_bytes(b"this is not a database, it was truncated by a full disk\n" * 20)
    code = analyze(str(workload), "--json")
    out, err = capsys.readouterr()
    assert code == 1
    (error,) = errors_of(err)
    assert str(runs_db) in error and "remove it" in error and "--no-dagster" in error
    assert len(err.strip().splitlines()) == 1, err  # no traceback
    assert [r["workload"] for r in json.loads(out)["rows"]] == ["tiny"]
    assert [r["workload"] for r in report_rows(home)] == ["tiny"]
    assert str(runs_db) in latest_report(home, "report.md")


# ---------------------------------------------------------------------------- the pieces, in this process
def test_restore_puts_back_dtype_cwd_path_environment_and_threads(tmp_path):
    import sys

    import torch

    from solar_assets.workers import state

    saved = state.snapshot()
    threads = torch.get_num_threads()
    cwd = os.getcwd()
    try:
        torch.set_default_dtype(torch.float64)
        torch.set_num_threads(1 if threads != 1 else 2)
        os.chdir(tmp_path)
        sys.path.insert(0, str(tmp_path))
        os.environ["SOLAR_TEST_LEAK"] = "1"
        (tmp_path / "leaky_helper_mod.py").write_text("X = 1\n")
        import leaky_helper_mod  # noqa: F401 - a workload's local module
    finally:
        assert state.restore(saved) == []
    assert torch.get_default_dtype() == torch.float32 and torch.get_num_threads() == threads
    assert os.getcwd() == cwd and str(tmp_path) not in sys.path and "SOLAR_TEST_LEAK" not in os.environ
    assert "leaky_helper_mod" not in sys.modules


def test_memory_limits_parse():
    from solar_assets.errors import SolarError
    from solar_assets.workers.limits import parse_memory_limit, total_memory_bytes

    assert parse_memory_limit("1500M") == 1500 * 2**20
    assert parse_memory_limit("8GiB") == parse_memory_limit("8g") == 8 * 2**30
    assert parse_memory_limit("0") is None
    assert parse_memory_limit(None) == parse_memory_limit("75%") == int(total_memory_bytes() * 0.75)
    for bad in ("lots", "150%", "-1G"):
        with pytest.raises(SolarError, match="--memory-limit"):
            parse_memory_limit(bad)


def test_partition_keys_and_printable_names(tmp_path):
    from solar_assets.dagster_defs.partitions import escape_key, workload_key
    from solar_assets.dagster_defs.resources import SolarConfig
    from solar_assets.workloads.source import workload_name

    assert escape_key("pipe|name") == "pipe%7Cname" and escape_key("a,b[c]") == "a%2Cb%5Bc%5D"
    assert escape_key("new\nline") == "new%0Aline" and "..." not in escape_key("a...b")
    assert escape_key("100%") == "100%25" and escape_key("plain_name-1.2") == "plain_name-1.2"
    shipped = REPO / "data" / "workloads"
    assert workload_key(shipped / "gemm.py", shipped) == "gemm"
    other = workload_key(tmp_path / "gemm.py", shipped)
    assert other == f"{tmp_path.name}.gemm"  # readable: where the file is, not a hash
    assert other == workload_key(tmp_path / "." / "gemm.py", shipped)  # stable: from the resolved path
    # a second file of the same dir name and stem elsewhere: one more directory, never the same key
    (tmp_path / "a" / tmp_path.name).mkdir(parents=True)
    second = tmp_path / "a" / tmp_path.name / "gemm.py"
    taken = {other: str((tmp_path / "gemm.py").resolve())}
    assert workload_key(second, shipped, taken) == f"a.{tmp_path.name}.gemm"
    assert workload_key(tmp_path / "gemm.py", shipped, taken) == other
    assert workload_key(tmp_path / "gemm.py", shipped, {"gemm@0123abcd": str((tmp_path / "gemm.py").resolve())}) \
        == "gemm@0123abcd"  # an older home's key stays the file's
    assert workload_name(tmp_path / "new\nline.py") == "new\\nline"
    config = SolarConfig.default(tmp_path, workload_dir=shipped).model_copy(
        update={"workload_files": {other: str(tmp_path / "gemm.py")}})
    assert config.workload_path(other) == tmp_path / "gemm.py" and config.workload_path("gemm") == shipped / "gemm.py"


def test_a_source_read_with_one_parse_has_the_separate_readers_framework_and_modules(tmp_path):
    """``read_workload_source`` parses the file once for its framework and its local imports
    (``workloads.imports.references``): the same answers as each reader on its own, for an ASCII
    file with a helper in a directory it adds to sys.path, and for a non-ASCII one (not shared)."""
    from solar_assets.workloads.imports import local_modules_sha256
    from solar_assets.workloads.source import detect_framework, read_workload_source

    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "blocks.py").write_text("import jax\nHIDDEN = 16\n")
    (tmp_path / "beside.py").write_text("N = 3\n")
    added = ("import os, sys\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))\n"
             "import jax\nimport beside\nfrom blocks import HIDDEN\n\ndef forward(x):\n    return x * HIDDEN\n")
    for name, text in (("ascii.py", added), ("accented.py", "# caf\u00e9\n" + added)):
        workload = tmp_path / name
        workload.write_text(text, encoding="utf-8")
        src = read_workload_source(workload)
        assert src.framework == detect_framework(text) == "jax"
        assert src.local_sha256 == local_modules_sha256(workload) != ""


def test_local_modules_follow_imports_beside_the_file_and_in_packages(tmp_path):
    from solar_assets.workloads.imports import local_modules

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from .layers import Block\n")
    (tmp_path / "pkg" / "layers.py").write_text("import torch\nimport helper2\n")
    (tmp_path / "helper2.py").write_text("N = 3\n")
    (tmp_path / "unused.py").write_text("N = 4\n")
    (tmp_path / "w.py").write_text("import torch\nfrom pkg import Block\n\ndef f():\n    import importlib\n"
                                   "    return importlib.import_module('late')\n")
    (tmp_path / "late.py").write_text("")
    assert local_modules(tmp_path / "w.py") == sorted(
        p.resolve() for p in (tmp_path / "pkg" / "__init__.py", tmp_path / "pkg" / "layers.py",
                              tmp_path / "helper2.py", tmp_path / "late.py"))
    fifo_dir = tmp_path / "fifo"
    fifo_dir.mkdir()
    os.mkfifo(fifo_dir / "x.py")
    from solar_assets.workloads import discover_workloads

    assert discover_workloads(fifo_dir) == []


def test_one_call_gives_two_files_of_the_same_name_two_readable_keys(tmp_path):
    from solar_assets.asset_compute.workload_paths import assign_keys, remember_paths

    files = []
    for top in ("x", "y"):
        (tmp_path / top / "level2").mkdir(parents=True)
        files.append(str(tmp_path / top / "level2" / "12_Gemm.py"))
    home = tmp_path / "home"
    home.mkdir()
    keys = assign_keys(files, REPO / "data" / "workloads", home)
    assert list(keys.values()) == ["level2.12_Gemm", "y.level2.12_Gemm"]
    remember_paths(home, {k: p for p, k in keys.items()})
    assert assign_keys(files[::-1], REPO / "data" / "workloads", home) == keys  # the next call: the same keys
