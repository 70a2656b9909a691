"""The stage clock (``solar_assets.stage_clock``): self times, waits kept apart, numba's compiles, every process."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from solar_assets import stage_clock
from solar_assets.stage_clock import CLOCK_ENV, WAITING, clocked, read_clock, timed

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def clock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "clock"
    directory.mkdir()
    monkeypatch.setenv(CLOCK_ENV, str(directory))
    return directory


def test_off_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CLOCK_ENV, raising=False)
    with timed("golden"):
        pass
    assert stage_clock.clock_dir() is None
    assert list(tmp_path.iterdir()) == []


def test_nested_sections_count_self_time(clock: Path) -> None:
    with timed("validate"):
        time.sleep(0.05)
        with timed("IR execution"):
            time.sleep(0.10)
        with timed(WAITING + "the checker"):
            time.sleep(0.03)
    totals = read_clock(clock)
    assert totals.seconds["IR execution"] == pytest.approx(0.10, abs=0.03)
    assert totals.seconds["validate"] == pytest.approx(0.05, abs=0.03)  # the inner 0.13 s are not its own
    assert totals.entries == {"validate": 1, "IR execution": 1, WAITING + "the checker": 1}
    # a wait is another process's time: kept, but not in the work total
    assert totals.timed_seconds == pytest.approx(totals.seconds["validate"] + totals.seconds["IR execution"])
    assert totals.processes == 1


def test_clocked_names_the_part(clock: Path) -> None:
    @clocked("cache-aware ILP", part=lambda hw: hw)
    def solve(hw: str) -> str:
        return hw * 2

    assert solve("B200") == "B200B200"
    solve("H200")
    solve("B200")
    totals = read_clock(clock)
    assert totals.entries == {"cache-aware ILP [B200]": 2, "cache-aware ILP [H200]": 1}


def test_numba_compiles_are_their_own_stage(clock: Path) -> None:
    import numba

    stage_clock.watch_numba()

    @numba.njit
    def add_one(x):  # a new function: compiled on its first call
        return x + 1

    with timed("IR execution"):
        assert add_one(41) == 42
    totals = read_clock(clock)
    assert totals.entries.get("numba compile", 0) >= 1
    assert totals.seconds["numba compile"] > 0
    assert totals.entries["IR execution"] == 1


def test_child_processes_write_their_own_lines(clock: Path) -> None:
    code = ("from solar_assets.stage_clock import timed\n"
            "with timed('golden'):\n    pass\nfor _ in range(3):\n    with timed('glpsol'):\n        pass\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)
    with timed("graph"):
        pass
    totals = read_clock(clock)
    assert totals.processes == 2
    assert totals.entries["golden"] == 1 and totals.entries["graph"] == 1
    assert totals.entries["glpsol"] == 3
    lines = [json.loads(line) for f in clock.glob("*.jsonl") for line in f.read_text().splitlines()]
    assert sum("process" in line for line in lines) == 2


def test_sections_are_charged_to_the_file_worked_on(clock: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    with stage_clock.subject(str(a)):
        with timed("export"):
            time.sleep(0.02)
        with timed("export"):
            pass
    with stage_clock.subject(str(b)), timed("golden"):
        time.sleep(0.01)
    with timed("recording"):  # no file: counted in the stage only
        pass
    totals = read_clock(clock)
    assert set(totals.by_file) == {"export", "golden"}
    assert set(totals.by_file["export"]) == {str(a.resolve())}
    assert totals.by_file["export"][str(a.resolve())] == pytest.approx(totals.seconds["export"])
    assert totals.by_file["golden"] == {str(b.resolve()): pytest.approx(totals.seconds["golden"])}
    assert totals.entries["recording"] == 1
