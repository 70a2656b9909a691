"""SwinMLP-style workloads validate node-wise at the file's own size.

KernelBench's level-3 SwinMLP runs its spatial MLP as a grouped ``Conv1d`` over window
partitions (view / permute / contiguous), with shifted windows made by ``F.pad`` and undone by
a slice. The grouped convolution writes channel ``g*K + k``: a subscript summing two loop
variables. At full size that kernel is far too big to run whole (10 x 96 x 56 x 56 input:
1.5e8 iterations), so the point evaluator must solve such a mixed-radix subscript per point;
here the whole-run limit is lowered below the small workload's kernels to check exactly that
path in seconds.
"""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from ir_programs import kernel, program, tensor
from solar_assets.execute import execute_program
from solar_assets.pipeline import read_source, translate_source
from solar_assets.validate import nodewise_check, points
from solar_assets.validate.nodewise import POINTS, validate_nodewise
from solar_assets.validate.points import PointEvalError, PointEvaluator

SWIN_STYLE = textwrap.dedent('''
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    batch_size = 2
    image_size = 16
    patch_size = 2
    dim = 8
    num_heads = 2
    window_size = 4


    def partition(x, w):
        b, h, wd, c = x.shape
        x = x.view(b, h // w, w, wd // w, w, c)
        return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, w, w, c)


    def merge(windows, w, h, wd):
        b = int(windows.shape[0] / (h * wd / w / w))
        x = windows.view(b, h // w, wd // w, w, w, -1)
        return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(b, h, wd, -1)


    class Block(nn.Module):
        def __init__(self, dim, resolution, heads, window, shift, roll):
            super().__init__()
            self.resolution, self.heads, self.window, self.shift, self.roll = resolution, heads, window, shift, roll
            self.norm = nn.LayerNorm(dim)
            self.spatial = nn.Conv1d(heads * window ** 2, heads * window ** 2, kernel_size=1, groups=heads)
            self.fc = nn.Linear(dim, dim)

        def forward(self, x):
            h, w = self.resolution
            b, l, c = x.shape
            shortcut = x
            x = self.norm(x).view(b, h, w, c)
            s, win = self.shift, self.window
            if self.roll:
                x = torch.roll(x, shifts=(-s, -s), dims=(1, 2))
            elif s:
                x = F.pad(x, [0, 0, win - s, s, win - s, s], "constant", 0)
            _, hp, wp, _ = x.shape
            t = partition(x, win).view(-1, win * win, self.heads, c // self.heads).transpose(1, 2)
            t = self.spatial(t.reshape(-1, self.heads * win * win, c // self.heads))
            t = t.view(-1, self.heads, win * win, c // self.heads).transpose(1, 2).reshape(-1, win, win, c)
            x = merge(t, win, hp, wp)
            if self.roll:
                x = torch.roll(x, shifts=(s, s), dims=(1, 2))
            elif s:
                x = x[:, win - s:-s, win - s:-s, :].contiguous()
            x = shortcut + x.view(b, h * w, c)
            return x + self.fc(F.gelu(x))


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            side = image_size // patch_size
            self.proj = nn.Conv2d(3, dim, kernel_size=patch_size, stride=patch_size)
            self.norm = nn.LayerNorm(dim)
            self.blocks = nn.ModuleList([
                Block(dim, (side, side), num_heads, window_size, 0, False),
                Block(dim, (side, side), num_heads, window_size, window_size // 2, False),
                Block(dim, (side, side), num_heads, window_size, window_size // 2, True),
            ])

        def forward(self, x):
            x = self.norm(self.proj(x).flatten(2).transpose(1, 2))
            for block in self.blocks:
                x = block(x)
            return x


    def get_inputs():
        return [torch.rand(batch_size, 3, image_size, image_size)]


    def get_init_inputs():
        return []
''')


def test_swin_style_grouped_spatial_mlp_validates_at_points(tmp_path, monkeypatch):
    """Every group sampled, no kernel of more than 4096 iterations run whole: the grouped
    convolutions (2 windows-batches x 32 channels x 4 x 16 taps = 16384 and more iterations)
    are checked at their points, as the full-size SwinMLP's must be."""
    path = tmp_path / "swin_style.py"
    path.write_text(SWIN_STYLE)
    src = read_source(path)
    translation = translate_source(src, None)
    convs = [st for st in translation.program.steps if st.name in ("convolution_1", "convolution_2")]
    assert [st.out.split("[")[1].split(",")[1].strip() for st in convs] == ["g*16 + k"] * 2
    assert all(np.prod([lp.extent for lp in st.loops]) > 4096 for st in convs)
    monkeypatch.setattr(points, "WHOLE_LIMIT", 4096)
    monkeypatch.setattr(nodewise_check, "EXACT_COST", 0)
    result = validate_nodewise(src, translation)
    assert result.ok, "\n".join(result.failures())
    spatial = [c for c in result.checks if c.name in ("convolution_1", "convolution_2", "convolution_3")]
    assert len(spatial) == 3
    assert all(f"{POINTS} sampled points" in c.message for c in spatial), [c.message for c in spatial]


def _grouped(groups: int, k_ext: int, stride: int):
    """``Y[n, g*stride + k] = Σ_c X[n, g*stride + c] * W[g*stride + k, c]``; stride >= k_ext is
    a grouped convolution's channel map (with unwritten gaps when larger)."""
    width = groups * stride
    return program(
        [kernel("gconv", [("n", 3), ("g", groups), ("k", k_ext), ("c", k_ext)], f"Y[n, g*{stride} + k]", "+=",
                f"X[n, g*{stride} + c] * W[g*{stride} + k, c]")],
        [tensor("X", (3, width), "input"), tensor("W", (width, k_ext), "input", pos=1),
         tensor("Y", (3, width), "output")], name=f"grouped{stride}")


@pytest.mark.parametrize("stride", [4, 6])  # 4: dense channels; 6: two unwritten channels per group
def test_mixed_radix_write_is_evaluated_per_point(stride, monkeypatch):
    prog = _grouped(3, 4, stride)
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((3, 3 * stride)), rng.standard_normal((3 * stride, 4))
    expected = np.zeros((3, 3 * stride))  # brute force, from the definition
    for g in range(3):
        for k in range(4):
            expected[:, g * stride + k] = x[:, g * stride:g * stride + 4] @ w[g * stride + k]
    np.testing.assert_allclose(execute_program(prog, {"input:0": x, "input:1": w})[0], expected, rtol=1e-12)
    monkeypatch.setattr(points, "WHOLE_LIMIT", 1)  # a whole run would raise
    values = {"X": x, "W": w}
    flat = np.arange(expected.size)
    got = PointEvaluator(prog, prog.steps, values.__getitem__).value_at("Y", flat)
    np.testing.assert_allclose(got, expected.reshape(-1), rtol=1e-12, atol=1e-12)


def test_overlapping_sum_write_is_evaluated_per_point(monkeypatch):
    """``Y[g*2 + k]`` with k < 4: two (g, k) pairs write one point. An accumulation is still
    evaluated per point (k enumerated, g solved from the point, the pairs that miss it adding
    nothing: a transposed convolution's ``p + r``), with no whole run; an overwrite (which pair
    writes last is the loop order's) runs whole, and over the limit is refused, naming the kernel."""
    band = program([kernel("band", [("g", 3), ("k", 4)], "Y[g*2 + k]", "+=", "X[g] * K[k]")],
                   [tensor("X", (3,), "input"), tensor("K", (4,), "input", pos=1), tensor("Y", (8,), "output")],
                   name="band2")
    x, kk = np.array([1.0, 2.0, 3.0]), np.array([1.0, 10.0, 100.0, 1000.0])
    expected = np.zeros(8)
    for g in range(3):
        for k in range(4):
            expected[g * 2 + k] += x[g] * kk[k]
    values = {"X": x, "K": kk}
    monkeypatch.setattr(points, "WHOLE_LIMIT", 1)  # a whole run would raise
    got = PointEvaluator(band, band.steps, values.__getitem__).value_at("Y", np.arange(8))
    np.testing.assert_allclose(got, expected)
    last = program([kernel("band", [("g", 3), ("k", 4)], "Y[g*2 + k]", "=", "X[g] * K[k]")],
                   [tensor("X", (3,), "input"), tensor("K", (4,), "input", pos=1), tensor("Y", (8,), "output")],
                   name="band3")
    monkeypatch.setattr(points, "WHOLE_LIMIT", 11)
    with pytest.raises(PointEvalError, match="kernel 'band' .* not solvable per point"):
        PointEvaluator(last, last.steps, values.__getitem__).value_at("Y", np.arange(8))


def test_a_strided_transposed_convolution_is_evaluated_per_point(monkeypatch):
    """``Y[n, o, 2*p + r]`` (a stride-2 transposed convolution's scatter form): every
    output point against the definition, computed by brute force, with no whole run."""
    prog = program([kernel("tconv", [("n", 2), ("o", 3), ("c", 4), ("p", 5), ("r", 3)], "Y[n, o, 2*p + r]",
                           "+=", "X[n, c, p] * W[c, o, r]")],
                   [tensor("X", (2, 4, 5), "input"), tensor("W", (4, 3, 3), "input", pos=1),
                    tensor("Y", (2, 3, 11), "output")], name="tconv")
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((2, 4, 5)), rng.standard_normal((4, 3, 3))
    expected = np.zeros((2, 3, 11))
    for p in range(5):
        for r in range(3):
            expected[:, :, 2 * p + r] += np.einsum("nc,co->no", x[:, :, p], w[:, :, r])
    np.testing.assert_allclose(execute_program(prog, {"input:0": x, "input:1": w})[0], expected, rtol=1e-12)
    monkeypatch.setattr(points, "WHOLE_LIMIT", 1)
    got = PointEvaluator(prog, prog.steps, {"X": x, "W": w}.__getitem__).value_at("Y", np.arange(expected.size))
    np.testing.assert_allclose(got, expected.reshape(-1), rtol=1e-12, atol=1e-12)


def test_a_running_mean_of_a_cancelling_mean_carries_the_terms_magnitude():
    """BatchNorm's running mean in a training step, ``R[c] = 0.9*M0[c] + 0.1*S[c]`` with ``S`` the
    batch mean of values that cancel to ~0: its value is only as exact as the mean's terms allow,
    so the evaluator gives it the magnitude ``0.9*|M0| + 0.1*sum|x|/N`` (by hand here), which the
    node-wise tolerance follows, as it does for the mean itself."""
    prog = program([kernel("mean", [("c", 2), ("i", 4)], "S[c]", "+=", "X[c, i] * 0.25"),
                    kernel("running", [("c", 2)], "R[c]", "=", "0.9 * M0[c] + 0.1 * S[c]")],
                   [tensor("X", (2, 4), "input"), tensor("M0", (2,), "input", pos=1), tensor("S", (2,), "intermediate"),
                    tensor("R", (2,), "output")], name="running")
    x = np.array([[1.0, -1.0, 2.0, -2.0], [3.0, 1.0, -4.0, 0.5]])
    m0 = np.array([0.0, -2.0])
    evaluator = PointEvaluator(prog, prog.steps, {"X": x, "M0": m0}.__getitem__)
    np.testing.assert_allclose(evaluator.value_at("R", np.arange(2)), 0.9 * m0 + 0.1 * x.mean(axis=1))
    expected = 0.9 * np.abs(m0) + 0.1 * np.abs(x).sum(axis=1) * 0.25
    np.testing.assert_allclose(evaluator.summed_magnitude("R", np.arange(2)), expected)
