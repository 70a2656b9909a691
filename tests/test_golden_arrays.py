"""The golden run's arrays: what the run may write in place is copied before it, the rest shares
the tensors' memory (``golden.golden._to_numpy``), a view of a larger storage is copied."""
from __future__ import annotations

import numpy as np
import torch

from solar_assets.golden import make_golden
from solar_assets.golden.golden import _to_numpy
from solar_assets.workloads import read_workload_source

COUNTS_THEN_LAST_STEP = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.register_buffer("total", torch.zeros(channels))

    def forward(self, x):
        self.total.add_(x.sum(dim=(0, 1)))  # a buffer the run writes in place
        return (x * 2.0)[:, -1]  # a view of a larger result


batch_size = 4
steps = 6
channels = 3


def get_inputs():
    return [torch.randn(batch_size, steps, channels)]


def get_init_inputs():
    return [channels]
'''


def test_a_view_of_a_larger_storage_is_copied_a_whole_tensor_is_shared():
    h = torch.randn(8, 10, 4)
    last, whole = _to_numpy(h[:, -1]), _to_numpy(h)
    assert not np.shares_memory(last, h.numpy()) and np.array_equal(last, h[:, -1].numpy())
    assert np.shares_memory(whole, h.numpy())
    snap = _to_numpy(h, snapshot=True)
    h.add_(1.0)
    assert not np.shares_memory(snap, h.numpy()) and np.array_equal(snap + 1.0, h.numpy())


def test_buffers_are_the_values_before_the_run_outputs_the_runs_own(tmp_path):
    path = tmp_path / "counts_last_step.py"
    path.write_text(COUNTS_THEN_LAST_STEP)
    golden = make_golden(read_workload_source(path))
    x = golden.inputs[0]
    assert np.array_equal(golden.params["buffer:total"], np.zeros(3, dtype=np.float32))  # as before the run
    np.testing.assert_allclose(golden.updates["buffer:total"], x.sum(axis=(0, 1)), rtol=1e-6)  # the run's write
    (out,) = golden.outputs
    np.testing.assert_array_equal(out, (x * 2.0)[:, -1])
    assert out.flags.owndata  # a compact copy, not a view keeping the whole x * 2 alive
