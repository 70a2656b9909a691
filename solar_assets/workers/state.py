"""The process-wide state a workload file can change, and putting it back before the next file.

A worker keeps its interpreter across files (starting one costs about 5 s: torch, numba and
the tracer's warm-up), so whatever a file changes globally must not reach the next one:
``torch.set_default_dtype(torch.float64)`` would make the next file's row float64 (and cache
it under that file's own key), ``os.chdir('/')`` would make the next file unreadable. Around
each file the worker takes a ``snapshot()`` and ``restore``s it afterwards. What cannot be put
back (a thread the file started, torch's inter-op thread count) is reported, and the worker is
then replaced by a fresh one before the next file.
"""
from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any

from solar_assets.workloads.imports import installed_roots, is_local_module

log = logging.getLogger(__name__)

# The signals a workload might install a handler for (SIGKILL/SIGSTOP cannot be caught).
_SIGNALS = tuple(s for s in (getattr(signal, n, None) for n in
                             ("SIGINT", "SIGTERM", "SIGHUP", "SIGALRM", "SIGUSR1", "SIGUSR2", "SIGCHLD", "SIGPIPE"))
                 if s is not None)
# jax.config flags that change results (x64 changes every default dtype, as torch's default dtype does)
_JAX_FLAGS = ("jax_enable_x64", "jax_default_matmul_precision", "jax_numpy_rank_promotion",
              "jax_numpy_dtype_promotion", "jax_disable_jit", "jax_debug_nans")


@dataclass
class ProcessState:
    """One snapshot of what ``restore`` puts back."""

    cwd: str
    sys_path: list[str]
    meta_path: list[Any]
    path_hooks: list[Any]
    environ: dict[str, str]
    modules: set[str]
    streams: tuple[Any, Any, Any]
    warning_filters: list[Any]
    recursion_limit: int
    umask: int
    signal_handlers: dict[int, Any]
    threads: set[int]
    logging_level: int
    logging_handlers: list[Any]
    torch: dict[str, Any] = field(default_factory=dict)
    numpy_err: dict[str, str] | None = None
    numba_threads: int | None = None
    jax_flags: dict[str, Any] = field(default_factory=dict)


def _torch_state() -> dict[str, Any]:
    torch = sys.modules.get("torch")
    if torch is None:
        return {}
    state = {"default_dtype": torch.get_default_dtype(), "num_threads": torch.get_num_threads(),
             "interop_threads": torch.get_num_interop_threads(), "grad": torch.is_grad_enabled(),
             "deterministic": torch.are_deterministic_algorithms_enabled(),
             "matmul_precision": torch.get_float32_matmul_precision(),
             "cudnn_tf32": torch.backends.cudnn.allow_tf32,
             "anomaly": torch.is_anomaly_enabled()}
    with contextlib.suppress(Exception):
        state["default_device"] = torch.get_default_device()
    return state


def _restore_torch(saved: dict[str, Any], unrestorable: list[str]) -> None:
    torch = sys.modules.get("torch")
    if torch is None or not saved:
        return
    now = _torch_state()
    if now.get("default_dtype") != saved["default_dtype"]:
        torch.set_default_dtype(saved["default_dtype"])
    if now.get("num_threads") != saved["num_threads"]:
        torch.set_num_threads(saved["num_threads"])
    if now.get("interop_threads") != saved["interop_threads"]:
        unrestorable.append("torch inter-op threads")  # settable once per process
    torch.set_grad_enabled(saved["grad"])
    if now.get("deterministic") != saved["deterministic"]:
        torch.use_deterministic_algorithms(saved["deterministic"])
    if now.get("matmul_precision") != saved["matmul_precision"]:
        torch.set_float32_matmul_precision(saved["matmul_precision"])
    torch.backends.cudnn.allow_tf32 = saved["cudnn_tf32"]
    if now.get("anomaly") != saved["anomaly"]:
        torch.autograd.set_detect_anomaly(saved["anomaly"])
    if "default_device" in saved and now.get("default_device") != saved["default_device"]:
        torch.set_default_device(saved["default_device"])


def _jax_flags() -> dict[str, Any]:
    jax = sys.modules.get("jax")
    if jax is None:
        return {}
    flags = {}
    for name in _JAX_FLAGS:
        with contextlib.suppress(Exception):
            flags[name] = getattr(jax.config, name)
    return flags


def snapshot() -> ProcessState:
    """The state before a workload runs."""
    numpy = sys.modules.get("numpy")
    numba = sys.modules.get("numba")
    root = logging.getLogger()
    numba_threads = None
    if numba is not None:
        with contextlib.suppress(Exception):
            numba_threads = numba.get_num_threads()
    return ProcessState(
        cwd=os.getcwd(), sys_path=list(sys.path), meta_path=list(sys.meta_path), path_hooks=list(sys.path_hooks),
        environ=dict(os.environ), modules=set(sys.modules), streams=(sys.stdin, sys.stdout, sys.stderr),
        warning_filters=list(warnings.filters), recursion_limit=sys.getrecursionlimit(), umask=_umask(),
        signal_handlers={s: signal.getsignal(s) for s in _SIGNALS}, threads={t.ident for t in threading.enumerate()},
        logging_level=root.level, logging_handlers=list(root.handlers), torch=_torch_state(),
        numpy_err=numpy.geterr() if numpy is not None else None, numba_threads=numba_threads, jax_flags=_jax_flags())


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# A generated kernel module lives in the kernel cache (outside the installation, like a workload's
# helper) but is solar's own: ``execute.cache`` keeps its numba dispatcher for the process, and numba
# imports the module by name to compile a new specialisation (another dtype or rank) for a later file;
# dropping it from ``sys.modules`` failed that file with "No module named 'solar_kernel_…'".
KERNEL_MODULE_PREFIX = "solar_kernel_"


def restore(saved: ProcessState) -> list[str]:
    """Put back what ``saved`` recorded; the names of what could not be put back (the caller
    replaces the process before the next file then)."""
    unrestorable: list[str] = []
    try:
        os.chdir(saved.cwd)
    except OSError:
        unrestorable.append(f"working directory {saved.cwd} (gone)")
    sys.path[:] = saved.sys_path
    sys.meta_path[:] = saved.meta_path
    sys.path_hooks[:] = saved.path_hooks
    sys.path_importer_cache.clear()
    if dict(os.environ) != saved.environ:
        for key in [k for k in os.environ if k not in saved.environ]:
            del os.environ[key]
        for key, value in saved.environ.items():
            if os.environ.get(key) != value:
                os.environ[key] = value
    roots = installed_roots()
    for name in [n for n in sys.modules if n not in saved.modules]:
        if name.startswith(KERNEL_MODULE_PREFIX):
            continue  # solar's generated kernels (execute.cache): kept, numba re-imports them to specialise
        if is_local_module(sys.modules.get(name), roots) or name.startswith("solar_workload_"):
            del sys.modules[name]  # the workload's own helpers: the next file imports its own
    sys.stdin, sys.stdout, sys.stderr = saved.streams
    warnings.filters[:] = saved.warning_filters
    if hasattr(warnings, "_filters_mutated"):
        warnings._filters_mutated()  # the C module caches the filter list's version
    sys.setrecursionlimit(saved.recursion_limit)
    os.umask(saved.umask)
    with contextlib.suppress(Exception):
        signal.setitimer(signal.ITIMER_REAL, 0)  # a pending alarm() would fire in the next file
    for sig, handler in saved.signal_handlers.items():
        if signal.getsignal(sig) is not handler and handler is not None:
            signal.signal(sig, handler)
    root = logging.getLogger()
    root.setLevel(saved.logging_level)
    root.handlers[:] = saved.logging_handlers
    _restore_torch(saved.torch, unrestorable)
    numpy = sys.modules.get("numpy")
    if numpy is not None and saved.numpy_err is not None:
        numpy.seterr(**saved.numpy_err)
    numba = sys.modules.get("numba")
    if numba is not None and saved.numba_threads is not None:
        with contextlib.suppress(Exception):
            if numba.get_num_threads() != saved.numba_threads:
                numba.set_num_threads(saved.numba_threads)
    jax = sys.modules.get("jax")
    if jax is not None:
        for name, value in saved.jax_flags.items():
            with contextlib.suppress(Exception):
                if getattr(jax.config, name) != value:
                    jax.config.update(name, value)
        if not saved.jax_flags and _jax_flags().get("jax_enable_x64"):
            jax.config.update("jax_enable_x64", False)  # jax was first imported by the file itself
    new_threads = [t for t in threading.enumerate() if t.ident not in saved.threads and t.is_alive()]
    if new_threads:
        unrestorable.append("threads " + ", ".join(sorted(t.name for t in new_threads)))
    return unrestorable
