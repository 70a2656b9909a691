"""A long-lived process's heap: its start-up objects kept out of the garbage collector's way, and
what a file freed handed back to the system.

A worker holds torch, numba, JAX and Dagster: some 350,000 objects the cyclic collector tracks
and never frees. Every full collection walked them all (0.2–0.3 s on this machine), once per
file in ``release_freed_memory`` and again whenever a file's allocations set one off (a small
file's one-trace export paid one: 0.27 s where the export itself is 0.11 s). ``freeze_start_up``
moves them to the collector's permanent generation (``gc.freeze``, made for long-lived servers)
once the process has imported and warmed up, so a collection walks what the files made. (Its
effect on a full KernelBench run was not measured apart from the session's other changes; in one
process, 20 small files translated in 1.7 s with and without it.)
"""
from __future__ import annotations

import contextlib
import ctypes
import gc
import logging
import sys
import time

log = logging.getLogger(__name__)


def freeze_start_up() -> int:
    """Collect what start-up left, then exempt everything alive from later collections; the
    number of objects frozen (``gc.get_freeze_count``). Only for a process solar owns and ends
    (a worker, a checker): a frozen object is never collected."""
    start = time.perf_counter()
    gc.collect()
    gc.freeze()
    frozen = gc.get_freeze_count()
    log.debug("froze %d start-up objects in %.3f s", frozen, time.perf_counter() - start)
    return frozen


def release_freed_memory() -> None:
    """Collect the file's garbage and hand the heap's free pages back to the system (glibc's
    ``malloc_trim``): a worker that ran a full-size model keeps gigabytes of freed arena otherwise,
    and the next file's peak stacks on them (8.9 GB for KernelBench's AlexNet after level 4's
    models, 5.9 GB in a fresh worker)."""
    gc.collect()
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6").malloc_trim(0)
