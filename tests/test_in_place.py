"""In-place updates of inputs and buffers translate, validate and move what eager moves (issue 23).

Workloads written as KernelBench writes them, updating tensors in place the ways models do:
``x.mul_(2)``, a KV cache written at one decode position, ``index_copy_``, slices assigned or
scaled, training-mode batch norm updating its running statistics. Each updated tensor is an IR
output checked against eager's value after the call; every expected byte count is worked here
from the shapes (float32: 4 bytes per element).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ir_schemas import Kernel
from solar_assets.golden import make_golden
from solar_assets.graph import build_einsum_graph
from solar_assets.ir.updates import updated_sources, updated_target
from solar_assets.translate import trace_torch
from solar_assets.validate import validate_program
from solar_assets.validate.nodewise import validate_nodewise
from solar_assets.workloads import read_workload_source

KV_CACHE = '''
import torch
import torch.nn as nn

batch_size = 2
max_seq_len = {S}
n_heads = 4
head_dim = 32
decode_pos = {pos}


class Model(nn.Module):
    """Writes one decode step's keys into the cache, then reduces over the cached positions."""

    def __init__(self, batch_size, max_seq_len, n_heads, head_dim):
        super(Model, self).__init__()
        self.register_buffer("k_cache", torch.randn(batch_size, max_seq_len, n_heads, head_dim))

    def forward(self, k_new: torch.Tensor) -> torch.Tensor:
        self.k_cache[:, decode_pos] = k_new
        return self.k_cache.sum(dim=1)


def get_inputs():
    return [torch.randn(batch_size, n_heads, head_dim)]


def get_init_inputs():
    return [batch_size, max_seq_len, n_heads, head_dim]
'''

FORWARD = '''
import torch
import torch.nn as nn

N = 64
M = 32


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, {args}):
        {body}


def get_inputs():
    return [{inputs}]


def get_init_inputs():
    return []
'''

BATCH_NORM_TRAIN = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
features = 16
dim = 12


class Model(nn.Module):
    def __init__(self, features):
        super(Model, self).__init__()
        self.bn = nn.BatchNorm2d(features)

    def forward(self, x):
        return F.batch_norm(x, self.bn.running_mean, self.bn.running_var, self.bn.weight, self.bn.bias,
                            training=True, momentum=0.1, eps=1e-5)


def get_inputs():
    return [torch.randn(batch_size, features, dim, dim) * 3.0 + 1.0]


def get_init_inputs():
    return [features]
'''


def _source(tmp_path: Path, name: str, text: str):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return read_workload_source(path)


def _forward(tmp_path: Path, name: str, args: str, body: str, inputs: str):
    return _source(tmp_path, name, FORWARD.format(args=args, body=body, inputs=inputs))


def _validated(src):
    program = trace_torch(src).program
    result = validate_program(program, make_golden(src), source=src.path)
    assert result.ok, result.summary()
    return program


def _updates(program) -> dict[str, str]:
    return {n: updated_target(program.tensor(n)) for n in program.outputs if updated_target(program.tensor(n))}


def test_a_kv_cache_write_validates_and_moves_one_position(tmp_path):
    B, S, H, D, pos = 2, 64, 4, 32, 7
    program = _validated(_source(tmp_path, "kv_cache", KV_CACHE.format(S=S, pos=pos)))
    assert list(_updates(program).values()) == ["buffer:k_cache"]
    graph = build_einsum_graph(program)
    slice_bytes, cache_bytes = B * H * D * 4, B * S * H * D * 4
    updated = next(iter(_updates(program)))
    # the write moves one position (B·H·D elements), not the cache
    assert graph.io[graph.storage_of[updated]].bytes == slice_bytes
    write = next(n for n in graph.nodes if n.output == updated)
    assert write.write.bytes == slice_bytes and write.bytes == 2 * slice_bytes  # k in, the slice out
    # fused: the new keys in, the slice out, the rest of the cache read by the sum, the sum out
    assert graph.io_bytes == slice_bytes + slice_bytes + (cache_bytes - slice_bytes) + slice_bytes
    assert graph.io_bytes < cache_bytes + 3 * slice_bytes  # eager: copy_ into the slice, then the sum


def test_the_write_position_is_checked(tmp_path):
    """An IR writing the cache at the wrong position fails validation: the updated buffer is compared."""
    src = _source(tmp_path, "kv_cache", KV_CACHE.format(S=16, pos=5))
    program = trace_torch(src).program
    steps = [st.model_copy(update={"where": st.where.replace("5", "4")}) if isinstance(st, Kernel) and st.where
             else st for st in program.steps]
    assert steps != list(program.steps)
    wrong = program.model_copy(update={"steps": tuple(steps)})
    result = validate_program(wrong, make_golden(src), source=src.path)
    assert not result.ok
    assert set(_updates(program)) <= {c.name for c in result.checks if not c.ok}  # the cache (and the sum of it)


@pytest.mark.parametrize("pos", [0, -1])
def test_first_and_last_positions(tmp_path, pos):
    program = _validated(_source(tmp_path, f"kv_{pos}".replace("-", "m"), KV_CACHE.format(S=9, pos=pos)))
    graph = build_einsum_graph(program)
    assert graph.io[next(iter(_updates(program)))].bytes == 2 * 4 * 32 * 4


def test_mul_in_place_reads_and_writes_the_input_once(tmp_path):
    src = _forward(tmp_path, "mul_", "x", "x.mul_(2.0)\n        return x + 1.0", "torch.randn(N, M)")
    program = _validated(src)
    assert list(_updates(program).values()) == ["input:0"]
    n = 64 * 32 * 4
    assert build_einsum_graph(program).io_bytes == 3 * n  # x in, x updated, x + 1 out


def test_returning_the_updated_input_returns_its_storage(tmp_path):
    src = _forward(tmp_path, "ret", "x", "x.mul_(2.0)\n        return x", "torch.randn(N, M)")
    program = _validated(src)
    n = 64 * 32 * 4
    graph = build_einsum_graph(program)
    assert graph.io_bytes == 2 * n  # x in, x updated; the return is that storage (a view, no bytes)
    assert graph.io_bytes == graph.bytes_unfused


def test_index_copy_writes_the_indexed_rows_only(tmp_path):
    src = _forward(tmp_path, "index_copy", "x, index, src", "x.index_copy_(0, index, src)\n        return x.sum(dim=0)",
                   "torch.randn(N, M), torch.tensor([3, 40, 7]), torch.randn(3, M)")
    program = _validated(src)
    graph = build_einsum_graph(program)
    updated = next(iter(_updates(program)))
    row = 32 * 4
    # the indices are data: the fewest rows three of them can write is one
    assert graph.io[updated].bytes == row
    assert graph.io_bytes <= 64 * 32 * 4 + 3 * row + 3 * 8 + row + row  # at most eager's traffic


@pytest.mark.parametrize("name,body,written", [
    ("row_zero", "x[0] = 0.0\n        return x + 1.0", 32),
    ("range_slice", "x[:, 3:5] = 1.5\n        return x * 2.0", 64 * 2),
    ("strided_scale", "x[:, ::2] *= 2.0\n        return x.sum()", 64 * 16),
])
def test_slice_updates_write_the_slice(tmp_path, name, body, written):
    program = _validated(_forward(tmp_path, name, "x", body, "torch.randn(N, M)"))
    graph = build_einsum_graph(program)
    assert graph.io[next(iter(_updates(program)))].bytes == written * 4


def test_training_batch_norm_updates_its_running_statistics(tmp_path):
    src = _source(tmp_path, "bn_train", BATCH_NORM_TRAIN)
    program = _validated(src)
    assert sorted(_updates(program).values()) == ["buffer:bn.running_mean", "buffer:bn.running_var"]
    golden = make_golden(src)
    # eager moved the statistics (momentum 0.1 towards the batch's mean ≈ 1, variance ≈ 9)
    mean = golden.updates["buffer:bn.running_mean"]
    assert np.allclose(mean, 0.1 * golden.inputs[0].mean(axis=(0, 2, 3)), rtol=1e-4, atol=1e-6)
    for name, source in updated_sources(program).items():
        assert program.tensor(source).binding == updated_target(program.tensor(name))


@pytest.mark.parametrize("name", ["kv_cache", "strided_scale", "index_copy", "bn_train"])
def test_node_wise_validation_checks_the_updates(tmp_path, name):
    texts = {
        "kv_cache": KV_CACHE.format(S=16, pos=3),
        "strided_scale": FORWARD.format(args="x", body="x[:, ::2] *= 2.0\n        return x.sum()",
                                        inputs="torch.randn(N, M)"),
        "index_copy": FORWARD.format(args="x, index, src", body="x.index_copy_(0, index, src)\n        return x * 2.0",
                                     inputs="torch.randn(N, M), torch.tensor([3, 40, 7]), torch.randn(3, M)"),
        "bn_train": BATCH_NORM_TRAIN,
    }
    src = _source(tmp_path, name, texts[name])
    result = validate_nodewise(src, trace_torch(src))
    assert result.ok, result.summary()
    program = trace_torch(src).program
    checked = " ".join(f"{c.name} {c.message}" for c in result.checks if c.ok)
    assert all(name in checked for name in _updates(program))  # each updated tensor was compared
