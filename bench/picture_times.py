"""Time the Dagster path's per-workload extras: the per-pair roofline, the einsum-graph picture and the
great-expectations suites (issue 16: their cost is most of the Dagster path's overhead per workload).

    python bench/picture_times.py REPORT_DIR [PATH ...] [--repeat N]

``REPORT_DIR``: a ``solar analyze --per-op --no-dagster --out REPORT_DIR`` run's directory (its
``report.json`` gives the rows and per-op rows); ``PATH``: workload files whose (cached) translation
is drawn as an einsum graph. Prints seconds per call (the mean over ``--repeat`` calls, drawn in
turn over the rows / graphs), then ``expectations.warm_up`` (the suites' one-time set-up) and the two
suites on a 1-row and a 100-row table: the first call after it and the mean of later calls.
"""
from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from pathlib import Path

from ir_schemas import ReportDocument


def _mean_seconds(calls, repeat: int) -> float:
    start = time.perf_counter()
    for call in itertools.islice(itertools.cycle(calls), repeat):
        call()
    return (time.perf_counter() - start) / repeat


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report_dir", type=Path)
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)

    from solar_assets import expectations, pipeline
    from solar_assets.graph import build_einsum_graph
    from solar_assets.report import plot_roofline, rows_to_frame

    doc = ReportDocument.model_validate_json((args.report_dir / "report.json").read_text())
    rows, per_op = list(doc.rows), list(doc.per_op)
    out = Path(tempfile.mkdtemp(prefix="solar-pictures-"))
    plot_roofline(rows[:1], out / "warm.png", per_op)  # font cache, imports: not per call
    pair_calls = [lambda r=r: plot_roofline([r], out / f"{r.workload}.png",
                                             [o for o in per_op if o.workload == r.workload and o.hardware == r.hardware])
                  for r in rows]
    print(f"plot_roofline, one pair:      {_mean_seconds(pair_calls, args.repeat):.3f} s/call over {len(rows)} rows")
    print(f"plot_roofline, all rows:      {_mean_seconds([lambda: plot_roofline(rows, out / 'all.png', per_op)], 3):.3f} s/call")

    graphs = [build_einsum_graph(pipeline.translate_source(pipeline.read_source(p), pipeline.default_cache_dir()).program)
              for p in args.paths]
    if graphs:
        graphs[0].draw_png(out / "warm-graph.png")
        graph_calls = [lambda g=g: g.draw_png(out / f"{g.program.name}-graph.png") for g in graphs]
        print(f"EinsumGraph.draw_png:         {_mean_seconds(graph_calls, args.repeat):.3f} s/call over "
              f"{len(graphs)} graphs ({', '.join(str(len(g.nodes)) for g in graphs)} nodes)")

    one = rows_to_frame(rows[:1])
    hundred = rows_to_frame([r.model_copy(update={"workload": f"{r.workload}_{i}"})
                             for i, r in zip(range(100), itertools.cycle(rows))])
    start = time.perf_counter()
    expectations.warm_up()  # what the CLI's preparation thread pays: the import, the context, one run
    print(f"expectations.warm_up:         {time.perf_counter() - start:.3f} s (once per process)")
    for label, frame in (("1-row", one), ("100-row", hundred)):
        start = time.perf_counter()
        expectations.bounds_table_failures(frame)
        expectations.validation_failures(expectations.validation_frame(frame))
        first = time.perf_counter() - start
        start = time.perf_counter()
        for _ in range(3):
            expectations.bounds_table_failures(frame)
            expectations.validation_failures(expectations.validation_frame(frame))
        print(f"two suites, {label:>7} table: first {first:.3f} s, then {(time.perf_counter() - start) / 3:.3f} s/call")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
