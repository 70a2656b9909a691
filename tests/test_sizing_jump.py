"""The size search jumps over factors its extrapolation shows are over budget, and lands where a
walk over every factor lands (the reference: each power of two traced in turn, the first within
budget kept), with fewer traces."""
from __future__ import annotations

from pathlib import Path

import pytest

from solar_assets import pipeline
from solar_assets.sizing import ValidationBudget, choose_validation_size, program_cost, scale_constants
from solar_assets.sizing.search import SCALE_FACTORS, ValidationCost, _next_factor, scaling_tiers
from solar_assets.workloads import read_workload_source, size_constants

ELEMENTWISE = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    """A LeakyReLU with its slope given at construction."""

    def __init__(self, negative_slope: float):
        super(Model, self).__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.leaky_relu(x, negative_slope=self.negative_slope)


batch_size = 65536
dim = 64
negative_slope = 0.05


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [negative_slope]
'''

VALID_CONV = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    """A 2D convolution without padding (its output is height - kernel_size + 1 high), then ReLU."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x))


batch_size = 4
in_channels = 3
out_channels = 8
kernel_size = 5
height = 512
width = 512


def get_inputs():
    x = torch.rand(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
'''


def _counted_trace(src):
    calls: list[dict[str, int]] = []

    def trace(constants: dict[str, int]):
        calls.append(dict(constants))
        return pipeline.translate_source(src, constants=constants).program

    return trace, calls


def _walk_every_factor(src, full, budget: ValidationBudget) -> tuple[dict[str, int], int]:
    """The reference: the first tier and power-of-two factor whose odd-sized IR is within budget,
    every factor traced in turn; with the number of traces."""
    constants = size_constants(src.path)
    values = {c.name: c.value for c in constants.values()}
    traces = 0
    for tier in scaling_tiers(constants, full):
        factor = SCALE_FACTORS[0]
        while factor <= SCALE_FACTORS[-1]:
            scaled = scale_constants(values, tier.names, factor, exact=False)
            traces += 1
            if program_cost(pipeline.translate_source(src, constants=scaled).program).within(budget):
                return scaled, traces
            factor *= 2
    raise AssertionError("no factor fits")


@pytest.mark.parametrize("text, budget", [
    (ELEMENTWISE, ValidationBudget(tensor_bytes=600_000, iterations=10**9, scaled_share=1)),  # 64 MiB at full size
    (VALID_CONV, ValidationBudget(tensor_bytes=10**9, iterations=40_000, scaled_share=1)),  # 6.4e8 iterations at full size
])
def test_the_jump_lands_where_a_walk_over_every_factor_lands(tmp_path: Path, text: str, budget: ValidationBudget):
    path = tmp_path / "model.py"
    path.write_text(text)
    src = read_workload_source(path)
    full = pipeline.translate_source(src).program
    trace, calls = _counted_trace(src)
    size = choose_validation_size(path, full, trace, budget)
    expected, walked = _walk_every_factor(src, full, budget)
    assert size.constants == expected
    assert walked >= 4 and len(calls) <= walked - 2, (calls, walked)


def test_next_factor_is_a_power_of_two_past_the_extrapolated_fit():
    budget = ValidationBudget(tensor_bytes=1000, iterations=10**12)
    # cost ∝ 1/f: 64_000 at 1, 8_000 at 8 → 1000 at 64
    assert _next_factor(8, ValidationCost(8_000, 1), 1, ValidationCost(64_000, 1), budget) == 64
    # cost ∝ 1/f²: 640_000 at 1, 10_000 at 8 → 1000 at 8·√10 ≈ 25.3 → 32
    assert _next_factor(8, ValidationCost(10_000, 1), 1, ValidationCost(640_000, 1), budget) == 32
    # just over: the next power of two
    assert _next_factor(8, ValidationCost(1_001, 1), 1, ValidationCost(8_008, 1), budget) == 16
    # not falling: one factor on, the stall check decides
    assert _next_factor(8, ValidationCost(5_000, 1), 1, ValidationCost(5_000, 1), budget) == 16
    # never past the largest factor
    assert _next_factor(8, ValidationCost(10**9, 1), 1, ValidationCost(10**9 + 1, 1), budget) == SCALE_FACTORS[-1]


def test_a_scaled_size_aims_at_the_target_in_the_tier_the_budget_picks(tmp_path: Path):
    """With the default share the size is scaled on to 1/8 of the budget within the same tier (the
    same constants scaled, the reduction length kept); a tier whose sizes reach their floor before
    the target keeps the cheapest size within the budget (odd sizes, never the plain division's 2)."""
    path = tmp_path / "model.py"
    path.write_text(ELEMENTWISE)
    src = read_workload_source(path)
    full = pipeline.translate_source(src).program
    budget = ValidationBudget(tensor_bytes=600_000, iterations=10**9)
    trace, calls = _counted_trace(src)
    size = choose_validation_size(path, full, trace, budget)
    budget_only, _ = _walk_every_factor(src, full, ValidationBudget(600_000, 10**9, scaled_share=1))
    assert set(size.constants) == set(budget_only) == {"batch_size"}
    cost = program_cost(pipeline.translate_source(src, constants=size.constants).program)
    assert cost.within(budget.scaled_target()) and size.constants["batch_size"] < budget_only["batch_size"]
    assert size.constants["batch_size"] % 2 == 1 and len(calls) <= 3

    # dim = 4096 does not scale in the batch tier: batch 3 is 196 KiB, over a 75 KiB target, within 600 KB
    path.write_text(ELEMENTWISE.replace("dim = 64", "dim = 4096"))
    src = read_workload_source(path)
    full = pipeline.translate_source(src).program
    size = choose_validation_size(path, full, _counted_trace(src)[0], ValidationBudget(600_000, 10**9))
    assert size.constants == {"batch_size": 3}


def test_the_batch_tier_starts_where_cost_in_proportion_to_the_batch_would_reach_the_target():
    from solar_assets.sizing.search import ScalingTier, _first_factor

    target = ValidationBudget(tensor_bytes=1000, iterations=1000, scaled_share=1)
    batch, rows = ScalingTier("batch", ("batch_size",)), ScalingTier("all", ("batch_size", "dim"))
    assert _first_factor(batch, ValidationCost(100_000, 10), target) == 128  # 100× over: 1/100 at most → 128
    assert _first_factor(batch, ValidationCost(5_000, 3_000), target) == 8  # the usual first factor
    assert _first_factor(rows, ValidationCost(100_000, 10), target) == 8  # several sizes: the cost may fall faster
    assert _first_factor(batch, ValidationCost(10**30, 10), target) == SCALE_FACTORS[-1]
