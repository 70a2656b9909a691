"""A worker keeps solar's generated kernel modules between files (``workers.state.restore``).

Restoring the process after a file drops modules imported from outside the installation (a
workload's helpers). The kernel cache's modules live outside it too, but the executor keeps their
numba dispatchers for the whole process; a later file that runs the same kernel on another dtype
makes numba load a new specialisation (one another worker compiled into the on-disk cache), which
imports the module by name. KernelBench level 4
(GPT-2, OPT, GPT-Neo through ``solar coverage --jobs 2``) failed so with "No module named
'solar_kernel_…'" until the kernel modules were kept.
"""
from __future__ import annotations

import sys

import numpy as np
import pytest

from solar_assets import pipeline
from solar_assets.execute import execute_program
from solar_assets.workers import state
from solar_assets.workloads import read_workload_source
from tests.workload_texts import TINY_LINEAR_RELU


@pytest.mark.slow
def test_kernels_survive_a_restore_and_specialise_again(tmp_path, monkeypatch):
    monkeypatch.setenv("SOLAR_HOME", str(tmp_path / "home"))  # a fresh kernel cache: new modules
    path = tmp_path / "tiny_linear.py"
    path.write_text(TINY_LINEAR_RELU.replace("torch.relu(self.fc(x))", "torch.relu(self.fc(x)) * 0.75 - 0.0625"))
    program = pipeline.translate_source(read_workload_source(path)).program
    rng = np.random.default_rng(1)
    values = {t.binding: rng.standard_normal(t.shape) for t in program.tensors if t.binding}

    def run(dtype):
        return execute_program(program, {k: v.astype(dtype) for k, v in values.items()}, dtype, einsum=False)[0]

    saved = state.snapshot()
    first = run(np.float64)  # the first file: kernels imported and compiled for float64
    kernels = {m for m in sys.modules if m.startswith("solar_kernel_")}
    assert kernels
    assert state.restore(saved) == []
    assert kernels <= set(sys.modules)  # numba loads a specialisation another worker cached by this name
    from solar_assets.execute.cache import _COMPILED

    for dispatcher in list(_COMPILED.values()):  # a later file: the same kernels on float32 arrays
        for sig in list(dispatcher.signatures):
            dispatcher.compile(tuple(_as_float32(t) for t in sig))
    second = run(np.float32)
    w, b = values["param:fc.weight"], values["param:fc.bias"]
    expected = np.maximum(values["input:0"] @ w.T + b, 0.0) * 0.75 - 0.0625
    np.testing.assert_allclose(first, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(second, expected, rtol=1e-4, atol=1e-5)


def _as_float32(t):
    from numba import types

    if isinstance(t, types.Array) and t.dtype == types.float64:
        return t.copy(dtype=types.float32)
    return types.float32 if t == types.float64 else t
