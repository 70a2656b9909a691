"""KernelBench as its files are written: ``solar coverage`` (and ``solar analyze``) over the level folders.

    .venv/bin/python bench/kernelbench.py KB_DIR                         # levels 1-4, every file
    .venv/bin/python bench/kernelbench.py KB_DIR --levels 1 --limit 20   # the first 20 level-1 problems
    .venv/bin/python bench/kernelbench.py KB_DIR --levels 2 --skip 20 --limit 10   # problems 21-30
    .venv/bin/python bench/kernelbench.py KB_DIR --levels 1 --limit 20 --code /work/main   # another checkout
    .venv/bin/python bench/kernelbench.py KB_DIR --analyze H100_SXM      # also bound every file on a part
    .venv/bin/python bench/kernelbench.py KB_DIR --levels 1,2,3 --train  # each problem's training step

``KB_DIR`` holds KernelBench's ``level1`` … ``level4`` folders (the files unchanged). Per level, the
files are taken in problem order (the leading number of ``12_Matmul_....py``) and, with ``--limit``,
the first N of them; they go through one ``solar coverage --json --jobs J`` run (its worker
processes, its per-file time limit, a fresh cache under a temporary ``SOLAR_HOME`` unless ``--home``
is given: a cold run). ``--code DIR`` runs the coverage of the solar checkout at ``DIR`` (its
``solar_assets`` first on ``PYTHONPATH``), so two versions can be compared on the same subset.

Printed: per level, translated / validated counts, the median and p90 seconds per problem (the
rows' own seconds: trace, sizing, golden run and validation) and the level's wall time; then every
failure with its stage and reason; then the total wall time. ``--json FILE`` also writes the rows.

``--analyze PART`` then runs ``solar analyze --no-dagster --json --hardware PART --jobs J`` over the
same files on the same home (the IR, golden outputs and verdicts the coverage run cached are
reused) and adds a ``bounded`` column: files with a report row on that part; a file that validated
but got no row is listed with the analyze failure's reason.
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
    bounded_paths: set[str] | None = None  # --analyze: files with a report row (None: not run)
    analyze_failures: dict[str, str] = field(default_factory=dict)  # file -> reason
    analyze_wall_s: float = 0.0

    @property
    def translated(self) -> int:
        return sum(bool(r.get("translated")) for r in self.rows)

    @property
    def validated(self) -> int:
        return sum(bool(r.get("validated")) for r in self.rows)

    @property
    def bounded(self) -> int | None:
        return None if self.bounded_paths is None else len(self.bounded_paths)


def problem_files(level_dir: Path, limit: int | None, skip: int = 0) -> list[Path]:
    """The level's problem files in KernelBench's order (by leading number): ``limit`` of them after
    the first ``skip``."""
    def key(p: Path) -> tuple[int, str]:
        match = _PROBLEM_NUMBER.match(p.name)
        return (int(match.group(1)) if match else 1 << 30, p.name)

    files = sorted((p for p in level_dir.glob("*.py") if not p.name.startswith("_")), key=key)
    files = files[skip:]
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


def run_level(level: str, files: list[Path], *, code: Path, home: Path, jobs: int, timeout_s: int,
              train: bool = False) -> LevelResult:
    """``solar coverage --json`` over ``files`` with ``code``'s ``solar_assets``, in a subprocess."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(code), *filter(None, [os.environ.get("PYTHONPATH")])])
    env["SOLAR_HOME"] = str(home)
    command = [sys.executable, "-c", "import sys; from solar_assets.cli import main; sys.exit(main())",
               "coverage", "--json", "--no-progress", "--home", str(home), "--jobs", str(jobs),
               "--timeout", str(timeout_s), *(["--train"] if train else []), *(str(f.resolve()) for f in files)]
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


def analyze_level(result: LevelResult, files: list[Path], hardware: str, *, code: Path, home: Path, jobs: int,
                  timeout_s: int, train: bool = False) -> None:
    """``solar analyze --no-dagster --json`` over ``files`` on ``hardware``: which files got a row."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(code), *filter(None, [os.environ.get("PYTHONPATH")])])
    env["SOLAR_HOME"] = str(home)
    command = [sys.executable, "-c", "import sys; from solar_assets.cli import main; sys.exit(main())",
               "analyze", "--no-dagster", "--json", "--no-progress", "--home", str(home), "--hardware", hardware,
               "--jobs", str(jobs), "--timeout", str(timeout_s), "--output", str(home / "kb_reports" / result.level),
               *(["--train"] if train else []), *(str(f.resolve()) for f in files)]
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=code, capture_output=True, text=True, check=False)
    result.analyze_wall_s = time.perf_counter() - start
    try:
        payload = json.loads(done.stdout)
    except json.JSONDecodeError:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        result.error = f"solar analyze exited with status {done.returncode}: {tail[0]}"
        result.bounded_paths = set()
        return
    by_name = {f.stem + ("[train]" if train else ""): str(f.resolve()) for f in files}
    result.bounded_paths = {by_name.get(row["workload"], row["workload"]) for row in payload["rows"]}
    for failure in payload.get("failures", []):
        name = failure.get("workload") or Path(failure.get("path", "?")).stem
        result.analyze_failures[by_name.get(name, name)] = (f"[{failure.get('stage') or failure.get('status')}] "
                                                            f"{failure.get('reason') or failure.get('error')}")


def not_differentiable(row: dict[str, Any]) -> bool:
    """A ``--train`` row of a problem that has no training step (``workloads.training.NotDifferentiable``)."""
    return not row.get("validated") and "not differentiable" in str(row.get("error") or row.get("note") or "")


def not_trainable(row: dict[str, Any]) -> bool:
    """A ``--train`` row of a problem whose own step autograd refuses (``workloads.training.NotTrainable``)."""
    return not row.get("validated") and "not trainable as written" in str(row.get("error") or row.get("note") or "")


def failure_class(row: dict[str, Any]) -> str:
    """A failure's reason without the file and the figures: ``no lowering for aten.x.default``."""
    text = str(row.get("error") or row.get("note") or "no reason given")
    text = text.split(": ", 1)[1] if text.startswith("/") and ": " in text else text
    match = re.search(r"no lowering for [\w.:]+", text)
    if match:
        return match.group(0)
    return re.sub(r"\d[\d.e+-]*", "N", text)[:90]


def format_results(results: list[LevelResult], total_wall_s: float) -> str:
    """The per-level table, every failure with its reason, and the total wall time."""
    analyzed = any(r.bounded is not None for r in results)
    lines = [f"{'level':<8} {'files':>5} {'translated':>10} {'validated':>9} {'median s':>8} {'p90 s':>7} "
             f"{'wall s':>7}" + (f" {'bounded':>7} {'analyze s':>9}" if analyzed else "")]
    for r in results:
        seconds = [float(row.get("seconds") or 0.0) for row in r.rows]
        median = statistics.median(seconds) if seconds else float("nan")
        lines.append(f"{r.level:<8} {len(r.rows):>5} {r.translated:>10} {r.validated:>9} {median:>8.1f} "
                     f"{percentile(seconds, 0.9):>7.1f} {r.wall_s:>7.1f}"
                     + (f" {r.bounded if r.bounded is not None else '-':>7} {r.analyze_wall_s:>9.1f}" if analyzed else ""))
    failures = [(r.level, row) for r in results for row in r.rows
                if not row.get("validated") and not not_differentiable(row) and not not_trainable(row)]
    undifferentiable = [(r.level, row) for r in results for row in r.rows if not_differentiable(row)]
    untrainable = [(r.level, row) for r in results for row in r.rows if not_trainable(row)]
    unbounded = [(r.level, row["path"], r.analyze_failures.get(row["path"], "no report row"))
                 for r in results if r.bounded_paths is not None for row in r.rows
                 if row.get("validated") and row["path"] not in r.bounded_paths]
    errors = [r for r in results if r.error]
    if undifferentiable:
        lines += ["", "not differentiable (no training step: no floating-point output depends on a parameter or "
                      "input, or nothing to differentiate by):"]
        lines += [f"  {level}/{Path(row['path']).name}" for level, row in undifferentiable]
    if untrainable:
        lines += ["", "not trainable as written (the file's own eager backward raises the same way):"]
        lines += [f"  {level}/{Path(row['path']).name}" for level, row in untrainable]
    if failures:
        classes: dict[str, int] = {}
        for _, row in failures:
            key = f"[{row.get('failed_stage') or '?'}] {failure_class(row)}"
            classes[key] = classes.get(key, 0) + 1
        lines += ["", "failures by class:"] + [f"  {n:>3}  {k}" for k, n in sorted(classes.items(), key=lambda kv: -kv[1])]
    if failures or errors or unbounded:
        lines += ["", "failures:"]
        lines += [f"  {r.level}: {r.error}" for r in errors]
        for level, row in failures:
            lines.append(f"  {level}/{Path(row['path']).name} [{row.get('failed_stage') or '?'}]: "
                         f"{row.get('note') or row.get('error') or 'no reason given'}")
        for level, path, reason in unbounded:
            lines.append(f"  {level}/{Path(path).name} [analyze]: {reason}")
    n = sum(len(r.rows) for r in results)
    differentiable = n - len(undifferentiable)
    validated = sum(r.validated for r in results)
    lines += ["", f"total: {sum(r.translated for r in results)}/{n} translated, "
                  f"{validated}/{n} validated"
                  + (f" ({validated}/{differentiable} = {100 * validated / max(1, differentiable):.1f} % of the "
                     f"differentiable" if undifferentiable or untrainable else "")
                  + (f"; {validated}/{differentiable - len(untrainable)} = "
                     f"{100 * validated / max(1, differentiable - len(untrainable)):.1f} % of those trainable as "
                     f"written" if untrainable else "")
                  + (")" if undifferentiable or untrainable else "")
                  + (f", {sum(r.bounded or 0 for r in results)}/{n} bounded" if analyzed else "")
                  + f", wall time {total_wall_s:.1f} s"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kb_dir", type=Path, help="the folder holding level1 … level4")
    parser.add_argument("--levels", default="1,2,3,4", help="comma-separated level numbers (default 1,2,3,4)")
    parser.add_argument("--limit", type=int, default=None, help="the first N problems of each level")
    parser.add_argument("--skip", type=int, default=0, help="leave out the first N problems of each level")
    parser.add_argument("--jobs", type=int, default=2, help="solar coverage worker processes (default 2)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per problem (default 600)")
    parser.add_argument("--home", type=Path, default=None, help="SOLAR_HOME to use (default: a fresh temporary one)")
    parser.add_argument("--code", type=Path, default=REPO, help="the solar checkout to run (default: this one)")
    parser.add_argument("--json", type=Path, default=None, help="also write every level's rows to this file")
    parser.add_argument("--train", action="store_true",
                        help="each problem's training step (solar coverage --train): forward, loss, backward, AdamW")
    parser.add_argument("--analyze", metavar="PART", default=None,
                        help="also run solar analyze --no-dagster on this hardware part and count bounded files")
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
            files = problem_files(args.kb_dir / level, args.limit, args.skip)
            log.info("%s: %d files", level, len(files))
            results.append(run_level(level, files, code=args.code.resolve(), home=home, jobs=args.jobs,
                                     timeout_s=args.timeout, train=args.train))
            if args.analyze:
                analyze_level(results[-1], files, args.analyze, code=args.code.resolve(), home=home, jobs=args.jobs,
                              timeout_s=args.timeout, train=args.train)
    total = time.perf_counter() - start
    sys.stdout.write(format_results(results, total) + "\n")
    if args.json:
        args.json.write_text(json.dumps({r.level: {"rows": r.rows, "wall_s": r.wall_s, "error": r.error,
                                                   "bounded": sorted(r.bounded_paths or ()),
                                                   "analyze_failures": r.analyze_failures,
                                                   "analyze_wall_s": r.analyze_wall_s}
                                         for r in results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
