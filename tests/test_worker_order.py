"""Workers take the longest files first; results keep the call's order.

In path order a folder's costly files (KernelBench level 4: a Hugging Face model each, minutes)
start last and one worker then runs alone: the call's wall time is that file's, not the average."""
from __future__ import annotations

import os
import time

import pytest

from solar_assets.workers.order import DURATIONS_FILE, estimate_seconds, load_durations, longest_first, save_durations
from solar_assets.workers.pool import run_in_workers

SMALL = """import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)
"""

LIBRARY = """import torch
from transformers import AutoConfig

class Model(torch.nn.Module):
    def forward(self, x):
        return x
"""


def _write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_a_file_importing_a_model_library_goes_before_framework_only_files(tmp_path):
    small = _write(tmp_path, "1_small.py", SMALL)
    bigger = _write(tmp_path, "2_bigger.py", SMALL + "\n# padding\n" * 400)
    library = _write(tmp_path, "3_library.py", LIBRARY)
    assert longest_first([small, bigger, library], {}) == [2, 1, 0]
    largest = _write(tmp_path, "4_largest.py", SMALL + "\n# padding\n" * 2000)  # 20 kB: guessed above the library's
    assert estimate_seconds(largest, {}) > estimate_seconds(library, {})
    assert longest_first([small, largest, library], {}) == [2, 1, 0]  # an untimed model library first all the same


def test_recorded_seconds_override_the_guess_and_equal_guesses_keep_the_call_order(tmp_path):
    a, b, c = (_write(tmp_path, f"{n}.py", SMALL) for n in "abc")
    library = _write(tmp_path, "lib.py", LIBRARY)
    recorded = {os.path.realpath(c): 500.0, os.path.realpath(library): 3.0}  # its guess: over 40 s
    assert longest_first([a, b, c, library], recorded) == [2, 3, 0, 1]
    assert estimate_seconds(c, recorded) == 500.0
    assert estimate_seconds(tmp_path / "missing.py", {}) == 0.0


def test_durations_are_merged_across_calls_and_a_corrupt_record_is_ignored(tmp_path):
    cache = tmp_path / "cache"
    save_durations(cache, {"/x/a.py": 3.0})
    save_durations(cache, {"/x/b.py": 4.5})
    assert load_durations(cache) == {os.path.realpath("/x/a.py"): 3.0, os.path.realpath("/x/b.py"): 4.5}
    (cache / DURATIONS_FILE).write_text("{not json")
    assert load_durations(cache) == {}
    assert load_durations(None) == {}


def _started_at(path: str, cache_dir: str | None, task_arg: object) -> tuple[str, float]:
    return path, time.monotonic()


def _unfinished(path: str, message: str, seconds: float, last_stage: str | None) -> tuple[str, float]:
    return message, -1.0


def test_one_worker_takes_files_in_the_given_order_and_returns_them_in_the_call_order():
    paths = ["a", "b", "c", "d"]
    results = run_in_workers(paths, _started_at, _unfinished, jobs=1, timeout_s=120, order=[3, 1, 0, 2])
    assert [p for p, _ in results] == paths
    started = {p: t for p, t in results}
    assert sorted(paths, key=started.__getitem__) == ["d", "b", "a", "c"]


def test_an_order_that_is_not_a_permutation_is_refused():
    with pytest.raises(ValueError, match="permutation"):
        run_in_workers(["a", "b"], _started_at, _unfinished, jobs=1, order=[0, 0])


def _sleep_for(path: str, cache_dir: str | None, task_arg: object) -> tuple[str, float]:
    time.sleep(float(task_arg[path]))
    return path, time.monotonic()


@pytest.mark.slow
def test_a_call_records_each_files_seconds_and_the_next_takes_the_slowest_first(tmp_path):
    pauses = {"quick": 0.0, "slow": 0.6}
    run_in_workers(["quick", "slow"], _sleep_for, _unfinished, jobs=1, timeout_s=120, task_arg=pauses,
                   durations=tmp_path)
    recorded = load_durations(tmp_path)
    assert recorded[os.path.realpath("slow")] >= 0.6 > recorded[os.path.realpath("quick")]
    results = run_in_workers(["quick", "slow"], _sleep_for, _unfinished, jobs=1, timeout_s=120,
                             task_arg={"quick": 0.0, "slow": 0.0}, durations=tmp_path)
    assert [p for p, _ in results] == ["quick", "slow"]  # the call's order
    assert results[1][1] < results[0][1]  # "slow" was taken first
