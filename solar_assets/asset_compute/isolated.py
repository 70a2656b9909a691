"""An asset function that runs workload code, called from a Dagster step in a worker process.

The steps of ``ir_translation``, ``golden_outputs``, ``ir_validation`` and ``measured_runtime``
execute the user's file (torch.export runs its module, the golden run, node-wise validation and
the timing runs run it). Whichever
executor runs the step — in-process, multiprocess, a run launched from the UI, the automation
sensor or the nightly sweep, a Celery or Dask worker — the function runs in a worker of
``solar_assets.workers``, as it does under ``solar analyze``: a time limit and a resident-memory
limit (``AssetSettings.step_timeout_s`` / ``step_memory_limit``), the process state it changes put
back, what it prints captured. A hang, a crash or a kill fails that step with one line naming
the file, the stage and why; the step's process (and the run's other steps) carry on.

The value comes back in its stored form (``storage.stored_form``: golden values over the cap as
their digest and recipe), so a large golden run is not pickled across the pipe.
"""
from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from solar_assets.asset_compute.computed import Computed
from solar_assets.asset_compute.graph import NODES, AssetNode
from solar_assets.asset_compute.settings import AssetSettings
from solar_assets.errors import SolarError, one_line, with_path
from solar_assets.validate.errors import ValidationFailed

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclasses.dataclass
class _Failed:
    """A step's failure as the worker reports it (an exception may not pickle)."""

    message: str
    validation: Any = None  # the ValidationResult of a failed validation


def in_worker(node: AssetNode, inputs: dict[str, Any], settings: AssetSettings, key: str | None = None) -> Computed:
    """``node``'s function on ``inputs`` in a worker process with the settings' limits, its value
    in stored form; raises as ``call_in_worker`` does."""
    source = inputs.get("workload_source")
    path = str(getattr(source, "path", None) or settings.workload_path(key or ""))
    return call_in_worker(path, _compute_node, {"name": node.name, "inputs": inputs,
                                                "settings": settings.as_dict(), "key": key}, settings, node.name)


def call_in_worker(path: str, fn: Callable[..., T], kwargs: dict[str, Any], settings: AssetSettings,
                   name: str | None = None) -> T:
    """``fn(**kwargs)`` (a module-level function: workers are spawned) for the workload ``path`` in
    a worker with the settings' limits; ``name`` (else ``fn``'s) names it in an unexpected error. Raises ``ValidationFailed`` / ``SolarError`` (one line
    naming the file) as ``fn`` would, and a ``SolarError`` for a worker that timed out, ran out of
    memory or died."""
    import multiprocessing

    from solar_assets.workers import parse_memory_limit, run_in_workers

    task = {"fn": fn, "kwargs": kwargs, "name": name or getattr(fn, "__name__", "step")}
    if multiprocessing.current_process().daemon:
        # already in a worker (``solar analyze --measure`` materialises its measurements in one):
        # its limits and its put-back apply, and a daemonic process may not start another
        out = _call_task(path, None, task)
    else:
        [out] = run_in_workers([path], _call_task, _unfinished, None, jobs=1, timeout_s=settings.step_timeout_s,
                               memory_limit_bytes=parse_memory_limit(settings.step_memory_limit), task_arg=task)
    if isinstance(out, _Failed):
        if out.validation is not None:
            raise ValidationFailed(out.message, out.validation)
        raise SolarError(out.message)
    return out


def _compute_node(name: str, inputs: dict[str, Any], settings: dict[str, Any], key: str | None) -> Computed:
    from solar_assets.asset_compute.storage import stored_form

    node = NODES[name]
    out = node.fn(**inputs, **({"key": key} if node.takes_key else {}), solar=AssetSettings(**settings))
    return dataclasses.replace(out, value=stored_form(out.value))


def _call_task(path: str, cache_dir: str | None, arg: dict[str, Any]) -> Any:
    try:
        return arg["fn"](**arg["kwargs"])
    except ValidationFailed as e:
        return _Failed(one_line(str(e)), e.result)
    except SolarError as e:
        return _Failed(one_line(str(e)))
    except Exception as e:  # one line naming the file, as a stage's error would
        log.debug("%s: %s failed", path, arg["name"], exc_info=True)
        return _Failed(with_path(f"{arg['name']} failed unexpectedly: {type(e).__name__}: {e}", path))


def _unfinished(path: str, message: str, seconds: float, last_event: str | None) -> _Failed:
    """A killed worker's failure, worded as ``solar analyze`` words it (``unfinished_result``)."""
    from solar_assets.chain.run import unfinished_result

    return _Failed(unfinished_result(path, message, seconds, last_event).error or message)
