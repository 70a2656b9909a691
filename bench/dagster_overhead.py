"""What the Dagster path of ``solar analyze`` costs over the plain path (``--no-dagster``).

    python bench/dagster_overhead.py [--workloads FILE ...] [--shipped] [--n 100] [--hardware H100_SXM]
                                     [--hardware-change] [--cli-hardware-change] [--keep DIR]

For each workload file named (default: gemm), for the shipped workloads as one folder
(``--shipped``: ``data/workloads``, one call) and for a folder of ``--n`` generated small
workloads (KernelBench style, written to a temp dir): ``solar analyze`` as a subprocess, Dagster
path and plain path, each **cold** (a fresh SOLAR_HOME: empty caches, no Dagster history) and then
**warm** (the same call again on that home); the four calls of a set interleave (cold Dagster,
cold plain, warm Dagster, warm plain) so a change in the machine's load hits both paths. Prints
wall seconds, the Dagster / plain ratio, and the CPU seconds (user + system of the call and its
workers: what other processes on a shared machine do not inflate).

``--hardware-change``: after the folder's warm Dagster call, edit the DRAM bandwidth of the
hardware spec (a copy under the temp dir, ``$SOLAR_HARDWARE_DIR``), observe the files and run
solar's re-analysis (``automation.reanalyse``: every stale partition, upstream first); prints what
ran and how long it took: exactly that part's ``hardware_spec``, its N × (``sol_bounds``,
``cache_aware_bound``) partitions and the report are expected.

``--cli-hardware-change``: after the folder's warm Dagster call, edit the spec's DRAM bandwidth and
call ``solar analyze`` on the folder again (the Dagster path): only that part's bound assets should
run (``asset_compute.worker.compute_bounds``, no worker). Prints that call's seconds and the line it
printed, against **bounding alone**: the same ``compute_bounds`` calls in this process, from the
stored values, without the CLI's start, Dagster's recording or the report — run first, on a copy
of the home, so that neither finds the cache entries (the cache-aware solves) the other made —
and against the plain path's call (``--no-dagster``) after the same edit, on its own home.
"""
from __future__ import annotations

import argparse
import logging
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
logger = logging.getLogger("bench.dagster_overhead")

WORKLOAD_TEMPLATE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """Generated for bench/dagster_overhead.py: a linear layer, a bias and a {act}."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.{act}(self.linear(x)) * {scale}


batch_size = {batch}
in_features = {fin}
out_features = {fout}


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
'''


def generate_workloads(directory: Path, n: int) -> list[Path]:
    """``n`` small, distinct KernelBench-style files (sizes and activation vary with the index)."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        path = directory / f"gen_linear_{i:03d}.py"
        path.write_text(WORKLOAD_TEMPLATE.format(act=("relu", "tanh", "sigmoid")[i % 3], scale=1 + i % 4,
                                                 batch=4 + i % 7, fin=16 + 8 * (i % 5), fout=8 + 4 * (i // 5 % 6)))
        paths.append(path)
    return paths


def run_solar(targets: list[str], home: Path, hardware: str, dagster: bool, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one ``solar analyze`` call (raises when it fails: a bench of errors
    means nothing)."""
    command = [str(Path(sys.executable).with_name("solar")), "analyze", *targets, "--hardware", hardware,
               "--home", str(home), "--no-progress", "--json"] + ([] if dagster else ["--no-dagster"])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(label: str, targets: list[str], root: Path, hardware: str, env: dict[str, str]) -> dict[str, float]:
    """Cold then warm, Dagster and plain, each path on its own fresh home, the calls interleaved."""
    out = {}
    homes = {kind: root / f"home-{label}-{kind}" for kind in ("dagster", "plain")}
    for home in homes.values():
        shutil.rmtree(home, ignore_errors=True)
    for state in ("cold", "warm"):
        for kind, home in homes.items():
            out[f"{state} {kind}"], out[f"{state} {kind} cpu"] = run_solar(targets, home, hardware, kind == "dagster", env)
            logger.info("%s %s %s: %.1f s (cpu %.1f s)", label, state, kind, out[f"{state} {kind}"],
                        out[f"{state} {kind} cpu"])
    return out


def hardware_change(paths: list[Path], root: Path, hardware: str) -> tuple[float, list[tuple[str, str | None]]]:
    """Edit the spec's DRAM bandwidth, observe, re-analyse what is stale; (seconds, what ran)."""
    import re

    from solar_assets.dagster_defs.automation import reanalyse
    from solar_assets.dagster_defs.partitions import workload_key
    from solar_assets.dagster_defs.resources import SolarConfig
    from solar_assets.dagster_defs.runner import solar_instance
    from solar_assets.dagster_defs.sources import observe_sources
    from solar_assets.dagster_defs.definitions import build_definitions

    home = root / "home-folder-dagster"
    spec = Path(os.environ["SOLAR_HARDWARE_DIR"]) / f"{hardware}.yaml"
    text = spec.read_text()
    edited, count = re.subn(r"^(dram_bytes_per_s:\s*)([0-9.eE+]+)", lambda m: f"{m[1]}{float(m[2]) * 0.9:.6g}", text,
                            count=1, flags=re.M)
    if not count:
        raise RuntimeError(f"{spec}: no dram_bytes_per_s line to edit")
    spec.write_text(edited)
    base = SolarConfig.default(home)
    config = base.model_copy(update={"workload_files": {workload_key(p, base.workload_dir): str(p) for p in paths}})
    start = time.perf_counter()
    with solar_instance(home) as instance:
        observe_sources(instance, config)
        ran = reanalyse(instance, build_definitions(config))
    return time.perf_counter() - start, ran


def _edit_dram(spec: Path, factor: float) -> None:
    import re

    edited, count = re.subn(r"^(dram_bytes_per_s:\s*)([0-9.eE+]+)", lambda m: f"{m[1]}{float(m[2]) * factor:.6g}",
                            spec.read_text(), count=1, flags=re.M)
    if not count:
        raise RuntimeError(f"{spec}: no dram_bytes_per_s line to edit")
    spec.write_text(edited)


def cli_hardware_change(paths: list[Path], root: Path, hardware: str, env: dict[str, str]) -> dict[str, object]:
    """The CLI call after a spec edit, and the bounding it needs done alone (module docstring)."""
    from solar_assets.asset_compute.keys import workload_key
    from solar_assets.asset_compute.settings import AssetSettings
    from solar_assets.asset_compute.worker import compute_bounds

    home = root / "home-folder-dagster"
    _edit_dram(Path(os.environ["SOLAR_HARDWARE_DIR"]) / f"{hardware}.yaml", 0.8)
    # bounding alone on a copy of the home, first: neither measurement finds the other's cache entries
    alone_home = root / "home-folder-bounds-alone"
    shutil.rmtree(alone_home, ignore_errors=True)
    shutil.copytree(home, alone_home, symlinks=True)
    settings = AssetSettings.default(alone_home, REPO / "data" / "workloads")
    options = {"settings": settings.as_dict(), "keys": {str(p): workload_key(p, settings.workload_dir) for p in paths},
               "inverse": False, "call_dir": tempfile.mkdtemp(prefix="solar-bench-bounds-"), "defer_pictures": True}
    start = time.perf_counter()
    for path in paths:
        result = compute_bounds(str(path), options, [hardware])
        if result.error:
            raise RuntimeError(result.error)
    alone = time.perf_counter() - start
    command = [str(Path(sys.executable).with_name("solar")), "analyze", str(root / "generated"), "--hardware",
               hardware, "--home", str(home), "--no-progress", "--json"]
    start = time.perf_counter()
    done = subprocess.run(command, env={**env, "SOLAR_HOME": str(home)}, capture_output=True, text=True)
    call = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    line = next((ln for ln in done.stderr.splitlines() if "ran again" in ln), "(no line: everything ran?)")
    # the plain path's call after the same edit, on its own home from the folder's runs: the CLI's
    # start, the report and what its caches spare it, without Dagster
    plain, _ = run_solar([str(root / "generated")], root / "home-folder-plain", hardware, False, env)
    return {"call": call, "alone": alone, "line": line, "plain": plain}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workloads", nargs="*", default=[str(REPO / "data" / "workloads" / "gemm.py")])
    parser.add_argument("--shipped", action="store_true", help="also data/workloads as one folder, one call")
    parser.add_argument("--n", type=int, default=100, help="generated workloads in the folder (0: none)")
    parser.add_argument("--hardware", default="H100_SXM")
    parser.add_argument("--hardware-change", action="store_true")
    parser.add_argument("--cli-hardware-change", action="store_true")
    parser.add_argument("--keep", metavar="DIR", help="work here and keep it (default: a temp dir, removed)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")

    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="solar-dagster-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    hardware_copy = root / "hardware"
    shutil.rmtree(hardware_copy, ignore_errors=True)
    shutil.copytree(REPO / "hardware", hardware_copy, ignore=shutil.ignore_patterns("host.yaml"))
    os.environ["SOLAR_HARDWARE_DIR"] = str(hardware_copy)
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    table = []
    try:
        for workload in args.workloads:
            table.append((Path(workload).stem, measure(Path(workload).stem, [workload], root, args.hardware, env)))
        if args.shipped:
            shipped = REPO / "data" / "workloads"
            table.append((f"shipped ({len(list(shipped.glob('*.py')))} files)",
                          measure("shipped", [str(shipped)], root, args.hardware, env)))
        paths = generate_workloads(root / "generated", args.n) if args.n else []
        if paths:
            table.append((f"folder of {len(paths)}", measure("folder", [str(root / "generated")], root,
                                                              args.hardware, env)))
        print(f"{'set':<22} {'cold dagster':>12} {'cold plain':>10} {'ratio':>6} "
              f"{'warm dagster':>12} {'warm plain':>10} {'ratio':>6}   cpu s: cold D/P, warm D/P")
        for name, t in table:
            print(f"{name:<22} {t['cold dagster']:>11.1f}s {t['cold plain']:>9.1f}s "
                  f"{t['cold dagster'] / t['cold plain']:>5.2f}x {t['warm dagster']:>11.1f}s "
                  f"{t['warm plain']:>9.1f}s {t['warm dagster'] / t['warm plain']:>5.2f}x   "
                  f"{t['cold dagster cpu']:.1f}/{t['cold plain cpu']:.1f}, {t['warm dagster cpu']:.1f}/"
                  f"{t['warm plain cpu']:.1f}")
        if args.cli_hardware_change and paths:
            change = cli_hardware_change(paths, root, args.hardware, env)
            print(f"\nspec edit through the CLI ({args.hardware} DRAM bandwidth x0.8, {len(paths)} workloads): the call "
                  f"took {change['call']:.1f} s; bounding alone {change['alone']:.1f} s "
                  f"({change['call'] / change['alone']:.2f}x); the plain path's call after the same edit "
                  f"{change['plain']:.1f} s ({change['call'] / change['plain']:.2f}x); it printed: {change['line']}")
        if args.hardware_change and paths:
            seconds, ran = hardware_change(paths, root, args.hardware)
            counts: dict[str, int] = {}
            for asset, _ in ran:
                counts[asset] = counts.get(asset, 0) + 1
            expected = {"hardware_spec": 1, "sol_bounds": len(paths), "cache_aware_bound": len(paths),
                        "headroom_report": 1}
            exact = counts == expected and all(p is None or args.hardware in str(p) for _, p in ran)
            print(f"\nhardware change ({args.hardware} DRAM bandwidth x0.9, {len(paths)} workloads materialised): "
                  f"re-analysis took {seconds:.1f} s and ran " + ", ".join(f"{k} x{v}" for k, v in sorted(counts.items()))
                  + f"; exactly the expected set: {'yes' if exact else 'NO'}")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
