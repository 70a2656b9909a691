"""Validation rejects planted translation bugs, one of each kind, and says where (issue 31).

Two small KernelBench-style workloads — a padded, strided convolution with bias, max pooling and a
linear layer; causal attention — are traced and validated; then one mutant of every kind in
``solar_assets.validate.mutants`` is planted in the validated IR and must fail validation with a
check that names a program output and the first differing element (a mutant whose outputs are
the IR's to float64 rounding on the same inputs is equivalent there and skipped). ``bench/mutation.py`` runs
the same operators over whole suites and prints the mutation score.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from solar_assets.errors import SolarError
from solar_assets.execute import execute_program
from solar_assets.golden import make_golden
from solar_assets.translate import trace_torch
from solar_assets.validate import validate_program
from solar_assets.validate.mutants import KINDS, mutants
from solar_assets.workloads import read_workload_source

CONV_POOL_LINEAR = '''
import torch
import torch.nn as nn

batch_size = 2
in_channels = 3
out_channels = 5
height = 11
width = 9
features = 7


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, features):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=2, padding=1)
        self.pool = nn.MaxPool2d(kernel_size=2, padding=1)
        self.fc = nn.Linear(out_channels * 4 * 3, features)

    def forward(self, x):
        x = torch.relu(self.pool(self.conv(x)))
        return self.fc(x.flatten(1)).sum(dim=1, keepdim=True) + x.mean()


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, features]
'''

CAUSAL = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    return [torch.randn(2, 3, 10, 4), torch.randn(2, 3, 10, 4), torch.randn(2, 3, 10, 4)]


def get_init_inputs():
    return []
'''


def _same_outputs(mutant, program, golden) -> bool:
    """Whether the mutant computes the program's outputs on the golden inputs, to float64 rounding
    (a softmax's row maximum taken over one more score is the same softmax)."""
    bindings = golden.bindings(np.float64)
    return all(np.allclose(a, b, rtol=1e-12, atol=1e-12 * float(np.abs(b).max(initial=0.0)), equal_nan=True)
               for a, b in zip(execute_program(mutant, bindings, np.float64),
                               execute_program(program, bindings, np.float64)))


@pytest.fixture(scope="module")
def validated(tmp_path_factory):
    out = []
    for name, text in (("conv_pool_linear", CONV_POOL_LINEAR), ("causal", CAUSAL)):
        path = tmp_path_factory.mktemp("mutants") / f"{name}.py"
        path.write_text(text)
        src = read_workload_source(path)
        program, golden = trace_torch(src).program, make_golden(src)
        assert validate_program(program, golden, source=str(path)).ok
        out.append((program, golden, str(path)))
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_of_planted_bug_is_rejected_naming_the_output_and_a_point(validated, kind):
    planted = [(m, golden, path) for program, golden, path in validated for m in mutants(program, (kind,))]
    originals = {path: program for program, _, path in validated}
    assert planted, f"no {kind} site in the sample programs"
    rejected = 0
    for m, golden, path in planted:  # the first sites of this kind the checker lets through
        if rejected == 3:
            break
        try:
            result = validate_program(m.program, golden, source=path)
        except SolarError:
            continue  # refused by the IR checker: rejected before any value is compared
        if _same_outputs(m.program, originals[path], golden):
            continue  # equivalent here (a mask widened on scores no later kernel reads)
        assert not result.ok, f"{kind} mutant survived validation: {m.step}: {m.description}"
        failed = [c for c in result.checks if not c.ok]
        assert any(c.name in m.program.outputs and re.search(r" at \(\d+(, \d+)*\)| at \(\)", c.message)
                   for c in failed), [c.message for c in failed]
        rejected += 1
    assert rejected, f"every {kind} mutant was refused by the checker: none reached validation"
