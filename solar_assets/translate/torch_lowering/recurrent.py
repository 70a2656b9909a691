"""nn.RNN / nn.LSTM / nn.GRU (aten.rnn_tanh, rnn_relu, lstm, gru) as one Repeat over time per
layer and direction, instead of torch.export's unrolled per-step graph.

Per layer and direction, the input projection of every time step is one GEMM before the repeat
(``XP[t, b, n] = b[n] + Σ_k X[t, b, k]·W_ih[n, k]``, as cuDNN does); the repeat body is the
recurrent GEMM ``HG[b, n] += h[b, k]·W_hh[n, k]``, the gate/cell update written in place into
the state tensors ``h`` (and ``c``), and a copy of ``h`` into the layer output at time ``t``
(forward) or ``T-1-t`` (reverse). Outputs are time-major and viewed as batch-first when asked.
Gate order and biases follow PyTorch: LSTM (i, f, g, o); GRU (r, z, n) with ``b_hn`` inside
``r·(W_hn h + b_hn)``.

Tracing speed: ``aten.lstm`` and its kin are CompositeImplicitAutograd, so torch.export works out
their output shapes by running the unrolled per-step decomposition on fake tensors even though the
op stays whole in the graph: about 3 000 small ops per layer for 512 time steps (35_LSTM: 150-190 s
per export, three exports while sizing). ``whole_recurrent_ops`` makes ``nn.LSTM`` / ``nn.GRU`` /
``nn.RNN`` call the custom ops ``solar::lstm`` / ``gru`` / ``rnn_tanh`` / ``rnn_relu`` instead while
a model is exported: the same arguments, a real kernel that is PyTorch's own (``torch._VF``), and a
shape function for fake tensors, so the export costs the same at 5 or 5 000 steps. They lower as the
ATen ops do.
"""
from __future__ import annotations

import contextlib
from typing import Sequence

import torch

from solar_assets.translate.torch_lowering.context import Ctx, LoweringGap
from solar_assets.translate.torch_lowering.registry import lowers
from solar_assets.translate.core.affine import Lin, SymTensor
from solar_assets.workloads.recurrent_routing import routed_recurrent_ops

aten = torch.ops.aten
GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def _cell_kernels(c: Ctx, cell: str, pre: str, H: int, B: int, xp: SymTensor, hg: SymTensor, h: SymTensor,
                  cs: SymTensor | None, tt: Lin) -> None:
    b, j = Lin.of("b"), Lin.of("j")
    t = tt.render()

    def gate(g: int, inner: str = "") -> str:
        """XP[t', b, g*H + j] + HG[b, g*H + j] (with HG scaled by ``inner`` for GRU's n gate)."""
        xr = f"{xp.base}[{t}, b, j + {g * H}]" if g else f"{xp.base}[{t}, b, j]"
        hr = f"{hg.base}[b, j + {g * H}]" if g else f"{hg.base}[b, j]"
        return f"{xr} + {inner}{hr}"

    loops = [("b", B), ("j", H)]
    hb = h.access([b, j])
    if cell == "lstm":
        cb = cs.access([b, j])  # type: ignore[union-attr]
        c.b.kernel(pre + "_cell", loops, cb, "=",
                   f"sigmoid({gate(1)}) * {cb} + sigmoid({gate(0)}) * tanh({gate(2)})")
        c.b.kernel(pre + "_hidden", loops, hb, "=", f"sigmoid({gate(3)}) * tanh({cb})")
    elif cell == "gru":
        z = f"sigmoid({gate(1)})"
        n = f"tanh({gate(2, f'sigmoid({gate(0)}) * ')})"
        c.b.kernel(pre + "_hidden", loops, hb, "=", f"(1.0 - {z}) * {n} + {z} * {hb}")
    else:
        act = "tanh({})" if cell == "rnn_tanh" else "max({}, 0.0)"
        c.b.kernel(pre + "_hidden", loops, hb, "=", act.format(gate(0)))


def _recurrent(c: Ctx, cell: str, x: SymTensor, hx: Sequence[SymTensor], params: Sequence[SymTensor],
               has_biases: bool, num_layers: int, dropout: float, train: bool, bidirectional: bool,
               batch_first: bool):
    if train and dropout > 0 and num_layers > 1:
        raise LoweringGap("recurrent dropout in training mode is random")
    if len(x.shape) != 3:
        raise LoweringGap("an unbatched recurrent input (2-D) is not lowered")
    dirs = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    if len(params) != num_layers * dirs * per:
        raise LoweringGap(f"{len(params)} recurrent weights for {num_layers} layers x {dirs} directions "
                          f"(projections are not lowered)")
    T, B = (x.shape[1], x.shape[0]) if batch_first else (x.shape[0], x.shape[1])
    H = hx[0].shape[2]
    G = GATES[cell] * H
    dtype = x.dtype
    b_, n_, k_, t_, j_ = (Lin.of(v) for v in "bnktj")
    layer_in = x
    finals: list[list[SymTensor]] = [[] for _ in hx]  # per state (h, c): per layer*dir
    for layer in range(num_layers):
        out = c.b.declare(f"{c.name}_l{layer}_out", (T, B, dirs * H), dtype)
        for d in range(dirs):
            pre = f"{c.name}_l{layer}{'_rev' if d else ''}"
            w = params[(layer * dirs + d) * per:(layer * dirs + d + 1) * per]
            w_ih, w_hh = w[0], w[1]
            b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
            width = layer_in.shape[2]
            first = layer == 0
            read_x = layer_in.access([b_, t_, k_] if (first and batch_first) else [t_, b_, k_])
            xp = c.b.declare(pre + "_xp", (T, B, G), dtype)
            xp_idx = xp.access([t_, b_, n_])
            bias = []
            if b_ih is not None:
                bias.append(b_ih.access([n_]))
                if cell != "gru":
                    bias.append(b_hh.access([n_]))  # type: ignore[union-attr]
            keep = "identity"
            if bias:
                c.b.kernel(pre + "_xp_bias", [("t", T), ("b", B), ("n", G)], xp_idx, "=", " + ".join(bias))
                keep = "keep"
            c.b.kernel(pre + "_xp", [("t", T), ("b", B), ("n", G), ("k", width)], xp_idx, "+=",
                       f"{read_x} * {w_ih.access([n_, k_])}", init=keep)
            states = []
            for s, h0 in enumerate(hx):
                st = c.b.declare(f"{pre}_{'hc'[s]}", (B, H), dtype)
                c.b.kernel(f"{pre}_{'hc'[s]}0", [("b", B), ("j", H)], st.access([b_, j_]), "=",
                           h0.access([Lin.constant(layer * dirs + d), b_, j_]))
                states.append(st)
            hg = c.b.declare(pre + "_hg", (B, G), dtype)
            tt = Lin.of("t") if d == 0 else Lin.constant(T - 1) + Lin.of("t", -1)
            with c.b.repeat(pre + "_steps", "t", T):
                hg_keep = "identity"
                if cell == "gru" and b_hh is not None:
                    c.b.kernel(pre + "_hg_bias", [("b", B), ("n", G)], hg.access([b_, n_]), "=", b_hh.access([n_]))
                    hg_keep = "keep"
                c.b.kernel(pre + "_hg", [("b", B), ("n", G), ("k", H)], hg.access([b_, n_]), "+=",
                           f"{states[0].access([b_, k_])} * {w_hh.access([n_, k_])}", init=hg_keep)
                _cell_kernels(c, cell, pre, H, B, xp, hg, states[0], states[1] if len(states) > 1 else None, tt)
                c.b.kernel(pre + "_out", [("b", B), ("j", H)], out.access([tt, b_, j_ + Lin.constant(d * H)]), "=",
                           states[0].access([b_, j_]))
            for s, st in enumerate(states):
                finals[s].append(st)
        layer_in = out
    result = c.b.permute(layer_in, [1, 0, 2]) if batch_first else layer_in

    def stacked(s: int, i: int):
        def build() -> SymTensor:
            y = c.new_output(i, f"{c.name}_{'hc'[s]}_n")
            for m, st in enumerate(finals[s]):
                c.b.kernel(f"{c.name}_{'hc'[s]}_n{m}", [("b", B), ("j", H)], y.access([Lin.constant(m), b_, j_]),
                           "=", st.access([b_, j_]))
            return y
        return build

    return (result, *(stacked(s, s + 1) for s in range(len(hx))))


# ---------------------------------------------------------------------------- whole ops for export
def _out_like(x: torch.Tensor, hidden: int, bidirectional: bool, batch_first: bool) -> torch.Tensor:
    """The layer output of a recurrent op: (T, B, dirs·H), or (B, T, dirs·H) batch-first (x is 3-D)."""
    return x.new_empty((*x.shape[:2], (2 if bidirectional else 1) * hidden))


@torch.library.custom_op("solar::lstm", mutates_args=())
def solar_lstm(x: torch.Tensor, hx: list[torch.Tensor], params: list[torch.Tensor], has_biases: bool,
               num_layers: int, dropout: float, train: bool, bidirectional: bool,
               batch_first: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``aten.lstm.input`` as one opaque op (``torch._VF.lstm`` computes it)."""
    out, h, c = torch._VF.lstm(x, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)
    return out, h, c


@solar_lstm.register_fake
def _(x, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):  # noqa: ANN001
    return (_out_like(x, hx[0].shape[-1], bidirectional, batch_first), hx[0].new_empty(hx[0].shape),
            hx[1].new_empty(hx[1].shape))


def _single_state_op(name: str):  # noqa: ANN202 - returns the custom op
    """``solar::<name>`` for ``aten.<name>.input`` (gru, rnn_tanh, rnn_relu: one state tensor)."""
    vf = getattr(torch._VF, name)

    def real(x: torch.Tensor, hx: torch.Tensor, params: list[torch.Tensor], has_biases: bool, num_layers: int,
             dropout: float, train: bool, bidirectional: bool, batch_first: bool) -> tuple[torch.Tensor, torch.Tensor]:
        out, h = vf(x, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)
        return out, h

    real.__name__ = f"solar_{name}"
    op = torch.library.custom_op(f"solar::{name}", real, mutates_args=())

    @op.register_fake
    def _(x, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):  # noqa: ANN001
        return _out_like(x, hx.shape[-1], bidirectional, batch_first), hx.new_empty(hx.shape)

    return op


solar_gru, solar_rnn_tanh, solar_rnn_relu = (_single_state_op(n) for n in ("gru", "rnn_tanh", "rnn_relu"))
WHOLE_OPS = {"lstm": solar_lstm, "gru": solar_gru, "rnn_tanh": solar_rnn_tanh, "rnn_relu": solar_rnn_relu}


def _whole(name: str, real: object, x, hx, params, *rest):  # noqa: ANN001, ANN202 - torch._VF's conventions
    return WHOLE_OPS[name](x, list(hx) if name == "lstm" else hx, list(params), *rest)


def whole_recurrent_ops() -> contextlib.AbstractContextManager[None]:
    """While active, ``nn.LSTM`` / ``nn.GRU`` / ``nn.RNN`` call the ``solar::`` recurrent ops (export
    only: the golden run calls the modules as written; a packed sequence keeps torch's own path)."""
    return routed_recurrent_ops(_whole)


@lowers(torch.ops.solar.lstm.default)
@lowers(aten.lstm.input)
def lstm_lowering(c: Ctx, x, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    return _recurrent(c, "lstm", x, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)


@lowers(torch.ops.solar.gru.default)
@lowers(aten.gru.input)
def gru_lowering(c: Ctx, x, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    return _recurrent(c, "gru", x, [hx], params, has_biases, num_layers, dropout, train, bidirectional, batch_first)


@lowers(torch.ops.solar.rnn_tanh.default)
@lowers(aten.rnn_tanh.input)
def rnn_tanh_lowering(c: Ctx, x, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    return _recurrent(c, "rnn_tanh", x, [hx], params, has_biases, num_layers, dropout, train, bidirectional,
                      batch_first)


@lowers(torch.ops.solar.rnn_relu.default)
@lowers(aten.rnn_relu.input)
def rnn_relu_lowering(c: Ctx, x, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    return _recurrent(c, "rnn_relu", x, [hx], params, has_biases, num_layers, dropout, train, bidirectional,
                      batch_first)
