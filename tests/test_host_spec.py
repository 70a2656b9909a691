"""The detected ``host`` spec: cpuinfo / sysfs parsing, the SIMD peak rule, STREAM, strict YAML."""
from __future__ import annotations

import platform
import re
from pathlib import Path

import pytest

from solar_assets.cli import main
from solar_assets.hardware import load_hardware, parse_hardware
from solar_assets.hardware.detect import (
    Cache,
    ClockReading,
    CpuInfo,
    HostDetection,
    allowed_cpus,
    host_yaml,
    last_level_bytes,
    onchip_bytes,
    read_caches,
    read_cpuinfo,
    simd_peaks,
    write_host_spec,
)
from solar_assets.hardware.clock import chain_assembly, chain_clock_hz
from solar_assets.hardware.detect import detect_host, gemm_flop_per_s
from solar_assets.hardware.stream import StreamResult, measure_stream

CPUINFO = """\
processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Example Xeon
physical id\t: 0
core id\t\t: 0
cpu MHz\t\t: 2100.000
flags\t\t: fpu sse2 avx avx2 fma avx512f

processor\t: 1
vendor_id\t: GenuineIntel
model name\t: Example Xeon
physical id\t: 0
core id\t\t: 0
cpu MHz\t\t: 3400.000
flags\t\t: fpu sse2 avx avx2 fma avx512f

processor\t: 2
vendor_id\t: GenuineIntel
model name\t: Example Xeon
physical id\t: 0
core id\t\t: 1
cpu MHz\t\t: 2100.000
flags\t\t: fpu sse2 avx avx2 fma avx512f
"""


def test_cpuinfo_counts_physical_cores_and_takes_the_highest_clock():
    cpu = read_cpuinfo(CPUINFO)
    assert (cpu.physical_cores, cpu.logical_cpus, cpu.mhz) == (2, 3, 3400.0)  # cpus 0 and 1 are SMT siblings
    assert {"avx512f", "fma"} <= cpu.flags and cpu.vendor == "GenuineIntel"
    assert read_cpuinfo(CPUINFO, allowed_cpus={2}).physical_cores == 1


@pytest.mark.parametrize("flags, fp32_per_cycle, fp64_per_cycle", [
    ({"avx512f", "fma", "avx", "avx2"}, 64, 32),  # 2 pipes x 16 lanes x 2
    ({"avx", "avx2", "fma"}, 32, 16),             # 2 pipes x 8 lanes x 2
    ({"avx"}, 16, 8),                              # no FMA: one FLOP per lane per pipe
    ({"sse2"}, 8, 4),
])
def test_simd_peak_rule(flags, fp32_per_cycle, fp64_per_cycle):
    peaks = simd_peaks(frozenset(flags), cores=4, clock_hz=2.0e9)
    assert peaks.flop_per_cycle["fp32"] == fp32_per_cycle and peaks.flop_per_cycle["fp64"] == fp64_per_cycle
    assert peaks.flop_per_s["fp32"] == 4 * 2.0e9 * fp32_per_cycle
    assert peaks.flop_per_s["bf16"] == peaks.flop_per_s["fp32"]  # converted to fp32 without native bf16
    assert "int8" not in peaks.flop_per_s  # no VNNI: no int8 figure rather than a guess


def test_native_low_precision_flags_raise_their_peaks():
    peaks = simd_peaks(frozenset({"avx512f", "fma", "avx512_bf16", "avx512_vnni"}), cores=1, clock_hz=1.0e9)
    assert peaks.flop_per_cycle["bf16"] == 2 * peaks.flop_per_cycle["fp32"]
    assert peaks.flop_per_cycle["int8"] == 4 * peaks.flop_per_cycle["fp32"]


def _cache(root: Path, cpu: int, index: int, level: int, kind: str, size: str, shared: str) -> None:
    d = root / f"cpu{cpu}" / "cache" / f"index{index}"
    d.mkdir(parents=True)
    for name, value in (("level", level), ("type", kind), ("size", size), ("shared_cpu_list", shared)):
        (d / name).write_text(f"{value}\n")


def test_caches_are_counted_once_per_instance(tmp_path):
    for cpu in (0, 1):
        _cache(tmp_path, cpu, 0, 1, "Data", "32K", str(cpu))
        _cache(tmp_path, cpu, 1, 1, "Instruction", "32K", str(cpu))
        _cache(tmp_path, cpu, 2, 2, "Unified", "512K", str(cpu))
        _cache(tmp_path, cpu, 3, 3, "Unified", "32768K", "0-1")  # one L3 shared by both
    caches = read_caches(tmp_path)
    assert len(caches) == 7
    assert onchip_bytes(caches) == 2 * 32 * 2**10 + 2 * 512 * 2**10 + 32 * 2**20  # instruction caches excluded
    assert last_level_bytes(caches) == 32 * 2**20
    assert len(read_caches(tmp_path, cpus={0})) == 4


def test_stream_on_small_arrays():
    result = measure_stream(1 << 20, threads=1, repeats=2)
    assert set(result.by_kernel) == {"triad", "read"}
    assert result.bytes_per_s == max(result.by_kernel.values()) > 0
    assert "write-allocate" in result.describe()


def _detection() -> HostDetection:
    cpu = CpuInfo("Example CPU", "AuthenticAMD", frozenset({"avx", "avx2", "fma"}), 2, 2, 2445.0)
    caches = [Cache(2, "Unified", 512 * 2**10, "0"), Cache(3, "Unified", 32 * 2**20, "0-1")]
    peaks = simd_peaks(cpu.flags, 2, 2.445e9)
    stream = StreamResult(1.1e10, "triad", {"triad": 1.1e10, "read": 9e9}, 128 * 2**20, 2, 10)
    return HostDetection(cpu, caches, ClockReading(2.445e9, "/proc/cpuinfo 'cpu MHz'"), peaks, stream, 2**34, 4.0e10)


def test_host_yaml_passes_the_strict_schema_and_cites_each_figure(tmp_path):
    spec = parse_hardware(host_yaml(_detection()), tmp_path / "host.yaml")
    assert spec.name == "host" and spec.vendor == "AMD"
    assert spec.peak_flop_per_s["fp32"] == pytest.approx(2 * 2.445e9 * 32, rel=1e-6)
    assert spec.dram_bytes_per_s == pytest.approx(1.1e10, rel=1e-6)
    assert spec.onchip_buffer_bytes == 512 * 2**10 + 32 * 2**20
    for field in ("peak_flop_per_s", "dram_bytes_per_s", "onchip_buffer_bytes", "dram_capacity_bytes"):
        assert any(s.startswith(field) for s in spec.sources), field


def test_detect_writes_a_loadable_spec(tmp_path):
    path, spec = write_host_spec(tmp_path / "mybox.yaml", stream_array_bytes=1 << 20, stream_repeats=1,
                                 check_gemm=False)
    loaded = load_hardware(path)
    assert loaded == spec and loaded.name == "mybox"  # the stem names the spec
    assert loaded.peak_flop_per_s["fp32"] > loaded.peak_flop_per_s["fp64"] > 0


def test_cli_hardware_detect(tmp_path, capsys):
    assert main(["hardware", "detect", str(tmp_path), "--stream-mib", "1", "--no-gemm-check"]) == 0
    out = capsys.readouterr().out
    assert f"wrote {tmp_path / 'host.yaml'}" in out and "peak fp32" in out
    assert load_hardware(tmp_path / "host.yaml").name == "host"


X86 = pytest.mark.skipif(platform.machine().lower() not in {"x86_64", "amd64"}, reason="the chain is read on x86-64")


@X86
def test_the_clock_chain_compiles_to_dependent_sar_add_pairs():
    """The clock figure assumes two one-cycle operations per statement: a ``sar`` and an ``add``
    on the same register chain, with no ``lea`` / ``imul`` (longer or fused) in the loop."""
    asm = chain_assembly()
    loops = [block for block in re.split(r"\n(?=\.LBB)", asm) if block.count("sarq") >= 4]
    assert loops, asm
    body = loops[0]
    assert body.count("sarq\t$3") >= 4 and len(re.findall(r"addq\t%r\w+, %r\w+", body)) >= 4
    assert "lea" not in body and "imul" not in body


@X86
def test_a_gemm_timed_after_detection_does_not_outrun_the_detected_peak():
    """The CI failure this guards: a VM shows its nominal clock (2.45 GHz), the detector's GEMM
    implied 2.54 GHz, and a later fp32 Linear ran at 2.6: the peak was a floor, not a ceiling.
    The chain reads the boost clock, so a later GEMM stays under the peak with room to spare.
    Each chain timing is a floor under the same clock, so two of them agree only within their
    noise (CI saw 3.674 against 3.679 GHz): the detector's is held to 2 % of a separate one."""
    clock = chain_clock_hz()
    assert 0.5e9 < clock < 8e9
    detection = detect_host(stream_array_bytes=1 << 20, stream_repeats=1)
    assert detection.clock.hz >= 0.98 * clock
    later = gemm_flop_per_s(len(allowed_cpus()), sizes=(1024, 2048), repeats=10)
    assert later < detection.peaks.flop_per_s["fp32"]
