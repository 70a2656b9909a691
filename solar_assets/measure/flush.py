"""Flush the caches between timed runs: read and write a buffer larger than every cache.

Without it, the second run of a small workload finds its inputs and weights in the last-level
cache and beats a DRAM bound that assumes they come from memory. ``buffer += 1`` reads and
writes every line through the cache hierarchy (ordinary stores, unlike a large ``memset`` that
may use non-temporal stores and leave the cache as it was), evicting the workload's data.
"""
from __future__ import annotations

import logging

import numpy as np

logger = logging.getLogger(__name__)

MIN_FLUSH_BYTES = 16 * 2**20


def cache_bytes() -> int:
    """The host's on-chip cache capacity (sum of its data / unified caches), 0 if unknown."""
    from solar_assets.hardware.detect import SYS_CPU, allowed_cpus, onchip_bytes, read_caches

    try:
        return onchip_bytes(read_caches(SYS_CPU, allowed_cpus()))
    except OSError:
        return 0


class CacheFlusher:
    """Call it between runs; ``nbytes`` defaults to twice the caches' capacity (≥ 16 MiB)."""

    def __init__(self, nbytes: int | None = None):
        self.nbytes = int(nbytes if nbytes is not None else max(2 * cache_bytes(), MIN_FLUSH_BYTES))
        if self.nbytes < 8:
            raise ValueError(f"flush buffer of {self.nbytes} bytes is too small")
        self._buffer = np.zeros(self.nbytes // 8)
        logger.debug("cache flush buffer: %d bytes", self.nbytes)

    def __call__(self) -> None:
        self._buffer += 1.0


class NoFlush:
    """For tests of the timing loop itself: does nothing."""

    nbytes = 0

    def __call__(self) -> None:
        return None
