"""Workers get their share of the threads before their first import.

Workers are spawned; unpickling the task imports its module, and the stages' modules import numba,
which reads NUMBA_NUM_THREADS once at import. Set only later (in the worker's own start-up), the
variable no longer matched numba's, and numba's next configuration reload (every compile) raised
"Cannot set NUMBA_NUM_THREADS to a different value once the threads have been launched": every
file whose kernels compiled in a worker of ``solar coverage --jobs 2`` failed validation."""
from __future__ import annotations

import os

import pytest
import numba  # noqa: F401 - imported with this module, as the stages' modules import it: at unpickling

from solar_assets.workers.pool import run_in_workers


def _thread_settings(path: str, cache_dir: str | None, task_arg: object) -> tuple[str, int]:
    from numba.core import config
    from numba.np.ufunc import parallel

    parallel._launch_threads()  # what the first parallel kernel does
    config.reload_config()  # what every compile does; raised before the fix
    return os.environ["NUMBA_NUM_THREADS"], config.NUMBA_NUM_THREADS


def _unfinished(path: str, message: str, seconds: float, last_stage: str | None) -> tuple[str, int]:
    return message, -1


@pytest.mark.slow
def test_spawned_workers_read_their_thread_share_at_their_first_import():
    jobs = 2
    share = max(1, (os.cpu_count() or 1) // jobs)
    results = run_in_workers(["a", "b"], _thread_settings, _unfinished, jobs=jobs, timeout_s=120)
    assert results == [(str(share), share), (str(share), share)]
