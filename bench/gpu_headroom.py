"""KernelBench headroom on a GPU: bounds here, timings on the GPU box, the report here again.

    python bench/gpu_headroom.py bounds KB_DIR --out bounds.json [--limit 2]     # solar, any machine
    python bench/gpu_headroom.py kit KB_DIR --bounds bounds.json --out KIT_DIR    # what the GPU box needs
    python gpu_headroom.py measure --bounds bounds.json --kb KIT_DIR --out meas.json   # on the GPU box
    python bench/gpu_headroom.py report bounds.json meas.json [--csv headroom.csv]     # solar again
    python bench/gpu_headroom.py select KB_DIR        # re-derive the sample below (torch only)

``KB_DIR`` holds KernelBench's ``level1`` … ``level3`` folders, files unchanged. ``bounds`` runs
``solar analyze --json --hardware H200 --no-dagster`` once per level over the sample (``--limit N``:
the first N of each level; ``--dagster`` to run through Dagster) and writes one document
``{"schema": "solar.gpu_headroom.bounds.v1", "hardware": "H200", "rows": [...], "failures": [...],
"levels": {stem: level}}`` (``--jobs N``: N analyze processes at a time, each on part of a level) (``solar headroom`` and the runner read its ``rows``). ``measure`` needs
only PyTorch: it loads ``gpu_runner.py`` from beside this script or from the checkout's
``solar_assets/measure/``, never solar itself, and times the sample files found under ``--kb``
(``levelN/STEM.py``) round-robin across levels (1, 2, 3, 1, 2, 3 …) and backend-major, under a
whole-run deadline (default 400 s) and a per-backend budget (default 45 s for compile and warm-up),
so the command ends inside 8 minutes and a deadline costs torch.compile on the last problems of
every level alike, never the eager column. ``report`` prints per level the geometric mean and
range (min–max over the problems) of headroom for torch eager, torch.compile (default) and
torch.compile max-autotune against the unfused, fused and cache-aware (best modelled schedule)
bounds, and every violation of a provable bound with both figures.

The sample (``SAMPLE``; re-derive it with ``select``): per level, the 22 problems with the smallest
estimated fp32 roofline time on an H200, max(FLOPs / 67 TFLOP/s, bytes / 4.8 TB/s), where FLOPs are
``torch.utils.flop_counter.FlopCounterMode``'s count of one forward call and bytes the inputs,
parameters, buffers and outputs once, both from a fake-tensor run (``FakeTensorMode``, nothing
allocated) of the file as written. Excluded before ranking: files that do not run under fake
tensors (a data-dependent shape), files building ``nn.LSTM`` / ``nn.GRU`` / ``nn.RNN`` (the flop
counter does not see inside them, so the estimate would say nothing), and files whose inputs,
parameters and outputs pass 2 GB (the host draws their random inputs on the CPU before every
backend, which would dominate the run). 22 rather than 20, so that a problem solar cannot bound
still leaves 20 per level. The estimate only orders the problems; the bounds are solar's.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
log = logging.getLogger("gpu_headroom")

HARDWARE = "H200"
PER_LEVEL = 22
MAX_BYTES = 2e9
PEAK_FP32_FLOP_PER_S = 6.7e13  # H200 FP32 (CUDA cores; PyTorch's fp32 matmul default is IEEE, not TF32)
DRAM_BYTES_PER_S = 4.8e12  # H200 HBM3e
DEADLINE_S = 400.0
BACKEND_BUDGET_S = 45.0
BOUNDS_SCHEMA = "solar.gpu_headroom.bounds.v1"
RECURRENT = re.compile(r"nn\.(LSTM|GRU|RNN)\b")

# `python bench/gpu_headroom.py select KB_DIR` (KernelBench as extracted 2026-12-01), smallest first
SAMPLE: dict[int, tuple[str, ...]] = {
    1: ("12_Matmul_with_diagonal_matrices_",
        "72_conv_transposed_3D_asymmetric_input_asymmetric_kernel___strided_padded_grouped_",
        "88_MinGPTNewGelu", "95_CrossEntropyLoss", "40_LayerNorm",
        "81_conv_transposed_2D_asymmetric_input_square_kernel___dilated____padded____strided__",
        "75_conv_transposed_2D_asymmetric_input_asymmetric_kernel_strided__grouped____padded____dilated__",
        "85_conv_depthwise_2D_asymmetric_input_asymmetric_kernel", "83_conv_depthwise_2D_square_input_asymmetric_kernel",
        "79_conv_transposed_1D_asymmetric_input_square_kernel___padded____strided____dilated__",
        "77_conv_transposed_3D_square_input_square_kernel___padded____dilated____strided__",
        "54_conv_standard_3D__square_input__square_kernel", "10_3D_tensor_matrix_multiplication",
        "50_conv_standard_2D__square_input__square_kernel", "58_conv_transposed_3D__asymmetric_input__asymmetric_kernel",
        "73_conv_transposed_3D_asymmetric_input_square_kernel__strided_padded__grouped",
        "66_conv_standard_3D__asymmetric_input__asymmetric_kernel", "6_Matmul_with_large_K_dimension_",
        "71_conv_transposed_2D__asymmetric_input__square_kernel", "74_conv_transposed_1D_dilated",
        "13_Matmul_for_symmetric_matrices", "14_Matmul_for_upper_triangular_matrices"),
    2: ("6_Conv3d_Softmax_MaxPool_MaxPool", "79_Conv3d_Multiply_InstanceNorm_Clamp_Multiply_Max",
        "50_ConvTranspose3d_Scaling_AvgPool_BiasAdd_Scaling", "58_ConvTranspose3d_LogSumExp_HardSwish_Subtract_Clamp",
        "72_ConvTranspose3d_BatchNorm_AvgPool_AvgPool", "89_ConvTranspose3d_MaxPool_Softmax_Subtract_Swish_Max",
        "96_ConvTranspose3d_Multiply_Max_GlobalAvgPool_Clamp", "15_ConvTranspose3d_BatchNorm_Subtract",
        "74_ConvTranspose3d_LeakyReLU_Multiply_LeakyReLU_Max", "23_Conv3d_GroupNorm_Mean", "24_Conv3d_Min_Softmax",
        "60_ConvTranspose3d_Swish_GroupNorm_HardSwish", "48_Conv3d_Scaling_Tanh_Multiply_Sigmoid",
        "83_Conv3d_GroupNorm_Min_Clamp_Dropout", "57_Conv2d_ReLU_HardSwish", "69_Conv2d_HardSwish_ReLU",
        "71_Conv2d_Divide_LeakyReLU", "73_Conv2d_BatchNorm_Scaling", "85_Conv2d_GroupNorm_Scale_MaxPool_Clamp",
        "92_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp",
        "20_ConvTranspose3d_Sum_ResidualAdd_Multiply_ResidualAdd", "49_ConvTranspose3d_Softmax_Sigmoid"),
    3: ("32_ConvolutionalVisionTransformer", "24_EfficientNetB2", "34_VanillaRNNHidden", "4_LeNet5",
        "23_EfficientNetB1", "20_MobileNetV2", "22_EfficientNetB0", "9_ResNet18", "19_MobileNetV1",
        "47_NetVladNoGhostClusters", "28_VisionTransformer", "46_NetVladWithGhostClusters",
        "49_Mamba2ReturnFinalState", "48_Mamba2ReturnY", "7_GoogleNetInceptionV1", "13_DenseNet121TransitionLayer",
        "8_ResNetBasicBlock", "15_DenseNet121", "3_DeepNarrowMLP", "50_ReLUSelfAttention", "16_DenseNet201",
        "21_EfficientNetMBConv"),
}
LEVEL_OF = {stem: level for level, stems in SAMPLE.items() for stem in stems}
BACKENDS = ("torch_eager", "torch_compile", "torch_compile_max_autotune")
MODES = (("unfused", "headroom_unfused"), ("fused", "headroom_fused"), ("cache-aware", "headroom_cache_aware"))


def sample_files(kb: Path, levels: Sequence[int], limit: int | None = None) -> dict[int, list[Path]]:
    """The sample's files under ``kb`` (``levelN/STEM.py``), per level; a missing one is an error."""
    out: dict[int, list[Path]] = {}
    for level in levels:
        files = [kb / f"level{level}" / f"{stem}.py" for stem in SAMPLE[level][:limit]]
        missing = [str(f) for f in files if not f.is_file()]
        if missing:
            raise SystemExit(f"gpu_headroom: {kb}: sample file(s) missing: {', '.join(missing)}")
        out[level] = files
    return out


def round_robin(per_level: dict[int, list[Path]]) -> list[Path]:
    """1, 2, 3, 1, 2, 3 …: a deadline then cuts every level's tail alike."""
    columns = [per_level[level] for level in sorted(per_level)]
    return [col[i] for i in range(max(map(len, columns), default=0)) for col in columns if i < len(col)]


def level_of(workload: str, source: str = "") -> int | None:
    if workload in LEVEL_OF:
        return LEVEL_OF[workload]
    match = re.search(r"level(\d+)", source)
    return int(match.group(1)) if match else None


# ---------------------------------------------------------------------------- select (torch only)
def estimate(path: Path) -> dict:
    """FLOPs, bytes and the roofline estimate of one forward call, from fake tensors."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.utils.flop_counter import FlopCounterMode

    def nbytes(xs) -> int:
        return sum(x.numel() * x.element_size() for x in xs if isinstance(x, torch.Tensor))

    def flat(o) -> list:
        if isinstance(o, torch.Tensor):
            return [o]
        return [t for i in o for t in flat(i)] if isinstance(o, (list, tuple)) else []

    spec = importlib.util.spec_from_file_location("gpu_headroom_" + re.sub(r"\W", "_", path.stem), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with FakeTensorMode(allow_non_fake_inputs=True):
        model = module.Model(*module.get_init_inputs()).eval()
        inputs = list(module.get_inputs())
        counter = FlopCounterMode(display=False)
        with counter, torch.no_grad():
            out = model(*inputs)
    moved = nbytes(inputs) + nbytes([*model.parameters(), *model.buffers()]) + nbytes(flat(out))
    flops = counter.get_total_flops()
    return {"flops": flops, "bytes": moved, "est_s": max(flops / PEAK_FP32_FLOP_PER_S, moved / DRAM_BYTES_PER_S)}


def select(kb: Path, levels: Sequence[int], per_level: int) -> dict[int, list[tuple[float, str]]]:
    chosen = {}
    for level in levels:
        ranked = []
        for path in sorted((kb / f"level{level}").glob("*.py")):
            if RECURRENT.search(path.read_text(encoding="utf-8")):
                log.info("level %d %s: excluded (recurrent)", level, path.stem)
                continue
            try:
                e = estimate(path)
            except Exception as exc:  # noqa: BLE001 - a file that fake tensors cannot run is excluded, named
                log.info("level %d %s: excluded (fake run: %s)", level, path.stem, type(exc).__name__)
                continue
            if e["bytes"] > MAX_BYTES:
                log.info("level %d %s: excluded (%.3g GB)", level, path.stem, e["bytes"] / 1e9)
                continue
            ranked.append((e["est_s"], path.stem))
        chosen[level] = sorted(ranked)[:per_level]
    return chosen


# ---------------------------------------------------------------------------- bounds (solar)
def rows_of(text: str) -> tuple[list[dict], list[dict]]:
    """``solar analyze --json`` output: a list of rows, or a document with rows (and failures)."""
    data = json.loads(text) if text.strip() else []
    if isinstance(data, dict):
        return list(data.get("rows", [])), list(data.get("failures", []))
    return list(data), []


def _analyze(level: int, files: Sequence[Path], hardware: str, dagster: bool, timeout_s: float | None) -> dict:
    """One ``solar analyze --json`` over ``files``: its rows, failures and seconds."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    with tempfile.TemporaryDirectory(prefix=f"gpu_headroom_l{level}_") as report_dir:
        command = [sys.executable, "-m", "solar_assets", "analyze", "--json", "--hardware", hardware,
                   "--no-progress", "--output", report_dir, *([] if dagster else ["--no-dagster"]),
                   *([] if timeout_s is None else ["--timeout", str(timeout_s)]), *map(str, files)]
        log.info("level %d: solar analyze over %d files", level, len(files))
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO)
        seconds = time.perf_counter() - started
    try:
        if not done.stdout.strip():  # a crash prints no document: never read as "no rows, no failures"
            raise json.JSONDecodeError("empty output", "", 0)
        rows, failures = rows_of(done.stdout)
    except json.JSONDecodeError:
        raise SystemExit(f"gpu_headroom: level {level}: solar analyze printed no JSON (rc {done.returncode}):\n"
                         f"{done.stderr[-2000:]}") from None
    if not failures:  # a bare list: the reasons are the error lines on stderr
        failures = [{"reason": line.removeprefix("solar: error: ")} for line in done.stderr.splitlines()
                    if line.startswith("solar: error: ")]
    log.info("level %d: %d rows, %d failures, %.0f s", level, len(rows), len(failures), seconds)
    return {"rows": rows, "failures": [{**f, "level": level} for f in failures], "seconds": seconds}


def run_bounds(kb: Path, out: Path, levels: Sequence[int], limit: int | None, hardware: str, dagster: bool,
               timeout_s: float | None, jobs: int = 1) -> dict:
    """``solar analyze`` per level (``jobs`` > 1: each level split into ``jobs`` parts, that many
    analyze processes at a time; not with ``dagster``, whose SQLite storage is one writer)."""
    from concurrent.futures import ThreadPoolExecutor

    doc: dict = {"schema": BOUNDS_SCHEMA, "hardware": hardware,
                 "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                 "rows": [], "failures": [], "levels": {}, "seconds": {}}
    jobs = 1 if dagster else max(1, jobs)
    tasks = []
    for level, files in sample_files(kb, levels, limit).items():
        doc["levels"].update({f.stem: level for f in files})
        tasks += [(level, files[i::jobs]) for i in range(min(jobs, len(files)))]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(lambda t: _analyze(t[0], t[1], hardware, dagster, timeout_s), tasks))
    for (level, _), result in zip(tasks, results):
        doc["rows"] += result["rows"]
        doc["failures"] += result["failures"]
        doc["seconds"][str(level)] = round(doc["seconds"].get(str(level), 0.0) + result["seconds"], 1)
    order = {stem: i for i, stem in enumerate(doc["levels"])}  # the sample's order, whatever finished first
    doc["rows"].sort(key=lambda r: order.get(r.get("workload"), len(order)))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return doc


# ---------------------------------------------------------------------------- kit and measure (torch only)
def runner_module():
    """gpu_runner.py, beside this script (a kit) or in the checkout, loaded by path: no solar import."""
    for path in (HERE / "gpu_runner.py", REPO / "solar_assets" / "measure" / "gpu_runner.py"):
        if path.is_file():
            spec = importlib.util.spec_from_file_location("gpu_runner", path)
            module = importlib.util.module_from_spec(spec)
            sys.modules["gpu_runner"] = module  # its dataclasses look their module up
            spec.loader.exec_module(module)
            return module
    raise SystemExit("gpu_headroom: gpu_runner.py is neither beside this script nor in solar_assets/measure/")


def make_kit(kb: Path, bounds: Path, out: Path, levels: Sequence[int]) -> list[Path]:
    """A folder with everything the GPU box needs: the runner, this script, the bounds file and the
    sample's KernelBench files (as they are, under levelN/)."""
    stems = {r["workload"] for r in json.loads(bounds.read_text(encoding="utf-8")).get("rows", [])}
    out.mkdir(parents=True, exist_ok=True)
    copied = [Path(shutil.copy2(REPO / "solar_assets" / "measure" / "gpu_runner.py", out / "gpu_runner.py")),
              Path(shutil.copy2(Path(__file__).resolve(), out / "gpu_headroom.py")),
              Path(shutil.copy2(bounds, out / "bounds.json"))]
    for level, files in sample_files(kb, levels).items():
        (out / f"level{level}").mkdir(exist_ok=True)
        copied += [Path(shutil.copy2(f, out / f"level{level}" / f.name)) for f in files if f.stem in stems]
    return copied


def run_measure(bounds: Path | None, kb: Path, out: Path, levels: Sequence[int], device: str, backends: Sequence[str],
                deadline_s: float, budget_s: float, runs: int, warmup: int, hardware: str | None,
                flush_bytes: int | None = None, per_op_traces: Path | None = None) -> dict:
    runner = runner_module()
    stems = None
    if bounds is not None:
        stems = {r["workload"] for r in json.loads(bounds.read_text(encoding="utf-8")).get("rows", [])}
    per_level = {}
    for level in levels:
        files = [kb / f"level{level}" / f"{s}.py" for s in SAMPLE[level]]
        per_level[level] = [f for f in files if f.is_file() and (stems is None or f.stem in stems)]
    files = round_robin(per_level)
    if not files:
        raise SystemExit(f"gpu_headroom: no sample file under {kb}/level*/ (with a bounds row)")
    options = runner.Options(runs=runs, warmup=warmup, min_runs=min(10, runs), backend_budget_s=budget_s,
                             deadline_s=deadline_s, flush_bytes=flush_bytes, per_op_dir=per_op_traces)
    log.info("measuring %d files, backends %s, deadline %g s", len(files), ",".join(backends), deadline_s)
    return runner.measure(files, device, backends, options, out, hardware, bounds, sys.argv[1:])


# ---------------------------------------------------------------------------- report (solar)
def geomean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def report(bounds: Path, measurements: Path, hardware: str | None, csv_path: Path | None) -> str:
    sys.path.insert(0, str(REPO))
    from solar_assets.measure.join import format_join, join_files

    result = join_files(bounds, measurements, hardware)
    lines = [f"KernelBench headroom on {result.hardware} ({result.device.get('name')}, driver "
             f"{result.device.get('driver')}, CUDA {result.device.get('cuda')}); measured median / SOL bound",
             "level  backend                     n   " + "  ".join(f"{m + ' geomean [min–max]':<28}" for m, _ in MODES)]
    for level in sorted({level_of(r.workload, r.source) or 0 for r in result.rows}):
        for backend in BACKENDS:
            rows = [r for r in result.rows if r.backend == backend and (level_of(r.workload, r.source) or 0) == level]
            if not rows:
                continue
            cells = []
            for _, attr in MODES:
                values = [getattr(r, attr) for r in rows if getattr(r, attr) is not None]
                cells.append(f"{geomean(values):.3g}× [{min(values):.3g}–{max(values):.3g}]" if values else "-")
            label = rows[0].label
            lines.append(f"{level or '?':<6} {label:<27} {len(rows):<3} " + "  ".join(f"{c:<28}" for c in cells))
    lines += ["", format_join(result)]
    if csv_path is not None:
        import csv

        from solar_assets.measure.join import HeadroomRow

        csv_path.parent.mkdir(parents=True, exist_ok=True)
        with csv_path.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=["level", *HeadroomRow.__dataclass_fields__])
            writer.writeheader()
            for r in result.rows:
                writer.writerow({"level": level_of(r.workload, r.source), **r.as_dict()})
        lines.append(f"\nwrote {csv_path}")
    return "\n".join(lines)


def _levels(text: str) -> list[int]:
    levels = [int(x) for x in text.split(",") if x.strip()]
    bad = [x for x in levels if x not in SAMPLE]
    if bad:
        raise argparse.ArgumentTypeError(f"levels are {', '.join(map(str, SAMPLE))}, not {bad}")
    return levels


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="gpu_headroom", description=__doc__.split("\n")[0])
    phases = p.add_subparsers(dest="phase", required=True)
    s = phases.add_parser("select", help="re-derive the sample (torch only; prints, changes nothing)")
    s.add_argument("kb", type=Path)
    s.add_argument("--levels", type=_levels, default=[1, 2, 3])
    b = phases.add_parser("bounds", help="solar analyze --json over the sample")
    b.add_argument("kb", type=Path)
    b.add_argument("--out", type=Path, required=True)
    b.add_argument("--levels", type=_levels, default=[1, 2, 3])
    b.add_argument("--limit", type=int, help="only the first N of each level")
    b.add_argument("--hardware", default=HARDWARE)
    b.add_argument("--dagster", action="store_true", help="through Dagster (default: --no-dagster)")
    b.add_argument("--timeout", type=float, help="solar analyze --timeout per workload")
    b.add_argument("--jobs", type=int, default=1, help="analyze processes at a time (each on part of a level)")
    k = phases.add_parser("kit", help="a folder with the runner, this script, bounds.json and the sample files")
    k.add_argument("kb", type=Path)
    k.add_argument("--bounds", type=Path, required=True)
    k.add_argument("--out", type=Path, required=True)
    k.add_argument("--levels", type=_levels, default=[1, 2, 3])
    m = phases.add_parser("measure", help="time the sample with gpu_runner (PyTorch only)")
    m.add_argument("--bounds", type=Path, help="measure only the problems with a bounds row")
    m.add_argument("--kb", type=Path, required=True, help="a folder with level1/ level2/ level3/ (KB_DIR or a kit)")
    m.add_argument("--out", type=Path, required=True)
    m.add_argument("--levels", type=_levels, default=[1, 2, 3])
    m.add_argument("--device", default="auto")
    m.add_argument("--hardware", help="the spec name of the measured device (default: from its name, e.g. "
                   "NVIDIA H200 -> H200; host on the CPU)")
    m.add_argument("--backends", default=",".join(BACKENDS))
    m.add_argument("--deadline-s", type=float, default=DEADLINE_S)
    m.add_argument("--backend-budget-s", type=float, default=BACKEND_BUDGET_S)
    m.add_argument("--runs", type=int, default=30)
    m.add_argument("--warmup", type=int, default=3)
    m.add_argument("--flush-bytes", type=int, help="default: 2 × the GPU's L2 (2 × the caches on the CPU)")
    m.add_argument("--per-op-traces", type=Path, metavar="DIR",
                   help="also a torch.profiler trace of each eager run in DIR/<stem>.json (solar headroom --profile)")
    r = phases.add_parser("report", help="per level: geometric mean and range of headroom; every violation")
    r.add_argument("bounds", type=Path)
    r.add_argument("measurements", type=Path)
    r.add_argument("--hardware", default=None, help="default: the measurement file's device.hardware")
    r.add_argument("--csv", type=Path)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s: %(message)s")
    if args.phase == "select":
        for level, chosen in select(args.kb, args.levels, PER_LEVEL).items():
            sys.stdout.write(f"{level}: {json.dumps([stem for _, stem in chosen])}\n")
            for est, stem in chosen:
                sys.stdout.write(f"    {est * 1e3:8.3f} ms  {stem}\n")
    elif args.phase == "bounds":
        doc = run_bounds(args.kb, args.out, args.levels, args.limit, args.hardware, args.dagster, args.timeout,
                         args.jobs)
        sys.stdout.write(f"{len(doc['rows'])} rows, {len(doc['failures'])} failures; wrote {args.out}\n")
    elif args.phase == "kit":
        copied = make_kit(args.kb, args.bounds, args.out, args.levels)
        sys.stdout.write(f"{len(copied)} files in {args.out}\n")
    elif args.phase == "measure":
        backends = [x.strip() for x in args.backends.split(",") if x.strip()]
        doc = run_measure(args.bounds, args.kb, args.out, args.levels, args.device, backends, args.deadline_s,
                          args.backend_budget_s, args.runs, args.warmup, args.hardware, args.flush_bytes,
                          args.per_op_traces)
        ok = sum(t["status"] == "ok" for w in doc["workloads"] for t in w["timings"])
        sys.stdout.write(f"{ok} timings of {len(doc['workloads'])} workloads in {doc['runner']['wall_s']:.0f} s on "
                         f"{doc['device'].get('name')}; wrote {args.out}\n")
    else:
        sys.stdout.write(report(args.bounds, args.measurements, args.hardware, args.csv) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
