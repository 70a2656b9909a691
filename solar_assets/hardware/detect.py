"""Detect a ``host`` hardware spec from this machine (``solar hardware detect``).

The spec's figures are *upper* bounds on what the CPU can do, because a SOL bound divides by
them: an understated peak or bandwidth would make a bound a real run can beat. Method (see
``docs/host_spec.md``):

* peak FLOP/s per dtype = physical cores × clock × FLOP per cycle per core, where FLOP per cycle
  = 2 FMA pipes × SIMD lanes (512-bit with ``avx512f``, 256 with ``avx``, else 128) × 2 (FMA) —
  halved without ``fma``; bf16/fp16 run at the fp32 rate unless a native dot-product / FMA flag
  doubles it; int8 only with VNNI / AMX. These are the ``vector`` peaks; the ``matrix`` peaks
  (what a contraction can run on) are the same, except where AMX tiles (``amx_bf16``,
  ``amx_int8``) raise them. The clock is the highest of ``cpufreq``'s maximum,
  ``/proc/cpuinfo``'s "cpu MHz" and the boost clock a chain of dependent one-cycle integer
  operations runs at (``solar_assets.hardware.clock``: a VM shows only the nominal clock); if a
  measured fp32 GEMM still outruns that peak, the clock is raised to what the GEMM implies.
* DRAM bandwidth: ``solar_assets.hardware.stream`` (multi-threaded numba triad and read over
  arrays ≫ LLC, write-allocate counted, best of several repeats).
* on-chip buffer: the sum of every distinct data / unified cache (all levels, all cores), from
  ``/sys/devices/system/cpu/cpu*/cache``: what a tiling could keep on chip at most.
* DRAM capacity: ``MemTotal`` of ``/proc/meminfo``.

``host.yaml`` is machine-specific: it is written to ``$SOLAR_HARDWARE_DIR`` or ``$SOLAR_HOME/hardware``,
never into the source tree; ``ensure_host_spec`` detects it on
first use of ``--hardware host``.
"""
from __future__ import annotations

import logging
import os
import platform
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from solar_assets.hardware.clock import chain_clock_hz
from solar_assets.hardware.spec import HardwareError, HardwareSpec, parse_hardware, user_hardware_dir
from solar_assets.hardware.stream import StreamResult, measure_stream

logger = logging.getLogger(__name__)

HOST_NAME = "host"
FMA_PIPES = 2  # FMA units per core assumed: Haswell+ / Zen 2+ have two; fewer only lowers the true peak
CPUINFO = Path("/proc/cpuinfo")
MEMINFO = Path("/proc/meminfo")
SYS_CPU = Path("/sys/devices/system/cpu")


@dataclass(frozen=True)
class CpuInfo:
    """What ``/proc/cpuinfo`` says about the CPUs this process may run on."""

    model: str
    vendor: str
    flags: frozenset[str]
    physical_cores: int
    logical_cpus: int
    mhz: float | None  # highest "cpu MHz" line


@dataclass(frozen=True)
class Cache:
    level: int
    type: str  # Data, Instruction, Unified
    size_bytes: int
    shared_cpu_list: str


@dataclass(frozen=True)
class ClockReading:
    hz: float
    source: str


@dataclass(frozen=True)
class Peaks:
    """FLOP/s per dtype and the FLOP per cycle per core behind each: ``flop_per_*`` the faster unit,
    ``vector_per_cycle`` the SIMD lanes, ``matrix_per_cycle`` what a contraction can use (SIMD or AMX)."""

    flop_per_s: dict[str, float]
    flop_per_cycle: dict[str, int]
    simd_bits: int
    fma: bool
    notes: list[str] = field(default_factory=list)
    vector_per_cycle: dict[str, int] = field(default_factory=dict)
    matrix_per_cycle: dict[str, int] = field(default_factory=dict)


# ---------------------------------------------------------------------------- reading the machine
def read_cpuinfo(text: str, allowed_cpus: set[int] | None = None) -> CpuInfo:
    """Parse ``/proc/cpuinfo`` text; ``allowed_cpus`` keeps only those processors (affinity)."""
    blocks = [b for b in re.split(r"\n\s*\n", text) if b.strip()]
    cores: set[tuple[str, str]] = set()
    logical, flags, model, vendor, mhz = 0, frozenset(), "", "", None
    for block in blocks:
        fields: dict[str, str] = {}
        for line in block.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                fields[key.strip()] = value.strip()
        if "processor" not in fields or not fields["processor"].isdigit():
            continue
        if allowed_cpus is not None and int(fields["processor"]) not in allowed_cpus:
            continue
        logical += 1
        cores.add((fields.get("physical id", "0"), fields.get("core id", fields["processor"])))
        flags = flags or frozenset(fields.get("flags", "").split())
        model = model or fields.get("model name", "")
        vendor = vendor or fields.get("vendor_id", "")
        if "cpu MHz" in fields:
            try:
                mhz = max(mhz or 0.0, float(fields["cpu MHz"]))
            except ValueError:
                pass
    if logical == 0:
        raise HardwareError(f"{CPUINFO}: no processor entries; cannot detect the host")
    return CpuInfo(model=model or platform.processor() or "unknown CPU", vendor=vendor or "unknown",
                   flags=flags, physical_cores=len(cores), logical_cpus=logical, mhz=mhz)


def _parse_size(text: str) -> int:
    match = re.fullmatch(r"\s*(\d+)\s*([KMG]?)B?\s*", text, re.IGNORECASE)
    if not match:
        raise HardwareError(f"cache size {text!r} is not like '32K'")
    return int(match[1]) * {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}[match[2].upper()]


def read_caches(sys_cpu: Path = SYS_CPU, cpus: set[int] | None = None) -> list[Cache]:
    """Every distinct cache of the given CPUs (a shared L3 once), from ``cpu*/cache/index*``."""
    seen: dict[tuple[int, str, str], Cache] = {}
    for cpu_dir in sorted(sys_cpu.glob("cpu[0-9]*")):
        if cpus is not None and int(cpu_dir.name[3:]) not in cpus:
            continue
        for index in sorted((cpu_dir / "cache").glob("index*")):
            try:
                level = int((index / "level").read_text())
                kind = (index / "type").read_text().strip()
                size = _parse_size((index / "size").read_text())
                shared = (index / "shared_cpu_list").read_text().strip() if (index / "shared_cpu_list").exists() \
                    else cpu_dir.name[3:]
            except (OSError, ValueError) as e:
                logger.debug("skipping %s: %s", index, e)
                continue
            seen.setdefault((level, kind, shared), Cache(level, kind, size, shared))
    return sorted(seen.values(), key=lambda c: (c.level, c.type, c.shared_cpu_list))


def onchip_bytes(caches: list[Cache]) -> int:
    """Sum of all data / unified caches: the most a schedule could keep on chip."""
    return sum(c.size_bytes for c in caches if c.type in ("Data", "Unified"))


def last_level_bytes(caches: list[Cache]) -> int:
    """Total size of the last-level caches (every instance of the highest level)."""
    data = [c for c in caches if c.type in ("Data", "Unified")]
    if not data:
        return 0
    top = max(c.level for c in data)
    return sum(c.size_bytes for c in data if c.level == top)


def clock_readings(cpu: CpuInfo, sys_cpu: Path = SYS_CPU) -> list[ClockReading]:
    """Clock figures the OS exposes: cpufreq's maximum per CPU (kHz) and cpuinfo's "cpu MHz"."""
    readings = []
    maxima = []
    for f in sys_cpu.glob("cpu[0-9]*/cpufreq/cpuinfo_max_freq"):
        try:
            maxima.append(int(f.read_text()) * 1e3)
        except (OSError, ValueError):
            continue
    if maxima:
        readings.append(ClockReading(max(maxima), "cpufreq cpuinfo_max_freq"))
    if cpu.mhz:
        readings.append(ClockReading(cpu.mhz * 1e6, "/proc/cpuinfo 'cpu MHz'"))
    return readings


def memory_bytes(meminfo: Path = MEMINFO) -> int:
    match = re.search(r"^MemTotal:\s+(\d+)\s*kB", meminfo.read_text(), re.MULTILINE)
    if not match:
        raise HardwareError(f"{meminfo}: no MemTotal line")
    return int(match[1]) * 1024


def allowed_cpus() -> set[int]:
    try:
        return set(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return set(range(os.cpu_count() or 1))


# ---------------------------------------------------------------------------- the figures
def simd_peaks(flags: frozenset[str] | set[str], cores: int, clock_hz: float) -> Peaks:
    """Peak FLOP/s per dtype from the SIMD flags (see the module docstring for the rule)."""
    if cores < 1 or not clock_hz > 0:
        raise HardwareError(f"cannot compute a peak from {cores} cores at {clock_hz} Hz")
    bits = 512 if "avx512f" in flags else 256 if "avx" in flags else 128
    fma = "fma" in flags or "avx512f" in flags
    per_fma = 2 if fma else 1  # without FMA: one mul or one add per lane per pipe
    fp64 = FMA_PIPES * (bits // 64) * per_fma
    fp32 = FMA_PIPES * (bits // 32) * per_fma
    per_cycle = {"fp64": fp64, "fp32": fp32, "bf16": fp32, "fp16": fp32}
    notes = [f"{bits}-bit SIMD ({'avx512f' if bits == 512 else 'avx' if bits == 256 else 'sse'}), "
             f"{FMA_PIPES} {'FMA' if fma else 'mul/add'} pipes per core: fp64 {fp64}, fp32 {fp32} FLOP/cycle/core"]
    if "avx512_bf16" in flags:
        per_cycle["bf16"] = 2 * fp32
        notes.append("avx512_bf16: bf16 dot products at twice the fp32 rate")
    else:
        notes.append("bf16 converted to fp32 for arithmetic (no avx512_bf16): fp32 rate")
    if "avx512_fp16" in flags:
        per_cycle["fp16"] = 2 * fp32
        notes.append("avx512_fp16: fp16 FMA at twice the fp32 rate")
    else:
        notes.append("fp16 converted to fp32 for arithmetic (no avx512_fp16): fp32 rate")
    if "avx512_vnni" in flags or "avx_vnni" in flags:
        per_cycle["int8"] = 4 * fp32  # vpdpbusd: 4 int8 MACs per 32-bit lane
        notes.append("VNNI: int8 at 4x the fp32 lane rate")
    vector = dict(per_cycle)
    if "amx_bf16" in flags:  # one AMX unit: 1024 bf16 MAC/cycle (Sapphire Rapids)
        per_cycle["bf16"] = max(per_cycle["bf16"], 2048)
        notes.append("amx_bf16: 2048 bf16 FLOP/cycle/core")
    if "amx_int8" in flags:
        per_cycle["int8"] = max(per_cycle.get("int8", 0), 4096)
        notes.append("amx_int8: 4096 int8 op/cycle/core")
    flop_per_s = {k: float(cores * clock_hz * v) for k, v in per_cycle.items()}
    return Peaks(flop_per_s, per_cycle, bits, fma, notes, vector_per_cycle=vector, matrix_per_cycle=dict(per_cycle))


GEMM_SIZES = (1024, 2048)
GEMM_REPEATS = 30  # turbo comes and goes on a shared host: five runs once missed 15 % of it


def gemm_flop_per_s(threads: int, sizes: tuple[int, ...] = GEMM_SIZES, repeats: int = GEMM_REPEATS) -> float:
    """Best fp32 GEMM rate of torch on ``threads`` threads over ``sizes`` (n³ each), the fastest of
    ``repeats`` runs per size: a floor under the true peak."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    rates = []
    try:
        for n in sizes:
            a, b = torch.randn(n, n), torch.randn(n, n)
            a @ b
            rates.append(2.0 * n**3 / min(_timed(lambda: a @ b) for _ in range(repeats)))
    finally:
        torch.set_num_threads(previous)
    return max(rates)


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


@dataclass(frozen=True)
class HostDetection:
    """Everything measured, kept for the YAML's comments and for tests."""

    cpu: CpuInfo
    caches: list[Cache]
    clock: ClockReading
    peaks: Peaks
    stream: StreamResult
    memory_bytes: int
    gemm_flop_per_s: float | None


def detect_host(stream_array_bytes: int | None = None, stream_repeats: int = 10, threads: int | None = None,
                check_gemm: bool = True) -> HostDetection:
    """Read and measure this machine. ``stream_array_bytes`` defaults to 4 × the LLC (≥ 64 MiB)."""
    cpus = allowed_cpus()
    cpu = read_cpuinfo(CPUINFO.read_text(), cpus)
    caches = read_caches(SYS_CPU, cpus)
    readings = clock_readings(cpu)
    measured = chain_clock_hz()
    if measured:
        readings.append(ClockReading(measured, "boost clock of a timed chain of dependent one-cycle integer ops"))
    if not readings:
        raise HardwareError(f"{CPUINFO}: no clock figure (no 'cpu MHz' line and no cpufreq); cannot bound the peak")
    clock = max(readings, key=lambda r: r.hz)
    cores = cpu.physical_cores
    peaks = simd_peaks(cpu.flags, cores, clock.hz)
    threads = threads or len(cpus)
    gemm = None
    if check_gemm:
        gemm = gemm_flop_per_s(threads)
        if gemm > peaks.flop_per_s["fp32"]:
            implied = gemm / (cores * peaks.flop_per_cycle["fp32"])
            logger.warning("a torch fp32 GEMM reached %.3g FLOP/s, above the %.3g FLOP/s peak at %.3g Hz: "
                           "using the clock it implies, %.3g Hz", gemm, peaks.flop_per_s["fp32"], clock.hz, implied)
            clock = ClockReading(implied, f"implied by a measured torch fp32 GEMM ({gemm:.3g} FLOP/s)")
            peaks = simd_peaks(cpu.flags, cores, clock.hz)
    llc = last_level_bytes(caches)
    array_bytes = stream_array_bytes or max(4 * llc, 64 * 2**20)
    stream = measure_stream(array_bytes, threads, stream_repeats)
    return HostDetection(cpu, caches, clock, peaks, stream, memory_bytes(), gemm)


def _float(x: float) -> str:
    return f"{x:.6e}"  # 1.564800e+11: a float to every YAML loader


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def host_yaml(d: HostDetection, name: str = HOST_NAME) -> str:
    """The spec as YAML text (``name``: the file stem), with comments saying how each figure was found."""
    cache_text = ", ".join(f"L{c.level} {c.type} {c.size_bytes // 1024} KiB (cpus {c.shared_cpu_list})"
                           for c in d.caches) or "none listed"
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    description = (f"{d.cpu.model}: {d.cpu.physical_cores} cores ({d.cpu.logical_cpus} logical CPUs), "
                   "detected from this machine")
    vendor = {"GenuineIntel": "Intel", "AuthenticAMD": "AMD"}.get(d.cpu.vendor, d.cpu.vendor)
    per_core = f"{d.cpu.physical_cores} cores x {d.clock.hz:.4g} Hz"

    def unit_lines(per_cycle: dict[str, int]) -> list[str]:
        return [f"    {k}: {_float(d.cpu.physical_cores * d.clock.hz * v)}  # {per_core} x {v} FLOP/cycle"
                for k, v in per_cycle.items()]

    def source_lines(per_cycle: dict[str, int], unit: str) -> list[str]:
        how = "SIMD" if unit == "vector" else "SIMD, or AMX tiles where the flags have them"
        return [f"    {k}: {_quote(f'{per_core} ({d.clock.source}) x {v} FLOP/cycle/core ({how}, /proc/cpuinfo flags)')}"
                for k, v in per_cycle.items()]

    vector = d.peaks.vector_per_cycle or d.peaks.flop_per_cycle
    matrix = d.peaks.matrix_per_cycle or d.peaks.flop_per_cycle
    peak_lines = "\n".join(["  matrix:  # what a contraction can run on: the SIMD lanes, or AMX", *unit_lines(matrix),
                            "  vector:  # SIMD lanes", *unit_lines(vector)])
    peak_source_lines = "\n".join(["  matrix:", *source_lines(matrix, "matrix"),
                                   "  vector:", *source_lines(vector, "vector")])
    sources = [
        f"peak_flop_per_s: {d.cpu.physical_cores} physical cores x {d.clock.hz:.4g} Hz ({d.clock.source}) x FLOP/cycle "
        f"from /proc/cpuinfo flags; " + "; ".join(d.peaks.notes),
        f"dram_bytes_per_s: {d.stream.describe()}",
        f"onchip_buffer_bytes: sum of the distinct data/unified caches in /sys/devices/system/cpu/cpu*/cache: {cache_text}",
        "dram_capacity_bytes: MemTotal of /proc/meminfo",
        f"clock_hz: {d.clock.source}",
    ]
    if d.gemm_flop_per_s is not None:
        sources.append(f"check: torch fp32 GEMMs ({', '.join(f'{n}^3' for n in GEMM_SIZES)}, best of {GEMM_REPEATS}) "
                       f"reached {d.gemm_flop_per_s:.3g} FLOP/s "
                       f"({d.gemm_flop_per_s / d.peaks.flop_per_s['fp32']:.0%} of the fp32 peak)")
    return "\n".join([
        f"# Detected by `solar hardware detect` on {platform.node() or 'this machine'}, {stamp}.",
        "# Machine-specific: ignored by git; re-run the command to refresh it. Method: docs/host_spec.md",
        f"name: {name}",
        f"vendor: {_quote(vendor)}",
        f"description: {_quote(description)}",
        "peak_flop_per_s:",
        peak_lines,
        "peak_sources:",
        peak_source_lines,
        f"dram_bytes_per_s: {_float(d.stream.bytes_per_s)}",
        f"dram_capacity_bytes: {d.memory_bytes}",
        f"onchip_buffer_bytes: {onchip_bytes(d.caches) or last_level_bytes(d.caches) or 1}",
        f"clock_hz: {_float(d.clock.hz)}",
        "sources:",
        *(f"  - {_quote(s)}" for s in sources),
        "",
    ])


def host_spec_path(directory: str | Path | None = None) -> Path:
    """``host.yaml`` in ``directory``, else in the user's spec folder (``$SOLAR_HARDWARE_DIR`` or
    ``$SOLAR_HOME/hardware``): machine-specific, so never written into the source tree."""
    return Path(directory or user_hardware_dir()) / f"{HOST_NAME}.yaml"


def write_host_spec(path: str | Path | None = None, **detect_kwargs) -> tuple[Path, HardwareSpec]:
    """Detect this machine and write the spec (``host_spec_path()`` by default); the text is
    validated with the same strict schema as the shipped specs before it is written."""
    path = Path(path) if path is not None else host_spec_path()
    if path.suffix not in (".yaml", ".yml"):
        path = path / f"{HOST_NAME}.yaml"
    text = host_yaml(detect_host(**detect_kwargs), name=path.stem)
    spec = parse_hardware(text, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    logger.info("wrote %s", path)
    return path, spec


def ensure_host_spec(directory: str | Path | None = None, **detect_kwargs) -> Path:
    """``host.yaml`` in ``directory`` (the hardware dir), detected now if it is missing."""
    if directory is None:  # already on the search path (an older one under hardware/ counts too)
        from solar_assets.hardware.spec import _resolve

        try:
            return _resolve(HOST_NAME, None)
        except HardwareError:
            pass
    path = host_spec_path(directory)
    if not path.is_file():
        logger.warning("%s is missing: detecting this machine (STREAM and a GEMM, a few seconds)", path)
        write_host_spec(path, **detect_kwargs)
    return path
