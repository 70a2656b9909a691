"""Time solar's analysis of every zoo file next to one eager forward pass and FlopCounterMode's count.

    .venv/bin/python bench/zoo_bench.py                       # data/zoo, two workers, cold then warm
    .venv/bin/python bench/zoo_bench.py data/zoo --limit 12   # the first 12 files
    .venv/bin/python bench/zoo_bench.py data/zoo/model_vgg11.py data/zoo/matmul_square.py --jobs 0
    .venv/bin/python bench/zoo_bench.py --home /tmp/zb --passes warm   # re-use an earlier run's caches

Per workload, in one worker process (spawned, one BLAS / numba thread each when ``--jobs 2``):

- the analysis: ``pipeline.analyze_workload`` (the CLI's stages without Dagster) with the caches under
  ``--home`` (IR, validation size, golden outputs, validation verdicts, numba kernels), its stages'
  seconds: trace (at the file's own size, fake tensors), size (choosing the validation size, which
  traces at candidate sizes), golden (the model run at the validation size), validate (the IR
  executed, numba compilation included), graph, bounds and cache_aware (the tiling ILP);
- on the cold pass only, in the same process: one eager forward pass of the model at the file's
  own size (real tensors, ``torch.no_grad()``, the model built beforehand and not timed) and the
  time FlopCounterMode takes to count one forward (``solar_assets.coverage.flop_reference``, on
  the meta device), with its FLOPs next to 2 × solar's MACs.

Then the medians of analysis / eager, analysis / (eager + 1 s) (the issue's goal: ≤ 5) and
analysis / FlopCounterMode, the pass's wall time (the goal: the whole zoo under 600 s) and, for the
warm pass (the same caches, unchanged files), how long a re-analysis takes. A worker's one-time
start (imports, torch.export's first-call set-up) is in the wall time but not in any file's row.
Without ``--home`` the caches live in a fresh temporary directory, removed at the end.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from solar_assets import pipeline  # noqa: E402  (light: the stage packages load when used)
from solar_assets.workloads import discover_workloads  # noqa: E402

STAGE_COLUMNS = tuple(s for s in pipeline.STAGES if s != "measure")  # trace … bounds, cache_aware
GOAL_WALL_S = 600.0
GOAL_RATIO = 5.0
EAGER_ALLOWANCE_S = 1.0


# ---------------------------------------------------------------------------- in the worker
def _eager_forward_s(path: str) -> float:
    """One eager forward at the file's own size (the model and inputs built first, not timed)."""
    import torch

    from solar_assets.workloads import load_torch_workload, read_workload_source

    w = load_torch_workload(read_workload_source(path))
    with torch.no_grad():
        start = time.perf_counter()
        w.model(*w.inputs)
        return time.perf_counter() - start


def bench_one(path: str, cache_dir: str | None, options: dict[str, Any]) -> dict[str, Any]:
    """The analysis of one file and, when ``options["reference"]``, its eager / FlopCounterMode
    reference figures (a failure there is recorded, not raised)."""
    cpu = time.process_time()
    result = pipeline.analyze_workload(path, options["hardware"], cache_dir=cache_dir)
    cpu = time.process_time() - cpu
    row: dict[str, Any] = {
        "workload": result.workload, "path": path, "ok": result.ok, "error": result.error,
        "failed_stage": result.failed_stage, "validated_size": result.validated_size,
        "seconds": dict(result.seconds), "analysis_s": result.total_s, "analysis_cpu_s": cpu,
        "macs": result.rows[0].macs if result.rows else None,
    }
    if options["reference"]:
        try:
            row["eager_s"] = _eager_forward_s(path)
        except Exception as e:  # noqa: BLE001 - a reference figure that cannot be had is reported
            row["eager_s"], row["eager_error"] = None, f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
        try:
            from solar_assets.coverage.flop_reference import flop_counter_flops

            start = time.perf_counter()
            row["flops"] = flop_counter_flops(path)[0]
            row["flopcounter_s"] = time.perf_counter() - start
        except Exception as e:  # noqa: BLE001
            row["flops"] = row["flopcounter_s"] = None
            row["flop_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
    return row


def unfinished(path: str, message: str, seconds: float, last_event: str | None) -> dict[str, Any]:
    where = f" during {last_event}" if last_event else ""
    return {"workload": Path(path).stem, "path": path, "ok": False, "error": f"{path}: {message}{where}",
            "failed_stage": (last_event or "?").split(" ", 1)[0], "validated_size": None,
            "seconds": {}, "analysis_s": seconds, "analysis_cpu_s": None, "macs": None, "eager_s": None, "flops": None,
            "flopcounter_s": None}


# ---------------------------------------------------------------------------- the report
def _cell(x: float | None, width: int = 8, digits: int = 2) -> str:
    return f"{'-':>{width}}" if x is None else f"{x:>{width}.{digits}f}"


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _ratio_text(x: float | None) -> str:
    return "-" if x is None else f"{x:.3g}"


def print_pass(name: str, rows: list[dict[str, Any]], wall_s: float, reference: dict[str, dict[str, Any]],
               out=sys.stdout) -> dict[str, Any]:
    """The per-workload table of one pass and its summary; returns the summary figures."""
    width = max([len("workload"), *(len(r["workload"]) for r in rows)])
    header = (f"{'workload':<{width}}  " + "  ".join(f"{c:>{max(8, len(c))}}" for c in (*STAGE_COLUMNS, "analysis", "eager",
                                                                           "flopctr", "ratio"))
              + "  validated size / note")
    print(f"\n== {name} pass: {len(rows)} workloads", file=out)
    print(header, file=out)
    print("-" * len(header), file=out)
    ratios_eager, ratios_goal, ratios_flop = [], [], []
    for r in rows:
        ref = reference.get(r["path"], r)
        eager, flopctr = ref.get("eager_s"), ref.get("flopcounter_s")
        ratio = r["analysis_s"] / (eager + EAGER_ALLOWANCE_S) if eager is not None else None
        if eager:
            ratios_eager.append(r["analysis_s"] / eager)
        if ratio is not None:
            ratios_goal.append(ratio)
        if flopctr:
            ratios_flop.append(r["analysis_s"] / flopctr)
        stages = "  ".join(_cell(r["seconds"].get(s), max(8, len(s))) for s in STAGE_COLUMNS)
        note = r["validated_size"] or "" if r["ok"] else f"FAILED at {r['failed_stage']}: {r['error'][:110]}"
        print(f"{r['workload']:<{width}}  {stages}  {_cell(r['analysis_s'])}  {_cell(eager, digits=3)}  "
              f"{_cell(flopctr, digits=3)}  {_cell(ratio)}  {note}", file=out)
    totals = {s: sum(r["seconds"].get(s, 0.0) for r in rows) for s in STAGE_COLUMNS}
    summary = {
        "pass": name, "workloads": len(rows), "analysed": sum(r["ok"] for r in rows), "wall_s": wall_s,
        "sum_analysis_s": sum(r["analysis_s"] for r in rows), "stage_totals_s": totals,
        "sum_analysis_cpu_s": sum(r.get("analysis_cpu_s") or 0.0 for r in rows),
        "median_analysis_s": _median([r["analysis_s"] for r in rows]),
        "median_eager_s": _median([v["eager_s"] for v in reference.values() if v.get("eager_s") is not None]),
        "median_flopcounter_s": _median([v["flopcounter_s"] for v in reference.values()
                                         if v.get("flopcounter_s") is not None]),
        "median_analysis_over_eager": _median(ratios_eager),
        "median_analysis_over_eager_plus_1s": _median(ratios_goal),
        "median_analysis_over_flopcounter": _median(ratios_flop),
    }
    print("-" * len(header), file=out)
    print(f"{'sum':<{width}}  " + "  ".join(_cell(totals[s], max(8, len(s))) for s in STAGE_COLUMNS)
          + f"  {_cell(summary['sum_analysis_s'])}", file=out)
    print(f"{name}: {summary['analysed']}/{len(rows)} analysed; wall {wall_s:.1f} s "
          f"(goal for the whole zoo: < {GOAL_WALL_S:.0f} s); sum of per-file analysis {summary['sum_analysis_s']:.1f} s "
          f"({summary['sum_analysis_cpu_s']:.1f} s of CPU in the workers)",
          file=out)
    print(f"{name}: medians: analysis {_ratio_text(summary['median_analysis_s'])} s, eager forward "
          f"{_ratio_text(summary['median_eager_s'])} s, FlopCounterMode {_ratio_text(summary['median_flopcounter_s'])} s; "
          f"analysis / eager {_ratio_text(summary['median_analysis_over_eager'])}, analysis / (eager + 1 s) "
          f"{_ratio_text(summary['median_analysis_over_eager_plus_1s'])} (goal ≤ {GOAL_RATIO:g}), analysis / "
          f"FlopCounterMode {_ratio_text(summary['median_analysis_over_flopcounter'])}", file=out)
    return summary


def flop_agreement(rows: list[dict[str, Any]]) -> str:
    """How many files FlopCounterMode's FLOPs equal 2 × solar's MACs (it counts only matmul/conv-like ops)."""
    both = [r for r in rows if r.get("flops") and r.get("macs") is not None]
    equal = sum(r["flops"] == 2 * r["macs"] for r in both)
    return (f"FlopCounterMode FLOPs == 2 × solar MACs on {equal}/{len(both)} files where it counts any "
            "(docs/flop_agreement.md lists why the others differ)")


# ---------------------------------------------------------------------------- main
def run_pass(paths: list[Path], cache_dir: Path, jobs: int, timeout_s: float | None,
             options: dict[str, Any], rows_log: Path | None = None) -> tuple[list[dict[str, Any]], float]:
    """One pass over ``paths``; each finished row is also appended to ``rows_log`` (JSON lines), so
    an interrupted run keeps what it measured."""
    from solar_assets.coverage.runner import run_in_workers

    done = [0]

    def progress(index: int, row: dict[str, Any]) -> None:
        done[0] += 1
        status = "ok" if row["ok"] else f"FAILED at {row['failed_stage']}"
        print(f"[{done[0]}/{len(paths)}] {row['workload']}: {row['analysis_s']:.1f} s {status}",
              file=sys.stderr, flush=True)
        if rows_log is not None:
            with rows_log.open("a") as f:
                f.write(json.dumps({"pass": options["pass"], **row}, default=str) + "\n")

    start = time.perf_counter()
    rows = run_in_workers(paths, bench_one, unfinished, cache_dir, jobs=jobs, timeout_s=timeout_s,
                          task_arg=options, on_result=progress)
    return rows, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=[str(REPO / "data" / "zoo")], help="files and directories")
    parser.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N files")
    parser.add_argument("-k", dest="contains", default=None, help="only files whose name contains this")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (0: in this process)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per file (0: none)")
    parser.add_argument("--home", default=None, help="SOLAR_HOME for the caches (default: a fresh temp dir)")
    parser.add_argument("--passes", default="cold,warm", help="cold,warm | cold | warm")
    parser.add_argument("--hardware", nargs="+", default=list(pipeline.DEFAULT_HARDWARE))
    parser.add_argument("--json", default=None, metavar="FILE",
                        help="also write every row and summary here (and each row as it finishes to FILE.rows.jsonl)")
    args = parser.parse_args(argv)

    paths = discover_workloads(*args.paths)
    if args.contains:
        paths = [p for p in paths if args.contains in p.name]
    if args.limit is not None:
        paths = paths[:args.limit]
    if not paths:
        print("zoo_bench: no workload files", file=sys.stderr)
        return 2
    home = Path(args.home).resolve() if args.home else Path(tempfile.mkdtemp(prefix="solar_zoo_bench_"))
    os.environ["SOLAR_HOME"] = str(home)  # the workers' numba cache follows it
    passes = [p.strip() for p in args.passes.split(",") if p.strip()]
    print(f"zoo_bench: {len(paths)} files, jobs={args.jobs}, caches under {home}, passes {passes}, "
          f"{os.cpu_count()} cores", flush=True)
    report: dict[str, Any] = {"files": [str(p) for p in paths], "jobs": args.jobs, "home": str(home), "passes": []}
    reference: dict[str, dict[str, Any]] = {}
    try:
        for name in passes:
            options = {"hardware": args.hardware, "reference": name == "cold", "pass": name}
            rows_log = Path(args.json).with_suffix(".rows.jsonl") if args.json else None
            rows, wall = run_pass(paths, home / "cache", args.jobs, args.timeout or None, options, rows_log)
            if options["reference"]:
                reference = {r["path"]: r for r in rows}
            summary = print_pass(name, rows, wall, reference)
            if options["reference"]:
                print(flop_agreement(rows))
            report["passes"].append({"summary": summary, "rows": rows})
    finally:
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=1, default=str))
        if not args.home:
            shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
