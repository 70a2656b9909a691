"""A STREAM-style DRAM bandwidth measurement: multi-threaded numba kernels over arrays ≫ LLC.

The host spec's ``dram_bytes_per_s`` divides every memory-bound SOL time on this machine, so it
must be an *upper* bound on the bandwidth any program reaches: an understated figure would make
a bound too slow and a real run could beat it. Hence:

* arrays several times the last-level cache, so every pass streams from DRAM;
* the best of several repetitions (the machine is shared; a slow pass is noise, not the DRAM);
* bytes counted as they cross the memory bus: a store to a line not in cache first reads it
  (write-allocate), so a triad ``a = b + s·c`` moves four arrays' bytes, not STREAM's three.
  Where a CPU avoids that read, counting it overstates the bandwidth, the safe direction;
* the maximum over a triad and a read-only sum (reads alone often stream faster).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np

logger = logging.getLogger(__name__)

ELEMENT_BYTES = 8  # float64


@dataclass(frozen=True)
class StreamResult:
    """Best bus bandwidth per kernel (bytes/s, write-allocate counted) and how it was measured."""

    bytes_per_s: float  # the maximum over kernels: what the spec uses
    kernel: str  # which kernel gave it
    by_kernel: dict[str, float] = field(default_factory=dict)
    array_bytes: int = 0
    threads: int = 1
    repeats: int = 0

    def describe(self) -> str:
        kernels = ", ".join(f"{k} {v / 1e9:.3g} GB/s" for k, v in self.by_kernel.items())
        return (f"STREAM-style measurement with numba, {self.threads} thread(s), arrays of "
                f"{self.array_bytes / 2**20:.0f} MiB, best of {self.repeats}: {kernels} "
                f"(write-allocate counted: triad = 4 arrays); max = {self.kernel}")


def _kernels():
    """The numba kernels, compiled on first use (numba is slow to import)."""
    from numba import njit, prange

    @njit(parallel=True, fastmath=True, cache=True)
    def triad(a, b, c, s):  # pragma: no cover - compiled
        for i in prange(a.size):
            a[i] = b[i] + s * c[i]

    @njit(parallel=True, fastmath=True, cache=True)
    def read_sum(a):  # pragma: no cover - compiled
        total = 0.0
        for i in prange(a.size):
            total += a[i]
        return total

    return triad, read_sum


def measure_stream(array_bytes: int, threads: int, repeats: int = 10) -> StreamResult:
    """Best-of-``repeats`` triad and read bandwidth over arrays of ``array_bytes`` each."""
    import numba

    if array_bytes < ELEMENT_BYTES or threads < 1 or repeats < 1:
        raise ValueError(f"STREAM needs positive sizes: array_bytes={array_bytes}, threads={threads}, "
                         f"repeats={repeats}")
    threads = min(threads, numba.config.NUMBA_NUM_THREADS)
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        n = array_bytes // ELEMENT_BYTES
        triad, read_sum = _kernels()
        a, b, c = np.zeros(n), np.ones(n), np.full(n, 2.0)  # written once: pages are mapped before timing
        triad(a, b, c, 3.0)
        read_sum(a)  # compile and warm
        best = {"triad": np.inf, "read": np.inf}
        for _ in range(repeats):
            start = time.perf_counter()
            triad(a, b, c, 3.0)
            best["triad"] = min(best["triad"], time.perf_counter() - start)
            start = time.perf_counter()
            read_sum(b)
            best["read"] = min(best["read"], time.perf_counter() - start)
        moved = {"triad": 4 * n * ELEMENT_BYTES, "read": n * ELEMENT_BYTES}
        by_kernel = {k: moved[k] / best[k] for k in ("triad", "read")}
    finally:
        numba.set_num_threads(previous)
    kernel = max(by_kernel, key=by_kernel.__getitem__)
    result = StreamResult(by_kernel[kernel], kernel, by_kernel, n * ELEMENT_BYTES, threads, repeats)
    logger.info("%s", result.describe())
    return result
