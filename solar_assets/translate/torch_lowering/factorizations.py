"""``torch.linalg`` factorisations, solves, inverses and decompositions as ``Linalg`` steps
(``ir.linalg``): the routine by name, its results the node's outputs. The ``info`` / error-code
outputs are zeros (a routine that fails raises in the executor), and the error check PyTorch
threads through an effect token (``_linalg_check_errors``) moves no data.

An output the graph does not use is still lowered when asked for (a lazy output: ``det``'s LU
factors), from a second routine on the same operand.
"""
from __future__ import annotations

import operator

import torch

from solar_assets.translate.core.affine import SymTensor
from solar_assets.translate.torch_lowering.context import Ctx, LoweringGap
from solar_assets.translate.torch_lowering.registry import lowers

aten = torch.ops.aten


def _routine(c: Ctx, routine: str, *args: SymTensor, **options) -> list[SymTensor]:
    batch = {tuple(a.shape[:-2]) for a in args if len(a.shape) >= 2}
    if len(batch) > 1:
        raise LoweringGap(f"{routine} with operands of different batch shapes {sorted(batch)} (a broadcast)")
    if any(a.dtype not in ("float32", "float64") for a in args[:1]):
        raise LoweringGap(f"{routine} on {args[0].dtype} (the routines run in float32 / float64)")
    return c.b.linalg(c.name, routine, list(args), options)


def _zeros(c: Ctx, i: int):
    """The ``info`` output: 0 (success) at every matrix."""
    return lambda: c.elementwise("0", i=i)


def _as_matrix(c: Ctx, b: SymTensor, a: SymTensor) -> tuple[SymTensor, bool]:
    """``B`` as a matrix of right-hand sides: a vector right-hand side (PyTorch's rule: ``B`` has one
    dim fewer than ``A``) gets a trailing unit dim."""
    if len(b.shape) == len(a.shape) - 1:
        return c.b.reshape(b, [*b.shape, 1], c.name + "_rhs"), True
    return b, False


def _lu_factors(c: Ctx, a: SymTensor) -> tuple:
    """Lazy (LU, pivots) outputs of a routine that factors ``a`` on the way (det, solve): one
    ``lu_factor`` step however many of them the graph reads."""
    made: list[SymTensor] = []

    def make(which: int):
        def lower() -> SymTensor:
            if not made:
                made.extend(_routine(c, "lu_factor", a))
            return made[which]
        return lower
    return make(0), make(1)


@lowers(aten.cholesky)
def cholesky_lowering(c: Ctx, a: SymTensor, upper: bool = False):
    return _routine(c, "cholesky", a, upper=bool(upper))[0]


@lowers(aten.linalg_cholesky_ex)
def cholesky_ex_lowering(c: Ctx, a: SymTensor, upper: bool = False, check_errors: bool = False):
    return (_routine(c, "cholesky", a, upper=bool(upper))[0], _zeros(c, 1))


@lowers(aten.cholesky_solve)
def cholesky_solve_lowering(c: Ctx, b: SymTensor, factor: SymTensor, upper: bool = False):
    return _routine(c, "cholesky_solve", b, factor, upper=bool(upper))[0]


@lowers(aten.cholesky_inverse)
def cholesky_inverse_lowering(c: Ctx, factor: SymTensor, upper: bool = False):
    return _routine(c, "cholesky_inverse", factor, upper=bool(upper))[0]


@lowers(aten.linalg_solve_triangular)
def solve_triangular_lowering(c: Ctx, a: SymTensor, b: SymTensor, *, upper: bool, left: bool = True,
                              unitriangular: bool = False):
    return _routine(c, "triangular_solve", a, b, upper=bool(upper), left=bool(left),
                    unitriangular=bool(unitriangular))[0]


@lowers(aten.triangular_solve)
def triangular_solve_lowering(c: Ctx, b: SymTensor, a: SymTensor, upper: bool = True, transpose: bool = False,
                              unitriangular: bool = False):
    """The older ``torch.triangular_solve(B, A)``: (the solution, a copy of ``A``)."""
    coefficient = a
    if transpose:
        a = c.b.permute(a, [*range(len(a.shape) - 2), len(a.shape) - 1, len(a.shape) - 2])
        upper = not upper
    x = _routine(c, "triangular_solve", a, b, upper=bool(upper), left=True, unitriangular=bool(unitriangular))[0]
    return (x, lambda: c.b.materialize(coefficient, c.name + "_coefficient", force=True))


@lowers(aten.linalg_lu_factor_ex)
def lu_factor_lowering(c: Ctx, a: SymTensor, pivot: bool = True, check_errors: bool = False):
    if not pivot:
        raise LoweringGap("LU without pivoting")
    lu, pivots = _routine(c, "lu_factor", a)
    return (lu, pivots, _zeros(c, 2))


@lowers(aten.linalg_lu)
def lu_lowering(c: Ctx, a: SymTensor, pivot: bool = True):
    if not pivot:
        raise LoweringGap("LU without pivoting")
    return tuple(_routine(c, "lu", a))


@lowers(aten.linalg_lu_solve)
def lu_solve_lowering(c: Ctx, lu: SymTensor, pivots: SymTensor, b: SymTensor, left: bool = True,
                      adjoint: bool = False):
    if not left:
        raise LoweringGap("lu_solve with left=False")
    return _routine(c, "lu_solve", lu, pivots, b, adjoint=bool(adjoint))[0]


@lowers(aten._linalg_solve_ex)
def solve_lowering(c: Ctx, a: SymTensor, b: SymTensor, left: bool = True, check_errors: bool = False):
    rhs, vector = _as_matrix(c, b, a) if left else (b, False)
    x = _routine(c, "solve", a, rhs, left=bool(left))[0]
    if vector:
        x = c.b.reshape(x, c.out_shape(0), c.name + "_x")
    return (x, *_lu_factors(c, a), _zeros(c, 3))


@lowers(aten.linalg_inv_ex)
def inv_lowering(c: Ctx, a: SymTensor, check_errors: bool = False):
    return (_routine(c, "inv", a)[0], _zeros(c, 1))


@lowers(aten._linalg_det)
def det_lowering(c: Ctx, a: SymTensor):
    return (_routine(c, "det", a)[0], *_lu_factors(c, a))


@lowers(aten._linalg_slogdet)
def slogdet_lowering(c: Ctx, a: SymTensor):
    sign, logabs = _routine(c, "slogdet", a)
    return (sign, logabs, *_lu_factors(c, a))


@lowers(aten.linalg_qr)
def qr_lowering(c: Ctx, a: SymTensor, mode: str = "reduced"):
    if mode == "r":
        raise LoweringGap("qr with mode='r' (an empty Q)")
    return tuple(_routine(c, "qr", a, mode=mode))


@lowers(aten._linalg_eigh)
def eigh_lowering(c: Ctx, a: SymTensor, UPLO: str = "L", compute_v: bool = True):  # noqa: N803 - ATen's name
    upper = UPLO.upper() == "U"
    if not compute_v:
        return (_routine(c, "eigvalsh", a, upper=upper)[0], None)
    return tuple(_routine(c, "eigh", a, upper=upper))


@lowers(aten._linalg_svd)
def svd_lowering(c: Ctx, a: SymTensor, full_matrices: bool = False, compute_uv: bool = True, driver=None):
    if not compute_uv:
        return (None, _routine(c, "svdvals", a)[0], None)
    return tuple(_routine(c, "svd", a, full_matrices=bool(full_matrices)))


def _scalar_constant(c: Ctx, name: str, value):
    """A tolerance given as a tensor: the constant a rank-0 ``aten.full`` made (``torch.pinverse``)."""
    if value is None or isinstance(value, (int, float)):
        return value
    node = c.node.kwargs.get(name)  # the fx node (keyword tensors reach a lowering unresolved)
    if getattr(node, "target", None) is aten.full.default and list(node.args[0]) == []:
        return float(node.args[1])
    raise LoweringGap(f"pinv with a computed tensor {name}")


@lowers(aten.linalg_pinv)
def pinv_lowering(c: Ctx, a: SymTensor, atol=None, rtol=None, hermitian: bool = False):
    atol, rtol = _scalar_constant(c, "atol", atol), _scalar_constant(c, "rtol", rtol)
    if atol not in (None, 0, 0.0):
        raise LoweringGap("pinv with an absolute tolerance")
    return _routine(c, "pinv", a, hermitian=bool(hermitian), rtol=None if rtol is None else float(rtol))[0]


@lowers(torch.ops.higher_order.with_effects)
def with_effects_lowering(c: Ctx, token, op, *args, **kwargs):
    """An effectful op threaded through a token: ``_linalg_check_errors`` (it raises when a routine's
    info code is nonzero) moves no data; its result is the token again."""
    if op is not aten._linalg_check_errors.default:
        raise LoweringGap(f"the effectful op {op}")
    return (EFFECT_TOKEN,)


EFFECT_TOKEN = "effect token"
"""What an effect token lowers to: no tensor (``torch_tracer`` binds token inputs to it too)."""


@lowers(aten.lu_unpack)
def lu_unpack_lowering(c: Ctx, lu: SymTensor, pivots: SymTensor, unpack_data: bool = True,
                       unpack_pivots: bool = True):
    if not (unpack_data and unpack_pivots):
        raise LoweringGap("lu_unpack of only the data or only the pivots (empty results)")
    return tuple(_routine(c, "lu_unpack", lu, pivots))


@lowers(aten.geqrf)
def geqrf_lowering(c: Ctx, a: SymTensor):
    return tuple(_routine(c, "geqrf", a))


@lowers(aten.linalg_householder_product)
def householder_product_lowering(c: Ctx, a: SymTensor, tau: SymTensor):
    return _routine(c, "householder_product", a, tau)[0]


@lowers(aten.ormqr)
def ormqr_lowering(c: Ctx, a: SymTensor, tau: SymTensor, other: SymTensor, left: bool = True,
                   transpose: bool = False):
    return _routine(c, "ormqr", a, tau, other, left=bool(left), adjoint=bool(transpose))[0]


@lowers(aten.linalg_ldl_factor_ex)
def ldl_factor_lowering(c: Ctx, a: SymTensor, hermitian: bool = False, check_errors: bool = False):
    ld, pivots = _routine(c, "ldl_factor", a)
    return (ld, pivots, _zeros(c, 2))


@lowers(aten.linalg_ldl_solve)
def ldl_solve_lowering(c: Ctx, ld: SymTensor, pivots: SymTensor, b: SymTensor, hermitian: bool = False):
    return _routine(c, "ldl_solve", ld, pivots, b)[0]


@lowers(aten.linalg_matrix_exp)
def matrix_exp_lowering(c: Ctx, a: SymTensor):
    return _routine(c, "matrix_exp", a)[0]


@lowers(aten.linalg_eig)
def eig_lowering(c: Ctx, a: SymTensor):
    """Eigenvalues and right eigenvectors of a general matrix, complex: each as two planes. The
    vectors are computed (and counted: 25n³ against 10n³) only when the graph reads them (``eigvals``
    does not)."""
    from solar_assets.translate.core.complex import ComplexPair

    read = {u.args[1] for u in c.node.users if u.target is operator.getitem}
    if 1 not in read:
        w_re, w_im = _routine(c, "eig", a, right_vectors=False)
        return (ComplexPair(w_re, w_im), None)
    w_re, w_im, v_re, v_im = _routine(c, "eig", a)
    return (ComplexPair(w_re, w_im), ComplexPair(v_re, v_im))
