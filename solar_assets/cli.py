"""``solar``: analyse workloads into SOL bounds, inspect hardware specs, open the Dagster UI.

    solar analyze PATH... [--hardware NAME ...] [--target-latency S] [--json] [--home DIR] [--no-dagster]
                  [--timeout S] [--memory-limit SIZE]
    solar coverage DIR... [--json] [--jobs N] [--timeout S] [--memory-limit SIZE] [--home DIR]
    solar hardware list | show NAME | detect [PATH]
    solar headroom --bounds FILE --measurements FILE [--hardware NAME] [--json] [--csv FILE]
    solar headroom --profile TRACE.json WORKLOAD.py [--hardware NAME] [--per-op N|all] [--json] [--csv FILE]
    solar ui

Output contract: stdout carries the result (a table, or with ``--json`` only JSON); progress,
warnings and errors go to stderr. ``analyze``: exit status 0 when every workload produced
bounds, 1 when any failed (the others still complete). ``coverage`` is a report: 0 whatever
each workload did, 2 when there is no workload to report on. 2 for a usage error.
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from solar_assets import pipeline
from solar_assets.cache_limit import cache_limit
from solar_assets.errors import SolarError
from solar_assets.workloads.source import workload_name

if TYPE_CHECKING:
    from solar_assets.dagster_defs.runner import ScaleOut

logger = logging.getLogger("solar")

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130  # as a shell reports a process ended by SIGINT

TRANSLATORS = ("tracer", "agent", "auto")  # solar_assets.agent.TRANSLATORS, without importing torch


class Progress:
    """Progress on stderr: per workload its stage and the seconds since its first, overall the
    count of finished files, the elapsed time and the ETA. On a terminal a tqdm bar redrawn in
    place (a line per finished workload above it); elsewhere (a log, a pipe) one line per stage:
    ``[3/6] multihead_attention: validate… (0.4 s; overall 12 s, ETA 14 s)``. A trace at a smaller
    size says why it runs: ``trace at validation size BATCH_SIZE=3``.

    A file counts as finished when its result lands (the stage ``progress.FINISHED``), not when
    another file's stage is announced: with two workers their stages interleave, and counting
    the switches once made ``[70/270] … ETA -00:14`` of a 25-minute run. The ETA is the files
    left at the rate files finished so far; until one has, the line says so. With ``expected``
    (a file's estimated seconds, ``workers.order``) the files are weighed by it: workers take
    the costliest files first, so counting files made a cold KernelBench run's ETA 2 h 42 min
    after 5 minutes of a 28-minute run. A file answered by its record (``progress.UNCHANGED``)
    did no work and is left out of the ETA. A stage announced again for the same file (a cached
    step that re-enters it) is not printed again."""

    def __init__(self, names: Sequence[str], stream=None, enabled: bool = True,
                 expected: Sequence[float] | Callable[[], Sequence[float]] | None = None):
        self.index = {name: i + 1 for i, name in enumerate(names)}
        self.names = list(names)
        self._expected = expected  # a callable: asked at the first ETA after a file did work (a warm call never asks)
        self.total = len(names)
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = enabled and self.stream.isatty()
        self.start = time.perf_counter()
        self.began: dict[str, float] = {}  # each file's first stage
        self.seen: dict[str, set[str]] = {}
        self.done_files: set[str] = set()
        self.unchanged: set[str] = set()
        self.bar = None
        if self.tty:
            from tqdm import tqdm

            self.bar = tqdm(total=self.total, file=self.stream, unit="workload", dynamic_ncols=True, leave=False,
                            bar_format="{n_fmt}/{total_fmt} workloads |{bar:20}| {elapsed} elapsed, ETA {remaining}"
                                       " · {desc}")

    @property
    def finished(self) -> int:
        return len(self.done_files)

    @functools.cached_property
    def weight(self) -> dict[str, float]:
        """Each file's expected seconds (empty without ``expected``)."""
        expected = self._expected() if callable(self._expected) else self._expected
        if expected is None or len(expected) != len(self.names):
            return {}
        return dict(zip(self.names, expected))

    def __call__(self, workload: str, stage: str) -> None:
        if not self.enabled:
            return
        from solar_assets.progress import FINISHED, UNCHANGED

        now = time.perf_counter()
        if stage == FINISHED:
            self._finish(workload, now)
            return
        if stage == UNCHANGED:  # no work: neither a rate nor a file left
            self.unchanged.add(workload)
        began = self.began.setdefault(workload, now)
        stage = describe_stage(stage)
        if stage in self.seen.setdefault(workload, set()):
            return
        self.seen[workload].add(stage)
        if self.bar is not None:
            self.bar.set_description_str(f"{workload}: {stage}… ({now - began:.1f} s)")
            return
        self.stream.write(f"[{self.index.get(workload, '?')}/{self.total}] {workload}: {stage}… "
                          f"({now - began:.1f} s; overall {_interval(now - self.start)}{self.eta(now)})\n")
        self.stream.flush()

    def eta(self, now: float) -> str:
        """``, ETA 03:27`` from the rate files finished at so far, or why there is none yet."""
        worked = self.done_files - self.unchanged
        if not worked:
            return ", ETA after the first file"
        done = sum(self.weight.get(name, 0.0) for name in worked)
        if done > 0:
            left = sum(w for name, w in self.weight.items() if name not in self.done_files and name not in self.unchanged)
            return f", ETA {_interval((now - self.start) / done * left)}"
        left = max(0, self.total - len(self.done_files | self.unchanged))
        return f", ETA {_interval((now - self.start) / len(worked) * left)}"

    def _finish(self, workload: str, now: float) -> None:
        if workload in self.done_files:
            return
        self.done_files.add(workload)
        if self.bar is not None:
            seconds = now - self.began.get(workload, now)
            self.bar.write(f"[{self.index.get(workload, '?')}/{self.total}] {workload}: {seconds:.1f} s",
                           file=self.stream)
            self.bar.update(1)

    def done(self) -> None:
        if self.enabled and self.bar is not None:
            self.bar.close()


def describe_stage(stage: str) -> str:
    """A stage as the progress line shows it: a trace or golden run at rebound constants is one at
    the validation size (``trace at validation size BATCH_SIZE=3``)."""
    for what in ("trace at ", "golden at "):
        if stage.startswith(what) and "validation size" not in stage:
            return f"{what}validation size {stage[len(what):]}"
    return stage


def _interval(seconds: float) -> str:
    from tqdm import tqdm

    return tqdm.format_interval(seconds)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="solar", description="Validated Speed-of-Light bounds for PyTorch workloads.")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more (-vv: debug)")
    parser.add_argument("--version", action="version", version=f"solar {_version()}")
    commands = parser.add_subparsers(dest="command", required=True)

    analyze = commands.add_parser("analyze", help="trace, validate and bound workloads on hardware targets")
    analyze.add_argument("paths", nargs="*", metavar="PATH", help="workload files or directories of them")
    analyze.add_argument("--hardware", nargs="+", action="extend", metavar="NAME",
                         help=f"hardware spec names, case-insensitive, space- or comma-separated or the flag "
                              f"repeated; a value naming a workload file or directory is taken as a path "
                              f"(default {pipeline.DEFAULT_HARDWARE[0]}); see `solar hardware list`")
    analyze.add_argument("--target-latency", type=float, metavar="SECONDS",
                         help="also compute the inverse roofline: peak FLOP/s and bandwidth needed for this latency")
    analyze.add_argument("--target-hz", type=float, metavar="HZ",
                         help="the inverse roofline for a rate: --target-hz 500 is --target-latency 0.002")
    analyze.add_argument("--ski-slope", action="store_true",
                         help="also write each workload's ski-slope (least DRAM traffic against buffer size, "
                              "64 KiB to 1 GiB) to <report>/skislope/<workload>.{csv,png}: a sweep of "
                              "cache-aware solves, left out unless asked (or materialised in the UI)")
    analyze.add_argument("--pictures", action="store_true",
                         help="also draw each workload's einsum graph and each pair's roofline into the Dagster "
                              "UI's metadata (the report's charts are drawn either way; the UI draws them when "
                              "it materialises a partition)")
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
    analyze.add_argument("--json", action="store_true",
                         help="print only the report document on stdout (report.json: rows, failures, per-op rows)")
    analyze.add_argument("--home", metavar="DIR", help="SOLAR_HOME (default $SOLAR_HOME or <repo>/data/solar_home)")
    analyze.add_argument("--no-dagster", action="store_true",
                         help="run the stages directly, without Dagster (same output; for debugging)")
    analyze.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")
    analyze.add_argument("--jobs", type=int, default=1, metavar="N",
                         help="worker processes side by side (default 1; each file still alone in its worker); "
                              "with --executor dask and no --dask-scheduler: the local cluster's workers")
    analyze.add_argument("--executor", choices=("in_process", "dask"), default="in_process",
                         help="the call's run: one step on this machine (default), or one step per file on "
                              "Dagster's Dask executor (dagster-dask; docs/scale_out.md)")
    analyze.add_argument("--dask-scheduler", metavar="ADDRESS",
                         help="with --executor dask: an existing scheduler (tcp://host:8786) whose workers see "
                              "this SOLAR_HOME; default: a local cluster of --jobs worker processes")
    analyze.add_argument("--timeout", type=float, default=pipeline.DEFAULT_TIMEOUT_S, metavar="SECONDS",
                         help="time limit per workload, which runs in a worker process (default 600; 0: none)")
    analyze.add_argument("--memory-limit", default=None, metavar="SIZE",
                         help="resident-memory limit of a workload's worker: 75%% (of this machine's, the default), "
                              "8G, 512M, or 0 for none")
    analyze.add_argument("--fresh-workers", action="store_true",
                         help="a fresh worker process for each file, discarded after it (about 5 s more per file): "
                              "nothing a file leaves in its process can reach the next one")
    analyze.add_argument("--framework", choices=("torch", "jax"),
                         help="the workloads' framework (default: detected from each file's imports)")
    analyze.add_argument("--translator", choices=TRANSLATORS, metavar="{tracer,agent,auto}",
                         help="tracer (default), agent (a chat model: SOLAR_LLM=provider:model), or auto "
                              "(the tracer; the agent only for what it cannot lower)")
    _add_train_options(analyze)
    _add_output_options(analyze)

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
    coverage.add_argument("--fresh-workers", action="store_true", help="as for analyze")
    coverage.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")
    coverage.add_argument("--framework", choices=("torch", "jax"),
                          help="the workloads' framework (default: detected from each file's imports)")
    coverage.add_argument("--translator", choices=TRANSLATORS, metavar="{tracer,agent,auto}",
                          help="as for analyze (default tracer)")
    _add_train_options(coverage)

    hardware = commands.add_parser("hardware", help="the hardware specs under hardware/")
    hw_commands = hardware.add_subparsers(dest="hw_command", required=True)
    hw_list = hw_commands.add_parser("list", help="one line per spec")
    show = hw_commands.add_parser("show", help="every field of one spec")
    show.add_argument("name")
    detect = hw_commands.add_parser("detect", help="measure this machine and write the 'host' spec "
                                    "(docs/host_spec.md)")
    detect.add_argument("path", nargs="?", help="where to write it (default $SOLAR_HARDWARE_DIR/host.yaml, else "
                                               "$SOLAR_HOME/hardware/host.yaml; a directory or "
                                               "a .yaml file, whose stem becomes the spec's name)")
    detect.add_argument("--stream-mib", type=int, metavar="MIB",
                        help="STREAM array size in MiB (default 4 x the last-level cache, at least 64)")
    detect.add_argument("--no-gemm-check", action="store_true",
                        help="skip the fp32 GEMM that raises the clock when a turbo clock outruns the peak")

    ui = commands.add_parser("ui", help="the Dagster UI on solar's assets (dagster dev)")
    ui.add_argument("--home", metavar="DIR", help="SOLAR_HOME")
    ui.add_argument("--port", type=int, default=3000)
    from solar_assets.measure.headroom_cli import add_headroom_parser

    add_headroom_parser(commands)  # solar headroom: a GPU measurement file joined with a bounds file
    for sub in (analyze, coverage, hardware, hw_list, show, detect, ui):  # `solar analyze -v …` as well as `solar -v …`
        sub.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS, help="log more (-vv: debug)")
    return parser


def _add_train_options(parser: argparse.ArgumentParser) -> None:
    from solar_assets.workloads.training import LOSSES, OPTIMIZERS

    parser.add_argument("--train", action="store_true",
                        help="one training step instead of one forward pass: forward, loss, backward to every "
                             "trainable parameter (without one: to the floating-point inputs) and the optimizer "
                             "update (docs/training.md); rows are named stem[train]")
    parser.add_argument("--optimizer", choices=OPTIMIZERS, default=None,
                        help="with --train: adamw (default; fp32 master weights for bf16/fp16 parameters), sgd "
                             "(momentum 0.9) or none (forward and backward only)")
    parser.add_argument("--loss", choices=LOSSES, default=None,
                        help="with --train: auto (default: the file's loss(outputs) where it defines one, else "
                             "sum), sum (every floating-point output element, in float32) or mean")


def _use_train(args: argparse.Namespace) -> None:
    """Export ``--train`` (as ``$SOLAR_TRAIN``, ``chain.config.TRAIN_ENV``) for the assets and workers
    this run starts; ``--optimizer`` or ``--loss`` without ``--train`` is a usage error."""
    from solar_assets.chain.config import TRAIN_ENV
    from solar_assets.workloads.training import TrainSpec

    if not args.train:
        if args.optimizer or args.loss:
            raise SolarError("--optimizer and --loss describe a training step: add --train")
        os.environ.pop(TRAIN_ENV, None)
        return
    os.environ[TRAIN_ENV] = TrainSpec(optimizer=args.optimizer or "adamw", loss=args.loss or "auto").to_text()


def _run_names(paths: Sequence[Path]) -> list[str]:
    """The workloads' names as this run's rows give them (``stem[train]`` with ``--train``)."""
    from solar_assets.chain.run import run_name

    return [run_name(p) for p in paths]


def _expected_seconds(paths: Sequence[Path], home: Path) -> list[float]:
    """Each file's estimated seconds (``workers.order``: what the last call took, else a guess
    from its source), weighing the files in the ETA."""
    from solar_assets.workers.order import estimate_seconds, load_durations

    recorded = load_durations(home / "cache")
    return [estimate_seconds(p, recorded) for p in paths]


def main(argv: Sequence[str] | None = None) -> int:
    """The ``solar`` command on ``argv``; returns the exit status. Called as the command itself
    (``argv`` None: the console script, ``python -m solar``), the process ends as soon as the work
    is done (``exit_now``)."""
    code = _main(argv)
    if argv is None:
        exit_now(code)
    return code


def exit_now(code: int) -> None:
    """End the process with ``code``: the atexit handlers run and the streams are flushed, but not
    the interpreter's teardown, which freed every module's objects for ~1.2 s after a Dagster
    call (Dagster, great-expectations and pandas loaded) and ~0.2 s after a plain one."""
    import atexit

    atexit._run_exitfuncs()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _main(argv: Sequence[str] | None) -> int:
    HOME_FAULTS.clear()
    args = _parse_args(argv)
    if getattr(args, "framework", None):  # read by pipeline.read_source, here and in worker processes
        os.environ["SOLAR_FRAMEWORK"] = args.framework
    configure_logging(args.verbose)
    try:
        if args.command == "analyze":
            return analyze(args)
        if args.command == "coverage":
            return coverage(args)
        if args.command == "hardware":
            return hardware(args)
        if args.command == "headroom":
            from solar_assets.headroom_profile import headroom_main

            return headroom_main(args)
        return ui(args)
    except SolarError as e:
        print(f"solar: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:  # Ctrl-C, kill, timeout: the workers are stopped on the way out
        print("solar: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


# ---------------------------------------------------------------------------- argument conventions
def configure_logging(verbose: int) -> None:
    """-v: INFO, -vv: DEBUG for solar's own loggers only; third-party libraries stay at WARNING so
    ``-vv`` is not a flood of matplotlib font-manager or numba compiler lines."""
    level = {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
    from solar_assets.logconf import apply_levels

    logging.basicConfig(stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s", level=logging.WARNING)
    apply_levels(level)


def workspace_file() -> Path:
    """The Dagster workspace: the repo's ``workspace.yaml`` (source checkout, editable install), else
    the copy a wheel carries under ``solar_assets/_shipped/`` (setup.py copies it at build time)."""
    repo = pipeline.REPO_ROOT / "workspace.yaml"
    return repo if repo.is_file() else Path(__file__).resolve().parent / "_shipped" / "workspace.yaml"


def _split_hardware(values: Sequence[str]) -> tuple[list[str], list[str]]:
    """``--hardware`` values -> (canonical names, workload paths): ``h100_sxm,a6000`` ->
    ``H100_SXM``, ``A6000``; a value naming a ``.py`` file or an existing file or directory (not a
    ``.yaml`` spec) is a path, so ``--hardware H100_SXM gemm.py`` analyzes gemm.py."""
    from solar_assets.hardware import canonical_hardware_name

    names, paths = [], []
    for value in values:
        for item in (v.strip() for v in value.split(",")):
            path = Path(item)
            if not item:
                continue
            if path.suffix not in (".yaml", ".yml") and (path.suffix == ".py" or path.exists()):
                paths.append(item)
            else:
                names.append(canonical_hardware_name(item))
    return names, paths


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Options in any order: paths after an option (``analyze gemm.py --hardware H100_SXM more.py``)
    join the paths; anything else unknown is an error as usual."""
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if not hasattr(args, "verbose"):
        args.verbose = 0
    unknown = [e for e in extra if e.startswith("-")]
    if unknown or (extra and not hasattr(args, "paths")):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if extra:
        args.paths = [*args.paths, *extra]
    if args.command == "analyze":
        from solar_assets.hardware import list_hardware

        if args.hardware:
            args.hardware, moved = _split_hardware(args.hardware)
            args.paths = [*args.paths, *moved]
            if moved and not args.hardware:  # `--hardware gemm.py`: say how it was read
                print(f"solar: note: {', '.join(moved)} after --hardware taken as workload path(s), not "
                      "hardware names; bounding on the default part", file=sys.stderr)
            args.hardware = args.hardware or None  # only paths followed it: the default part
        known = {n.lower() for n in list_hardware()}
        for p in args.paths:
            if not Path(p).exists() and p.lower() in known:
                parser.error(f"{p!r} is a hardware name, not a workload path: write --hardware {p}")
        if not args.paths:
            parser.error("the following arguments are required: PATH (workload files or directories)")
    return args


# ---------------------------------------------------------------------------- analyze
HOME_FAULTS: list[str] = []
"""This call's storage fault, if its home could not be used (``_use_home``): listed with the errors."""


def _use_home(home_arg: str | None) -> Path:
    """Resolve SOLAR_HOME and export it (and DAGSTER_HOME under it) for everything this run starts.
    A home that cannot hold solar's files (a file, read-only, full: ``paths.home_problem``) costs
    no rows: one line names it and the remedy, and the run uses a fresh directory of the temp dir
    instead (cold: nothing of the real home is read), whose report it names."""
    from solar_assets.paths import home_problem

    home = pipeline.solar_home(home_arg)
    problem = home_problem(home)
    if problem is not None:
        import tempfile

        try:
            fallback = Path(tempfile.mkdtemp(prefix="solar-home-"))
        except OSError as e:
            raise SolarError(f"SOLAR_HOME: {problem}, and the temp dir is not writable either ({e.strerror or e}): "
                             "set SOLAR_HOME (or --home) to a writable directory") from None
        line = (f"SOLAR_HOME: {problem}: set SOLAR_HOME (or --home) to a writable directory; this run uses "
                f"{fallback} instead (nothing cached is reused) and writes its report there")
        print(f"solar: error: {line}", file=sys.stderr)
        HOME_FAULTS.append(line)
        home = fallback
    os.environ["SOLAR_HOME"] = str(home)
    os.environ["DAGSTER_HOME"] = str(home / "dagster")
    return home


def _workload_paths(args_paths: Sequence[str]) -> tuple[list[Path], list[str]]:
    """Expand directories into ``*.py`` files, as absolute paths. A missing path, a file that is not ``.py`` or a
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
                paths.append(Path(os.path.abspath(path)))  # a file that calls os.chdir is still found
    return paths, errors


def _use_fresh_workers(wanted: bool) -> None:
    """Export ``--fresh-workers`` for the worker pools this run starts (``workers.pool.fresh_workers``)."""
    if wanted:
        os.environ["SOLAR_FRESH_WORKERS"] = "1"


def _use_translator(translator: str | None) -> None:
    """Export ``--translator`` (as ``$SOLAR_TRANSLATOR``) for the assets and workers this run starts;
    ``agent`` without a configured chat model is a usage error, before any work."""
    if translator is None:
        return
    os.environ["SOLAR_TRANSLATOR"] = translator
    if translator == "agent":
        from solar_assets.agent import agent_settings

        agent_settings()  # raises AgentNotConfigured, one line: which variable to set


def analyze(args: argparse.Namespace) -> int:
    from solar_assets.hardware import load_hardware

    home = _use_home(args.home)
    limit = cache_limit()  # a malformed SOLAR_CACHE_LIMIT is a usage error, before any work
    _use_fresh_workers(args.fresh_workers)
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
    _use_train(args)
    os.environ["SOLAR_FP32_MATH"] = args.fp32_math  # every path reads it (chain.config.RunConfig.from_env: FP32_MATH_ENV)
    paths, input_errors = _workload_paths(args.paths)
    report_dir = _report_dir(args, home)  # before the run: the ski-slopes (--ski-slope) are written into it
    progress = Progress(_run_names(paths), enabled=not args.no_progress,
                        expected=functools.partial(_expected_seconds, paths, home))
    notes: list[str] = []
    scale_out = _scale_out(args)
    if args.no_dagster:
        results, rows = _analyze_plain(paths, hardware_names, args, measure, home, limits, progress, report_dir)
    else:
        from solar_assets.dagster_defs.instance import ReportRunFailed
        from solar_assets.dagster_defs.runner import DagsterStorageError, analyze_with_dagster

        checks: list = []
        notices: list[str] = []
        try:
            results, rows = analyze_with_dagster(paths, hardware_names, args.target_latency, home,
                                                 failures=input_errors, on_stage=progress, measure=measure,
                                                 checks=checks, jobs=args.jobs, notices=notices,
                                                 scale_out=scale_out, ski_slope=args.ski_slope,
                                                 pictures=args.pictures, **limits)
            for line in notices:  # what changed since the last call, and what ran again for it
                print(f"solar: {line}", file=sys.stderr)
            _print_checks(checks)
        except (DagsterStorageError, ReportRunFailed) as e:  # the rows still land: the stages without Dagster
            progress.done()
            print(f"solar: error: {e}", file=sys.stderr)
            notes.append(str(e))
            results, rows = _analyze_plain(paths, hardware_names, args, measure, home, limits, progress, report_dir)
    progress.done()
    notes[:0] = HOME_FAULTS  # printed when found
    errors = input_errors + notes + [r.error for r in results if r.error]
    made_dir = report_dir
    try:
        per_op, failures, report_dir = _write_run_report(args, rows, results, [*input_errors, *notes], home,
                                                         report_dir)
    except OSError as e:  # a full or read-only disk mid-run: the report goes elsewhere, the table still comes
        import tempfile

        line = (f"{report_dir}: the report could not be written ({e.strerror or e}): free some space, or give "
                "--output or SOLAR_HOME a writable directory")
        try:
            fallback = Path(tempfile.mkdtemp(prefix="solar-report-"))
            per_op, failures, _ = _write_run_report(argparse.Namespace(**{**vars(args), "output": str(fallback)}), rows,
                                                 results, [*input_errors, *notes, line], home, fallback)
            line += f"; this run's report is in {fallback}"
            report_dir = fallback
        except OSError:
            per_op, failures = [], _failures(results, [*input_errors, *notes, line])
            line += "; no directory could take it: the table below is this run's"
        print(f"solar: error: {line}", file=sys.stderr)
        notes.append(line)
        errors.append(line)
    for error in errors:
        if error not in notes:  # printed when it happened
            print(f"solar: error: {error}", file=sys.stderr)
    if args.json:  # the report document, as report.json holds it: rows, failures, per-op rows
        from solar_assets.report.writers import document_as_json

        sys.stdout.write(document_as_json(rows, failures, per_op, [j for r in results for j in getattr(r, "op_joins", ())]))
    else:
        bounded = sum(1 for r in results if r.ok)
        print(_format_rows(args, rows) if rows else "no workload produced bounds")
        _print_per_op(args, per_op)
        _print_measured(rows, project=args.project)
        _print_measured_ops(args, results)
        unchanged = " (unchanged: that call's files, nothing they show changed)" if report_dir != made_dir else ""
        print(f"\n{bounded}/{bounded + len(errors) - len(notes)} workloads bounded on {', '.join(hardware_names)}; "
              f"report{unchanged}: {report_dir}/{{report.csv, report.json, report.md, failures.csv, per_op.csv, "
              + ("measured_per_op.csv, " if any(getattr(r, "op_joins", ()) for r in results) else "") +
              "report_roofline.png" + (", skislope/<workload>.{csv,png}" if args.ski_slope else "") + "}")
    _print_charts(rows, report_dir, quiet=args.json)
    _keep_within_limit(home, limit)
    return EXIT_FAILED if errors else EXIT_OK


def _keep_within_limit(home: Path, limit: int | None) -> None:
    """The home back under ``SOLAR_CACHE_LIMIT`` once the call's results have landed
    (``cache_limit``); a home that cannot be walked or pruned costs nothing of the results."""
    from solar_assets.cache_limit import enforce_limit

    try:
        enforce_limit(home, limit)
    except OSError as e:
        logger.warning("%s: the cache limit could not be enforced (%s)", home, e.strerror or e)


def _worker_limits(args: argparse.Namespace) -> dict[str, float | int | None]:
    """``--timeout`` and ``--memory-limit`` as ``run_in_workers`` takes them (None: no limit)."""
    from solar_assets.workers import parse_memory_limit

    if args.timeout < 0:
        raise SolarError(f"--timeout must not be negative, got {args.timeout:g}")
    return {"timeout_s": args.timeout or None, "memory_limit_bytes": parse_memory_limit(args.memory_limit)}


def _scale_out(args: argparse.Namespace) -> ScaleOut | None:
    """``--executor dask``'s cluster, or None for the one-step run."""
    if args.executor == "dask" and args.no_dagster:
        raise SolarError("--executor dask runs the call through Dagster: drop --no-dagster")
    if args.executor != "dask":
        if args.dask_scheduler:
            raise SolarError("--dask-scheduler needs --executor dask")
        return None
    try:
        import dagster_dask  # noqa: F401 - checked here: one line, not a failed run
    except ImportError:
        raise SolarError("--executor dask needs dagster-dask: pip install -e '.[dask]'") from None
    from solar_assets.dagster_defs.runner import ScaleOut

    return ScaleOut(scheduler=args.dask_scheduler, workers=max(1, args.jobs))


def _analyze_plain(paths, hardware_names, args, measure, home: Path, limits, progress, report_dir: Path):
    """Every workload through the stages without Dagster, one worker process at a time (the run's
    report is written after, with the rows that landed)."""
    results = pipeline.analyze_in_workers(paths, hardware_names, target_latency_s=args.target_latency,
                                          cache_dir=home / "cache", measure=measure, translator=args.translator,
                                          ski_slope_dir=report_dir / "skislope" if args.ski_slope else None,
                                          on_stage=progress,
                                          jobs=args.jobs, **limits)
    rows = [row for r in results for row in r.rows]
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
    from solar_assets.workloads.training import TrainSpec

    train = TrainSpec(optimizer=args.optimizer or "adamw", loss=args.loss or "auto") if args.train else None
    if train is not None and getattr(args, "per_op", None) is not None:
        raise SolarError("--measure --per-op times a forward pass op by op; with --train give --measure alone")
    return MeasureOptions(backends=parse_backends(args.backends),
                          timing=TimingOptions(runs=args.runs, min_runs=min(5, args.runs)),
                          per_op=getattr(args, "per_op", None) is not None, train=train)


def _print_checks(evaluations) -> None:
    """What the report's asset checks said (stderr: stdout carries the result), one line each,
    with the failed expectations under a failing one."""
    for evaluation in evaluations:
        verdict = "passed" if evaluation.passed else "FAILED"
        text = (evaluation.description or "").strip().splitlines()
        print(f"solar: check {evaluation.check_name}: {verdict}" + (f": {text[0]}" if text else ""), file=sys.stderr)
        for line in text[1:] if not evaluation.passed else ():
            print(f"  {line}", file=sys.stderr)


def _print_measured(rows, project: bool) -> None:
    """The headroom table and the audit (after the bounds table) when measured, and the
    projection when asked for (``--project``): a section appears only when asked for."""
    from solar_assets.report import audit_lines, format_headroom_table
    from solar_assets.report.headroom_table import measured_rows

    if measured_rows(rows):
        print("\nHeadroom on this host (measured median / SOL; audit: fastest run against each bound)")
        print(format_headroom_table(rows))
        lines = audit_lines(rows)
        print(f"\n{sum(r.violation for r in rows)} violation(s) of a true lower bound" + (":" if lines else "."))
        for line in lines:
            print(f"  {line}")
    if project and rows:  # the table above has every row once: only what it lacks
        print("\nCross-platform projection (the bounds are in the table above; fusion × = unfused / fused)")
        print(format_projection_extra(rows))


def _print_measured_ops(args: argparse.Namespace, results) -> None:
    """The per-op headroom (``--measure --per-op``): each call of the eager run against its per-op
    SOL, largest recoverable time first, and what did not join; each violation warned on stderr."""
    from solar_assets.report.measured_ops import format_measured_ops

    joins = [j for r in results for j in getattr(r, "op_joins", ())]
    if not joins:
        return
    print("\nPer-op headroom (each call of the eager run: measured median / its per-op SOL; "
          "recoverable = measured − SOL)")
    print(format_measured_ops(joins, top=_per_op_top(args.per_op)))
    for j in joins:
        for r in j.violations:
            print(f"solar: warning: {j.workload} on {j.hardware}: {r.call}: {r.audit}", file=sys.stderr)


def _print_charts(rows, report_dir: Path, quiet: bool) -> None:
    """The chart paths (stderr under --json), and each violation as a warning on stderr."""
    from solar_assets.report import report_pngs

    charts = report_pngs(report_dir)
    if charts and not quiet:
        print("charts: " + ", ".join(str(p) for p in charts.values()))
    for row in rows:
        if row.violation:
            print(f"solar: warning: {row.workload} on {row.hardware}: {row.violation_detail}", file=sys.stderr)


# ---------------------------------------------------------------------------- output: table, per-op, report directory
def _version() -> str:
    from solar_assets import __version__

    return __version__


def _add_output_options(analyze: argparse.ArgumentParser) -> None:
    analyze.add_argument("--wide", action="store_true",
                         help="every column of the report table (default: the compact table, at most 120 characters)")
    analyze.add_argument("--columns", metavar="A,B,C",
                         help="only these columns, in this order: report fields (sol_fused_s, bound_fused, ...) "
                              "or table headers in lower case with _ for spaces (sol_fused, fused_bytes, ...)")
    analyze.add_argument("--per-op", nargs="?", const="10", metavar="N|all",
                         help="print the per-op breakdown: the N ops with the largest share of the unfused time "
                              "(default 10), or all, and place them on the report's roofline; per_op.csv always "
                              "has every op")
    analyze.add_argument("--by", choices=("op", "module"), default="op",
                         help="--per-op rows per framework op call (default), or rolled up by module path as "
                              "FlopCounterMode's tree (MACs, FLOPs, bytes, parameters, time, share)")
    analyze.add_argument("--depth", type=int, default=2, metavar="N",
                         help="with --by module: modules down to N levels below the model (default 2); "
                              "per_module.csv and report.json have every level")
    analyze.add_argument("--output", metavar="DIR",
                         help="write the report into DIR (default: a new $SOLAR_HOME/reports/<timestamp>/, "
                              "with reports/latest pointing at it)")


def _report_dir(args: argparse.Namespace, home: Path) -> Path:
    """``--output DIR``, else a new run directory under ``$SOLAR_HOME/reports`` (``report.run_dir``)."""
    from solar_assets.report.run_dir import new_run_dir

    if args.per_op is not None:
        _per_op_top(args.per_op)  # a bad N is a usage error, before any work
    if getattr(args, "depth", 0) < 0:
        raise SolarError(f"--depth takes a number of levels from 0, got {args.depth}")
    if args.columns:
        from solar_assets.report.table import select_columns

        select_columns(args.columns.split(","))
    if args.output:
        out = Path(args.output).expanduser()
        if out.exists() and not out.is_dir():
            raise SolarError(f"--output {out}: exists and is not a directory")
        out.mkdir(parents=True, exist_ok=True)
        return out
    return new_run_dir(pipeline.reports_dir(home))


def _per_op_top(value: str) -> int | None:
    from solar_assets.report.per_op import top_count

    return top_count(value)


def _failures(results, input_errors: Sequence[str]):
    """Every workload that got no row, with its status, stage and reason (report.json, failures.csv)."""
    from solar_assets.report.failures import failure_from_error, failure_from_result

    return [failure_from_error(e, stage="input") for e in input_errors] + \
        [failure_from_result(r) for r in results if r.error]


def _per_op_of(results, home: Path, known: dict[int, list] | None = None) -> list:
    """The per-op rows of every bounded workload on each of its hardware (``_per_op_rows``), in
    order; ``known``: rows already read for some results, by ``id(result)``."""
    known = known or {}
    return [row for r in results for row in (known[id(r)] if id(r) in known else _per_op_rows(r, home))]


def _per_op_rows(result, home: Path) -> list:
    """One workload's per-op rows: as the worker computed them, else read from its call record's
    file, else lifted again from the cached IR (the Dagster path). Nothing is traced here, so no
    workload code runs in this process; a workload whose breakdown cannot be made is logged and
    left out, its bounds stand."""
    if not result.ok or not result.rows:
        return []
    if getattr(result, "per_op", None):
        return list(result.per_op)
    if getattr(result, "per_op_file", None):
        from solar_assets.dagster_defs.call_records import read_per_op

        recorded = read_per_op(result.per_op_file)
        if recorded is not None:
            return recorded
        logger.info("%s: its record's per-op rows are gone: lifted again from the cached IR", result.path)
    from solar_assets.graph import build_einsum_graph
    from solar_assets.report.per_op import per_op_rows

    rows = []
    try:
        src = pipeline.read_source(result.path)
        translation = pipeline.cached_translation(src, home / "cache")
        if translation is None:
            logger.warning("%s: no per-op breakdown: its IR is not in the cache", result.path)
            return []
        graph = build_einsum_graph(translation.program)
        for row in result.rows:
            bounds = pipeline.bound_graph(src, graph, pipeline.load_spec(row.hardware))
            rows += per_op_rows(result.workload, graph, bounds, row.hardware)
    except SolarError as e:
        logger.warning("%s: no per-op breakdown: %s", result.path, e)
    return rows


def _write_run_report(args: argparse.Namespace, rows, results, input_errors: Sequence[str], home: Path,
                      report_dir: Path) -> tuple[list, list, Path]:
    """The run's report files in ``report_dir`` (with failures and the per-op breakdown), then
    ``reports/latest`` moved to it unless ``--output`` chose the place. Returns the per-op rows
    and the failures (``--json`` prints them in the same document), and the report's directory:
    the newest run's, when its files were made from exactly what this run's would be (nothing
    measured, no ski-slope asked; ``report.run_dir.unchanged_run``), ``report_dir`` then removed."""
    from solar_assets.report.run_dir import mark_run, point_latest, unchanged_run

    joins = [j for r in results for j in getattr(r, "op_joins", ())]
    failures = _failures(results, input_errors)
    # --per-op places ops on the roofline and prints them: the files are written then
    known: dict[int, list] = {}  # per-op rows read for the key, by id(result): not read twice
    key = None if args.output or joins or args.ski_slope or args.per_op is not None else \
        _report_key(rows, failures, results, home, known)
    if key is not None:
        previous = unchanged_run(pipeline.reports_dir(home), key)
        if previous is not None and previous != report_dir and not any(report_dir.iterdir()):
            report_dir.rmdir()
            logger.info("%s: this call's report is that run's, file for file: no new directory", previous)
            wanted = args.json or getattr(args, "by", "op") == "module"  # printed below: read now
            return _per_op_of(results, home, known) if wanted else [], failures, previous
    from solar_assets.report import write_report
    from solar_assets.report.per_op import PerOpTable

    per_op = _per_op_of(results, home, known)
    if joins:  # the measured fields of each op whose call is that op alone (never stored: a measurement is now's)
        from solar_assets.measure.op_join import with_measured_rows

        per_op = with_measured_rows(per_op, joins)
    if args.ski_slope and not args.no_dagster:  # the ski_slope asset writes under reports/skislope: copied beside
        _copy_ski_slopes(pipeline.reports_dir(home) / "skislope", report_dir / "skislope", {r.workload for r in rows})
    on_roofline = () if args.per_op is None else PerOpTable(per_op).top(_per_op_top(args.per_op)).rows
    write_report(rows, report_dir, failures=failures, per_op=per_op, roofline_ops=on_roofline, measured_ops=joins)
    if key is not None:
        mark_run(report_dir, key)
    if not args.output:
        point_latest(pipeline.reports_dir(home), report_dir)
    return per_op, failures, report_dir


def _report_key(rows, failures, results, home: Path, known: dict[int, list]) -> str:
    """What a run directory's files are made from, digested (``report.run_dir.report_key``): the
    rows and failures as the files serialise them, each workload's per-op rows by their digest
    (a call record's, else of the rows: ``call_records.per_op_digest``; equal either way, so a
    warm call reads none) and solar's code (the files' formats). The rows read here go into
    ``known``, by ``id(result)``."""
    import json

    from solar_assets.cache_store import environment_key
    from solar_assets.dagster_defs.call_records import per_op_digest
    from solar_assets.report.run_dir import report_key
    from solar_assets.report.row_json import finite_row

    digests = []
    for r in results:
        if not r.ok or not r.rows:
            continue
        if getattr(r, "per_op_digest", "") and not r.per_op:
            digests.append(r.per_op_digest)
        else:
            known[id(r)] = _per_op_rows(r, home)
            digests.append(per_op_digest(known[id(r)]))
    return report_key([environment_key(), json.dumps([finite_row(r) for r in rows], sort_keys=True),
                       *(f.model_dump_json() for f in failures), "per-op", *digests])


def _copy_ski_slopes(source: Path, target: Path, workloads: set[str]) -> None:
    import shutil

    from solar_assets.paths import file_stem

    for w in sorted(file_stem(w) for w in workloads):
        for suffix in (".csv", ".png"):
            if (source / f"{w}{suffix}").is_file():
                target.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source / f"{w}{suffix}", target / f"{w}{suffix}")


def _format_rows(args: argparse.Namespace, rows) -> str:
    """The compact table (default), every column (``--wide``) or the ones named (``--columns``)."""
    from solar_assets.report.table import format_table

    if args.columns:
        return format_table(rows, columns=args.columns.split(","))
    return format_table(rows, wide=args.wide)


def _print_per_op(args: argparse.Namespace, per_op: Sequence) -> None:
    """The per-op table (``--per-op``), or its module tree (``--by module``, ``--depth``)."""
    by_module = getattr(args, "by", "op") == "module"
    if (args.per_op is None and not by_module) or args.json:
        return
    if by_module:
        from solar_assets.report.per_module import format_per_module, module_rollup

        print(f"\nBy module, {args.depth} level{'s' if args.depth != 1 else ''} below the model (each framework op "
              "as one eager kernel, counted in every module on its path; share of the unfused time)")
        print(format_per_module(module_rollup(per_op, depth=args.depth)) if per_op else "no per-op rows")
        return
    from solar_assets.report.per_op import format_per_op

    print("\nPer-op breakdown (each framework op as one eager kernel; share of the unfused time)")
    print(format_per_op(per_op, top=_per_op_top(args.per_op)) if per_op else "no per-op rows")


def format_projection_extra(rows) -> str:
    from solar_assets.report.table import format_projection_extra as extra

    return extra(rows)


# ---------------------------------------------------------------------------- coverage
def coverage(args: argparse.Namespace) -> int:
    """Translate and validate every workload (no graph, no bounds) and report each one's status."""
    from solar_assets.coverage import coverage_json, coverage_summary, format_coverage, run_coverage

    home = _use_home(args.home)
    limit = cache_limit()
    _use_fresh_workers(args.fresh_workers)
    _use_translator(args.translator)
    _use_train(args)
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
    _keep_within_limit(home, limit)
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

    from solar_assets.dagster_defs.runner import prepare_ui_instance

    home = _use_home(args.home)
    prepare_ui_instance(home)  # partitions registered and files observed before the UI opens
    dagster = Path(sys.executable).with_name("dagster")
    workspace = workspace_file()  # the repo's, else the copy a wheel ships (a non-editable install)
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
