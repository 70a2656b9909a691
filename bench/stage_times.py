"""Time each stage of the pipeline on every shipped workload (no caches, no Dagster).

    python bench/stage_times.py [PATH ...] [--hardware NAME ...]

Prints one line per workload: trace, size (choosing the validation size), golden, validate, graph, bounds and the total, in
seconds (numba compiles count: they are part of a cold run), then the column totals. Uses ``solar_assets.pipeline.analyze_workload``, the same
code the CLI and the assets run.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from solar_assets import pipeline
from solar_assets.workloads import discover_workloads

REPO = Path(__file__).resolve().parents[1]


def _warm_up() -> None:
    """Import the stage packages first, so the first workload's times are not one-time imports."""
    import solar_assets.bounds  # noqa: F401
    import solar_assets.golden  # noqa: F401
    import solar_assets.graph  # noqa: F401
    import solar_assets.translate  # noqa: F401
    import solar_assets.validate  # noqa: F401


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=[str(REPO / "data" / "workloads")])
    parser.add_argument("--hardware", nargs="+", default=list(pipeline.DEFAULT_HARDWARE))
    args = parser.parse_args(argv)

    _warm_up()
    columns = (*pipeline.STAGES, "total")
    name_width = max([len("workload"), *(len(p.stem) for p in discover_workloads(*args.paths))])
    print(f"{'workload':<{name_width}}  " + "  ".join(f"{c:>11}" for c in columns))
    totals = dict.fromkeys(columns, 0.0)
    failed = 0
    for path in discover_workloads(*args.paths):
        result = pipeline.analyze_workload(path, args.hardware, cache_dir=None)
        times = {**{s: result.seconds.get(s, 0.0) for s in pipeline.STAGES}, "total": result.total_s}
        for c in columns:
            totals[c] += times[c]
        cells = "  ".join(f"{times[c]:>11.3f}" if c in result.seconds or c == "total" else f"{'-':>11}"
                          for c in columns)
        print(f"{result.workload:<{name_width}}  {cells}" + (f"  FAILED at {result.failed_stage}" if result.error else ""),
              flush=True)
        if result.error:
            failed += 1
            print(f"  {result.error}", file=sys.stderr)
    print(f"{'total':<{name_width}}  " + "  ".join(f"{totals[c]:>11.3f}" for c in columns))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
