"""Shipped hardware specs load and carry the published figures; bad specs fail loudly."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from solar_assets.errors import SolarError
from solar_assets.hardware import (
    HardwareError,
    HardwareSpec,
    hardware_dir,
    list_hardware,
    load_hardware,
)

REQUIRED = {"B200", "H200", "H100_SXM", "H100_PCIe", "A6000", "Jetson_AGX_Thor"}

GOOD = {
    "name": "toy",
    "vendor": "Acme",
    "description": "a spec that validates",
    "peak_flop_per_s": {"matrix": {"bf16": 4.0e12}, "vector": {"fp32": 1.0e12}},
    "peak_sources": {"matrix": {"bf16": "made up"}, "vector": {"fp32": "made up"}},
    "dram_bytes_per_s": 1.0e11,
    "dram_capacity_bytes": 2**30,
    "onchip_buffer_bytes": 2**20,
    "clock_hz": 1.0e9,
    "sources": ["made up for a test"],
}


def write_spec(directory: Path, stem: str, data: dict | str) -> Path:
    path = directory / f"{stem}.yaml"
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data), encoding="utf-8")
    return path


_DROP = object()


def with_changes(**changes) -> dict:
    data = {**GOOD, **changes}
    return {k: v for k, v in data.items() if v is not _DROP}


# --- the shipped specs ------------------------------------------------------------


def test_shipped_names_are_the_required_parts():
    # "host" is detected on the machine, not shipped from a datasheet.
    assert set(list_hardware()) - {"host"} == REQUIRED


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_shipped_spec_loads(name):
    spec = load_hardware(name)
    assert spec.name == name
    assert spec.sources and all(spec.sources)
    assert spec.dram_capacity_bytes > 2**30
    # Dense tensor peaks exceed CUDA-core fp32 wherever both exist.
    if "bf16" in spec.peak_flop_per_s:
        assert spec.peak_flop_per_s["bf16"] > spec.peak_flop_per_s["fp32"]
    assert re.fullmatch(r"[0-9a-f]{12}", spec.digest())


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_shipped_spec_reads_the_same_with_plain_safe_load(name):
    # Other tools read these files with yaml.safe_load (YAML 1.1): floats must stay floats.
    data = yaml.safe_load((hardware_dir() / f"{name}.yaml").read_text())
    assert HardwareSpec.model_validate(data) == load_hardware(name)


def test_h100_sxm_matches_datasheet():
    # NVIDIA H100 datasheet, SXM column; tensor figures there are sparse, halved for dense.
    spec = load_hardware("H100_SXM")
    peaks = spec.peak_flop_per_s
    assert 50e12 <= peaks["fp32"] <= 70e12
    assert peaks["bf16"] == pytest.approx(989e12, rel=0.01)
    assert peaks["fp16"] == peaks["bf16"]
    assert peaks["fp8"] == pytest.approx(2 * peaks["bf16"])
    assert spec.dram_bytes_per_s == pytest.approx(3.35e12)
    assert spec.dram_capacity_bytes == 80 * 2**30
    assert spec.onchip_buffer_bytes == 50 * 2**20


def test_figures_relate_as_published():
    h100, h200, pcie = (load_hardware(n) for n in ("H100_SXM", "H200", "H100_PCIe"))
    assert h200.peak_flop_per_s == h100.peak_flop_per_s  # same GH100 compute
    assert h200.dram_bytes_per_s > h100.dram_bytes_per_s > pcie.dram_bytes_per_s
    thor = load_hardware("Jetson_AGX_Thor")
    assert thor.dram_bytes_per_s == pytest.approx(273e9)
    assert thor.dram_capacity_bytes == 128 * 2**30
    assert load_hardware("B200").peak_flop_per_s["fp4"] == pytest.approx(9e15)


def test_digest_ignores_comments_but_not_figures(tmp_path):
    base = load_hardware(write_spec(tmp_path, "toy", GOOD)).digest()
    commented = "# a comment\n" + yaml.safe_dump(GOOD)
    assert load_hardware(write_spec(tmp_path, "toy", commented)).digest() == base
    faster = with_changes(dram_bytes_per_s=2.0e11)
    assert load_hardware(write_spec(tmp_path, "toy", faster)).digest() != base


def test_hardware_dir_env_override(tmp_path, monkeypatch):
    write_spec(tmp_path, "toy", GOOD)
    monkeypatch.setenv("SOLAR_HARDWARE_DIR", str(tmp_path))
    assert hardware_dir() == tmp_path
    assert list_hardware() == ["toy"]
    assert load_hardware("toy").name == "toy"


# --- strictness ------------------------------------------------------------------


def test_good_spec_loads_by_path_and_by_name(tmp_path):
    path = write_spec(tmp_path, "toy", GOOD)
    assert load_hardware(path) == load_hardware("toy", directory=tmp_path)


def test_exponent_without_dot_is_a_number(tmp_path):
    text = yaml.safe_dump(GOOD).replace("dram_bytes_per_s: 100000000000.0", "dram_bytes_per_s: 1e11")
    assert "1e11" in text
    assert load_hardware(write_spec(tmp_path, "toy", text)).dram_bytes_per_s == 1e11


def test_missing_field(tmp_path):
    path = write_spec(tmp_path, "toy", with_changes(dram_bytes_per_s=_DROP))
    with pytest.raises(HardwareError, match=r"toy\.yaml: field 'dram_bytes_per_s': Field required"):
        load_hardware(path)


def test_unknown_field_lists_known_ones(tmp_path):
    path = write_spec(tmp_path, "toy", with_changes(hbm_bandwidth=1.0))
    with pytest.raises(
        HardwareError, match=r"toy\.yaml: field 'hbm_bandwidth': Extra inputs .*known fields: .*dram_bytes_per_s"
    ):
        load_hardware(path)


def test_unknown_dtype_key(tmp_path):
    path = write_spec(tmp_path, "toy", with_changes(peak_flop_per_s={"vector": {"fp12": 1.0e12}}))
    with pytest.raises(HardwareError, match=r"toy\.yaml: field 'peak_flop_per_s\.vector\.fp12'"):
        load_hardware(path)


def test_negative_bandwidth(tmp_path):
    path = write_spec(tmp_path, "toy", with_changes(dram_bytes_per_s=-1.0e11))
    with pytest.raises(
        HardwareError, match=r"toy\.yaml: field 'dram_bytes_per_s': Input should be greater than 0"
    ):
        load_hardware(path)


def test_zero_peak_names_the_dtype(tmp_path):
    path = write_spec(tmp_path, "toy", with_changes(peak_flop_per_s={"vector": {"fp32": 0.0}}))
    with pytest.raises(
        HardwareError, match=r"toy\.yaml: field 'peak_flop_per_s\.vector\.fp32': Input should be greater than 0"
    ):
        load_hardware(path)


@pytest.mark.parametrize(
    ("field", "value"),
    [("dram_capacity_bytes", 1.5), ("dram_capacity_bytes", True), ("dram_bytes_per_s", "fast"),
     ("sources", "one string, not a list")],
)
def test_wrong_type(tmp_path, field, value):
    path = write_spec(tmp_path, "toy", with_changes(**{field: value}))
    with pytest.raises(HardwareError, match=rf"toy\.yaml: field '{field}': "):
        load_hardware(path)


def test_empty_sources(tmp_path):
    path = write_spec(tmp_path, "toy", with_changes(sources=[]))
    with pytest.raises(HardwareError, match=r"toy\.yaml: field 'sources': "):
        load_hardware(path)


def test_broken_yaml_syntax(tmp_path):
    path = write_spec(tmp_path, "toy", "name: toy\npeak_flop_per_s: {fp32: 1.0e+12\nvendor: x\n")
    with pytest.raises(HardwareError, match=r"toy\.yaml: not valid YAML: line \d+, column \d+"):
        load_hardware(path)


def test_duplicate_key(tmp_path):
    path = write_spec(tmp_path, "toy", yaml.safe_dump(GOOD) + "dram_bytes_per_s: 5.0e+11\n")
    with pytest.raises(HardwareError, match=r"toy\.yaml: not valid YAML: .*duplicate key 'dram_bytes_per_s'"):
        load_hardware(path)


def test_not_a_mapping(tmp_path):
    path = write_spec(tmp_path, "toy", "- just\n- a list\n")
    with pytest.raises(HardwareError, match=r"toy\.yaml: expected a mapping of fields, got list"):
        load_hardware(path)


def test_name_must_equal_stem(tmp_path):
    path = write_spec(tmp_path, "toy", with_changes(name="H100_SXM"))
    with pytest.raises(
        HardwareError, match=r"toy\.yaml: field 'name': 'H100_SXM' must equal the file stem 'toy'"
    ):
        load_hardware(path)


def test_unknown_name_lists_known_ones(tmp_path):
    write_spec(tmp_path, "toy", GOOD)
    with pytest.raises(HardwareError, match=r"unknown hardware 'H300'.*known: toy"):
        load_hardware("H300", directory=tmp_path)
    with pytest.raises(HardwareError, match=r"unknown hardware 'H300'.*H100_SXM"):
        load_hardware("H300")


def test_missing_file(tmp_path):
    with pytest.raises(HardwareError, match=r"nope\.yaml: no such hardware spec file"):
        load_hardware(tmp_path / "nope.yaml")


def test_hardware_error_is_a_solar_error():
    assert issubclass(HardwareError, SolarError) and issubclass(HardwareError, ValueError)


# --- peak_for ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dtype", "key"),
    [("float32", "fp32"), ("torch.float32", "fp32"), ("float16", "fp16"), ("torch.half", "fp16"),
     ("bfloat16", "bf16"), ("float64", "fp64"), ("int8", "int8"), ("float8_e4m3fn", "fp8"),
     ("torch.float8_e5m2", "fp8"), ("fp32", "fp32"), ("tf32", "tf32")],
)
def test_peak_for_maps_framework_names(dtype, key):
    spec = load_hardware("H100_SXM")
    assert spec.peak_for(dtype) == spec.peak_flop_per_s[key]


def test_peak_for_accepts_dtype_objects():
    np = pytest.importorskip("numpy")
    spec = load_hardware("H100_SXM")
    assert spec.peak_for(np.dtype("float32")) == spec.peak_flop_per_s["fp32"]
    assert spec.peak_for(np.float16) == spec.peak_flop_per_s["fp16"]
    assert spec.peak_for(np.zeros(2, dtype=np.float64)) == spec.peak_flop_per_s["fp64"]


def test_peak_for_missing_dtype_names_what_the_part_has():
    a6000 = load_hardware("A6000")  # Ampere: no FP8 tensor cores
    with pytest.raises(HardwareError, match=r"A6000: no peak FLOP/s for dtype 'fp8'.*has: .*fp32"):
        a6000.peak_for("torch.float8_e4m3fn")


def test_peak_for_unknown_dtype():
    with pytest.raises(HardwareError, match=r"H100_SXM: unknown dtype 'complex64'"):
        load_hardware("H100_SXM").peak_for("complex64")
