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


# --- matrix and vector peaks ---------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_shipped_specs_list_matrix_and_vector_peaks_each_sourced(name):
    spec = load_hardware(name)
    table = spec.peak_flop_per_s
    assert {"fp32", "bf16", "fp16"} <= set(table.vector)  # every elementwise dtype has a vector peak
    assert "tf32" in table.matrix and "bf16" in table.matrix
    for unit in ("matrix", "vector"):
        assert set(getattr(spec.peak_sources, unit)) == set(table.unit(unit))
    # tensor cores beat CUDA cores at the same dtype; TF32 is half the fp16 tensor rate (dense)
    assert table.matrix["bf16"] > table.vector["bf16"]
    assert table.matrix["tf32"] == pytest.approx(table.matrix["fp16"] / 2, rel=0.01)


def test_h100_vector_peaks_match_the_datasheet_and_whitepaper():
    spec = load_hardware("H100_SXM")
    vector, matrix = spec.peak_flop_per_s.vector, spec.peak_flop_per_s.matrix
    assert vector["fp32"] == pytest.approx(67e12)  # datasheet FP32 (whitepaper 66.9)
    assert vector["fp16"] == pytest.approx(133.8e12, rel=0.01)  # whitepaper FP16 (non-Tensor)
    assert vector["fp64"] == pytest.approx(34e12) and matrix["fp64"] == pytest.approx(67e12)
    assert matrix["tf32"] == pytest.approx(989e12 / 2, rel=0.001)  # datasheet TF32 989 with sparsity


def test_b200_takes_the_higher_of_its_sources():
    spec = load_hardware("B200")
    assert spec.dram_bytes_per_s == pytest.approx(8e12)  # DGX datasheet 8 TB/s, HGX page 7.7
    assert spec.peak_flop_per_s.vector["fp32"] == pytest.approx(80e12)  # technical brief 80, HGX page 75
    assert "75" in spec.peak_sources.vector["fp32"] and "80" in spec.peak_sources.vector["fp32"]


def test_peak_for_is_the_faster_unit():
    spec = load_hardware("H100_SXM")
    assert spec.peak_for("bfloat16") == spec.peak_flop_per_s.matrix["bf16"]
    assert spec.peak_for("float32") == spec.peak_flop_per_s.vector["fp32"]  # no IEEE fp32 tensor path
    assert spec.unit_peak("vector", "torch.bfloat16") == spec.peak_flop_per_s.vector["bf16"]
    assert spec.unit_peak("matrix", "float32") is None


def test_flat_peaks_say_how_to_write_them(tmp_path):
    path = write_spec(tmp_path, "toy", with_changes(peak_flop_per_s={"fp32": 1.0e12}))
    with pytest.raises(HardwareError, match=r"toy\.yaml: field 'peak_flop_per_s': peaks are listed per unit"):
        load_hardware(path)


def test_every_peak_needs_a_source(tmp_path):
    path = write_spec(tmp_path, "toy", with_changes(peak_sources={"vector": {"fp32": "made up"}}))
    with pytest.raises(HardwareError, match=r"peak_sources\.matrix\.bf16: missing"):
        load_hardware(path)


def test_tf32_is_not_a_vector_dtype(tmp_path):
    changes = with_changes(peak_flop_per_s={"vector": {"fp32": 1.0e12, "tf32": 2.0e12}},
                           peak_sources={"vector": {"fp32": "x", "tf32": "y"}})
    with pytest.raises(HardwareError, match=r"vector\.tf32.*only on tensor cores"):
        load_hardware(write_spec(tmp_path, "toy", changes))


# --- sanity: finite, plausible, decimal --------------------------------------------------------


@pytest.mark.parametrize(("field", "text"), [("dram_bytes_per_s", ".inf"), ("dram_bytes_per_s", ".nan"),
                                             ("clock_hz", ".inf")])
def test_non_finite_figures_are_refused(tmp_path, field, text):
    source = yaml.safe_dump(GOOD)
    line = next(ln for ln in source.splitlines() if ln.startswith(f"{field}:"))
    path = write_spec(tmp_path, "toy", source.replace(line, f"{field}: {text}"))
    with pytest.raises(HardwareError, match=rf"toy\.yaml: field '{field}': Input should be a finite number"):
        load_hardware(path)


def test_non_finite_peak_is_refused(tmp_path):
    text = yaml.safe_dump(GOOD).replace("fp32: 1000000000000.0", "fp32: -.inf")
    with pytest.raises(HardwareError, match=r"field 'peak_flop_per_s\.vector\.fp32'"):
        load_hardware(write_spec(tmp_path, "toy", text))


@pytest.mark.parametrize(("changes", "message"), [
    ({"dram_bytes_per_s": 3.35}, r"field 'dram_bytes_per_s': 3\.35 is outside .*3\.35 looks like TB/s: write 3\.35e\+12"),
    ({"peak_flop_per_s": {"matrix": {"bf16": 4.0e12}, "vector": {"fp32": 67.0}}},
     r"field 'peak_flop_per_s\.vector\.fp32': 67\.0 is outside .*67\.0 looks like TFLOP/s: write 6\.7e\+13"),
    ({"clock_hz": 1.98}, r"field 'clock_hz': .*1\.98 looks like GHz: write 1\.98e\+9"),
    ({"dram_capacity_bytes": 80}, r"field 'dram_capacity_bytes': .*80 looks like GiB: write 85899345920 \(80 \* 2\*\*30\)"),
    ({"onchip_buffer_bytes": 50}, r"field 'onchip_buffer_bytes': .*50 looks like MiB: write 52428800"),
    ({"dram_bytes_per_s": 1.0e17}, r"field 'dram_bytes_per_s': 1e\+17 is outside the plausible range"),
    ({"peak_flop_per_s": {"matrix": {"bf16": 4.0e20}, "vector": {"fp32": 1.0e12}}},
     r"field 'peak_flop_per_s\.matrix\.bf16': 4e\+20 is outside"),
])
def test_implausible_figures_name_the_likely_unit_slip(tmp_path, changes, message):
    with pytest.raises(HardwareError, match=message):
        load_hardware(write_spec(tmp_path, "toy", with_changes(**changes)))


@pytest.mark.parametrize("text", ["0x10", "0o17", "017", "0b101", "1_048_576", "1:30"])
def test_non_decimal_integers_are_refused(tmp_path, text):
    source = yaml.safe_dump(GOOD).replace(f"onchip_buffer_bytes: {2**20}", f"onchip_buffer_bytes: {text}")
    assert text in source
    with pytest.raises(HardwareError, match=r"field 'onchip_buffer_bytes': .*is not a decimal figure"):
        load_hardware(write_spec(tmp_path, "toy", source))


def test_a_bad_spec_fails_only_itself(tmp_path, monkeypatch, capsys):
    from solar_assets.cli import main
    from solar_assets.hardware import load_all_hardware

    write_spec(tmp_path, "toy", GOOD)
    write_spec(tmp_path, "broken", yaml.safe_dump(with_changes(name="broken")).replace(
        "dram_bytes_per_s: 100000000000.0", "dram_bytes_per_s: .inf"))
    specs, errors = load_all_hardware(tmp_path)
    assert [s.name for s in specs] == ["toy"]
    assert len(errors) == 1 and "broken.yaml: field 'dram_bytes_per_s'" in errors[0]
    monkeypatch.setenv("SOLAR_HARDWARE_DIR", str(tmp_path))
    assert main(["hardware", "list"]) == 1
    out, err = capsys.readouterr()
    assert "toy" in out and "broken" not in out
    assert err.count("broken.yaml") == 1


def test_non_finite_figures_never_reach_json():
    import json

    from ir_schemas import ReportRow
    from solar_assets.report.writers import rows_as_json

    row = ReportRow(
        workload="w", source="w.py", hardware="toy", dtype="float32", translator="tracer", validated=True,
        max_abs_error=0.0, max_rel_error=0.0, macs=0, flops=0, bytes_unfused=0, bytes_fused=0,
        sol_unfused_s=float("inf"), sol_fused_s=1.0, bound_unfused="memory", bound_fused="memory",
        sol_unfused_graph_s=1.0, intensity_unfused_flop_per_byte=float("nan"), intensity_fused_flop_per_byte=0.0,
        peak_flop_per_s=1e12, dram_bytes_per_s=1e11, einsums=1)
    text = rows_as_json([row])
    assert "Infinity" not in text and "NaN" not in text
    data = json.loads(text)[0]
    assert data["sol_unfused_s"] is None and data["intensity_unfused_flop_per_byte"] is None
    assert data["nonfinite_note"] == "sol_unfused_s was inf; intensity_unfused_flop_per_byte was nan"
    assert data["sol_fused_s"] == 1.0


WORKLOAD = '''import torch
import torch.nn as nn

batch_size = 4
dim = 8


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2.0


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
'''


def test_a_dtype_one_spec_lacks_drops_only_that_specs_row(tmp_path):
    from solar_assets.pipeline import analyze_workload

    hw = tmp_path / "hw"
    hw.mkdir()
    write_spec(hw, "toy", GOOD)
    write_spec(hw, "fp64only", with_changes(
        name="fp64only", peak_flop_per_s={"vector": {"fp64": 1.0e12}}, peak_sources={"vector": {"fp64": "x"}}))
    path = tmp_path / "relu_scale.py"
    path.write_text(WORKLOAD)
    result = analyze_workload(path, ["fp64only", "toy"], hardware_dir=hw, cache_aware=False)
    assert [r.hardware for r in result.rows] == ["toy"]
    assert result.error is not None and "fp64only: no vector peak FLOP/s for dtype fp32" in result.error
    assert str(path) in result.error


def test_host_matrix_peaks_equal_vector_peaks_unless_amx(tmp_path):
    from solar_assets.hardware import parse_hardware
    from solar_assets.hardware.detect import Cache, ClockReading, CpuInfo, HostDetection, host_yaml, simd_peaks
    from solar_assets.hardware.stream import StreamResult

    def spec(flags):
        cpu = CpuInfo("Example CPU", "GenuineIntel", frozenset(flags), 4, 8, 2000.0)
        stream = StreamResult(2.0e10, "triad", {"triad": 2.0e10}, 128 * 2**20, 4, 3)
        d = HostDetection(cpu, [Cache(3, "Unified", 32 * 2**20, "0-7")], ClockReading(2.0e9, "test"),
                          simd_peaks(cpu.flags, 4, 2.0e9), stream, 2**34, None)
        return parse_hardware(host_yaml(d), tmp_path / "host.yaml")

    plain = spec({"avx", "avx2", "fma"})
    fp32 = 4 * 2.0e9 * 2 * 8 * 2  # cores x clock x 2 FMA pipes x 8 fp32 lanes x 2 FLOP
    assert plain.peak_flop_per_s.vector["fp32"] == pytest.approx(fp32)
    assert plain.peak_flop_per_s.matrix == plain.peak_flop_per_s.vector  # no AMX: contractions on the SIMD lanes
    amx = spec({"avx512f", "fma", "amx_bf16"})
    assert amx.peak_flop_per_s.matrix["bf16"] == pytest.approx(4 * 2.0e9 * 2048)  # AMX tiles
    assert amx.peak_flop_per_s.vector["bf16"] == amx.peak_flop_per_s.vector["fp32"]  # converted to fp32
    assert set(amx.peak_sources.matrix) == set(amx.peak_flop_per_s.matrix)
