"""``solar headroom --profile TRACE WORKLOAD``: a torch.profiler trace of the user's own run joined
call by call with the workload's per-op SOL (``measure.op_join``).

It analyses the file (the chain, in a worker: the analysis runs the user's code) and reads the
trace (``measure.op_profile``), so it sits above both stages, beside ``cli``; the ``headroom``
parser is ``measure.headroom_cli``'s.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from solar_assets.measure.headroom_cli import EXIT_NOTHING, EXIT_OK, headroom_command


def headroom_main(args: argparse.Namespace) -> int:
    """``solar headroom``: a measurement file joined with a bounds file (``headroom_command``), or
    a trace joined op by op (``profile_command``); mixing the two is a usage error."""
    from solar_assets.errors import SolarError

    if args.profile is not None:
        if args.bounds or args.measurements:
            raise SolarError("give --profile TRACE WORKLOAD, or --bounds and --measurements, not both")
        if args.workload is None:
            raise SolarError(f"--profile {args.profile}: name the workload file it profiled after it "
                             "(solar headroom --profile TRACE.json WORKLOAD.py)")
        return profile_command(args)
    if args.bounds is None or args.measurements is None or args.workload is not None:
        raise SolarError("solar headroom takes --bounds FILE --measurements FILE, or --profile TRACE WORKLOAD")
    return headroom_command(args)

def profile_command(args: argparse.Namespace) -> int:
    """``solar headroom --profile TRACE WORKLOAD``: the workload analysed on the hardware (in a
    worker, as ``solar analyze`` runs a file), the trace read, and each call joined."""
    from solar_assets.errors import SolarError
    from solar_assets.measure.op_profile import profile_of, read_trace
    from solar_assets.report.measured_ops import format_measured_ops, write_measured_ops_csv

    from solar_assets.report.per_op import top_count

    top = top_count(str(args.per_op))
    trace = read_trace(args.profile)  # an unreadable trace is a usage error before any work
    profile = profile_of(trace, source=str(args.profile))
    hardware = args.hardware or trace_hardware(trace)
    from solar_assets.hardware import canonical_hardware_name, load_hardware

    hardware = canonical_hardware_name(hardware)
    load_hardware(hardware)  # a bad name is a usage error
    if not args.workload.is_file():
        raise SolarError(f"{args.workload}: no such workload file")
    joined = join_in_worker(args.workload, hardware, profile, label=f"profile {args.profile.name}")
    if args.csv:
        write_measured_ops_csv([joined], args.csv)
    if args.json:
        sys.stdout.write(json.dumps(joined.to_dict(), indent=1) + "\n")
    else:
        print(f"Per-op headroom of {args.profile} on {hardware} (each call: measured median / its per-op SOL; "
              "recoverable = measured − SOL)")
        print(format_measured_ops([joined], top=top))
    for r in joined.violations:
        print(f"solar: warning: {joined.workload} on {hardware}: {r.call}: {r.audit}", file=sys.stderr)
    if not joined.rows:
        print(f"solar: error: no call of {args.profile} joined an op of {args.workload}", file=sys.stderr)
        return EXIT_NOTHING
    return EXIT_OK


def trace_hardware(trace: dict) -> str:
    """The spec a trace's device is, from the GPU torch.profiler lists (``deviceProperties``:
    'NVIDIA H200' -> H200, as the GPU runner names its device: ``gpu_runner.guess_hardware``),
    else ``host`` for a CPU-only trace."""
    from solar_assets.errors import SolarError
    from solar_assets.measure.gpu_runner import guess_hardware

    devices = [str(d.get("name", "")) for d in trace.get("deviceProperties") or () if isinstance(d, dict)]
    if not devices:
        return "host"
    spec = guess_hardware(devices[0])
    if spec is None:
        raise SolarError(f"the trace ran on {devices[0]!r}, which names no hardware spec: give --hardware")
    return spec


def join_in_worker(workload: Path, hardware: str, profile, label: str):
    """The workload's per-op rows on ``hardware`` joined with ``profile``, computed in a worker
    (the analysis runs the user's file)."""
    from solar_assets.errors import SolarError
    from solar_assets.workers import run_in_workers

    [out] = run_in_workers([str(workload)], _join_task, _unfinished, None, jobs=1,
                           task_arg={"hardware": hardware, "profile": profile, "label": label})
    if isinstance(out, str):
        raise SolarError(out)
    return out


def _unfinished(path: str, message: str, seconds: float, last_event: str | None) -> str:
    return f"{path}: {message}"


def _join_task(path: str, cache_dir: str | None, arg: dict):
    from solar_assets.asset_compute.plain import analyze_workload
    from solar_assets.chain.run import Kept
    from solar_assets.measure.op_join import ir_calls, join_profile

    keep = Kept()
    result = analyze_workload(path, [arg["hardware"]], keep=keep, cache_aware=False)
    if result.error or not result.rows:
        return result.error or f"{path}: no bounds on {arg['hardware']}"
    row = result.rows[0]
    calls = ir_calls(keep.graph, [r for r in result.per_op if r.hardware == row.hardware])
    return join_profile(row.workload, row.hardware, arg["label"], calls, arg["profile"],
                        row.onchip_buffer_bytes, row.dram_bytes_per_s)
