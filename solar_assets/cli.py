"""``solar``: analyse workloads into SOL bounds, inspect hardware specs, open the Dagster UI.

    solar analyze PATH... [--hardware NAME ...] [--target-latency S] [--json] [--home DIR] [--no-dagster]
                  [--timeout S] [--memory-limit SIZE]
    solar coverage DIR... [--json] [--jobs N] [--timeout S] [--memory-limit SIZE] [--home DIR]
    solar hardware list | show NAME | detect [PATH]
    solar ui

Output contract: stdout carries the result (a table, or with ``--json`` only JSON); progress,
warnings and errors go to stderr. ``analyze``: exit status 0 when every workload produced
bounds, 1 when any failed (the others still complete). ``coverage`` is a report: 0 whatever
each workload did, 2 when there is no workload to report on. 2 for a usage error.
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from solar_assets import pipeline
from solar_assets.errors import SolarError
from solar_assets.workloads.source import workload_name

logger = logging.getLogger("solar")

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
TRANSLATORS = ("tracer", "agent", "auto")  # solar_assets.translate.agent.TRANSLATORS, without importing torch


class Progress:
    """``[3/6] multihead_attention: validate…`` on stderr; redrawn in place on a terminal."""

    def __init__(self, names: Sequence[str], stream=None, enabled: bool = True):
        self.index = {name: i + 1 for i, name in enumerate(names)}
        self.total = len(names)
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = enabled and self.stream.isatty()

    def __call__(self, workload: str, stage: str) -> None:
        if not self.enabled:
            return
        line = f"[{self.index.get(workload, '?')}/{self.total}] {workload}: {stage}…"
        if self.tty:
            self.stream.write("\r\033[K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def done(self) -> None:
        if self.tty:
            self.stream.write("\r\033[K")
            self.stream.flush()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="solar", description="Validated Speed-of-Light bounds for PyTorch workloads.")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more (-vv: debug)")
    commands = parser.add_subparsers(dest="command", required=True)

    analyze = commands.add_parser("analyze", help="trace, validate and bound workloads on hardware targets")
    analyze.add_argument("paths", nargs="+", metavar="PATH", help="workload files or directories of them")
    analyze.add_argument("--hardware", nargs="+", action="extend", metavar="NAME",
                         help=f"hardware spec names (default {pipeline.DEFAULT_HARDWARE[0]}); see `solar hardware list`")
    analyze.add_argument("--target-latency", type=float, metavar="SECONDS",
                         help="also compute the inverse roofline: peak FLOP/s and bandwidth needed for this latency")
    analyze.add_argument("--target-hz", type=float, metavar="HZ",
                         help="the inverse roofline for a rate: --target-hz 500 is --target-latency 0.002")
    analyze.add_argument("--project", action="store_true",
                         help="also bound on every shipped hardware spec: the cross-platform projection")
    analyze.add_argument("--measure", action="store_true",
                         help="run each workload on this host (caches flushed) for headroom and the violation "
                              "audit against --hardware host (added when missing)")
    analyze.add_argument("--backends", default="auto", metavar="LIST",
                         help="with --measure: comma-separated backends, first = default: auto (torch eager for "
                              "PyTorch files, jax.jit for JAX files), eager (torch eager / jax op-by-op), compile "
                              "(torch.compile / jax.jit; torch.compile is slow to compile on few cores)")
    analyze.add_argument("--runs", type=int, default=20, metavar="N",
                         help="with --measure: timed runs per backend after 3 warm-ups (default 20; fewer when a "
                              "backend's runs pass 20 s, never fewer than 5)")
    analyze.add_argument("--fp32-math", choices=("auto", "tf32", "ieee"), default="auto",
                         help="fp32 contractions on the TF32 tensor cores or the IEEE fp32 path; auto (default): "
                              "the fastest the framework's defaults allow for each op (TF32 for PyTorch convolutions "
                              "and JAX, IEEE for PyTorch matmuls unless the file enables TF32)")
    analyze.add_argument("--json", action="store_true", help="print only a JSON list of report rows on stdout")
    analyze.add_argument("--home", metavar="DIR", help="SOLAR_HOME (default $SOLAR_HOME or <repo>/data/solar_home)")
    analyze.add_argument("--no-dagster", action="store_true",
                         help="run the stages directly, without Dagster (same output; for debugging)")
    analyze.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")
    analyze.add_argument("--timeout", type=float, default=pipeline.DEFAULT_TIMEOUT_S, metavar="SECONDS",
                         help="time limit per workload, which runs in a worker process (default 600; 0: none)")
    analyze.add_argument("--memory-limit", default=None, metavar="SIZE",
                         help="resident-memory limit of a workload's worker: 75%% (of this machine's, the default), "
                              "8G, 512M, or 0 for none")
    analyze.add_argument("--framework", choices=("torch", "jax"),
                         help="the workloads' framework (default: detected from each file's imports)")
    analyze.add_argument("--translator", choices=TRANSLATORS, metavar="{tracer,agent,auto}",
                         help="tracer (default), agent (a chat model: SOLAR_LLM=provider:model), or auto "
                              "(the tracer; the agent only for what it cannot lower)")

    coverage = commands.add_parser("coverage", help="per workload: translated, validated, at what size, how closely")
    coverage.add_argument("paths", nargs="+", metavar="DIR", help="directories of workload files (or files)")
    coverage.add_argument("--json", action="store_true",
                          help="print only a JSON object on stdout: rows, counts and the summary line")
    coverage.add_argument("--home", metavar="DIR", help="SOLAR_HOME, whose cache/ is used (default as for analyze)")
    coverage.add_argument("--jobs", type=int, default=1, metavar="N",
                          help="worker processes (default 1; 0: check in this process, without time limits)")
    coverage.add_argument("--timeout", type=float, default=600.0, metavar="SECONDS",
                          help="time limit per workload in a worker process (default 600; 0: none)")
    coverage.add_argument("--memory-limit", default=None, metavar="SIZE",
                          help="resident-memory limit of each worker: 75%% (the default), 8G, 512M, or 0 for none")
    coverage.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")
    coverage.add_argument("--framework", choices=("torch", "jax"),
                          help="the workloads' framework (default: detected from each file's imports)")
    coverage.add_argument("--translator", choices=TRANSLATORS, metavar="{tracer,agent,auto}",
                          help="as for analyze (default tracer)")

    hardware = commands.add_parser("hardware", help="the hardware specs under hardware/")
    hw_commands = hardware.add_subparsers(dest="hw_command", required=True)
    hw_commands.add_parser("list", help="one line per spec")
    show = hw_commands.add_parser("show", help="every field of one spec")
    show.add_argument("name")
    detect = hw_commands.add_parser("detect", help="measure this machine and write the 'host' spec "
                                    "(docs/host_spec.md)")
    detect.add_argument("path", nargs="?", help="where to write it (default hardware/host.yaml; a directory or "
                                               "a .yaml file, whose stem becomes the spec's name)")
    detect.add_argument("--stream-mib", type=int, metavar="MIB",
                        help="STREAM array size in MiB (default 4 x the last-level cache, at least 64)")
    detect.add_argument("--no-gemm-check", action="store_true",
                        help="skip the fp32 GEMM that raises the clock when a turbo clock outruns the peak")

    ui = commands.add_parser("ui", help="the Dagster UI on solar's assets (dagster dev)")
    ui.add_argument("--home", metavar="DIR", help="SOLAR_HOME")
    ui.add_argument("--port", type=int, default=3000)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if getattr(args, "framework", None):  # read by pipeline.read_source, here and in worker processes
        os.environ["SOLAR_FRAMEWORK"] = args.framework
    logging.basicConfig(stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s",
                        level={0: logging.WARNING, 1: logging.INFO}.get(args.verbose, logging.DEBUG))
    try:
        if args.command == "analyze":
            return analyze(args)
        if args.command == "coverage":
            return coverage(args)
        if args.command == "hardware":
            return hardware(args)
        return ui(args)
    except SolarError as e:
        print(f"solar: error: {e}", file=sys.stderr)
        return EXIT_USAGE


# ---------------------------------------------------------------------------- analyze
def _use_home(home_arg: str | None) -> Path:
    """Resolve SOLAR_HOME and export it (and DAGSTER_HOME under it) for everything this run starts."""
    home = pipeline.solar_home(home_arg)
    os.environ["SOLAR_HOME"] = str(home)
    os.environ["DAGSTER_HOME"] = str(home / "dagster")
    return home


def _workload_paths(args_paths: Sequence[str]) -> tuple[list[Path], list[str]]:
    """Expand directories into ``*.py`` files. A missing path, a file that is not ``.py`` or a
    file that is not regular (a FIFO) or a second file with a name already seen (names are the
    report's workload column) is an error for that path."""
    from solar_assets.workloads import discover_workloads
    from solar_assets.workloads.source import is_regular_file

    paths, errors, seen = [], [], {}
    for raw in args_paths:
        if not Path(raw).exists():
            errors.append(f"{raw}: no such file or directory")
            continue
        found = discover_workloads(raw)
        if Path(raw).is_dir() and not found:
            errors.append(f"{raw}: no workload files (*.py) in this directory")
        for path in found:
            name = workload_name(path)
            if path.suffix != ".py":
                errors.append(f"{path}: not a Python file; a workload is a .py file defining Model, "
                              "get_inputs() and get_init_inputs()")
            elif not is_regular_file(path):
                errors.append(f"{path}: not a regular file (a FIFO, device or directory); a workload is a .py file")
            elif name in seen:
                errors.append(f"{path}: workload name {name!r} is already taken by {seen[name]}; "
                              "workloads are named by file stem")
            else:
                seen[name] = path
                paths.append(path)
    return paths, errors


def _use_translator(translator: str | None) -> None:
    """Export ``--translator`` (as ``$SOLAR_TRANSLATOR``) for the assets and workers this run starts;
    ``agent`` without a configured chat model is a usage error, before any work."""
    if translator is None:
        return
    os.environ["SOLAR_TRANSLATOR"] = translator
    if translator == "agent":
        from solar_assets.translate.agent import agent_settings

        agent_settings()  # raises AgentNotConfigured, one line: which variable to set


def analyze(args: argparse.Namespace) -> int:
    from solar_assets.hardware import load_hardware
    from solar_assets.report import format_table, write_report

    home = _use_home(args.home)
    hardware_names = _analyze_hardware(args)
    for name in hardware_names:
        load_hardware(name)  # a bad name or spec is a usage error, before any work
    if args.target_hz is not None:
        if args.target_latency is not None:
            raise SolarError("give --target-latency or --target-hz, not both")
        if not args.target_hz > 0:
            raise SolarError(f"--target-hz must be a positive rate, got {args.target_hz}")
        args.target_latency = 1.0 / args.target_hz
    if args.target_latency is not None and not args.target_latency > 0:
        raise SolarError(f"--target-latency must be positive seconds, got {args.target_latency}")
    measure = _measure_options(args)
    limits = _worker_limits(args)
    _use_translator(args.translator)
    os.environ["SOLAR_FP32_MATH"] = args.fp32_math  # the Dagster assets read it (pipeline.bound_graph)
    paths, input_errors = _workload_paths(args.paths)
    progress = Progress([workload_name(p) for p in paths], enabled=not args.no_progress)
    notes: list[str] = []
    if args.no_dagster:
        results, rows = _analyze_plain(paths, hardware_names, args, measure, home, limits, progress, input_errors)
    else:
        from solar_assets.assets.runner import DagsterStorageError, analyze_with_dagster

        checks: list = []
        try:
            results, rows = analyze_with_dagster(paths, hardware_names, args.target_latency, home,
                                                 failures=input_errors, on_stage=progress, measure=measure,
                                                 checks=checks, **limits)
            _print_checks(checks)
        except DagsterStorageError as e:  # the rows still land: the same stages without Dagster
            progress.done()
            print(f"solar: error: {e}", file=sys.stderr)
            notes.append(str(e))
            results, rows = _analyze_plain(paths, hardware_names, args, measure, home, limits, progress,
                                           [*input_errors, str(e)])
    progress.done()
    errors = input_errors + notes + [r.error for r in results if r.error]
    for error in errors:
        if error not in notes:  # printed when it happened
            print(f"solar: error: {error}", file=sys.stderr)
    if args.json:
        from solar_assets.report.writers import rows_as_json

        sys.stdout.write(rows_as_json(rows))
    else:
        bounded = sum(1 for r in results if r.ok)
        print(format_table(rows) if rows else "no workload produced bounds")
        _print_measured(rows, hardware_names)
        print(f"\n{bounded}/{bounded + len(errors) - len(notes)} workloads bounded on {', '.join(hardware_names)}; "
              f"report: {pipeline.reports_dir(home)}/{{report.csv, report.json, report.md, report_roofline.png, "
              "skislope/<workload>.{csv,png}}")
    _print_charts(rows, home, quiet=args.json)
    return EXIT_FAILED if errors else EXIT_OK


def _worker_limits(args: argparse.Namespace) -> dict[str, float | int | None]:
    """``--timeout`` and ``--memory-limit`` as ``run_in_workers`` takes them (None: no limit)."""
    from solar_assets.workers import parse_memory_limit

    if args.timeout < 0:
        raise SolarError(f"--timeout must not be negative, got {args.timeout:g}")
    return {"timeout_s": args.timeout or None, "memory_limit_bytes": parse_memory_limit(args.memory_limit)}


def _analyze_plain(paths, hardware_names, args, measure, home: Path, limits, progress, errors):
    """Every workload through the stages without Dagster, one worker process at a time; the report
    files are written with the rows that landed."""
    from solar_assets.report import write_report

    results = pipeline.analyze_in_workers(paths, hardware_names, target_latency_s=args.target_latency,
                                          cache_dir=home / "cache", measure=measure, translator=args.translator,
                                          ski_slope_dir=pipeline.reports_dir(home) / "skislope", on_stage=progress,
                                          **limits)
    rows = [row for r in results for row in r.rows]
    write_report(rows, pipeline.reports_dir(home), errors=[*errors, *(r.error for r in results if r.error)])
    return results, rows


def _analyze_hardware(args: argparse.Namespace) -> list[str]:
    """The hardware asked for, plus every shipped spec with --project and ``host`` with --measure;
    ``host.yaml`` is detected on first use."""
    from solar_assets.hardware.detect import HOST_NAME, ensure_host_spec

    names = list(args.hardware or pipeline.DEFAULT_HARDWARE)
    if args.measure and HOST_NAME not in names:
        print(f"solar: note: --measure runs on this machine; adding --hardware {HOST_NAME} to compare with "
              "its bounds", file=sys.stderr)
        names.append(HOST_NAME)
    if args.project:  # every shipped spec that loads; a bad one fails only itself, named
        from solar_assets.hardware import load_all_hardware

        good, bad = load_all_hardware()
        names += [s.name for s in good if s.name != HOST_NAME]
        for line in bad:
            print(f"solar: error: {line}", file=sys.stderr)
    names = list(dict.fromkeys(names))
    if HOST_NAME in names:
        ensure_host_spec()
    return names


def _measure_options(args: argparse.Namespace):
    if not args.measure:
        return None
    from solar_assets.measure import MeasureOptions, TimingOptions, parse_backends

    if args.runs < 1:
        raise SolarError(f"--runs must be at least 1, got {args.runs}")
    return MeasureOptions(backends=parse_backends(args.backends),
                          timing=TimingOptions(runs=args.runs, min_runs=min(5, args.runs)))


def _print_checks(evaluations) -> None:
    """What the report's asset checks said (stderr: stdout carries the result), one line each,
    with the failed expectations under a failing one."""
    for evaluation in evaluations:
        verdict = "passed" if evaluation.passed else "FAILED"
        text = (evaluation.description or "").strip().splitlines()
        print(f"solar: check {evaluation.check_name}: {verdict}" + (f": {text[0]}" if text else ""), file=sys.stderr)
        for line in text[1:] if not evaluation.passed else ():
            print(f"  {line}", file=sys.stderr)


def _print_measured(rows, hardware_names: Sequence[str]) -> None:
    """The headroom table and the audit (after the bounds table), and the projection when several
    hardware were asked for."""
    from solar_assets.report import audit_lines, format_headroom_table, format_projection
    from solar_assets.report.headroom import measured_rows

    if measured_rows(rows):
        print("\nHeadroom on this host (measured median / SOL; audit: fastest run against each bound)")
        print(format_headroom_table(rows))
        lines = audit_lines(rows)
        print(f"\n{sum(r.violation for r in rows)} violation(s) of a true lower bound" + (":" if lines else "."))
        for line in lines:
            print(f"  {line}")
    if len(hardware_names) > 1 and rows:
        print("\nCross-platform projection")
        print(format_projection(rows))


def _print_charts(rows, home: Path, quiet: bool) -> None:
    """The chart paths (stderr under --json), and each violation as a warning on stderr."""
    from solar_assets.report import report_pngs

    charts = report_pngs(pipeline.reports_dir(home))
    if charts and not quiet:
        print("charts: " + ", ".join(str(p) for p in charts.values()))
    for row in rows:
        if row.violation:
            print(f"solar: warning: {row.workload} on {row.hardware}: {row.violation_detail}", file=sys.stderr)


# ---------------------------------------------------------------------------- coverage
def coverage(args: argparse.Namespace) -> int:
    """Translate and validate every workload (no graph, no bounds) and report each one's status."""
    from solar_assets.coverage import coverage_json, coverage_summary, format_coverage, run_coverage

    home = _use_home(args.home)
    _use_translator(args.translator)
    paths, input_errors = _workload_paths(args.paths)
    for error in input_errors:
        print(f"solar: error: {error}", file=sys.stderr)
    if not paths:
        raise SolarError(f"no workload files in {', '.join(args.paths)}")
    if args.jobs < 0 or args.timeout < 0:
        raise SolarError("--jobs and --timeout must not be negative")

    def progress(index: int, row) -> None:
        if not args.no_progress:
            status = f"translated {'✓' if row.translated else '✗'}, validated {'✓' if row.validated else '✗'}"
            print(f"[{index + 1}/{len(paths)}] {row.workload}: {status} ({row.seconds:.1f} s)", file=sys.stderr,
                  flush=True)

    from solar_assets.workers import parse_memory_limit

    rows = run_coverage(paths, home / "cache", jobs=args.jobs, timeout_s=args.timeout or None,
                        memory_limit_bytes=parse_memory_limit(args.memory_limit), on_row=progress)
    if args.json:
        sys.stdout.write(coverage_json(rows))
        print(coverage_summary(rows), file=sys.stderr)
    else:
        print(format_coverage(rows))
    return EXIT_OK


# ---------------------------------------------------------------------------- hardware, ui
def hardware(args: argparse.Namespace) -> int:
    from solar_assets.hardware import load_all_hardware, load_hardware
    from solar_assets.report import format_bytes, format_count

    if args.hw_command == "list":
        specs, bad = load_all_hardware()  # a bad spec fails only itself: one line each, below
        rows = [("name", "vendor", "fp32", "bf16", "DRAM bw", "on-chip buffer")]
        for s in specs:
            peak = lambda d: format_count(s.peak_flop_per_s[d], "FLOP/s") if d in s.peak_flop_per_s else "-"  # noqa: E731
            rows.append((s.name, s.vendor, peak("fp32"), peak("bf16"), format_count(s.dram_bytes_per_s, "B/s"),
                         format_bytes(s.onchip_buffer_bytes)))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for r in rows:
            print("  ".join(f"{c:<{w}}" for c, w in zip(r, widths)).rstrip())
        for line in bad:
            print(f"solar: error: {line}", file=sys.stderr)
        return EXIT_FAILED if bad else EXIT_OK
    if args.hw_command == "detect":
        from solar_assets.hardware.detect import write_host_spec

        kwargs = {"check_gemm": not args.no_gemm_check}
        if args.stream_mib is not None:
            if args.stream_mib < 1:
                raise SolarError(f"--stream-mib must be positive, got {args.stream_mib}")
            kwargs["stream_array_bytes"] = args.stream_mib * 2**20
        print("measuring this machine (STREAM and a GEMM, a few seconds)…", file=sys.stderr)
        path, spec = write_host_spec(args.path, **kwargs)
        print(f"wrote {path}")
    else:
        spec = load_hardware(args.name)
    print(f"{spec.name} ({spec.vendor}), digest {spec.digest()}")
    print(f"  {spec.description}")
    for field, peak in spec.peak_flop_per_s.items():  # "matrix.bf16"
        unit, dtype = field.split(".")
        print(f"  peak {dtype:<5} {unit:<6} {peak:.4g} FLOP/s")
    print(f"  DRAM bandwidth      {spec.dram_bytes_per_s:.4g} bytes/s")
    print(f"  DRAM capacity       {spec.dram_capacity_bytes} bytes ({format_bytes(spec.dram_capacity_bytes)})")
    print(f"  on-chip buffer      {spec.onchip_buffer_bytes} bytes ({format_bytes(spec.onchip_buffer_bytes)})")
    if spec.onchip_bytes_per_s:
        print(f"  on-chip bandwidth   {spec.onchip_bytes_per_s:.4g} bytes/s")
    if spec.clock_hz:
        print(f"  clock               {spec.clock_hz:.4g} Hz")
    print("  sources:")
    for source in spec.sources:
        print(f"    - {source}")
    return EXIT_OK


def ui(args: argparse.Namespace) -> int:
    """``dagster dev`` on workspace.yaml with DAGSTER_HOME under SOLAR_HOME, stopped with its
    children within seconds on SIGTERM / SIGINT.

    Why not ``exec``: started in the background (``solar ui &``) a process inherits SIGINT
    ignored, and ``dagster dev`` then shuts down only after its own ~60 s grace, leaving the
    webserver and daemon behind. So ``dagster dev`` runs in its own process group with the
    default dispositions restored (``env --default-signal``, as STACK.md notes); this process
    forwards TERM / INT to that group, waits a few seconds, then kills whatever is left in it."""
    import shutil
    import subprocess
    import time

    from solar_assets.assets.runner import prepare_ui_instance

    home = _use_home(args.home)
    prepare_ui_instance(home)  # partitions registered and files observed before the UI opens
    dagster = Path(sys.executable).with_name("dagster")
    workspace = pipeline.REPO_ROOT / "workspace.yaml"
    command = [str(dagster), "dev", "-w", str(workspace), "-h", "127.0.0.1", "-p", str(args.port)]
    env_tool = shutil.which("env")
    if env_tool:
        command = [env_tool, "--default-signal=INT,TERM", *command]
    child = subprocess.Popen(command, start_new_session=True,
                             preexec_fn=lambda: [signal.signal(s, signal.SIG_DFL) for s in UI_SIGNALS])
    stopping: list[int] = []

    def forward(signum: int, _frame) -> None:
        stopping.append(signum)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGTERM)

    for signum in UI_SIGNALS:
        signal.signal(signum, forward)
    logger.debug("dagster dev started as process group %d", child.pid)
    while child.poll() is None and not stopping:
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=0.5)
    deadline = time.monotonic() + UI_GRACE_S
    while child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    logger.info("dagster dev %s; stopping what is left of its process group",
                "exited" if child.poll() is not None else f"still running after {UI_GRACE_S:g} s")
    # the group outlives its leader when a child ignores TERM: kill what remains
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)
    child.wait()
    code = 128 + stopping[0] if stopping else (child.returncode if child.returncode >= 0 else 128 - child.returncode)
    # Nothing is left to finalise, and tearing down the imported torch / Dagster modules takes
    # seconds on a busy machine: leave now, so the whole stop stays within 5 s.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


UI_SIGNALS = (signal.SIGTERM, signal.SIGINT)
UI_GRACE_S = 3.0  # TERM to KILL of dagster dev's group: the whole stop stays under 5 s


if __name__ == "__main__":
    sys.exit(main())
