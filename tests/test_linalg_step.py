"""Dense linear algebra as the IR's ``Linalg`` step: written as users write it (``torch.linalg`` in a
model's forward, ``jnp.linalg`` in a JAX function), validated against the framework, costed by
LAPACK's standard operation counts (hand-computed here), eigen/singular vectors up to sign."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from ir_schemas import Kernel, Linalg, Loop, Program, TensorDecl
from solar_assets.coverage import check_workload
from solar_assets.coverage.flop_reference import solar_graph
from solar_assets.errors import IRError
from solar_assets.ir import check_program
from solar_assets.ir.linalg import flops, result_shapes

CHOLESKY_SOLVE = '''
import torch
import torch.nn as nn

batch_size = 3
n = 8
k = 2


class Model(nn.Module):
    """Solve A x = b for a batch of symmetric positive definite systems via Cholesky."""

    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        spd = a @ a.mT + n * torch.eye(n)
        factor = torch.linalg.cholesky(spd)
        return torch.cholesky_solve(b, factor)


def get_inputs():
    return [torch.randn(batch_size, n, n), torch.randn(batch_size, n, k)]


def get_init_inputs():
    return []
'''

EIGH = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a):
        sym = a + a.mT
        values, vectors = torch.linalg.eigh(sym)
        u, s, vh = torch.linalg.svd(a, full_matrices=False)
        return values, vectors, u, s, vh


def get_inputs():
    return [torch.randn(2, 6, 6)]


def get_init_inputs():
    return []
'''

JAX_SOLVE = '''
import jax
import jax.numpy as jnp


def get_inputs():
    k = jax.random.split(jax.random.key(0), 2)
    a = jax.random.normal(k[0], (5, 5)) + 5.0 * jnp.eye(5)
    return [a, jax.random.normal(k[1], (5, 3))]


def forward(a, b):
    q, r = jnp.linalg.qr(a)
    return jnp.linalg.solve(a, b), q, r, jnp.linalg.cholesky(a @ a.T)
'''


def _write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_cholesky_solve_validates_and_costs_its_lapack_counts(tmp_path):
    path = _write(tmp_path, "cholesky_solve.py", CHOLESKY_SOLVE)
    row = check_workload(str(path), tmp_path / "cache")
    assert row.validated, row.error
    graph = solar_graph(path)
    linalg = {n.text.split("= linalg.")[1].split("(")[0]: n for n in graph.nodes if n.kind == "linalg"}
    # xPOTRF on 8x8: n³/3 + n²/2 + n/6 = n(n+1)(2n+1)/6 = 204; xPOTRS with 2 right-hand sides: 2n²k = 256
    assert linalg["cholesky"].flops == 3 * 204
    assert linalg["cholesky_solve"].flops == 3 * 256
    assert linalg["cholesky"].macs == (3 * 204 + 1) // 2
    # compulsory traffic: the operand and the factor once, 4 bytes an element
    assert linalg["cholesky"].bytes == 2 * 3 * 8 * 8 * 4


def test_eigh_and_svd_vectors_validate_up_to_sign(tmp_path):
    path = _write(tmp_path, "eigh_svd.py", EIGH)
    row = check_workload(str(path), tmp_path / "cache")
    assert row.validated, row.error


@pytest.mark.slow
def test_jax_qr_solve_and_cholesky_validate(tmp_path):
    path = _write(tmp_path, "jax_linalg.py", JAX_SOLVE)
    row = check_workload(str(path), tmp_path / "cache")
    assert row.validated, row.error


@pytest.mark.parametrize("routine,shapes,options,count", [
    ("lu_factor", [(6, 6)], {}, 6 * 36 - 72 - 18 + 5),  # mn² − n³/3 − n²/2 + 5n/6
    ("inv", [(4, 4)], {}, 2 * 64 - 24 + 10),  # 2n³ − 3n²/2 + 5n/2
    ("triangular_solve", [(5, 5), (5, 3)], {"left": True}, 75),  # n²k
    ("eigvalsh", [(3, 3)], {}, 36),  # 4n³/3
    ("svdvals", [(4, 2)], {}, 4 * 4 * 4 - 4 * 8 / 3),  # 4mn² − 4n³/3
])
def test_lapack_counts_by_hand(routine, shapes, options, count):
    assert flops(routine, shapes, options) == round(count)


def test_result_shapes_follow_the_routine():
    assert result_shapes("qr", [(2, 5, 3)], {"mode": "reduced"}) == [(2, 5, 3), (2, 3, 3)]
    assert result_shapes("qr", [(5, 3)], {"mode": "complete"}) == [(5, 5), (5, 3)]
    assert result_shapes("svd", [(4, 6)], {"full_matrices": False}) == [(4, 4), (4,), (4, 6)]
    assert result_shapes("lu_factor", [(3, 4, 4)], {}) == [(3, 4, 4), (3, 4)]


def test_checker_rejects_a_result_of_the_wrong_shape():
    program = Program(
        name="bad",
        tensors=(TensorDecl(name="A", shape=(4, 4), dtype="float32", role="input", binding="input:0"),
                 TensorDecl(name="L", shape=(4, 3), dtype="float32", role="output")),
        inputs=("A",), outputs=("L",),
        steps=(Linalg(name="chol", routine="cholesky", args=("A",), outs=("L",)),),
    )
    with pytest.raises(IRError, match="result L is float32\\(4, 3\\), expected float32\\(4, 4\\)"):
        check_program(program)


def test_executor_runs_the_routine():
    from solar_assets.execute import execute_program

    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 4))
    spd = a @ a.T + 4 * np.eye(4)
    program = Program(
        name="chol",
        tensors=(TensorDecl(name="A", shape=(4, 4), dtype="float64", role="input", binding="input:0"),
                 TensorDecl(name="L", shape=(4, 4), dtype="float64", role="intermediate"),
                 TensorDecl(name="Y", shape=(4, 4), dtype="float64", role="output")),
        inputs=("A",), outputs=("Y",),
        steps=(Linalg(name="chol", routine="cholesky", args=("A",), outs=("L",)),
               Kernel(name="gram", loops=(Loop(var="i", extent=4), Loop(var="j", extent=4), Loop(var="k", extent=4)),
                      out="Y[i, j]", update="+=", expr="L[i, k] * L[j, k]")),
    )
    (y,) = execute_program(program, {"input:0": spd})
    assert np.allclose(y, spd)


GENERAL_EIG = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    """Modes of a (non-symmetric) linear system: complex eigenvalues and eigenvectors."""

    def forward(self, a):
        values, vectors = torch.linalg.eig(a)
        return values, vectors, torch.linalg.eigvals(a @ a)


def get_inputs():
    return [torch.randn(2, 5, 5)]


def get_init_inputs():
    return []
'''


def test_general_eig_validates_up_to_phase_with_its_count(tmp_path):
    path = _write(tmp_path, "general_eig.py", GENERAL_EIG)
    row = check_workload(str(path), tmp_path / "cache")
    assert row.validated, row.error
    graph = solar_graph(path)
    eigs = [n for n in graph.nodes if "linalg.eig(" in n.text]
    # Golub & Van Loan: 25n³ with the vectors, 10n³ for the values alone (eigvals reads no vectors)
    assert [n.flops for n in eigs] == [2 * 25 * 125, 2 * 10 * 125]


def test_every_routine_count_is_documented_in_report_md():
    from pathlib import Path

    import ir_schemas
    from solar_assets.ir.linalg import ROUTINES

    text = Path(ir_schemas.__file__).with_name("REPORT.md").read_text()
    missing = [r.name for r in ROUTINES.values() if f"| `{r.name}` | {r.formula} | {r.source} |" not in text]
    assert not missing, missing


def test_a_row_with_library_steps_says_its_flops_are_a_lapack_count(tmp_path):
    import solar

    path = _write(tmp_path, "cholesky_solve.py", CHOLESKY_SOLVE)
    result = solar.analyze(str(path), hardware=["H100_SXM"], home=tmp_path / "home")
    notes = result.rows[0].notes
    assert "flops: LAPACK count (cholesky n³/3 + n²/2 + n/6; cholesky_solve 2n²k (B n×k))" in notes
