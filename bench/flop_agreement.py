"""solar's MACs next to FlopCounterMode's FLOPs for every workload in a directory.

    python bench/flop_agreement.py [DIR ...]     (default data/zoo)

One line per file: FlopCounterMode's FLOPs for one forward on the meta device (shapes only),
2 × solar's MACs from the full-size IR, and the verdict — ``agree``, ``differs`` with the reason
per op (``coverage.flop_reference.difference_reasons``; docs/flop_agreement.md), or ``no IR`` with
the tracer's error (an op it cannot lower is named, never counted as zero). The last line counts each verdict. Tracing only: no golden run,
no validation.
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from solar_assets.coverage.flop_reference import difference_reasons, flop_counter_flops, solar_graph
from solar_assets.errors import SolarError
from solar_assets.workloads import discover_workloads

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=[str(REPO / "data" / "zoo")])
    args = parser.parse_args(argv)
    paths = discover_workloads(*args.paths)
    width = max([len("workload"), *(len(p.stem) for p in paths)])
    print(f"{'workload':<{width}}  {'FlopCounterMode':>16}  {'2 x solar MACs':>16}  verdict")
    verdicts: Counter[str] = Counter()
    for path in paths:
        try:
            flops, per_op = flop_counter_flops(path)
        except Exception as e:  # a model that does not run on the meta device: say so, go on
            flops, per_op = None, {"error": f"{type(e).__name__}: {e}"}
        graph = None
        try:
            graph = solar_graph(path)
            twice_macs, note = 2 * int(graph.macs), ""
        except SolarError as e:
            twice_macs, note = None, str(e).splitlines()[0]
        if twice_macs is None:
            verdict = f"no IR: {note}"
        elif flops is None:
            verdict = f"no FlopCounterMode count: {per_op['error']}"
        else:
            verdict = "agree" if flops == twice_macs else \
                f"differs: {'; '.join(difference_reasons(graph, per_op)) or 'unexplained'}"
        verdicts[verdict.split(":")[0]] += 1
        cells = [f"{'-' if v is None else v:>16}" for v in (flops, twice_macs)]
        print(f"{path.stem:<{width}}  {'  '.join(cells)}  {verdict}", flush=True)
    print(", ".join(f"{n} {v}" for v, n in sorted(verdicts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
