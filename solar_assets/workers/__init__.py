"""Worker processes for workload files: time and memory limits, restored global state, captured output."""
from solar_assets.workers.limits import parse_memory_limit
from solar_assets.workers.pool import StartedWorkers, prestart, run_in_workers, warm_up_tracer

__all__ = ["StartedWorkers", "parse_memory_limit", "prestart", "run_in_workers", "warm_up_tracer"]
