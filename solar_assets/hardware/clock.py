"""Read a core's running clock by timing a chain of dependent one-cycle integer operations.

Why: a virtual machine's ``/proc/cpuinfo`` shows the nominal clock and no cpufreq, while its
cores boost well above it (CI's EPYC VM reads 2.45 GHz; this Genoa VM reads 2.6 GHz and runs one
core at 3.67). A peak computed from the nominal clock is *below* what the CPU does, so a measured
run beats the "bound" built on it (in CI an fp32 Linear ran at 1.66e11 FLOP/s against a 1.57e11
peak). A GEMM's rate only implies a clock if the GEMM were perfectly efficient; the chain below
reads the clock itself.

The loop body is ``x = x + (x >> 3)`` four times: on x86-64 each statement is a ``sar`` and an
``add`` that depend on each other, one cycle each on every x86 core since the P6 and the K7, so
two cycles per statement at least. Elapsed time ≥ 2 × statements / clock, hence
``2 × statements / best time`` is never above the clock a core ran at: it reads the single-core
boost clock, which no all-core vector unit exceeds. Other architectures fold the shift into the
add (``add x, x, x, asr #3`` on AArch64), so the figure is only taken on x86-64.
"""
from __future__ import annotations

import logging
import platform
import time

logger = logging.getLogger(__name__)

STATEMENTS_PER_ITERATION = 4
CYCLES_PER_STATEMENT = 2  # sar then add, each one cycle of latency, dependent
CHAIN_ITERATIONS = 5_000_000  # ~11 ms at 3.5 GHz: short enough to catch an undisturbed slice
CHAIN_REPEATS = 40  # the fastest of these is taken: a shared host's preemption only slows runs down
X86_64 = {"x86_64", "amd64"}


def _chain():
    import numba

    @numba.njit(cache=False, nogil=True)
    def chain(n: int, x: int) -> int:
        for _ in range(n):
            x = x + (x >> 3)
            x = x + (x >> 3)
            x = x + (x >> 3)
            x = x + (x >> 3)
        return x

    return chain


def chain_clock_hz(iterations: int = CHAIN_ITERATIONS, repeats: int = CHAIN_REPEATS) -> float | None:
    """The clock one core ran the dependent chain at (a floor under its boost clock), or ``None``
    off x86-64, where the chain's cycles per statement are not known."""
    if platform.machine().lower() not in X86_64:
        logger.info("clock: not timing a dependent chain on %s (cycles per statement unknown there)",
                    platform.machine())
        return None
    chain = _chain()
    chain(10, 3)  # compile
    best = min(_timed(chain, iterations) for _ in range(repeats))
    return STATEMENTS_PER_ITERATION * CYCLES_PER_STATEMENT * iterations / best


def _timed(chain, iterations: int) -> float:
    start = time.perf_counter()
    chain(iterations, 3)
    return time.perf_counter() - start


def chain_assembly() -> str:
    """The compiled loop's x86 assembly, for the test that the loop is what the docstring says."""
    chain = _chain()
    chain(10, 3)
    return chain.inspect_asm(chain.signatures[0])
