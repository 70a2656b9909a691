"""The workload run on this host (``measured_runtime``): torch eager / torch.compile, JAX op-by-op /
jax.jit, caches flushed between runs; headroom against the SOL bounds and the violation audit."""
from solar_assets.measure.backends import BACKENDS, MeasureError, parse_backends, runner_for
from solar_assets.measure.flush import CacheFlusher, NoFlush, cache_bytes
from solar_assets.measure.headroom import HOST, add_measurement, audit
from solar_assets.measure.runtime import Timing, TimingOptions, time_runs
from solar_assets.measure.workload import MeasureOptions, WorkloadMeasurement, measure_workload

__all__ = [
    "BACKENDS", "HOST", "CacheFlusher", "MeasureError", "MeasureOptions", "NoFlush", "Timing", "TimingOptions",
    "WorkloadMeasurement", "add_measurement", "audit", "cache_bytes", "measure_workload", "parse_backends",
    "runner_for", "time_runs",
]
