"""Where a cold ``solar analyze`` spends its time: a fixed KernelBench sample, stage by stage.

    python bench/cold_path.py KB_DIR [--per-level 10] [--jobs 2] [--hardware A6000,B200,...]
                              [--no-dagster] [--warm] [--keep-home DIR]

The sample: from each of level1 … level4 (files sorted by their problem number), the files
numbered 1 + k·step for k = 0 … per_level-1, step = the level's count // per_level (level1:
1, 11, …, 91; level2 the same; level3: 1, 6, …, 46; level4: 1, 3, …, 19). One ``solar analyze``
over all of them on the six parts (``--hardware``), ``--jobs 2``, in a fresh home, with the stage
clock on (``solar_assets.stage_clock``: every process the run starts writes its sections).

Prints, per stage, the seconds summed over every process and file and their share of the timed
total, and for the heaviest stages the files that took most of them (``--top-stages``,
``--top-files``); then the wall time, user and system CPU, peak RSS (the largest process of the run, as
``/usr/bin/time`` reports it), the processes started (solar processes and glpsol runs), and the
home's size. ``--warm`` runs the same command again on that home (nothing changed) and prints
its wall time. KernelBench is not downloaded here: fetch it and pass the folder holding level1 …
level4.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from solar_assets.stage_clock import CLOCK_ENV, WAITING, read_clock  # noqa: E402

SIX_PARTS = "A6000,B200,H100_PCIe,H100_SXM,H200,Jetson_AGX_Thor"
LEVELS = ("level1", "level2", "level3", "level4")


def problem_number(path: Path) -> int:
    match = re.match(r"(\d+)", path.name)
    return int(match.group(1)) if match else 1 << 30


def sample(kb_dir: Path, per_level: int) -> list[Path]:
    """The fixed sample (module docstring)."""
    files: list[Path] = []
    for level in LEVELS:
        found = sorted((kb_dir / level).glob("*.py"), key=lambda p: (problem_number(p), p.name))
        if not found:
            raise SystemExit(f"{kb_dir / level}: no .py files (pass the folder holding level1 … level4)")
        step = max(1, len(found) // per_level)
        files += found[::step][:per_level]
    return files


def tree_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def run_analyze(files: list[Path], home: Path, hardware: str, jobs: int, no_dagster: bool,
                clock: Path | None) -> tuple[float, subprocess.CompletedProcess]:
    env = dict(os.environ, SOLAR_HOME=str(home), PYTHONPATH=str(REPO))
    env.pop(CLOCK_ENV, None)
    if clock is not None:
        env[CLOCK_ENV] = str(clock)
    command = [sys.executable, "-c", "import sys; from solar_assets.cli import main; sys.exit(main())",
               "analyze", "--json", "--no-progress", "--home", str(home), "--hardware", hardware,
               "--jobs", str(jobs), *(["--no-dagster"] if no_dagster else []), *(str(f) for f in files)]
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=REPO, capture_output=True, text=True, check=False)
    return time.perf_counter() - start, done


def rows_of(done: subprocess.CompletedProcess) -> tuple[int, int]:
    try:
        payload = json.loads(done.stdout)
    except json.JSONDecodeError:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise SystemExit(f"solar analyze exited with status {done.returncode}: {' | '.join(tail)}") from None
    return len(payload.get("rows", [])), len(payload.get("failures", []))


def machine_cpu_seconds() -> tuple[float, float] | None:
    """``(busy, available)`` CPU seconds of the whole machine since boot (Linux ``/proc/stat``), or
    None elsewhere. The children's rusage misses processes not reaped by their parent (a worker's
    checker ended with it), so on an otherwise idle machine this is the figure to trust."""
    try:
        fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    except (OSError, ValueError, IndexError):
        return None
    tick = os.sysconf("SC_CLK_TCK")
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    total = sum(fields[:8])  # user nice system idle iowait irq softirq steal (guest is inside user)
    return (total - idle) / tick, total / tick


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kb_dir", type=Path, help="the folder holding level1 … level4")
    parser.add_argument("--per-level", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--hardware", default=SIX_PARTS)
    parser.add_argument("--no-dagster", action="store_true", help="the plain path (no Dagster)")
    parser.add_argument("--warm", action="store_true", help="then the same call again on that home")
    parser.add_argument("--keep-home", type=Path, default=None, help="use (and keep) this home, which must not exist")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures to this file")
    parser.add_argument("--top-stages", type=int, default=6, help="stages whose heaviest files are listed")
    parser.add_argument("--top-files", type=int, default=5, help="files listed per stage")
    args = parser.parse_args(argv)

    files = sample(args.kb_dir, args.per_level)
    with tempfile.TemporaryDirectory(prefix="solar-cold-") as tmp:
        home = args.keep_home or Path(tmp) / "home"
        if home.exists():
            raise SystemExit(f"{home}: exists (a cold run needs a new home)")
        clock = Path(tmp) / "clock"
        clock.mkdir()
        before, machine_before = resource.getrusage(resource.RUSAGE_CHILDREN), machine_cpu_seconds()
        wall, done = run_analyze(files, home, args.hardware, args.jobs, args.no_dagster, clock)
        after, machine_after = resource.getrusage(resource.RUSAGE_CHILDREN), machine_cpu_seconds()
        busy = (machine_after[0] - machine_before[0], machine_after[1] - machine_before[1]) \
            if machine_before and machine_after else None
        rows, failures = rows_of(done)
        totals = read_clock(clock)
        home_bytes = tree_bytes(home)
        warm_s = None
        if args.warm:
            warm_s, again = run_analyze(files, home, args.hardware, args.jobs, args.no_dagster, None)
            rows_of(again)
        if args.keep_home is None:
            shutil.rmtree(home, ignore_errors=True)

    timed = totals.timed_seconds
    width = max(len(s) for s in totals.seconds) if totals.seconds else 10
    print(f"cold-path profile: {len(files)} KernelBench files ({args.per_level} per level), "
          f"{len(args.hardware.split(','))} parts, --jobs {args.jobs}, {'plain' if args.no_dagster else 'Dagster'} path")
    print(f"{'stage':<{width}}  {'seconds':>9}  {'entries':>7}  {'share':>6}")
    ranked = sorted(totals.seconds.items(), key=lambda kv: -kv[1])
    for stage, seconds in [kv for kv in ranked if WAITING not in kv[0]]:
        print(f"{stage:<{width}}  {seconds:9.1f}  {totals.entries.get(stage, 0):7d}  {seconds / timed:6.1%}")
    print(f"{'timed total':<{width}}  {timed:9.1f}")
    by_file_printed = 0
    for stage, seconds in [kv for kv in ranked if WAITING not in kv[0]]:
        per_file = totals.by_file.get(stage)
        if not per_file or by_file_printed == args.top_stages:
            continue
        by_file_printed += 1
        heaviest = sorted(per_file.items(), key=lambda kv: -kv[1])[:args.top_files]
        print(f"  {stage}: " + ", ".join(f"{Path(f).parent.name}/{Path(f).stem[:40]} {s:.1f}" for f, s in heaviest))
    for stage, seconds in [kv for kv in ranked if WAITING in kv[0]]:  # another process's seconds: no share
        print(f"{stage:<{width}}  {seconds:9.1f}  {totals.entries.get(stage, 0):7d}")
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    glpsol = totals.entries.get("glpsol", 0)
    print(f"wall {wall:.1f} s; CPU {user:.0f} s user + {system:.0f} s system (reaped processes); "
          f"peak RSS {after.ru_maxrss / 2**20:.2f} GiB")
    if busy is not None:
        print(f"machine CPU busy {busy[0]:.0f} s of {busy[1]:.0f} s ({busy[0] / max(busy[1], 1e-9):.0%}; "
              "all processes, this run's and any other)")
    print(f"processes started: {totals.processes} solar (CLI, workers, checkers, picture drawers) + {glpsol} glpsol")
    print(f"rows {rows}, failures {failures}; home {home_bytes / 2**30:.2f} GiB")
    if warm_s is not None:
        print(f"warm (nothing changed): {warm_s:.1f} s")
    if args.json:
        args.json.write_text(json.dumps({
            "files": [str(f) for f in files], "wall_s": wall, "user_s": user, "system_s": system,
            "peak_rss_bytes": after.ru_maxrss * 1024, "processes": totals.processes, "glpsol": glpsol,
            "rows": rows, "failures": failures, "home_bytes": home_bytes, "warm_s": warm_s,
            "machine_busy_s": busy[0] if busy else None, "machine_available_s": busy[1] if busy else None,
            "stages": {s: {"seconds": v, "entries": totals.entries.get(s, 0)} for s, v in totals.seconds.items()},
            "by_file": totals.by_file,
        }, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
