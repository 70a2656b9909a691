"""Cache-aware bound: frontier, ILP build and ILP solve times per einsum, per workload, and in total.

    python bench/cache_aware_bench.py [PATH ...] [--hardware NAME ...] [--max-segment N]
                                      [--tiles union|divisors|pow2|all] [--no-per-einsum] [--ski-slope DIR]

PATHs are workload files or directories (default: data/workloads and data/zoo). Each workload is
traced once (the pipeline's IR cache under $SOLAR_HOME is used) and lifted to its einsum graph;
tracing is not part of the timed figures. Then, with one fresh solver, every workload × every
hardware spec (default: all of hardware/*.yaml): the goal is the whole zoo on all hardware in
under two minutes, reusing frontiers across capacities and results across hardware with the
same buffer. Then each distinct einsum's own multiple-choice ILP is solved at the smallest buffer
and its build and solve times printed (``--no-per-einsum`` skips it). ``--ski-slope DIR`` writes
each workload's sweep (64 KiB .. 1 GiB) as CSV and PNG.
"""
from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from solar_assets import pipeline  # noqa: E402
from solar_assets.bounds.cache_aware import (  # noqa: E402
    CacheAwareError,
    CacheAwareSolver,
    Options,
    Problem,
    problem_from_graph,
    ski_slope,
)
from solar_assets.bounds.cache_aware.solve import has_unmodelled_steps, solve_subject  # noqa: E402
from solar_assets.errors import SolarError  # noqa: E402
from solar_assets.graph import build_einsum_graph  # noqa: E402
from solar_assets.hardware import list_hardware, load_hardware  # noqa: E402
from solar_assets.workloads import discover_workloads  # noqa: E402

GOAL_S = 120.0


def _graphs(paths: list[str]) -> list[tuple[str, object]]:
    cache = pipeline.default_cache_dir()
    out = []
    for path in discover_workloads(*paths):
        try:
            src = pipeline.read_source(path)
            graph = build_einsum_graph(pipeline.translate_source(src, cache).program)
        except SolarError as e:
            print(f"  skip {Path(path).stem}: {pipeline.with_path(str(e), path)[:140]}")
            continue
        out.append((src.name, graph))
    return out


def _mib(b: float) -> str:
    return f"{b / (1 << 20):10.2f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", default=[str(REPO / "data" / "workloads"), str(REPO / "data" / "zoo")])
    ap.add_argument("--hardware", nargs="*", default=None)
    ap.add_argument("--max-segment", type=int, default=Options().max_segment)
    ap.add_argument("--tiles", default="union")
    ap.add_argument("--no-per-einsum", dest="per_einsum", action="store_false",
                    help="skip solving and timing each distinct einsum's own ILP")
    ap.add_argument("--ski-slope", type=Path, default=None, help="write <workload>.csv/.png here")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)

    specs = [load_hardware(n) for n in (args.hardware or list_hardware())]
    capacities = sorted({s.onchip_buffer_bytes for s in specs})
    print(f"hardware: {', '.join(f'{s.name} ({s.onchip_buffer_bytes / (1 << 20):g} MiB)' for s in specs)}")
    print(f"distinct buffer capacities: {len(capacities)}; tiles={args.tiles}, max_segment={args.max_segment}")
    t0 = time.perf_counter()
    graphs = _graphs(args.paths)
    print(f"traced and lifted {len(graphs)} workloads in {time.perf_counter() - t0:.1f} s (not timed below)\n")

    options = Options(tiles=args.tiles, max_segment=args.max_segment)
    solver = CacheAwareSolver(options)
    print(f"{'workload':34s} {'einsums':>7s} {'runs':>5s} {'frontier s':>10s} {'ILP vars':>8s} {'build s':>8s} "
          f"{'solve s':>8s}   fused MiB   cache-aware MiB @ smallest buffer   unfused MiB")
    totals = {"frontier": 0.0, "build": 0.0, "solve": 0.0, "solves": 0, "requests": 0}
    failures = []
    start, cpu_start = time.perf_counter(), time.process_time()
    problems: list[tuple[str, object, Problem]] = []
    for name, graph in graphs:
        w0 = time.perf_counter()
        try:
            if has_unmodelled_steps(graph):  # repeat / topk / cond: the fused I/O traffic, no ILP
                for spec in specs:
                    totals["requests"] += 1
                    r = solve_subject(solver, graph, spec.onchip_buffer_bytes)
                print(f"{name:34s} {'':7s} {'':5s} {'':10s} {'':8s} {'':8s} {'':8s} {_mib(graph.io_bytes)} "
                      f"{_mib(r.bytes)} (fused I/O: repeat/topk/cond not tiled) {_mib(graph.bytes_unfused)}")
                continue
            problem = problem_from_graph(graph)
            problems.append((name, graph, problem))
            results = {}
            for spec in specs:  # every hardware; same capacity -> the memoised result
                totals["requests"] += 1
                results[spec.name] = solve_subject(solver, graph, spec.onchip_buffer_bytes)
        except CacheAwareError as e:
            failures.append(f"{name}: {e}")
            print(f"{name:34s} FAILED: {str(e)[:120]}")
            continue
        distinct = {r.capacity_bytes: r for r in results.values()}
        frontier = sum(r.frontier_seconds for r in distinct.values())
        build = sum(r.build_seconds for r in distinct.values())
        solve = sum(r.solve_seconds for r in distinct.values())
        totals["frontier"] += frontier
        totals["build"] += build
        totals["solve"] += solve
        totals["solves"] += len(distinct)
        prepared = solver.prepare(problem)
        small = distinct[min(distinct)]
        print(f"{name:34s} {len(problem.einsums):7d} {prepared.runs:5d} {frontier:10.2f} "
              f"{max(r.variables for r in distinct.values()):8d} {build:8.3f} {solve:8.3f} {_mib(graph.io_bytes)} "
              f"{_mib(small.bytes)} ({len(small.segments)} seg) {_mib(graph.bytes_unfused)}"
              f"  [{time.perf_counter() - w0:.1f} s]")
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    print(f"\nzoo x hardware: {len(problems)} workloads x {len(specs)} specs = {totals['requests']} bounds, "
          f"{totals['solves']} distinct (workload, capacity) ILPs")
    print(f"  frontier enumeration {totals['frontier']:.1f} s, ILP build {totals['build']:.1f} s, "
          f"ILP solve (glpsol) {totals['solve']:.1f} s")
    print(f"  wall {elapsed:.1f} s, this process's CPU {cpu:.1f} s (glpsol runs in child processes; on a "
          f"shared machine wall exceeds CPU) -> goal < {GOAL_S:.0f} s: {'met' if elapsed < GOAL_S else 'NOT met'}")
    if failures:
        print(f"  {len(failures)} failed (other modes unaffected):")
        for f in failures:
            print(f"    {f[:160]}")

    if args.per_einsum:
        cap = capacities[0]
        print(f"\nper einsum: its own multiple-choice ILP (one binary per frontier point that fits) at "
              f"{cap / (1 << 20):g} MiB, once per distinct einsum structure (repeats share it)")
        print(f"  {'workload:einsum':52s} {'repeats':>7s} {'ranks':>5s} {'tuples':>8s} {'points':>6s} "
              f"{'enum s':>7s} {'vars':>5s} {'build s':>8s} {'solve s':>8s}  MiB")
        per_einsum = solver.derive(max_segment=1, ilp_points="all")  # enumerations are not re-timed
        seen: dict[str, list] = {}
        for name, _, problem in problems:
            for e in problem.einsums:
                seen.setdefault(e.shape_digest, [f"{name}:{e.name}", e, 0])[2] += 1
        tb = ts = 0.0
        t0 = time.perf_counter()
        for label, e, repeats in seen.values():
            single = Problem(label, (e,), ({},), (True,), ((),))
            mf = per_einsum.prepare(single).singles[0].member_frontiers[0]
            try:
                r = per_einsum.solve(single, cap)
            except CacheAwareError as err:
                print(f"  {label[:52]:52s} {str(err)[:80]}")
                continue
            tb, ts = tb + r.build_seconds, ts + r.solve_seconds
            print(f"  {label[:52]:52s} {repeats:7d} {len(e.ranks):5d} {mf.tuples:8d} {len(mf.fp):6d} "
                  f"{mf.seconds:7.3f} {r.variables:5d} {r.build_seconds:8.3f} {r.solve_seconds:8.3f}  "
                  f"{_mib(r.bytes).strip()}")
        print(f"  {len(seen)} distinct einsums ({sum(v[2] for v in seen.values())} in all): ILP build {tb:.1f} s, "
              f"solve {ts:.1f} s, wall {time.perf_counter() - t0:.1f} s")

    if args.ski_slope:
        print(f"\nski-slopes -> {args.ski_slope}")
        marks = {s.name: s.onchip_buffer_bytes for s in specs}
        for name, graph, problem in problems:
            t = time.perf_counter()
            try:
                slope = ski_slope(graph, solver=solver)
            except CacheAwareError as e:
                print(f"  {name}: {e}")
                continue
            slope.write_csv(args.ski_slope / f"{name}.csv")
            slope.write_png(args.ski_slope / f"{name}.png", marks)
            print(f"  {name}: {len(slope.rows)} capacities in {time.perf_counter() - t:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
