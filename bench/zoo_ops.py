"""Survey a directory of KernelBench-style workload files: eager time, FLOPs, exported ATen ops.

For every ``*.py`` in ``data/zoo`` (or the directory given as the first argument) it:

1. loads the module under a fresh name, seeds torch (0 before ``Model(*get_init_inputs())``,
   1 before ``get_inputs()``) and puts the model in eval mode, as solar's loader does;
2. runs one eager forward under ``torch.no_grad()`` and times it (and, on Linux, records the
   peak resident-memory growth during that forward);
3. counts FLOPs with ``torch.utils.flop_counter.FlopCounterMode(display=False)``;
4. exports with ``torch.export.export(model, tuple(inputs)).run_decompositions()`` (the
   tracer's call; non-strict by default) and, if that fails, retries with ``strict=True``;
   it collects the distinct ATen op targets of the decomposed graph.

It prints one row per file, then the union of ops with how many files use each (and
whether solar's tracer has a lowering for it), and writes the same as JSON to ``--json``.

    .venv/bin/python bench/zoo_ops.py                      # data/zoo, table only
    .venv/bin/python bench/zoo_ops.py data/zoo --json data/zoo/ops.json
    .venv/bin/python bench/zoo_ops.py data/zoo -k model_   # only files whose name contains model_
"""
from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

import torch
from torch.utils.flop_counter import FlopCounterMode

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DIR = REPO / "data" / "zoo"


def _find_lowering():
    """solar's lowering lookup, if solar is importable (only used to annotate the op table)."""
    try:
        sys.path.insert(0, str(REPO))
        from solar_assets.translate.torch_lowering import find_lowering
        return find_lowering
    except Exception:  # solar not installed or broken: the survey still works
        return None


def _rss_kib(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_peak_rss() -> bool:
    """Reset VmHWM to the current RSS (Linux >= 4.0); False where unsupported."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def load_module(path: Path):
    name = f"zoo_{path.stem}_{abs(hash(str(path))) & 0xFFFFFF:x}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(module):
    torch.manual_seed(0)
    model = module.Model(*module.get_init_inputs())
    model.eval()
    torch.manual_seed(1)
    inputs = list(module.get_inputs())
    return model, inputs


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:300]


def export_ops(model, inputs) -> tuple[Counter, str]:
    """ATen op targets of the decomposed exported graph; returns (ops, mode). Raises on failure."""
    errors = []
    for strict in (False, True):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ep = torch.export.export(model, tuple(inputs), strict=strict).run_decompositions()
        except Exception as e:  # noqa: BLE001 - every failure is reported
            errors.append(f"{'strict' if strict else 'non-strict'}: {_first_line(e)}")
            continue
        ops = Counter(str(n.target) for n in ep.graph.nodes if n.op == "call_function")
        return ops, ("strict" if strict else "non-strict")
    raise RuntimeError(" | ".join(errors))


def survey_file(path: Path) -> dict:
    row: dict = {"file": path.name, "eager_s": None, "peak_rss_mib": None, "flops": None,
                 "export": None, "export_mode": None, "export_s": None, "error": None, "ops": {}}
    try:
        module = load_module(path)
        model, inputs = build(module)
    except Exception as e:  # noqa: BLE001
        row["error"] = f"load: {_first_line(e)}"
        return row
    try:
        gc.collect()
        base = _rss_kib("VmRSS")
        can_peak = _reset_peak_rss() and base is not None
        with torch.no_grad():
            t0 = time.perf_counter()
            out = model(*inputs)
            row["eager_s"] = time.perf_counter() - t0
        if can_peak:
            row["peak_rss_mib"] = max(0, (_rss_kib("VmHWM") or base) - base) / 1024
        del out
        with torch.no_grad(), FlopCounterMode(display=False) as fc:
            model(*inputs)
        row["flops"] = int(fc.get_total_flops())
    except Exception as e:  # noqa: BLE001
        row["error"] = f"eager: {_first_line(e)}"
        return row
    try:
        t0 = time.perf_counter()
        ops, mode = export_ops(model, inputs)
        row["export_s"] = time.perf_counter() - t0
        row["export"] = True
        row["export_mode"] = mode
        row["ops"] = dict(sorted(ops.items()))
    except Exception as e:  # noqa: BLE001
        row["export"] = False
        row["error"] = f"export: {e}"
    return row


def _short(op: str) -> str:
    return op[5:] if op.startswith("aten.") else op


def _fmt_flops(f) -> str:
    if f is None:
        return "-"
    for scale, unit in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if f >= scale:
            return f"{f / scale:.3g}{unit}"
    return str(f)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("directory", nargs="?", default=str(DEFAULT_DIR))
    p.add_argument("--json", help="write the survey as JSON to this path")
    p.add_argument("-k", dest="pattern", help="only files whose name contains this")
    args = p.parse_args(argv)

    files = sorted(f for f in Path(args.directory).glob("*.py") if not f.name.startswith("_"))
    if args.pattern:
        files = [f for f in files if args.pattern in f.name]
    if not files:
        print(f"no workload files in {args.directory}", file=sys.stderr)
        return 2

    rows = []
    width = max(len(f.name) for f in files)
    print(f"{'file':<{width}}  {'eager_s':>8}  {'peakMiB':>7}  {'flops':>7}  ops")
    for f in files:
        row = survey_file(f)
        rows.append(row)
        eager = f"{row['eager_s']:.3f}" if row["eager_s"] is not None else "-"
        peak = f"{row['peak_rss_mib']:.0f}" if row["peak_rss_mib"] is not None else "-"
        ops = ", ".join(_short(o) for o in row["ops"]) if row["export"] else f"FAILED {row['error']}"
        if row["export_mode"] == "strict":
            ops = "[strict] " + ops
        print(f"{row['file']:<{width}}  {eager:>8}  {peak:>7}  {_fmt_flops(row['flops']):>7}  {ops}", flush=True)
        gc.collect()

    usage = Counter(op for r in rows for op in r["ops"])
    find_lowering = _find_lowering()
    lowered = {}
    if find_lowering is not None:
        for op in usage:
            lowered[op] = _has_lowering(op, find_lowering)

    print(f"\nop usage over {len(rows)} files ({sum(bool(r['export']) for r in rows)} exported):")
    ow = max((len(o) for o in usage), default=2)
    for op, n in sorted(usage.items(), key=lambda kv: (-kv[1], kv[0])):
        mark = "" if op not in lowered else ("  lowered" if lowered[op] else "  NOT LOWERED")
        print(f"  {op:<{ow}}  {n:>4}{mark}")
    failed = [r for r in rows if not r["export"]]
    if failed:
        print("\nfailures:")
        for r in failed:
            print(f"  {r['file']}: {r['error']}")

    if args.json:
        payload = {
            "torch_version": torch.__version__,
            "directory": str(args.directory),
            "files": rows,
            "op_usage": dict(sorted(usage.items(), key=lambda kv: (-kv[1], kv[0]))),
            "op_lowered": lowered or None,
            "failed": {r["file"]: r["error"] for r in failed},
        }
        Path(args.json).write_text(json.dumps(payload, indent=1) + "\n")
        print(f"\nwrote {args.json}")
    return 1 if failed else 0


def _has_lowering(op_name: str, find_lowering) -> bool:
    """Resolve 'aten.add.Tensor' (or '<built-in function getitem>') to the op object and look it up."""
    import operator

    if op_name.startswith("<built-in function "):
        target = getattr(operator, op_name[len("<built-in function "):-1], None)
        return target is not None and find_lowering(target) is not None
    parts = op_name.split(".")
    if len(parts) < 2:
        return False
    ns = getattr(torch.ops, parts[0], None)
    packet = getattr(ns, parts[1], None) if ns is not None else None
    if packet is None:
        return False
    target = getattr(packet, parts[2], packet) if len(parts) > 2 else packet
    return find_lowering(target) is not None


if __name__ == "__main__":
    sys.exit(main())
