"""A bounded store: golden values over the cap are kept as a digest and the recipe to make them
again, and a home over ``SOLAR_CACHE_LIMIT`` evicts its least recently used cache entries.

Before: ``solar analyze`` over KernelBench levels 1-4 left a 47 GB home, 46 GB of it golden
outputs pickled as asset values (up to 1.2 GB each). The workloads are written as KernelBench
writes them.
"""
from __future__ import annotations

import json
import logging
import pickle
from pathlib import Path

import pytest

from solar_assets.cli import main
from workload_texts import TINY_LINEAR_RELU, TINY_LINEAR_RELU_MACS

GEMM = """\
import torch
import torch.nn as nn


class Model(nn.Module):
    \"\"\"Simple model that performs a single matrix multiplication (C = A * B)\"\"\"
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 256
K = 512
N = 256


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
"""
GEMM_MACS = 256 * 512 * 256
CAP = 16 << 10  # the gemm's golden arrays (inputs, outputs, float64 outputs) are 1.75 MiB; the tiny one's ~4.6 KiB


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("SOLAR_HOME", str(home))
    monkeypatch.setenv("DAGSTER_HOME", str(home / "dagster"))
    monkeypatch.setenv("SOLAR_STORED_GOLDEN_BYTES", str(CAP))
    monkeypatch.setenv("SOLAR_CACHE_LIMIT", "0")  # no limit, unless a test sets one
    return home


def _files(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "kb").mkdir(exist_ok=True)
    gemm, tiny = tmp_path / "kb" / "1_Square_GEMM.py", tmp_path / "kb" / "2_tiny_linear.py"
    gemm.write_text(GEMM)
    tiny.write_text(TINY_LINEAR_RELU)
    return gemm, tiny


def _rows(out: str) -> list[tuple[str, int, float]]:
    return [(r["workload"], r["macs"], r["sol_fused_s"]) for r in json.loads(out)["rows"]]


def _stored(home: Path, workload: str):
    [path] = [p for p in (home / "storage" / "golden_outputs").iterdir() if workload in p.name]
    return path, pickle.loads(path.read_bytes())


def test_golden_values_over_the_cap_are_stored_as_a_digest(tmp_path, home, capsys):
    from solar_assets.golden import Golden
    from solar_assets.golden.recipe import GoldenRecipe, golden_digest

    gemm, tiny = _files(tmp_path)
    assert main(["analyze", str(gemm), str(tiny), "--hardware", "H100_SXM", "--no-progress", "--json"]) == 0
    rows = _rows(capsys.readouterr().out)
    assert [(w, m) for w, m, _ in rows] == [("1_Square_GEMM", GEMM_MACS), ("2_tiny_linear", TINY_LINEAR_RELU_MACS)]
    path, value = _stored(home, "Square_GEMM")
    assert isinstance(value, GoldenRecipe) and path.stat().st_size < 4096
    assert value.nbytes > CAP and value.constants == {}
    # the digest is the arrays' own: the golden run made again from the seed gives it back
    from solar_assets.chain import stages
    from solar_assets.workloads import read_workload_source

    again = stages.golden(read_workload_source(gemm), {}, None)
    assert golden_digest(again) == value.digest
    _, small = _stored(home, "tiny_linear")
    assert isinstance(small, Golden)  # under the cap: the arrays themselves
    # a repeat call is answered from its record; a fresh Dagster run reads the recipe (next test)
    assert main(["analyze", str(gemm), str(tiny), "--hardware", "H100_SXM", "--no-progress", "--json"]) == 0
    assert _rows(capsys.readouterr().out) == rows


@pytest.mark.slow
def test_a_dagster_run_validates_from_the_recipe(tmp_path, home):
    """As the UI runs it: ``ir_validation`` loads the stored digest, makes the golden values again
    from the seed, checks the digest and validates."""
    from dagster_helpers import materialize
    from solar_assets.dagster_defs.assets import WORKLOAD_ASSETS
    from solar_assets.dagster_defs.partitions import register_partitions
    from solar_assets.dagster_defs.resources import SolarConfig
    from solar_assets.dagster_defs.runner import solar_instance
    from solar_assets.golden.recipe import GoldenRecipe

    gemm, _ = _files(tmp_path)
    config = SolarConfig.default(home, workload_dir=gemm.parent)
    with solar_instance(home) as instance:
        register_partitions(instance, ["1_Square_GEMM"])
        run = materialize(instance, config, WORKLOAD_ASSETS, "1_Square_GEMM")
        assert run.success, run.get_step_failure_events()
        golden_meta = run.asset_materializations_for_node("golden_outputs")[0].metadata
        assert "digest" in golden_meta["stored as"].value
        validation = run.asset_materializations_for_node("ir_validation")[0].metadata
        assert validation["verdict"].value == "pass"
        assert "made again from the seed" in validation["golden outputs"].value
        assert run.asset_materializations_for_node("einsum_graph")[0].metadata["MACs"].value == GEMM_MACS
    _, value = _stored(home, "Square_GEMM")
    assert isinstance(value, GoldenRecipe)


def test_golden_values_that_come_back_different_fail_naming_both_digests(tmp_path, home):
    import dataclasses

    from solar_assets.asset_compute import workload as fns
    from solar_assets.asset_compute.settings import AssetSettings
    from solar_assets.chain import stages
    from solar_assets.errors import SolarError
    from solar_assets.golden.recipe import stored_golden
    from solar_assets.workloads import read_workload_source

    gemm, _ = _files(tmp_path)
    settings = AssetSettings.default(home, gemm.parent)
    src = read_workload_source(gemm)
    translation = stages.translate(src, settings.run_config, None)
    recipe = stored_golden(stages.golden(src, {}, None))
    with pytest.raises(SolarError) as e:
        fns.ir_validation(src, translation, dataclasses.replace(recipe, digest="0" * 16), settings)
    assert str(gemm) in str(e.value) and "0" * 16 in str(e.value) and recipe.digest in str(e.value)


def _size(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def _evictable(home: Path) -> int:
    return _size(home / "cache") + _size(home / "call_records")


@pytest.mark.slow
def test_a_home_over_its_limit_evicts_least_recently_used_entries_and_recomputes(tmp_path, home, monkeypatch,
                                                                               capsys, caplog):
    gemm, tiny = _files(tmp_path)
    assert main(["analyze", str(gemm), str(tiny), "--hardware", "H100_SXM", "--no-progress", "--json"]) == 0
    first = _rows(capsys.readouterr().out)
    before = _size(home) - _evictable(home)
    assert main(["analyze", str(tiny), "--hardware", "H100_SXM", "--no-progress", "--json"]) == 0  # warm
    capsys.readouterr()
    kept, evictable = _size(home) - _evictable(home), _evictable(home)
    growth = kept - before  # what one warm call adds to the Dagster instance (a SQLite file per run) and the reports
    assert evictable > growth > 0
    limit = kept + 2 * growth + evictable // 2  # half the caches must go
    monkeypatch.setenv("SOLAR_CACHE_LIMIT", str(limit))
    with caplog.at_level(logging.INFO, logger="solar_assets"):
        assert main(["analyze", str(tiny), "--hardware", "H100_SXM", "--no-progress", "--json", "-v"]) == 0
    capsys.readouterr()
    assert _size(home) <= limit
    assert 0 < _evictable(home) < evictable
    assert "SOLAR_CACHE_LIMIT" in caplog.text and "least recently used" in caplog.text
    # what was evicted is computed again, to the same figures
    assert main(["analyze", str(gemm), str(tiny), "--hardware", "H100_SXM", "--no-progress", "--json"]) == 0
    assert _rows(capsys.readouterr().out) == first


@pytest.mark.slow
def test_a_limit_the_home_cannot_meet_says_what_holds_the_rest(tmp_path, home, monkeypatch, capsys, caplog):
    _, tiny = _files(tmp_path)
    monkeypatch.setenv("SOLAR_CACHE_LIMIT", "1K")
    with caplog.at_level(logging.WARNING):
        assert main(["analyze", str(tiny), "--hardware", "H100_SXM", "--no-progress", "--json"]) == 0
    assert [r[1] for r in _rows(capsys.readouterr().out)] == [TINY_LINEAR_RELU_MACS]
    warned = [r.getMessage() for r in caplog.records if "SOLAR_CACHE_LIMIT" in r.getMessage()]
    assert warned and "1 KiB" in warned[0] and "dagster" in warned[0]
    assert not list((home / "cache").rglob("*.json"))  # every cache entry went first


@pytest.mark.parametrize("text, expected", [("3G", 3 << 30), ("500M", 500 << 20), ("64K", 64 << 10),
                                            ("12345", 12345), ("0", None), ("none", None), ("1.5G", 3 << 29)])
def test_the_limit_is_read_in_bytes_or_with_a_unit(text, expected):
    from solar_assets.cache_limit import parse_limit

    assert parse_limit(text) == expected


def test_a_malformed_limit_is_one_line(tmp_path, home, monkeypatch, capsys):
    _, tiny = _files(tmp_path)
    monkeypatch.setenv("SOLAR_CACHE_LIMIT", "lots")
    assert main(["analyze", str(tiny), "--hardware", "H100_SXM", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "SOLAR_CACHE_LIMIT='lots'" in err and "Traceback" not in err
