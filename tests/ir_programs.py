"""Small Affine Loop IR programs written by hand, shared by the graph, bounds and ILP tests."""
from __future__ import annotations

from ir_schemas import Kernel, Loop, Program, TensorDecl
from solar_assets.ir.expr import Access, Affine


def tensor(name, shape, role="intermediate", dtype="float32", pos=0, **kw):
    binding = {"input": f"input:{pos}", "weight": f"param:{name}"}.get(role)
    return TensorDecl(name=name, shape=tuple(shape), dtype=dtype, role=role, binding=binding, **kw)


def kernel(name, loops, out, update, expr, **kw):
    return Kernel(name=name, loops=tuple(Loop(var=v, extent=e) for v, e in loops), out=out,
                  update=update, expr=expr, **kw)


def program(steps, tensors, name="p"):
    inputs = tuple(t.name for t in tensors if t.role == "input")
    outputs = tuple(t.name for t in tensors if t.role == "output")
    return Program(name=name, tensors=tuple(tensors), inputs=inputs, outputs=outputs, steps=tuple(steps))


def access(tensor_name, *dims):
    """access('X', ({'i': 1}, -1), ...) -> X[i - 1, ...]"""
    return Access(tensor_name, tuple(Affine(tuple(coefs.items()), const) for coefs, const in dims))


def gemm(M, N, K, dtype="float32"):
    return program(
        [kernel("mm", [("m", M), ("n", N), ("k", K)], "C[m, n]", "+=", "A[m, k] * B[k, n]")],
        [tensor("A", (M, K), "input", dtype, 0), tensor("B", (K, N), "input", dtype, 1),
         tensor("C", (M, N), "output", dtype)], name="gemm")


def conv2d(N, C, H, W, K, R, S, stride, pad):
    P = (H + 2 * pad - R) // stride + 1
    Q = (W + 2 * pad - S) // stride + 1
    h = f"p*{stride} + r - {pad}" if pad else f"p*{stride} + r"
    w = f"q*{stride} + s - {pad}" if pad else f"q*{stride} + s"
    return program(
        [kernel("conv", [("n", N), ("k", K), ("p", P), ("q", Q), ("c", C), ("r", R), ("s", S)],
                "Y[n, k, p, q]", "+=", f"X[n, c, {h}, {w}] * Wt[k, c, r, s]")],
        [tensor("X", (N, C, H, W), "input", pad_value=0.0), tensor("Wt", (K, C, R, S), "weight"),
         tensor("Y", (N, K, P, Q), "output")], name="conv2d")


def attention(B, H, L, D):
    """QK^T, a softmax chain (max, exp, sum, divide), then PV: six nodes."""
    bh = [("b", B), ("h", H)]
    return program(
        [
            kernel("qk", [*bh, ("i", L), ("j", L), ("d", D)], "S[b, h, i, j]", "+=", "Q[b, h, i, d] * K[b, h, j, d]"),
            kernel("rowmax", [*bh, ("i", L), ("j", L)], "m[b, h, i]", "max=", "S[b, h, i, j]"),
            kernel("expo", [*bh, ("i", L), ("j", L)], "E[b, h, i, j]", "=", "exp(S[b, h, i, j] * 0.5 - m[b, h, i])"),
            kernel("rowsum", [*bh, ("i", L), ("j", L)], "l[b, h, i]", "+=", "E[b, h, i, j]"),
            kernel("norm", [*bh, ("i", L), ("j", L)], "P[b, h, i, j]", "=", "E[b, h, i, j] / l[b, h, i]"),
            kernel("pv", [*bh, ("i", L), ("d", D), ("j", L)], "O[b, h, i, d]", "+=", "P[b, h, i, j] * V[b, h, j, d]"),
        ],
        [tensor("Q", (B, H, L, D), "input", pos=0), tensor("K", (B, H, L, D), "input", pos=1),
         tensor("V", (B, H, L, D), "input", pos=2), tensor("S", (B, H, L, L)), tensor("m", (B, H, L)),
         tensor("E", (B, H, L, L)), tensor("l", (B, H, L)), tensor("P", (B, H, L, L)),
         tensor("O", (B, H, L, D), "output")], name="attention")
