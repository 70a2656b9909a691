"""CLI conventions (issue 17, item 7): options in any order, -v after the subcommand, solar-only
debug logging, case-insensitive part names, the spec search path and where `hardware detect` writes."""
from __future__ import annotations

import logging
from pathlib import Path

import pytest
import yaml

from solar_assets.cli import _parse_args, configure_logging
from solar_assets.hardware import (
    canonical_hardware_name,
    hardware_dirs,
    list_hardware,
    load_hardware,
    shipped_hardware_dir,
)
from solar_assets.hardware.detect import host_spec_path

REPO = Path(__file__).resolve().parents[1]
SHIPPED = ["A6000", "B200", "H100_PCIe", "H100_SXM", "H200", "Jetson_AGX_Thor"]


@pytest.fixture
def workload(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gemm.py").write_text("batch_size = 2\n")
    (tmp_path / "more.py").write_text("batch_size = 2\n")
    return tmp_path


def test_hardware_before_the_path(workload, capsys):
    args = _parse_args(["analyze", "--hardware", "H100_SXM", "gemm.py"])
    assert args.paths == ["gemm.py"] and args.hardware == ["H100_SXM"]
    assert capsys.readouterr().err == ""  # the usual order needs no note


def test_options_in_any_order_and_several_parts(workload):
    args = _parse_args(["analyze", "gemm.py", "--hardware", "h100_sxm,a6000", "--json", "more.py",
                        "--hardware", "b200"])
    assert args.paths == ["gemm.py", "more.py"]
    assert args.hardware == ["H100_SXM", "A6000", "B200"] and args.json
    args = _parse_args(["analyze", "--hardware", "H100_SXM", "B200", "gemm.py", "more.py"])
    assert args.hardware == ["H100_SXM", "B200"] and args.paths == ["gemm.py", "more.py"]


def test_a_path_after_hardware_alone_is_a_path(workload, capsys):
    args = _parse_args(["analyze", "--hardware", "gemm.py"])
    assert args.paths == ["gemm.py"] and args.hardware is None  # the default part
    assert "gemm.py after --hardware taken as workload path" in capsys.readouterr().err


def test_a_hardware_name_among_the_paths_is_refused_with_a_hint(workload, capsys):
    with pytest.raises(SystemExit) as e:
        _parse_args(["analyze", "gemm.py", "--json", "a6000"])
    assert e.value.code == 2
    assert "'a6000' is a hardware name, not a workload path: write --hardware a6000" in capsys.readouterr().err


def test_unknown_options_still_fail(workload, capsys):
    with pytest.raises(SystemExit):
        _parse_args(["analyze", "gemm.py", "--no-such-flag"])
    assert "unrecognized arguments: --no-such-flag" in capsys.readouterr().err


def test_verbose_before_or_after_the_subcommand(workload):
    assert _parse_args(["-v", "analyze", "gemm.py"]).verbose == 1
    assert _parse_args(["analyze", "-vv", "gemm.py"]).verbose == 2
    assert _parse_args(["analyze", "gemm.py", "-v"]).verbose == 1
    assert _parse_args(["hardware", "list", "-v"]).verbose == 1
    assert _parse_args(["hardware", "list"]).verbose == 0


def test_debug_is_for_solar_loggers_only():
    saved = {n: logging.getLogger(n).level for n in ("solar", "solar_assets", "matplotlib", "numba", "jax",
                                                       "urllib3", "dagster")}
    try:
        configure_logging(2)
        assert logging.getLogger("solar").isEnabledFor(logging.DEBUG)
        assert logging.getLogger("solar_assets.bounds.sol").isEnabledFor(logging.DEBUG)
        for noisy in ("matplotlib.font_manager", "numba.core.ssa", "jax._src.dispatch", "urllib3.connectionpool",
                      "dagster", "PIL.PngImagePlugin"):
            assert not logging.getLogger(noisy).isEnabledFor(logging.INFO), noisy
            assert logging.getLogger(noisy).isEnabledFor(logging.WARNING), noisy
        from solar_assets.logconf import solar_level

        assert solar_level() == logging.DEBUG  # what a spawned worker process is given
        configure_logging(0)
        assert not logging.getLogger("solar_assets.cli").isEnabledFor(logging.INFO)
    finally:
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)


def test_part_names_are_case_insensitive():
    assert load_hardware("h100_sxm").name == "H100_SXM"
    assert load_hardware("jetson_agx_thor").name == "Jetson_AGX_Thor"
    assert canonical_hardware_name("h100_pcie") == "H100_PCIe"
    assert canonical_hardware_name("H300") == "H300"  # unknown: unchanged, the loader names it


def _spec_copy(directory: Path, name: str, description: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    data = yaml.safe_load((REPO / "hardware" / f"{name}.yaml").read_text())
    (directory / f"{name}.yaml").write_text(yaml.safe_dump({**data, "description": description}))


def test_search_path_env_then_home_then_shipped(tmp_path, monkeypatch):
    env, home = tmp_path / "mine", tmp_path / "home"
    monkeypatch.setenv("SOLAR_HOME", str(home))
    monkeypatch.delenv("SOLAR_HARDWARE_DIR", raising=False)
    assert hardware_dirs() == [home / "hardware", REPO / "hardware"] and shipped_hardware_dir() == REPO / "hardware"
    assert list_hardware() == SHIPPED
    _spec_copy(home / "hardware", "A6000", "from home")
    assert load_hardware("A6000").description == "from home"
    monkeypatch.setenv("SOLAR_HARDWARE_DIR", str(env))
    _spec_copy(env, "A6000", "from env")
    assert hardware_dirs() == [env, home / "hardware", REPO / "hardware"]
    assert load_hardware("a6000").description == "from env"
    assert load_hardware("H200").description == load_hardware(REPO / "hardware" / "H200.yaml").description
    assert list_hardware() == SHIPPED  # shadowed, not doubled


def test_detect_writes_under_the_user_folder_not_the_source_tree(tmp_path, monkeypatch):
    monkeypatch.setenv("SOLAR_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SOLAR_HARDWARE_DIR", raising=False)
    assert host_spec_path() == tmp_path / "home" / "hardware" / "host.yaml"
    monkeypatch.setenv("SOLAR_HARDWARE_DIR", str(tmp_path / "mine"))
    assert host_spec_path() == tmp_path / "mine" / "host.yaml"
    assert REPO not in host_spec_path().parents
