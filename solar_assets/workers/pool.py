"""Run a task over many workload files in worker processes, each file with a time and a memory limit.

A workload can hang, exhaust memory, crash the interpreter (a numba segfault) or change the
process's global state (``torch.set_default_dtype``, ``os.chdir``). In a worker it costs only its
own result ("timed out after 600 s during validate", "exceeded the memory limit of 17.2 GiB
during golden", "the worker was killed by SIGKILL (out of memory?)"), and a fresh worker carries
on with the next file. A worker serves file after file (starting one costs about 5 s: torch,
numba, the tracer's warm-up); around each file it snapshots and restores the global state
(``solar_assets.workers.state``) and captures what the file writes to stdout/stderr
(``solar_assets.workers.output``); a file that changed what cannot be restored gets its worker
replaced. Workers are spawned (not forked: torch and numba threads do not survive a fork) and,
when several run, each gets an equal share of the cores for its BLAS / OpenMP / numba threads:
two processes with two BLAS threads each on two cores made small GEMMs 100–1000× slower.

``solar coverage`` and ``solar analyze`` (both its paths) run through ``run_in_workers``.
"""
from __future__ import annotations

import contextlib
import logging
import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from solar_assets.logconf import solar_level
from solar_assets.workers.containment import stop_descendants
from solar_assets.workers.heap import freeze_start_up, release_freed_memory
from solar_assets.workers.limits import format_gib, process_tree_rss_bytes
from solar_assets.workers.order import load_durations, longest_first, save_durations
from solar_assets.workers.output import OutputCapture, read_tail

log = logging.getLogger(__name__)

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS")
SHUTDOWN_WAIT_S = 5.0
STARTUP_LIMIT_S = 600.0  # a worker's imports (torch, numba) before its first file's clock starts
MEMORY_POLL_S = 0.2  # how often the parent reads a busy worker's resident memory
RECYCLE_BYTES = 2 << 30
"""A worker (with its checker) still resident above this after a file, its freed memory handed
back, is replaced before the next file: a fresh worker costs seconds, a stacked peak the machine."""

Task = Callable[[str, "str | None", Any], Any]  # (path, cache_dir, task_arg) -> a picklable result
Unfinished = Callable[[str, str, float, "str | None"], Any]  # (path, message, seconds, last stage) -> result
EventCallback = Callable[[int, str, str], None]  # (index, workload, stage) as a stage starts


def warm_up_tracer() -> float:
    """Export a two-op model once, so that torch.export's one-time set-up (about 2-8 s: dynamo,
    the decomposition tables) is paid at worker start and not by the first file; the seconds."""
    import warnings

    import torch

    start = time.perf_counter()

    class _Tiny(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x @ x)

    from solar_assets.translate.export_speed import (export_decomposed, fast_cia_override,
                                                     materialise_when_registrations_change)
    from solar_assets.translate.torch_tracer import decomposition_table

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        materialise_when_registrations_change()
        fast_cia_override()
        export_decomposed(_Tiny(), (torch.ones(2, 2),), decomposition_table())  # the path every file takes
        # torch.fx's Interpreter opens a (disabled) tqdm bar, whose first one starts tqdm's monitor
        # thread: started here, not in the first file that interprets a graph (node-wise capture),
        # where it is a new thread the worker cannot restore and the worker is replaced
        torch.fx.Interpreter(torch.fx.symbolic_trace(_Tiny())).run(torch.ones(2, 2))
    return time.perf_counter() - start


@contextlib.contextmanager
def _thread_environment(threads: int | None) -> Iterator[None]:
    """The thread variables set in this process while a worker is spawned, so the child has them
    from its first import: unpickling its task imports the stages, numba among them, and numba
    reads NUMBA_NUM_THREADS once at import ("Cannot set NUMBA_NUM_THREADS to a different value
    once the threads have been launched" when ``_serve`` changes it later)."""
    if not threads:
        yield
        return
    saved = {v: os.environ.get(v) for v in THREAD_VARIABLES}
    os.environ.update({v: str(threads) for v in THREAD_VARIABLES})
    try:
        yield
    finally:
        for variable, value in saved.items():
            if value is None:
                os.environ.pop(variable, None)
            else:
                os.environ[variable] = value


def _serve(conn: Any, task: Task, cache_dir: str | None, task_arg: Any, threads: int | None, log_level: int,
           capture_path: str) -> None:
    """A worker: run ``task`` on each path it is sent, reporting stage starts, what the file
    wrote, and then the result; the process state is restored after each file."""
    capture = OutputCapture(capture_path)
    if threads:
        for variable in THREAD_VARIABLES:
            os.environ[variable] = str(threads)
    logging.basicConfig(stream=capture.log_stream, level=min(log_level, logging.WARNING),
                        format="%(levelname)s %(name)s: %(message)s", force=True)
    from solar_assets.logconf import apply_levels

    apply_levels(log_level)  # -vv: solar's DEBUG lines only, as in the parent
    lock = threading.Lock()

    def send(message: tuple) -> None:
        with lock:  # stage events may come from a stage's own threads
            conn.send(message)

    from solar_assets.cache_store import journal
    from solar_assets.workers import tamper
    from solar_assets.workers.containment import Watch, become_subreaper, descendants

    with contextlib.suppress(OSError):  # its own session: a Ctrl-C at the terminal is the CLI's to handle
        os.setsid()
    become_subreaper()  # what a workload starts stays this worker's descendant (containment)
    watch = Watch()
    from solar_assets.stage_clock import subject, timed
    from solar_assets.workers.checker import checker_pids, start_checker

    with timed("worker start (imports, checker, warm-up)"):

        start_checker()  # the verdicts, in a process that never imports a workload (checker)

        import torch  # the stages' heavy imports, before the first file's clock starts

        import solar_assets.execute  # noqa: F401
        import solar_assets.golden  # noqa: F401 - loaded before the first file: its snapshot covers them
        import solar_assets.graph  # noqa: F401
        import solar_assets.translate  # noqa: F401
        import solar_assets.validate  # noqa: F401
        import solar_assets.validate.compare  # noqa: F401
        from solar_assets.progress import progress_listener
        from solar_assets.workers import state

        if threads:
            torch.set_num_threads(threads)
        from torch._dynamo.eval_frame import TorchPatcher

        TorchPatcher.patch()  # torch's once-per-process patches (``torch.fx.Tracer.trace`` wrapped), which a
        # file's first compiled region (a ``scan``'s autograd) applies otherwise and the tamper check would blame
        try:
            warmed = warm_up_tracer()
        except Exception:  # the warm-up is an optimisation: the first file pays it instead
            log.debug("tracer warm-up failed", exc_info=True)
            warmed = 0.0
        freeze_start_up()  # the imports' objects: no file's collections walk them (heap)
        send(("ready", warmed))
    with progress_listener(lambda workload, stage: send(("stage", (workload, stage)))):
        while True:
            try:
                path = conn.recv()
            except EOFError:
                _exit_now()
            if path is None:
                _exit_now()
            send(("start", path))
            with timed(ISOLATION):
                saved = state.snapshot()
                capture.begin()
                raised, result = None, None  # (no result where the workload raised)
                before = set(descendants(os.getpid()))
                watch.begin(path, os.environ.get("SOLAR_HOME"))
                identities = tamper.snapshot()
            try:
                with journal() as stored, subject(path), timed("per file, outside the stages"):
                    result = task(path, cache_dir, task_arg)
            except (KeyboardInterrupt, SystemExit) as e:  # raised in the workload's code: its row says so
                raised = f"the workload raised {type(e).__name__}" + (f" ({e})" if str(e) else "")
            finally:
                with timed(ISOLATION):
                    replaced = tamper.replaced(identities)
                    if replaced:  # its result is not trusted: nothing it computed is kept, this worker ends
                        raised = (f"the workload replaced {', '.join(replaced[:4])}{' …' if len(replaced) > 4 else ''} "
                                  "(found when its run ended): its result is not trusted, nothing it computed is kept, "
                                  "and the next file gets a fresh worker")
                        for stale in stored:
                            with contextlib.suppress(OSError):
                                os.unlink(stale)
                    notes = watch.end().lines()
                    left = stop_descendants(os.getpid(), keep=before | checker_pids())
                    written = capture.end()
                    unrestorable = state.restore(saved)
            if left:
                notes.append(f"left {len(left)} process(es) running, stopped: {'; '.join(left[:4])}")
            for note in notes:
                send(("note", note))
            if notes and isinstance(getattr(result, "activity", None), list):
                result.activity.extend(notes)  # its rows say so too (``WorkloadResult.activity``)
            if written.strip():
                send(("output", written))
            if raised is not None:  # this worker's state is suspect: it ends, and a fresh one goes on
                send(("raised", raised, not replaced))  # a replacement is not the last stage's doing
                _exit_now()
            release_freed_memory()  # what the file freed goes back to the system before its RSS is read
            send(("row", result, unrestorable))


def _exit_now() -> None:
    """End the worker when its runner says so: the atexit handlers (multiprocessing's among them)
    run and the streams are flushed, but not the interpreter's teardown, which freed torch's and
    numba's objects for 1.2–1.7 s at the end of every call while the CLI waited for the exit."""
    import atexit

    atexit._run_exitfuncs()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)


@dataclass
class _Worker:
    process: Any
    conn: Any
    capture_path: str
    index: int | None = None
    path: str | None = None
    started: float = 0.0  # when the file was sent, then when the worker began it
    began: bool = False
    last_event: str | None = None
    retire: bool = False  # replace it before its next file (it could not restore its state)
    raised: str | None = None  # the workload raised KeyboardInterrupt / SystemExit: its row's message

    @property
    def busy(self) -> bool:
        return self.index is not None

    def assign(self, index: int, path: str) -> None:
        self.index, self.path, self.started, self.began, self.last_event = index, path, time.monotonic(), False, None
        self.raised = None
        self.conn.send(path)

    def deadline(self, timeout_s: float | None) -> float | None:
        if timeout_s is None:
            return None
        return self.started + (timeout_s if self.began else max(timeout_s, STARTUP_LIMIT_S))

    def stop(self) -> None:
        """Ask the worker to exit; kill it (the process this runner started) if it does not."""
        try:
            self.conn.send(None)
        except (OSError, ValueError):
            pass
        self.process.join(SHUTDOWN_WAIT_S)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()


def _exit_reason(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"the worker was killed by {name}" + (" (out of memory?)" if name == "SIGKILL" else "")
    return f"the worker exited with status {code}"


ISOLATION = "worker isolation (snapshot, restore, checks)"  # the stage clock's name for it

FRESH_WORKERS_ENV = "SOLAR_FRESH_WORKERS"


def fresh_workers() -> bool:
    """Whether each file gets a worker of its own, discarded after it (``solar analyze
    --fresh-workers``, ``$SOLAR_FRESH_WORKERS=1``): the strict form of the isolation, about 5 s
    of start-up per file. By default a worker serves file after file, its state restored and its
    frameworks' callables compared after each (``state``, ``tamper``); a file that changes data in
    place inside a framework (not a callable: nothing to compare) could reach the next file's golden
    run in the same worker, never a verdict (the checker process)."""
    return os.environ.get(FRESH_WORKERS_ENV, "").strip() not in ("", "0")


def _spawn(ctx: Any, task: Task, cache: str | None, task_arg: Any, threads: int | None, capture_path: str) -> _Worker:
    parent, child = ctx.Pipe()
    process = ctx.Process(target=_serve, name="solar-worker", daemon=True,
                          args=(child, task, cache, task_arg, threads, solar_level(), capture_path))
    with _thread_environment(threads):
        process.start()
    child.close()
    return _Worker(process, parent, capture_path)


def _threads(jobs: int) -> int | None:
    return max(1, (os.cpu_count() or 1) // jobs) if jobs > 1 else None


class StartedWorkers:
    """Workers spawned ahead of their files (``prestart``), for the ``run_in_workers`` call with
    the same task, argument and jobs: their start (torch, numba, the tracer's warm-up: seconds)
    overlaps what the caller does meanwhile — ``solar analyze`` imports Dagster and prepares the
    instance. ``close()`` stops those no call took."""

    def __init__(self, task: Task, task_arg: Any, cache_dir: str | Path | None, jobs: int, count: int) -> None:
        self.key = (task, id(task_arg), str(cache_dir) if cache_dir is not None else None, jobs)
        self.capture_dir = tempfile.mkdtemp(prefix="solar-workers-")
        ctx = multiprocessing.get_context("spawn")
        self.workers = [_spawn(ctx, task, self.key[2], task_arg, _threads(jobs),
                               os.path.join(self.capture_dir, f"early-{i}.out")) for i in range(count)]

    def take(self, task: Task, task_arg: Any, cache: str | None, jobs: int) -> _Worker | None:
        if self.workers and self.key == (task, id(task_arg), cache, jobs):
            return self.workers.pop()
        return None

    def close(self) -> None:
        for worker in self.workers:
            worker.stop()
        self.workers = []
        shutil.rmtree(self.capture_dir, ignore_errors=True)


def prestart(task: Task, task_arg: Any, cache_dir: str | Path | None = None, *, jobs: int = 1,
             files: int = 1) -> StartedWorkers:
    """Spawn the workers a later ``run_in_workers(…, started=…)`` over ``files`` files will use."""
    return StartedWorkers(task, task_arg, cache_dir, max(1, jobs), min(max(1, jobs), files) if files else 0)


def run_in_workers(paths: Sequence[str | Path], task: Task, unfinished: Unfinished,
                   cache_dir: str | Path | None = None, *, jobs: int = 1, timeout_s: float | None = None,
                   memory_limit_bytes: int | None = None, task_arg: Any = None,
                   on_result: Callable[[int, Any], None] | None = None,
                   on_event: EventCallback | None = None, started: StartedWorkers | None = None,
                   order: Sequence[int] | None = None, durations: str | Path | None = None) -> list[Any]:
    """``task(path, cache_dir, task_arg)`` for each path, results in order. ``task`` must be a
    module-level function (workers are spawned). A file that runs past ``timeout_s`` seconds,
    whose worker's resident memory passes ``memory_limit_bytes``, or that kills its worker, gets
    ``unfinished(path, message, seconds, last stage)`` instead. ``on_result(index, result)`` as
    each file finishes; ``on_event(index, workload, stage)`` as each stage starts. ``jobs=0``:
    in this process, without limits or isolation (for debugging). ``started``: workers spawned
    ahead (``prestart``) with this task and argument, used before any new one. ``order``: the
    indices of ``paths`` in the order workers take them; ``durations``: a directory keeping the
    seconds each file took (``order``): without ``order``, workers take the longest files first,
    and this call's seconds are added to it. Results keep the order of ``paths`` either way."""
    paths = [str(p) for p in paths]
    cache = str(cache_dir) if cache_dir is not None else None
    fresh = fresh_workers()
    if jobs <= 0:
        results = []
        for i, path in enumerate(paths):
            results.append(task(path, cache, task_arg))
            if on_result:
                on_result(i, results[-1])
        return results
    if not paths:
        return []

    ctx = multiprocessing.get_context("spawn")
    threads = _threads(jobs)
    if order is None and durations is not None:
        order = longest_first(paths, load_durations(durations))
    taken = list(range(len(paths))) if order is None else list(order)
    if sorted(taken) != list(range(len(paths))):
        raise ValueError(f"order must be a permutation of the {len(paths)} paths' indices")
    pending = deque((i, paths[i]) for i in taken)
    results: list[Any] = [None] * len(paths)
    done = [False] * len(paths)
    workers: list[_Worker] = []
    capture_dir = tempfile.mkdtemp(prefix="solar-workers-")
    count = [0]
    took: dict[str, float] = {}  # seconds per file, for ``durations``

    def start() -> _Worker:
        early = started.take(task, task_arg, cache, jobs) if started is not None else None
        if early is not None:
            return early
        count[0] += 1
        return _spawn(ctx, task, cache, task_arg, threads, os.path.join(capture_dir, f"worker-{count[0]}.out"))

    def finish(worker: _Worker, result: Any) -> None:
        results[worker.index], done[worker.index] = result, True
        took[worker.path] = time.monotonic() - worker.started
        if fresh:  # a discarded process per file: nothing one leaves behind reaches the next
            worker.retire = True
        elif pending and worker.process.is_alive() and (rss := process_tree_rss_bytes(worker.process.pid)) > RECYCLE_BYTES:
            log.info("%s: its worker still holds %s after it: the next file gets a fresh worker", worker.path,
                     format_gib(rss))
            worker.retire = True  # the next file's peak would stack on what this one left
        if on_result:
            on_result(worker.index, result)
        worker.index = worker.path = None

    def kill(worker: _Worker, message: str) -> None:
        elapsed = time.monotonic() - worker.started
        if worker.process.is_alive():
            left = stop_descendants(worker.process.pid)  # what its workload started dies with it
            if left:
                log.info("%s: stopped %d process(es) it left running: %s", worker.path, len(left), "; ".join(left[:4]))
            worker.process.kill()
        worker.process.join()
        message = message or _exit_reason(worker.process.exitcode)
        log.info("%s: %s%s", worker.path, message, f" during {worker.last_event}" if worker.last_event else "")
        tail = read_tail(worker.capture_path)
        if tail.strip():
            log.info("%s: the worker's last output:\n%s", worker.path, tail)
        finish(worker, unfinished(worker.path, message, elapsed, worker.last_event))

    try:
        while pending or any(w.busy for w in workers):
            for i, worker in enumerate(workers):  # replace workers that died or must go between files
                if pending and not worker.busy and (worker.retire or not worker.process.is_alive()):
                    worker.stop()  # (none is started when no file is left for it)
                    workers[i] = start()
            while pending and len(workers) < min(jobs, len(paths)):
                workers.append(start())
            for worker in workers:
                if pending and not worker.busy:
                    worker.assign(*pending.popleft())
            busy = [w for w in workers if w.busy]
            now = time.monotonic()
            wait_s = None if timeout_s is None else max(0.0, min(w.deadline(timeout_s) for w in busy) - now)
            if memory_limit_bytes:
                wait_s = MEMORY_POLL_S if wait_s is None else min(wait_s, MEMORY_POLL_S)
            multiprocessing.connection.wait([w.conn for w in busy] + [w.process.sentinel for w in busy], wait_s)
            for i, worker in enumerate(workers):
                if not worker.busy:
                    continue
                _poll(worker, finish, on_event)
                if not worker.busy:
                    continue
                if worker.raised is not None:
                    worker.process.join(SHUTDOWN_WAIT_S)  # it is ending itself: let its exit handlers run
                    kill(worker, worker.raised)
                elif not worker.process.is_alive():
                    kill(worker, "")
                elif _overdue(worker, timeout_s):
                    kill(worker, f"timed out after {timeout_s:g} s")
                elif memory_limit_bytes and (rss := process_tree_rss_bytes(worker.process.pid)) > memory_limit_bytes:
                    kill(worker, f"exceeded the memory limit of {format_gib(memory_limit_bytes)} "
                                 f"(resident {format_gib(rss)})")
                else:
                    continue
                worker.conn.close()
                workers[i] = start()
    finally:
        for worker in workers:
            worker.stop()
        shutil.rmtree(capture_dir, ignore_errors=True)
        save_durations(durations, took)
    return [r for r, d in zip(results, done) if d]


def _overdue(worker: _Worker, timeout_s: float | None) -> bool:
    deadline = worker.deadline(timeout_s)
    return deadline is not None and time.monotonic() > deadline


def _poll(worker: _Worker, finish: Callable[[_Worker, Any], None], on_event: EventCallback | None) -> None:
    """Read what the worker sent: stage starts, its output, then its result."""
    try:
        while worker.busy and worker.conn.poll():
            kind, *payload = worker.conn.recv()
            if kind == "start":
                worker.started, worker.began = time.monotonic(), True
            elif kind == "stage":
                workload, worker.last_event = payload[0]
                if on_event:
                    on_event(worker.index, workload, worker.last_event)
            elif kind == "ready":
                log.debug("worker ready (tracer warm-up %.1f s)", payload[0])
            elif kind == "output":
                log.info("%s wrote to stdout/stderr:\n%s", worker.path, payload[0].rstrip())
            elif kind == "note":
                log.info("%s: %s", worker.path, payload[0])
            elif kind == "raised":
                worker.raised = payload[0]
                if not payload[1]:
                    worker.last_event = ""  # no stage to name: the message says when it was found
                return
            else:
                result, unrestorable = payload
                if unrestorable:
                    log.info("%s changed what a worker cannot restore (%s): the next file gets a fresh worker",
                             worker.path, ", ".join(unrestorable))
                    worker.retire = True
                finish(worker, result)
    except (EOFError, OSError):
        pass  # it died: the caller sees the process gone
