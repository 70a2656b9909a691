"""Shapes the values decide, and random draws with the generator fixed, as users write them.

PyTorch: ``nonzero``, ``masked_select``, a boolean mask over a leading dim, ``unique`` take their
length from the sample's values (the tracer runs the export on the seeded inputs once); the
reference for each length is PyTorch's own count on the same seeded inputs, and the validation at a
scaled size re-traces at that size's sample. JAX: ``jax.random`` draws (``normal``, ``bernoulli``,
``uniform``, ``categorical``, from split keys) validate with the fixed pattern on both sides.
"""
from __future__ import annotations

import re
import textwrap

import pytest

from solar_assets.coverage import check_workload
from solar_assets.sizing import ValidationBudget

SPARSE_GATE = '''
import torch
import torch.nn as nn

batch_size = 48
features = 64


class Model(nn.Module):
    """Routes the activations above a threshold onwards: a sparse gate."""

    def __init__(self, features):
        super().__init__()
        self.proj = nn.Linear(features, features)

    def forward(self, x, keep):
        h = torch.relu(self.proj(x))
        active = h[h > 0.2]
        rows = x[keep]
        where = torch.nonzero(h > 0.5)
        levels, counts = torch.unique((h * 4).floor(), return_counts=True)
        return active.sum() + where.float().mean(), rows * 2.0, levels, counts


def get_inputs():
    return [torch.randn(batch_size, features), torch.rand(batch_size) > 0.5]


def get_init_inputs():
    return [features]
'''

VALUE_BRANCH = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, y):
        if torch.equal(x, y):
            return x * 2
        return x + y


def get_inputs():
    return [torch.randn(4, 4), torch.randn(4, 4)]


def get_init_inputs():
    return []
'''

JAX_NOISE = '''
"""Noise injection, dropout and sampling with fixed keys."""
import jax
import jax.numpy as jnp

BATCH = 16
D = 32


def forward(x, w):
    noise = jax.random.normal(jax.random.key(0), x.shape)
    keep = jax.random.bernoulli(jax.random.PRNGKey(1), 0.9, x.shape)
    h = jnp.where(keep, x + 0.1 * noise, 0.0) / 0.9
    k1, k2 = jax.random.split(jax.random.key(2))
    jitter = jax.random.uniform(k1, (D,), minval=-0.5, maxval=0.5) * jax.random.normal(k2, (D,))
    picks = jax.random.categorical(jax.random.key(3), h @ w, axis=-1)
    return h @ w + jitter, picks


def get_inputs():
    return [jax.random.normal(jax.random.key(7), (BATCH, D)), jax.random.normal(jax.random.key(8), (D, D))]
'''

JAX_RAW_BITS = '''
import jax
import jax.numpy as jnp


def forward(x):
    return x + jax.random.bits(jax.random.key(0), x.shape).astype(jnp.float32)


def get_inputs():
    return [jnp.ones((4, 4))]
'''


def _write(tmp_path, name: str, text: str):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def test_lengths_are_the_frameworks_own_counts_at_the_sample(tmp_path):
    import torch

    from solar_assets.translate import trace_torch
    from solar_assets.workloads import load_torch_workload, read_workload_source

    src = read_workload_source(_write(tmp_path, "sparse_gate", SPARSE_GATE))
    w = load_torch_workload(src)
    x, keep = w.inputs
    with torch.no_grad():
        h = torch.relu(w.model.proj(x))
    expected = {"masked_select": int((h > 0.2).sum()), "nonzero": int((h > 0.5).sum()),
                "unique": len(torch.unique((h * 4).floor()))}
    rows = int(keep.sum())
    program = trace_torch(src).program
    counts = {s.routine: s.count for s in program.steps if s.kind == "linalg" and s.routine != "nonzero"}
    nonzero = [s for s in program.steps if s.kind == "linalg" and s.routine == "nonzero"]
    assert counts["masked_select"] == expected["masked_select"]
    assert counts["unique"] == expected["unique"]
    assert sorted(s.count for s in nonzero) == sorted([rows, expected["nonzero"]])  # the batch mask, then h > 0.5
    note = " ".join(trace_torch(src).diagnostics)
    assert f"boolean-mask index {expected['masked_select']}" in note and f"unique {expected['unique']}" in note
    assert note.startswith("shapes from the sample's values")


def test_selections_validate_at_a_scaled_size(tmp_path):
    path = _write(tmp_path, "sparse_gate", SPARSE_GATE)
    row = check_workload(str(path), tmp_path / "cache", budget=ValidationBudget(tensor_bytes=1 << 16))
    assert row.validated, row.error
    assert "batch_size=" in row.validated_size or "features=" in row.validated_size  # re-traced at that sample


def test_the_row_says_the_shapes_came_from_the_values(tmp_path):
    from solar_assets.asset_compute.plain import analyze_workload

    result = analyze_workload(_write(tmp_path, "sparse_gate", SPARSE_GATE), ["H100_SXM"], cache_dir=tmp_path / "c")
    assert result.error is None, result.error
    notes = result.rows[0].notes
    assert re.search(r"shapes from the sample's values \(masked_select \d+, nonzero \d+, nonzero \d+, unique \d+\)",
                     notes), notes


def test_a_branch_on_values_is_refused_with_the_reason(tmp_path):
    row = check_workload(str(_write(tmp_path, "value_branch", VALUE_BRANCH)), tmp_path / "cache")
    assert not row.translated
    assert "torch.export failed" in row.error and "out of scope: a Python decision on a tensor's values" in row.error


@pytest.mark.parametrize("name,text", [("jax_noise", JAX_NOISE)])
def test_jax_random_draws_validate(tmp_path, name, text):
    row = check_workload(str(_write(tmp_path, name, text)), tmp_path / "cache")
    assert row.validated, row.error


def test_jax_draw_is_one_kernel_writing_the_generated_tensor(tmp_path):
    from solar_assets.graph import build_einsum_graph
    from solar_assets.translate.jax_tracer import trace_function

    import jax

    program = trace_function(lambda x: x + jax.random.normal(jax.random.key(0), (64, 32)), [jax.numpy.ones((64, 32))])
    graph = build_einsum_graph(program)
    assert not [t for t in program.tensors if t.dtype.startswith("uint")]  # no key, no seed table
    # normal = sqrt(2)·erf_inv(uniform): the uniform draw written once (a kernel that reads
    # nothing), erf_inv and the scale each read and write one tensor, the add reads two and writes one
    assert graph.bytes_unfused == 4 * 64 * 32 * (1 + 2 + 2 + 3), graph.bytes_unfused


def test_raw_prng_bits_are_refused_by_name(tmp_path):
    row = check_workload(str(_write(tmp_path, "raw_bits", JAX_RAW_BITS)), tmp_path / "cache")
    assert not row.translated
    assert "random_bits" in row.error and "out of scope" in row.error
