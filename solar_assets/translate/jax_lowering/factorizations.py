"""``jax.lax.linalg`` factorisations and solves as ``Linalg`` steps (``ir.linalg``), their results in
the primitives' own order (``svd``: s, u, vt; ``eigh``: vectors, then values)."""
from __future__ import annotations

from solar_assets.translate.jax_lowering.context import JCtx, LoweringGap
from solar_assets.translate.jax_lowering.registry import lowers


def _transposed(c: JCtx, a):
    rank = len(a.shape)
    return c.b.permute(a, [*range(rank - 2), rank - 1, rank - 2])


@lowers("cholesky")
def cholesky_lowering(c: JCtx, a, **_):
    """The primitive keeps the operand's strictly upper triangle (``jnp.linalg.cholesky`` zeroes it
    afterwards): the factor below and on the diagonal, the operand above."""
    factor = c.b.linalg(c.name, "cholesky", [a])[0]
    rank = len(a.shape)
    i, j = f"i{rank - 2}", f"i{rank - 1}"
    return c.elementwise(f"select({i} >= {j}, {{0}}, {{1}})", factor, a)


@lowers("lu")
def lu_lowering(c: JCtx, a, **_):
    return c.b.linalg(c.name, "lu_jax", [a])


@lowers("qr")
def qr_lowering(c: JCtx, a, *, full_matrices: bool, pivoting: bool = False, **_):
    if pivoting:
        raise LoweringGap("qr with column pivoting")
    return c.b.linalg(c.name, "qr", [a], {"mode": "complete" if full_matrices else "reduced"})


@lowers("svd")
def svd_lowering(c: JCtx, a, *, full_matrices: bool, compute_uv: bool = True, subset_by_index=None, **_):
    if subset_by_index is not None:
        raise LoweringGap("svd of a subset of the singular values")
    if not compute_uv:
        return c.b.linalg(c.name, "svdvals", [a])
    u, s, vh = c.b.linalg(c.name, "svd", [a], {"full_matrices": bool(full_matrices)})
    return [s, u, vh]


@lowers("eigh")
def eigh_lowering(c: JCtx, a, *, lower: bool = True, sort_eigenvalues: bool = True, subset_by_index=None, **_):
    if subset_by_index is not None or not sort_eigenvalues:
        raise LoweringGap("eigh of a subset, or unsorted")
    w, v = c.b.linalg(c.name, "eigh", [a], {"upper": not lower})
    return [v, w]


@lowers("triangular_solve")
def triangular_solve_lowering(c: JCtx, a, b, *, left_side: bool, lower: bool, transpose_a: bool,
                              conjugate_a: bool = False, unit_diagonal: bool = False, **_):
    if transpose_a:
        a, lower = _transposed(c, a), not lower
    return c.b.linalg(c.name, "triangular_solve", [a, b],
                      {"upper": not lower, "left": bool(left_side), "unitriangular": bool(unit_diagonal)})[0]


@lowers("custom_linear_solve")
def custom_linear_solve_lowering(c: JCtx, *args, const_lengths, jaxprs, **_):
    """``lax.custom_linear_solve``: what runs is its ``solve`` function on the right-hand side (the
    matvec and transposes are for differentiation), inlined like a call."""
    from solar_assets.translate.jax_lowering.control import _inline

    lengths = [int(n) for n in const_lengths]
    starts = [sum(lengths[:k]) for k in range(len(lengths))]
    solve_consts = list(args[starts[2]:starts[2] + lengths[2]])
    rhs = list(args[sum(lengths):])
    return _inline(c, jaxprs.solve, solve_consts + rhs)


@lowers("tridiagonal_solve")
def tridiagonal_solve_lowering(c: JCtx, dl, d, du, b, **_):
    """The three diagonals (``dl[0]`` and ``du[-1]`` unused) and the right-hand sides: the Thomas algorithm."""
    return c.b.linalg(c.name, "tridiagonal_solve", [dl, d, du, b])[0]


@lowers("eig")
def eig_lowering(c: JCtx, a, *, compute_left_eigenvectors: bool = True, compute_right_eigenvectors: bool = True,
                 **_):
    """``lax.linalg.eig``: the eigenvalues, then the left and right eigenvectors asked for, complex."""
    from solar_assets.translate.core.complex import ComplexPair

    planes = c.b.linalg(c.name, "eig", [a], {"left_vectors": bool(compute_left_eigenvectors),
                                             "right_vectors": bool(compute_right_eigenvectors)})
    return [ComplexPair(planes[k], planes[k + 1]) for k in range(0, len(planes), 2)]
