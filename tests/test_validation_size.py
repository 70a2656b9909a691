"""Validation at any size: full where cheap, scaled-down size constants where not, or as declared;
the IR at the validation size must have the full-size IR's structure."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from solar_assets import pipeline
from solar_assets.golden import Golden, load_golden, save_golden
from solar_assets.sizing import ValidationBudget, ValidationSizeError
from solar_assets.sizing import program_cost, scale_constants, structure_difference
from solar_assets.workloads import (
    SizeDeclarationError,
    declared_validation_sizes,
    load_torch_workload,
    read_workload_source,
    size_constants,
)

LINEAR = '''\
import torch
import torch.nn as nn

BATCH = 64
IN_FEATURES = 32
OUT_FEATURES = 48
HIDDEN = 2 * OUT_FEATURES  # derived: follows OUT_FEATURES when it is rebound
{declaration}

class Model(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out)

    def forward(self, x):
        {branch}return torch.relu(self.fc(x))


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
'''
TINY_BUDGET = ValidationBudget(tensor_bytes=10_000, iterations=10_000)


def workload(tmp_path: Path, name: str, declaration: str = "", branch: str = "") -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(LINEAR.format(declaration=declaration, branch=branch))
    return path


def test_size_constants_and_rebinding(tmp_path):
    path = workload(tmp_path, "linear")
    constants = size_constants(path)
    assert {n: (c.value, c.free) for n, c in constants.items()} == {
        "BATCH": (64, True), "IN_FEATURES": (32, True), "OUT_FEATURES": (48, True), "HIDDEN": (96, False)}
    w = load_torch_workload(read_workload_source(path), {"BATCH": 5, "OUT_FEATURES": 7})
    assert tuple(w.inputs[0].shape) == (5, 32) and w.model.fc.out_features == 7
    assert w.module.HIDDEN == 14  # the derived constant follows


def test_scaling_is_odd_and_keeps_divisibility():
    values = {"BATCH": 16, "DIM": 768, "HEADS": 12, "GROUPS": 4, "WIDTH": 100}
    # odd: DIM an odd multiple of the new HEADS (and BATCH, which divided it too); GROUPS is even: ignored
    assert scale_constants(values, ["BATCH", "DIM", "HEADS", "WIDTH"], 8, exact=False) == \
        {"BATCH": 3, "DIM": 93, "HEADS": 3, "WIDTH": 11}
    # plain division: each stays a proper multiple of the small unscaled GROUPS (and DIM of HEADS, BATCH)
    assert scale_constants(values, ["BATCH", "DIM", "HEADS"], 8, exact=True) == {"BATCH": 8, "DIM": 96, "HEADS": 8}
    # grouped-query attention: 16 heads over 4 KV heads stay a proper multiple (n_rep > 1 keeps the expand)
    assert scale_constants({"HIDDEN": 1024, "NUM_HEADS": 16, "NUM_KV_HEADS": 4}, ["NUM_HEADS"], 8, exact=True) == \
        {"NUM_HEADS": 8}
    # and a scaled head count still divides the kept hidden size: 60 // 8 = 7 does not divide 1020, 6 does
    assert scale_constants({"HIDDEN": 1020, "HEADS": 60}, ["HEADS"], 8, exact=True) == {"HEADS": 6}


def test_full_size_when_cheap(tmp_path):
    path = workload(tmp_path, "cheap")
    result = pipeline.analyze_workload(path, ["H100_SXM"], cache_dir=tmp_path / "cache")
    assert result.ok, result.error
    assert result.validated_size == result.rows[0].validated_size == "full"


def test_scaled_down_when_over_budget(tmp_path):
    path = workload(tmp_path, "costly")
    src = read_workload_source(path)
    full = pipeline.translate_source(src).program
    assert not program_cost(full).within(TINY_BUDGET)
    result = pipeline.analyze_workload(path, ["H100_SXM"], cache_dir=tmp_path / "cache",
                                       validation_budget=TINY_BUDGET)
    assert result.ok, result.error
    row = result.rows[0]
    # batch and output rows cut to odd sizes; the reduction length IN_FEATURES kept. The budget picks
    # that tier (at 1/8: 7 and 5, 8.8 KiB); the scaled target (1/8 of the budget, 1,250 bytes) then
    # scales on to the odd floor, 3 and 3 (1.7 KiB: the weights' 32 columns stay)
    assert row.validated_size == "BATCH=3,OUT_FEATURES=3"
    assert row.macs == 64 * 32 * 48  # the bounds are of the full size
    assert row.validated and row.max_abs_error < 1e-4
    small = pipeline.translate_source(src, constants={"BATCH": 3, "OUT_FEATURES": 3}).program
    assert structure_difference(full, small) is None
    assert program_cost(small).within(TINY_BUDGET)
    assert not program_cost(small).within(TINY_BUDGET.scaled_target())
    # without a target below the budget: the first size within it
    budget_only = ValidationBudget(TINY_BUDGET.tensor_bytes, TINY_BUDGET.iterations, scaled_share=1)
    first = pipeline.analyze_workload(path, ["H100_SXM"], cache_dir=tmp_path / "cache", validation_budget=budget_only)
    assert first.ok and first.rows[0].validated_size == "BATCH=7,OUT_FEATURES=5"


def test_declared_size_wins(tmp_path):
    path = workload(tmp_path, "declared", declaration='SOLAR_VALIDATION_SIZES = {"BATCH": 5}')
    assert declared_validation_sizes(path) == {"BATCH": 5}
    src = read_workload_source(path)
    translation = pipeline.translate_source(src)
    size = pipeline.validation_size_for(src, translation)
    assert size.label == "BATCH=5" and "declared" in size.reason
    golden = pipeline.golden_for(src, None, size)
    assert golden.constants == {"BATCH": 5} and golden.inputs[0].shape == (5, 32)
    validated = pipeline.validate_translation(src, translation, golden)
    assert validated.validated_size == "BATCH=5" and validated.result.ok
    assert validated.program is translation.program  # what is analysed stays the full-size IR


def test_structure_difference_is_an_error_naming_the_file(tmp_path):
    # a Python branch on the batch size: the IR at BATCH=5 lacks the full size's multiply
    path = workload(tmp_path, "branchy", declaration='SOLAR_VALIDATION_SIZES = {"BATCH": 5}',
                    branch="x = x * 2 if x.shape[0] > 16 else x\n        ")
    src = read_workload_source(path)
    with pytest.raises(ValidationSizeError, match="structure") as caught:
        pipeline.validation_size_for(src, pipeline.translate_source(src))
    assert str(path) in str(caught.value) and "BATCH=5" in str(caught.value)


def test_bad_declaration_names_the_file_and_the_constant(tmp_path):
    path = workload(tmp_path, "typo", declaration='SOLAR_VALIDATION_SIZES = {"BACTH": 3}')
    with pytest.raises(SizeDeclarationError, match="BACTH") as caught:
        declared_validation_sizes(path)
    assert str(path) in str(caught.value)


def test_golden_keeps_its_size_through_the_cache(tmp_path):
    golden = Golden(inputs=[np.ones((3, 2), np.float32)], params={}, outputs=[np.ones(3, np.float32)],
                    outputs64=[np.ones(3)], constants={"BATCH": 3, "DIM": 2})
    save_golden(golden, tmp_path / "g.npz")
    loaded = load_golden(tmp_path / "g.npz")
    assert loaded.constants == {"BATCH": 3, "DIM": 2} and loaded.size_label == "BATCH=3,DIM=2"


def test_counts_and_operator_parameters_are_not_sizes():
    from solar_assets.sizing import not_a_size

    for name in ("num_layers", "layers[2]", "DEPTH", "kernel_size[1]", "pool_kernel_size", "stride[0]",
                 "padding", "dilation", "num_groups", "GROUPS", "scale_factor", "divisor", "eps"):
        assert not_a_size(name), name
    for name in ("batch_size", "BATCH", "dim", "in_features", "layer_sizes[0]", "hidden_layer_sizes[1]",
                 "input_shape[0]", "height", "num_heads"):
        assert not not_a_size(name), name


COUPLED_NORM = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, norm_shape):
        super(Model, self).__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, output_padding=output_padding)
        self.norm = nn.LayerNorm(norm_shape)

    def forward(self, x):
        return torch.nn.functional.gelu(self.norm(self.conv_transpose(x)))


batch_size = 32
in_channels = 32
out_channels = 64
depth, height, width = 16, 32, 32
kernel_size = (3, 3, 3)
stride = (2, 2, 2)
padding = (1, 1, 1)
output_padding = (1, 1, 1)
norm_shape = (out_channels,)


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, norm_shape]
'''


@pytest.mark.slow
def test_a_size_coupling_the_odd_sizes_break_is_kept_by_plain_division(tmp_path):
    """A LayerNorm over the last dim whose width the file couples to the channel count (2·width =
    out_channels after the stride-2 transposed convolution, level 2's style): odd sizes break the
    coupling and fail to export, retrying with the crossed sizes as written would scale nothing
    (the full size), so plain division is tried next and keeps it: out_channels 8, width 4."""
    path = tmp_path / "coupled_norm.py"
    path.write_text(COUPLED_NORM)
    result = pipeline.analyze_workload(path, ["H100_SXM"], cache_dir=tmp_path / "cache",
                                       validation_budget=ValidationBudget(tensor_bytes=2**22, iterations=10**8))
    assert result.ok, result.error
    row = result.rows[0]
    assert row.validated and "node-wise" not in row.validated_size, row.validated_size
    sizes = dict(part.split("=") for part in row.validated_size.split(","))
    assert 2 * int(sizes["width"]) == int(sizes["out_channels"])
