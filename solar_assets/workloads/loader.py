"""Load a KernelBench-style problem file: ``Model``, ``get_inputs()``, ``get_init_inputs()``.

The module is executed as a fresh, uniquely named module each time, with torch seeded
before the model is built and again before the inputs are drawn, so the same file always
gives the same weights and inputs (the golden outputs depend on it).

For tracing, ``fake=True`` builds the model and its inputs under torch's ``FakeTensorMode``:
every parameter and input is a tensor with a shape, a dtype and no storage, so a file with
production sizes (a 16384² GEMM, a batch of 512² images) is loaded in milliseconds and
allocates nothing; torch.export traces fake tensors as it traces real ones.
"""
from __future__ import annotations

import contextlib
import types
from dataclasses import dataclass
from typing import Any

from solar_assets.errors import SolarError
from solar_assets.workloads.module import WorkloadError, exec_workload_module
from solar_assets.workloads.source import WorkloadSource

SEED = 0


@dataclass
class TorchWorkload:
    source: WorkloadSource
    module: types.ModuleType
    model: Any  # torch.nn.Module, in eval mode; for a training step its TrainStep (workloads.torch_training)
    inputs: list[Any]  # what get_inputs() returned
    fake: bool = False  # built under FakeTensorMode: shapes and dtypes only, no data




def fake_tensor_mode() -> Any:
    """A ``FakeTensorMode`` for building a workload without data. Real tensors the file made at
    module level (outside the mode) are accepted and turned into fake ones where they are used."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    return FakeTensorMode(allow_non_fake_inputs=True)


def load_torch_workload(src: WorkloadSource, constants: dict[str, int] | None = None, *,
                        fake: bool = False) -> TorchWorkload:
    """Build the model and its inputs; ``constants`` rebinds module-level sizes (``{"BATCH": 3}``)
    as the file runs, before the model is built. ``fake``: build both under ``FakeTensorMode``
    (for tracing: shapes only, nothing allocated); a file whose construction needs real values
    (``int(torch.randint(...))`` in ``__init__``) raises ``WorkloadError`` then, and the caller
    loads it for real."""
    import torch

    from solar_assets.workloads.hf_offline import offline_models, split_constants

    from solar_assets.workloads.reads import recorded_reads

    constants, hf_layers = split_constants(constants)
    with offline_models(src.path, hf_layers), recorded_reads(src):  # HuggingFace models by name, from solar's table
        return _load(src, constants, fake, torch)


def _load(src: WorkloadSource, constants: dict[str, int] | None, fake: bool, torch: Any) -> TorchWorkload:
    module = exec_workload_module(src, constants)
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if not hasattr(module, n)]
    if missing:
        raise WorkloadError(
            f"{src.path}: missing {', '.join(missing)}; a workload defines class Model(nn.Module), "
            "get_inputs() and get_init_inputs()"
        )
    try:
        with fake_tensor_mode() if fake else contextlib.nullcontext():
            torch.manual_seed(SEED)
            model = module.Model(*module.get_init_inputs())
            torch.manual_seed(SEED + 1)
            inputs = list(module.get_inputs())
            if src.train is not None and isinstance(model, torch.nn.Module):
                from solar_assets.workloads.torch_training import wrap_training_step

                return TorchWorkload(source=src, module=module, inputs=inputs, fake=fake,
                                     model=wrap_training_step(model, src.train, inputs, module, src.path))
    except SolarError:
        raise
    except Exception as e:
        how = " with fake tensors" if fake else ""
        raise WorkloadError(f"{src.path}: building the model or its inputs{how} failed: {type(e).__name__}: {e}") from e
    if not isinstance(model, torch.nn.Module):
        raise WorkloadError(f"{src.path}: Model(...) is a {type(model).__name__}, not a torch.nn.Module")
    model.eval()
    return TorchWorkload(source=src, module=module, model=model, inputs=inputs, fake=fake)
