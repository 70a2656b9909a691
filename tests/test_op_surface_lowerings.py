"""Ops the frameworks' own test suites exercise, written into models the way users write them and
validated against PyTorch: special functions, scatter/index reductions, selections with indices,
order statistics, random draws in forward, view copies."""
from __future__ import annotations

import textwrap

import pytest

from solar_assets.coverage import check_workload

HEADER = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

'''

WORKLOADS = {
    "special_functions": '''
class Model(nn.Module):
    """A likelihood head: log-gamma terms, digamma, Bessel and an orthogonal-polynomial basis."""

    def forward(self, x, n):
        a = x.abs() + 0.5
        terms = torch.lgamma(a) - torch.digamma(a) + torch.special.i0e(x) + torch.special.polygamma(2, a)
        basis = torch.special.chebyshev_polynomial_t(x.tanh(), n) + torch.special.hermite_polynomial_he(x, n)
        return terms + torch.special.zeta(a + 1.0, a) + basis + torch.atan2(x, a) + torch.special.erfinv(x.tanh())


def get_inputs():
    return [torch.randn(8, 16), torch.randint(0, 6, (8, 16)).float()]


def get_init_inputs():
    return []
''',
    "scatter_reductions": '''
class Model(nn.Module):
    """Segment statistics: per-bucket mean, max and product of scattered values."""

    def forward(self, base, index, src, index1d, rows):
        mean = base.scatter_reduce(1, index, src, "mean", include_self=False)
        peak = torch.scatter_reduce(base, 1, index, src, "amax")
        prod = base.index_reduce(0, index1d, rows, "prod", include_self=True)
        return mean, peak, prod


def get_inputs():
    return [torch.randn(4, 6), torch.randint(0, 6, (4, 9)), torch.randn(4, 9), torch.tensor([0, 2, 2, 3]),
            torch.randn(4, 6)]


def get_init_inputs():
    return []
''',
    "selections_with_indices": '''
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(3, stride=2, padding=1, return_indices=True)

    def forward(self, x):
        pooled, where = self.pool(x)
        adaptive, at = F.adaptive_max_pool2d(x, (3, 5), return_indices=True)
        running, last = torch.cummax(x, dim=-1)
        third, third_at = torch.kthvalue(x.flatten(2), 3, dim=-1)
        mid, mid_at = torch.median(x, dim=1)
        return pooled, where, adaptive, at, running, last, third, third_at, mid, mid_at, torch.median(x)


def get_inputs():
    return [torch.randn(2, 3, 7, 11)]


def get_init_inputs():
    return []
''',
    "pooling_and_geometry": '''
class Model(nn.Module):
    """Average pooling whose windows differ (no padding counted, an overhanging last window), pairwise
    distances, a bilinear form, exponents and the nan-aware median."""

    def __init__(self):
        super().__init__()
        self.bilinear = nn.Bilinear(5, 4, 3)

    def forward(self, x, a, b, u, w):
        pooled = F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
        pooled_in = F.avg_pool2d(x, 2, stride=2, padding=1, ceil_mode=True, count_include_pad=True)
        mantissa, exponent = torch.frexp(a)
        median, where = torch.nanmedian(a, dim=1)
        return pooled, pooled_in, torch.cdist(a, b), torch.cdist(a, b, p=1.0), self.bilinear(u, w), mantissa, \
            exponent, median, where


def get_inputs():
    return [torch.randn(2, 3, 8, 7), torch.randn(6, 5), torch.randn(4, 5), torch.randn(7, 5), torch.randn(7, 4)]


def get_init_inputs():
    return []
''',
    "resampling": '''
class Model(nn.Module):
    """A spatial-transformer head: bilinear upsampling, and sampling at predicted grid points."""

    def forward(self, x, grid):
        up = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
        up_aligned = F.interpolate(x, size=(7, 9), mode="bilinear", align_corners=True)
        warped = F.grid_sample(x, grid * 1.2, mode="bilinear", padding_mode="zeros", align_corners=False)
        snapped = F.grid_sample(x, grid, mode="nearest", padding_mode="border", align_corners=True)
        return up, up_aligned, warped, snapped


def get_inputs():
    return [torch.randn(2, 3, 5, 6), torch.rand(2, 4, 7, 2) * 2 - 1]


def get_init_inputs():
    return []
''',
    "histogram_and_noise": '''
class Model(nn.Module):
    """Activation statistics: histograms over the data's range and a fixed one, a randomised ReLU."""

    def __init__(self):
        super().__init__()
        self.act = nn.RReLU(0.1, 0.3)

    def forward(self, x):
        self.act.train()
        return torch.histc(x, bins=7), torch.histc(x, bins=5, min=-1.0, max=1.0), self.act(x)


def get_inputs():
    return [torch.randn(40, 3)]


def get_init_inputs():
    return []
''',
    "random_in_forward": '''
class Model(nn.Module):
    """Noise injection: integer jitter, Gaussian noise with a learned scale, Bernoulli masks."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.full((16,), 0.1))

    def forward(self, x, keep):
        jitter = torch.randint(-2, 3, x.shape).float()
        noise = torch.normal(torch.zeros_like(x), self.scale.expand_as(x))
        mask = torch.bernoulli(keep.expand_as(x))
        return (x + jitter + noise) * mask


def get_inputs():
    return [torch.randn(8, 16), torch.full((16,), 0.7)]


def get_init_inputs():
    return []
''',
    "view_copies_and_factories": '''
class Model(nn.Module):
    def forward(self, x, y):
        a = torch.permute_copy(x, (1, 0)) + torch.narrow_copy(y, 0, 1, 6)
        b = torch.diagonal_scatter(torch.zeros(6, 6), torch.ones(6) * 2.5)
        c = torch.full_like(x, 3.0)
        w = torch.signal.windows.hann(6)
        return a, b, c, torch.addmv(w, b, w), torch.round(x * 100, decimals=-1), torch.dist(x, y[:6], 3)


def get_inputs():
    return [torch.randn(6, 6), torch.randn(8, 6)]


def get_init_inputs():
    return []
''',
}


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_workload_validates(tmp_path, name):
    path = tmp_path / f"{name}.py"
    path.write_text(HEADER + textwrap.dedent(WORKLOADS[name]))
    row = check_workload(str(path), tmp_path / "cache")
    assert row.validated, row.error
