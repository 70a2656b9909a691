"""KernelBench as its files are written: ``solar coverage`` over the level folders, per-level counts.

    .venv/bin/python bench/kernelbench.py KB_DIR                         # levels 1-4, every file
    .venv/bin/python bench/kernelbench.py KB_DIR --levels 1 --limit 20   # the first 20 level-1 problems
    .venv/bin/python bench/kernelbench.py KB_DIR --levels 1 --limit 20 --code /work/main   # another checkout

``KB_DIR`` holds KernelBench's ``level1`` … ``level4`` folders (the files unchanged). Per level, the
files are taken in problem order (the leading number of ``12_Matmul_....py``) and, with ``--limit``,
the first N of them; they go through one ``solar coverage --json --jobs J`` run (its worker
processes, its per-file time limit, a fresh cache under a temporary ``SOLAR_HOME`` unless ``--home``
is given: a cold run). ``--code DIR`` runs the coverage of the solar checkout at ``DIR`` (its
``solar_assets`` first on ``PYTHONPATH``), so two versions can be compared on the same subset.

Printed: per level, translated / validated counts, the median and p90 seconds per problem (the
rows' own seconds: trace, sizing, golden run and validation) and the level's wall time; then every
failure with its stage and reason; then the total wall time. ``--json FILE`` also writes the rows.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
log = logging.getLogger("kernelbench")
_PROBLEM_NUMBER = re.compile(r"^(\d+)_")


@dataclass
class LevelResult:
    """One level's coverage rows (``CoverageRow.as_dict`` of each file) and its wall time."""

    level: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    wall_s: float = 0.0
    error: str | None = None  # the coverage run itself failed (no JSON came back)

    @property
    def translated(self) -> int:
        return sum(bool(r.get("translated")) for r in self.rows)

    @property
    def validated(self) -> int:
        return sum(bool(r.get("validated")) for r in self.rows)


def problem_files(level_dir: Path, limit: int | None) -> list[Path]:
    """The level's problem files in KernelBench's order (by leading number), the first ``limit``."""
    def key(p: Path) -> tuple[int, str]:
        match = _PROBLEM_NUMBER.match(p.name)
        return (int(match.group(1)) if match else 1 << 30, p.name)

    files = sorted((p for p in level_dir.glob("*.py") if not p.name.startswith("_")), key=key)
    return files[:limit] if limit else files


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by linear interpolation between the sorted values."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def run_level(level: str, files: list[Path], *, code: Path, home: Path, jobs: int, timeout_s: int) -> LevelResult:
    """``solar coverage --json`` over ``files`` with ``code``'s ``solar_assets``, in a subprocess."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(code), *filter(None, [os.environ.get("PYTHONPATH")])])
    env["SOLAR_HOME"] = str(home)
    command = [sys.executable, "-c", "import sys; from solar_assets.cli import main; sys.exit(main())",
               "coverage", "--json", "--no-progress", "--home", str(home), "--jobs", str(jobs),
               "--timeout", str(timeout_s), *(str(f.resolve()) for f in files)]
    start = time.perf_counter()
    # cwd: ``python -c`` puts the working directory first on sys.path, so it must be the checkout run
    done = subprocess.run(command, env=env, cwd=code, capture_output=True, text=True, check=False)
    result = LevelResult(level, wall_s=time.perf_counter() - start)
    try:
        payload = json.loads(done.stdout)
    except json.JSONDecodeError:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        result.error = f"solar coverage exited with status {done.returncode}: {tail[0]}"
        return result
    result.rows = payload["rows"]
    return result


def format_results(results: list[LevelResult], total_wall_s: float) -> str:
    """The per-level table, every failure with its reason, and the total wall time."""
    lines = [f"{'level':<8} {'files':>5} {'translated':>10} {'validated':>9} {'median s':>8} {'p90 s':>7} "
             f"{'wall s':>7}"]
    for r in results:
        seconds = [float(row.get("seconds") or 0.0) for row in r.rows]
        median = statistics.median(seconds) if seconds else float("nan")
        lines.append(f"{r.level:<8} {len(r.rows):>5} {r.translated:>10} {r.validated:>9} {median:>8.1f} "
                     f"{percentile(seconds, 0.9):>7.1f} {r.wall_s:>7.1f}")
    failures = [(r.level, row) for r in results for row in r.rows if not row.get("validated")]
    errors = [r for r in results if r.error]
    if failures or errors:
        lines += ["", "failures:"]
        lines += [f"  {r.level}: {r.error}" for r in errors]
        for level, row in failures:
            lines.append(f"  {level}/{Path(row['path']).name} [{row.get('failed_stage') or '?'}]: "
                         f"{row.get('note') or row.get('error') or 'no reason given'}")
    n = sum(len(r.rows) for r in results)
    lines += ["", f"total: {sum(r.translated for r in results)}/{n} translated, "
                  f"{sum(r.validated for r in results)}/{n} validated, wall time {total_wall_s:.1f} s"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kb_dir", type=Path, help="the folder holding level1 … level4")
    parser.add_argument("--levels", default="1,2,3,4", help="comma-separated level numbers (default 1,2,3,4)")
    parser.add_argument("--limit", type=int, default=None, help="the first N problems of each level")
    parser.add_argument("--jobs", type=int, default=2, help="solar coverage worker processes (default 2)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per problem (default 600)")
    parser.add_argument("--home", type=Path, default=None, help="SOLAR_HOME to use (default: a fresh temporary one)")
    parser.add_argument("--code", type=Path, default=REPO, help="the solar checkout to run (default: this one)")
    parser.add_argument("--json", type=Path, default=None, help="also write every level's rows to this file")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)

    levels = [f"level{n.strip()}" for n in args.levels.split(",") if n.strip()]
    missing = [lv for lv in levels if not (args.kb_dir / lv).is_dir()]
    if missing:
        parser.error(f"{args.kb_dir}: no folder {', '.join(missing)}")
    start = time.perf_counter()
    results = []
    with tempfile.TemporaryDirectory(prefix="solar_kb_") as tmp:
        home = args.home or Path(tmp)
        for level in levels:
            files = problem_files(args.kb_dir / level, args.limit)
            log.info("%s: %d files", level, len(files))
            results.append(run_level(level, files, code=args.code.resolve(), home=home, jobs=args.jobs,
                                     timeout_s=args.timeout))
    total = time.perf_counter() - start
    sys.stdout.write(format_results(results, total) + "\n")
    if args.json:
        args.json.write_text(json.dumps({r.level: {"rows": r.rows, "wall_s": r.wall_s, "error": r.error}
                                         for r in results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
