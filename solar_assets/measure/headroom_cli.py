"""``solar headroom``: a measurement file (``gpu_runner``, any machine) joined with a bounds file
(``solar analyze --json``): headroom per mode and the violation audit.

    solar headroom --bounds BOUNDS.json --measurements MEAS.json [--hardware H200] [--json] [--csv FILE]

or a Chrome trace of the user's own run (``torch.profiler``'s ``export_chrome_trace``, a GPU run's
included) joined op by op with the per-op SOL of the workload file it profiled:

    solar headroom --profile TRACE.json WORKLOAD.py [--hardware H200] [--per-op N|all] [--json] [--csv FILE]

Exit status: 0 when some measurement joined a bounds row (violations are listed, and warned about
on stderr, as ``solar analyze`` does), 1 when none did, 2 for an unreadable file or a usage error.
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

EXIT_OK, EXIT_NOTHING = 0, 1


def add_headroom_parser(commands) -> argparse.ArgumentParser:
    """The ``headroom`` subcommand on ``solar``'s subparsers."""
    p = commands.add_parser("headroom", help="join a GPU measurement file with a bounds file: headroom and the "
                            "violation audit (docs/gpu_headroom.md)")
    p.add_argument("--bounds", type=Path, metavar="FILE",
                   help="what `solar analyze --json` wrote (a list of rows or a document with rows), or report.json")
    p.add_argument("--measurements", type=Path, metavar="FILE",
                   help="what solar_assets/measure/gpu_runner.py wrote")
    p.add_argument("--profile", type=Path, metavar="TRACE",
                   help="a Chrome trace torch.profiler wrote (export_chrome_trace; .json or .json.gz) of the workload "
                        "file given after it: joined op by op with its per-op SOL")
    p.add_argument("workload", nargs="?", type=Path, metavar="WORKLOAD",
                   help="with --profile: the workload file the trace profiled")
    p.add_argument("--per-op", default="10", metavar="N|all",
                   help="with --profile: the N calls with the most recoverable time (default 10), or all")
    p.add_argument("--hardware", metavar="NAME",
                   help="the spec the measured device is (e.g. H200; default: the measurement file's device.hardware)")
    p.add_argument("--json", action="store_true", help="print only the joined rows as JSON on stdout")
    p.add_argument("--csv", type=Path, metavar="FILE", help="also write the joined rows as CSV")
    p.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS, help="log more (-vv: debug)")
    return p


def write_csv(rows, path: Path) -> None:
    from solar_assets.measure.join import HeadroomRow

    names = list(HeadroomRow.__dataclass_fields__)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=names)
        writer.writeheader()
        for r in rows:
            writer.writerow(r.as_dict())


def headroom_command(args: argparse.Namespace) -> int:
    from solar_assets.measure.join import format_join, join_files

    result = join_files(args.bounds, args.measurements, args.hardware)
    if args.csv:
        write_csv(result.rows, args.csv)
    if args.json:
        sys.stdout.write(json.dumps(result.to_dict(), indent=1) + "\n")
    else:
        print(format_join(result))
    for r in result.violations:
        print(f"solar: warning: {r.workload} on {r.hardware}: {'; '.join(c for c in r.audit if 'VIOLATION' in c)}",
              file=sys.stderr)
    if not result.rows:
        print(f"solar: error: no measurement of {args.measurements} joined a bounds row of {args.bounds} on "
              f"{result.hardware}", file=sys.stderr)
        return EXIT_NOTHING
    return EXIT_OK
