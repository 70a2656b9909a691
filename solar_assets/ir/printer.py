"""A readable, stable text form of the IR: one line per step, reading like loop code."""
from __future__ import annotations

from ir_schemas import Kernel, Program, Reshape, TensorDecl


def format_kernel(k: Kernel) -> str:
    """``for m<4, n<8, k<16: Y[m, n] += A[m, k] * B[k, n]``"""
    loops = ", ".join(f"{lp.var}<{lp.extent}" for lp in k.loops) or "()"
    init = "  # init keep" if k.init == "keep" and k.update != "=" else ""
    return f"for {loops}: {k.out} {k.update} {k.expr}{init}"


def format_tensor(t: TensorDecl) -> str:
    shape = ",".join(map(str, t.shape))
    extras = [x for x in (t.binding, None if t.pad_value is None else f"pad={t.pad_value:g}") if x]
    return f"{t.role:<12} {t.name}: {t.dtype}[{shape}]" + (f"  ({'; '.join(extras)})" if extras else "")


def format_program(p: Program) -> str:
    lines = [f"program {p.name}(" + ", ".join(p.inputs) + ")"]
    lines += ["  " + format_tensor(t) for t in p.tensors]
    for step in p.steps:
        if isinstance(step, Reshape):
            lines.append(f"  {step.name}: {step.out} = reshape({step.src})")
        else:
            lines.append(f"  {step.name}: {format_kernel(step)}")
    lines.append("  return " + ", ".join(p.outputs))
    return "\n".join(lines)
