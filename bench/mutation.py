"""How strong is validation? Plant single-point translation bugs in validated IRs and count the rejected.

    python bench/mutation.py [PATH ...] [--per-kernel N] [--files N] [--max-per-file N] [--nodewise-files N]

For every workload (default: data/zoo) the IR is translated and validated the way the pipeline
does it (``chain.stages``: the validation size, the golden outputs there, the IR re-traced at
that size). Then each mutant of ``solar_assets.validate.mutants`` (an index ±1, a loop one short,
swapped subscripts, a changed stride or constant, a dropped or doubled term, a wrong reduction or
pad start, a mask shifted by one) is run through the same ``validate_program``. A mutant the IR
checker refuses counts as rejected (by the checker). A survivor is run against the unmutated IR
on the inputs of two further sizes (the validation constants + 1 and + 2): identical outputs at
both make it *equivalent* (not counted); else it is a *weakness*, listed.

With ``--nodewise-files N`` the N smallest workloads are also checked node-wise at their own size
(``validate.nodewise``, 512 seeded points per op group): their full-size IR is mutated the same
way. The score per kind and per method is printed, then every weakness.
"""
from __future__ import annotations

import argparse
import logging
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from tabulate import tabulate
from tqdm import tqdm

from solar_assets.chain import stages
from solar_assets.chain.config import RunConfig
from solar_assets.errors import SolarError
from solar_assets.execute import execute_program
from solar_assets.golden import make_golden
from solar_assets.validate import validate_program
from solar_assets.validate.mutants import KINDS, apply_mutant, mutants, spread
from solar_assets.workloads import discover_workloads

REPO = Path(__file__).resolve().parents[1]
log = logging.getLogger("bench.mutation")


@dataclass
class Outcome:
    workload: str
    method: str  # "scaled" (or "full") / "node-wise"
    kind: str
    description: str
    verdict: str  # "rejected" / "checker" / "equivalent" / "weakness" / "unknown"


def _further_sizes(constants: dict[str, int], src) -> list[dict[str, int]]:
    """Candidate sizes for the equivalence check: the validation constants + 1 and + 2 (or the
    file's own scalable constants where it validates at full size), then × 2 − 1."""
    from solar_assets.sizing.search import MIN_SCALABLE_SIZE, not_a_size
    from solar_assets.workloads.sizes import size_constants

    base = dict(constants) or {n: c.value for n, c in size_constants(src.path).items()
                               if c.value >= MIN_SCALABLE_SIZE and not not_a_size(n)}
    if not base:
        return []
    small = {n: min(v, 12) for n, v in base.items()}
    return [{n: v + 1 for n, v in small.items()}, {n: v + 2 for n, v in small.items()},
            {n: 2 * v - 1 for n, v in small.items()}]


def _outputs_agree(a, b, bindings) -> bool:
    got_a = execute_program(a, bindings, np.float64)
    got_b = execute_program(b, bindings, np.float64)
    return all(x.shape == y.shape and np.allclose(x, y, rtol=1e-12, atol=1e-12 * float(np.abs(y).max(initial=0.0)),
                                                  equal_nan=True)
               for x, y in zip(got_a, got_b))


def _equivalent(src, translation, mutant, per_kernel: int, constants: dict[str, int]) -> str:
    """'equivalent' when the mutant computes the same outputs at two further sizes, else 'weakness'
    (or 'unknown' when no further size traces to the same structure)."""
    agreed = 0
    for size in _further_sizes(constants, src):
        try:
            other = stages.retrace(src, translation, size)
            if other is None:
                continue
            planted = apply_mutant(other.program, mutant.kind, mutant.step, mutant.site, per_kernel)
            if planted is None:
                continue
            bindings = make_golden(src, size).bindings(np.float64)
            if not _outputs_agree(other.program, planted, bindings):
                return "weakness"
        except SolarError:
            continue
        agreed += 1
        if agreed == 2:
            return "equivalent"
    return "unknown" if agreed == 0 else "weakness?"


def scaled_outcomes(path: Path, per_kernel: int, cache_dir: Path | None, at_most: int | None = None) -> list[Outcome]:
    config = RunConfig()
    src = stages.read_source(path, config)
    translation = stages.translate(src, config, cache_dir)
    choice = stages.choose_size_or_nodewise(src, translation, config, cache_dir)
    if choice.nodewise:
        return []
    golden = stages.golden(src, choice.size, cache_dir)
    scaled = stages.retrace(src, translation, golden.constants, cache_dir)
    program = scaled.program if scaled is not None else translation.program
    if not validate_program(program, golden, source=str(path)).ok:
        log.warning("%s: does not validate unmutated; skipped", path)
        return []
    method = "scaled" if golden.constants else "full"
    out = []
    for m in spread(list(mutants(program, per_kernel=per_kernel)), at_most):
        try:
            verdict = "rejected" if not validate_program(m.program, golden, source=str(path)).ok else None
        except SolarError:
            verdict = "checker"
        if verdict is None:  # survived: differing outputs here mean the tolerance let it through
            same_here = _outputs_agree(m.program, program, golden.bindings(np.float64))
            verdict = _equivalent(src, translation, m, per_kernel, dict(golden.constants)) if same_here \
                else "weakness"
        out.append(Outcome(src.name, method, m.kind, f"{m.step}: {m.description}", verdict))
    return out


def nodewise_outcomes(path: Path, per_kernel: int, cache_dir: Path | None, at_most: int | None = None) -> list[Outcome]:
    from solar_assets.validate.nodewise import validate_nodewise

    config = RunConfig()
    src = stages.read_source(path, config)
    translation = stages.translate(src, config, cache_dir)
    if not validate_nodewise(src, translation).ok:
        return []
    out = []
    for m in spread(list(mutants(translation.program, per_kernel=per_kernel)), at_most):
        try:
            ok = validate_nodewise(src, replace(translation, program=m.program)).ok
            verdict = "rejected" if not ok else _equivalent(src, translation, m, per_kernel, {})
        except SolarError:
            verdict = "checker"
        out.append(Outcome(src.name, "node-wise", m.kind, f"{m.step}: {m.description}", verdict))
    return out


def score_table(outcomes: list[Outcome]) -> str:
    rows = []
    by: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for o in outcomes:
        by[(o.method, o.kind)][o.verdict] += 1
        by[(o.method, "all")][o.verdict] += 1
    for (method, kind), c in sorted(by.items(), key=lambda kv: (kv[0][0], KINDS.index(kv[0][1])
                                                                 if kv[0][1] in KINDS else len(KINDS))):
        counted = sum(c.values()) - c["equivalent"]
        killed = c["rejected"] + c["checker"]
        rows.append([method, kind, sum(c.values()), c["equivalent"], killed, counted - killed,
                     f"{100.0 * killed / counted:.1f} %" if counted else "-"])
    return tabulate(rows, headers=["method", "kind", "mutants", "equivalent", "rejected", "survived", "score"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=[str(REPO / "data" / "zoo")])
    parser.add_argument("--per-kernel", type=int, default=2, help="sites per kind and kernel (spread)")
    parser.add_argument("--files", type=int, default=None, help="at most this many files (spread over the list)")
    parser.add_argument("--max-per-file", type=int, default=None, help="at most this many mutants per file (spread)")
    parser.add_argument("--nodewise-files", type=int, default=0, help="the N smallest files also node-wise")
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--nodewise-only", action="store_true", help="skip the scaled validation")
    parser.add_argument("--baseline-points", action="store_true",
                        help="node-wise as before issue 31: corners and random points only (no faces, no extremes), "
                             "against the framework's float32 values")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    if args.baseline_points:
        from solar_assets.validate import nodewise, nodewise_check

        nodewise_check.FACE_POINTS = nodewise_check.EXTREME_POINTS = 0
        nodewise.FLOAT64_REFERENCE = False
    paths = discover_workloads(*args.paths)
    paths = spread(paths, args.files or None)
    start = time.perf_counter()
    outcomes: list[Outcome] = []
    for path in tqdm([] if args.nodewise_only else paths, desc="mutants (scaled)", unit="file"):
        try:
            outcomes += scaled_outcomes(path, args.per_kernel, args.cache_dir, args.max_per_file)
        except SolarError as e:
            log.warning("%s: %s", path, str(e).splitlines()[0])
    scaled_s = time.perf_counter() - start
    for path in tqdm(sorted(paths, key=lambda p: p.stat().st_size)[:args.nodewise_files], desc="mutants (node-wise)",
                     unit="file"):
        try:
            outcomes += nodewise_outcomes(path, args.per_kernel, args.cache_dir, args.max_per_file)
        except SolarError as e:
            log.warning("%s: %s", path, str(e).splitlines()[0])
    print(f"{len(paths)} workloads, {len(outcomes)} mutants, {scaled_s:.0f} s scaled, "
          f"{time.perf_counter() - start - scaled_s:.0f} s node-wise")
    print(score_table(outcomes))
    weak = [o for o in outcomes if o.verdict not in ("rejected", "checker", "equivalent")]
    if weak:
        print("\nsurvivors:")
        print(tabulate([[o.workload, o.method, o.kind, o.description, o.verdict] for o in weak],
                       headers=["workload", "method", "kind", "mutant", "verdict"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
