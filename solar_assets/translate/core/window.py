"""Window reductions (pooling, ``reduce_window``) and the sliding-window subscript of conv.

Every dim of the operand has a window size, stride, dilation and low padding: the output
position ``p`` with tap ``r`` reads ``p·stride + r·dilation - pad`` (a dim with window 1 has no
tap loop). The caller gives the source already carrying the pad value (``ProgramBuilder.padded``)
where a window reads outside it.
"""
from __future__ import annotations

from typing import Sequence

from solar_assets.translate.core.affine import Lin, SymTensor
from solar_assets.translate.core.builder import ProgramBuilder


def window_index(p: str, r: str | None, stride: int, dilation: int, pad: int) -> Lin:
    """``p·stride + r·dilation - pad`` (no tap term when ``r`` is None)."""
    lin = Lin.of(p, stride) + Lin.constant(-pad)
    return lin if r is None else lin + Lin.of(r, dilation)


def needs_pad(in_size: int, out_size: int, k: int, stride: int, dilation: int, pad: int) -> bool:
    """Whether some window of this dim reads outside ``[0, in_size)``."""
    return pad > 0 or (out_size - 1) * stride + (k - 1) * dilation - pad >= in_size


def window_reduce(b: ProgramBuilder, hint: str, src: SymTensor, out: SymTensor, window: Sequence[int],
                  strides: Sequence[int], dilation: Sequence[int], pads_lo: Sequence[int], update: str,
                  scale: float | None = None) -> SymTensor:
    """``out[p] (update)= src[p·s + r·d - pad] [* scale]``: the output loops, then the taps."""
    loops, taps, x_idx, o_idx = [], [], [], []
    for d in range(len(src.shape)):
        p, r = f"p{d}", (f"r{d}" if window[d] > 1 else None)
        loops.append((p, out.shape[d]))
        o_idx.append(Lin.of(p))
        if r is not None:
            taps.append((r, int(window[d])))
        x_idx.append(window_index(p, r, int(strides[d]), int(dilation[d]), int(pads_lo[d])))
    read = src.access(x_idx)
    b.kernel(hint, loops + taps, out.access(o_idx), update, read if scale is None else f"{read} * {scale!r}")
    return out
