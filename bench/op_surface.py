"""solar coverage over the frameworks' own op surface: PyTorch's OpInfo database and JAX's primitive harnesses.

    python bench/op_surface.py                    # both suites, 2 workers, files in a temporary directory
    python bench/op_surface.py --suite jax        # one suite
    python bench/op_surface.py --only addmm,atan2 # some ops (OpInfo names, harness groups or full names)
    python bench/op_surface.py --keep /tmp/ops    # keep the generated files there

The files are generated from the installed torch's ``op_db`` (one per op: its first float32 CPU
sample, the op called by its public name) and the installed jax's harnesses (up to three per
primitive group, the harness's own argument maker at seed 0) by ``solar_assets.coverage.op_surface``,
into a directory that is never committed. It prints, per suite: files, translated, validated and
the share validated; the failures grouped by op and reason; the ops that got no file and why; and
FLOP agreement on the validated files — FlopCounterMode's count against 2 × solar's MACs where
FlopCounterMode counts the op (PyTorch), XLA's cost analysis against solar's FLOPs (JAX).
"""
from __future__ import annotations

import argparse
import logging
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from tabulate import tabulate

from solar_assets.coverage import CoverageRow
from solar_assets.coverage.op_surface import OpFile, write_jax_files, write_torch_files
from solar_assets.coverage.runner import run_coverage

log = logging.getLogger("op_surface")


def _reason(row: CoverageRow) -> str:
    """The failure's reason without the file's path (the path names the op already)."""
    if row.unlowered_op:  # with the why: a refusal by design says "out of scope: …", a gap its own reason
        error = row.error or ""
        why = error.split("): ", 1)[1] if "no lowering for" in error and "): " in error else \
            error.split(": ", 2)[2] if "cannot lower" in error and error.count(": ") >= 2 else ""
        return f"unlowered op {row.unlowered_op}" + (f": {why}" if why else "")
    text = re.sub(r"^\S+\.py: ", "", row.error or "")
    text = re.sub(r"/\S+\.py", "<file>", text)
    return text[:160]


def _suite_report(name: str, files: list[OpFile], rows: list[CoverageRow]) -> tuple[int, int, int]:
    translated = sum(r.translated for r in rows)
    validated = sum(r.validated for r in rows)
    print(f"\n## {name}: {validated}/{len(rows)} validated ({100.0 * validated / max(len(rows), 1):.1f} %), "
          f"{translated} translated")
    failures: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        if not r.validated:
            failures[f"{r.failed_stage}: {_reason(r)}"].append(r.workload)
    if failures:
        table = [[len(ws), reason, ", ".join(w.removeprefix("torch_").removeprefix("jax_") for w in ws[:4])
                  + (" …" if len(ws) > 4 else "")]
                 for reason, ws in sorted(failures.items(), key=lambda kv: (-len(kv[1]), kv[0]))]
        print(tabulate(table, headers=["files", "stage: reason", "workloads"], maxcolwidths=[None, 90, 60]))
    skipped = Counter(re.sub(r" for .*| of type .*", "", f.skipped) for f in files if f.path is None)
    if skipped:
        print(f"\nno file for {sum(skipped.values())} entries: "
              + "; ".join(f"{why} ({n})" for why, n in skipped.most_common()))
    return len(rows), translated, validated


def _torch_flop_agreement(rows: list[CoverageRow]) -> None:
    """FlopCounterMode against 2 × solar's MACs, on the validated files where it counts anything."""
    from solar_assets.coverage.flop_reference import flop_counter_flops, solar_graph

    table, verdicts = [], Counter()
    for r in rows:
        if not r.validated:
            continue
        try:
            flops, per_op = flop_counter_flops(r.path)
        except Exception as e:  # noqa: BLE001 - an op FlopCounterMode cannot run: say so, go on
            log.debug("FlopCounterMode failed on %s: %s", r.path, e)
            continue
        if not flops:
            continue
        macs = int(solar_graph(r.path).macs)
        verdict = "agree" if flops == 2 * macs else "differs"
        verdicts[verdict] += 1
        table.append([r.workload, flops, 2 * macs, verdict, ", ".join(per_op)])
    print("\nFLOP agreement (PyTorch, validated files FlopCounterMode counts): "
          + ", ".join(f"{n} {v}" for v, n in verdicts.items()))
    if table:
        print(tabulate(table, headers=["workload", "FlopCounterMode", "2 x solar MACs", "verdict", "ops counted"]))


def _jax_flop_agreement(rows: list[CoverageRow]) -> None:
    """XLA's cost analysis against solar's FLOPs, on the validated files where XLA counts any."""
    ratios = [(r.workload, r.solar_flops, r.xla_flops, r.xla_flops_ratio) for r in rows
              if r.validated and r.xla_flops]
    exact = sum(1 for *_, q in ratios if q is not None and abs(q - 1.0) < 1e-9)
    print(f"\nFLOP agreement (JAX, validated files XLA counts): {exact}/{len(ratios)} equal")
    off = [[w, s, x, f"{q:.3f}" if q is not None else "-"] for w, s, x, q in ratios
           if q is None or abs(q - 1.0) >= 1e-9]
    if off:
        print(tabulate(off, headers=["workload", "solar FLOPs", "XLA flops", "ratio"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", choices=["torch", "jax", "both"], default="both")
    parser.add_argument("--only", help="comma-separated op names, harness groups or harness full names")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per file (default 300)")
    parser.add_argument("--home", help="SOLAR_HOME whose cache is used (default: a fresh temporary one)")
    parser.add_argument("--keep", help="write the files here and keep them")
    parser.add_argument("--no-flops", action="store_true", help="skip the FLOP agreement tables")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    only = set(args.only.split(",")) if args.only else None

    with tempfile.TemporaryDirectory(prefix="solar_op_surface_") as tmp:
        root = Path(args.keep) if args.keep else Path(tmp)
        home = Path(args.home) if args.home else root / "home"
        suites = ["torch", "jax"] if args.suite == "both" else [args.suite]
        summary = []
        for suite in suites:
            start = time.perf_counter()
            files = (write_torch_files(root / "torch", only) if suite == "torch"
                     else write_jax_files(root / "jax", only=only))
            paths = [str(f.path) for f in files if f.path is not None]
            rows = run_coverage(paths, home / "cache", jobs=args.jobs, timeout_s=args.timeout)
            seconds = time.perf_counter() - start
            n, translated, validated = _suite_report(
                "PyTorch OpInfo, first float32 CPU sample" if suite == "torch" else "JAX primitive harnesses",
                files, rows)
            if not args.no_flops:
                (_torch_flop_agreement if suite == "torch" else _jax_flop_agreement)(rows)
            summary.append([suite, n, translated, validated, f"{100.0 * validated / max(n, 1):.1f} %", f"{seconds:.0f}"])
        print()
        print(tabulate(summary, headers=["suite", "files", "translated", "validated", "share", "seconds"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
