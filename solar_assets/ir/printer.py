"""A readable, stable text form of the IR: one line per step, reading like loop code.

A repeat prints as a header line with its body indented below it; a cond as a header line
and one ``case b:`` line per branch with the branch indented below it; a topk as one line.
A step with an origin ends with it as a comment: ``# from convolution_1 (aten.convolution.default,
conv)``, so a reader sees which framework op each kernel came from.
"""
from __future__ import annotations

from ir_schemas import Cond, Kernel, Origin, Program, Repeat, Reshape, TensorDecl, TopK


def format_kernel(k: Kernel) -> str:
    """``for m<4, n<8, k<16: Y[m, n] += A[m, k] * B[k, n]``"""
    loops = ", ".join(f"{lp.var}<{lp.extent}" for lp in k.loops) or "()"
    init = "  # init keep" if k.init == "keep" and k.update != "=" else ""
    return f"for {loops}: {k.out} {k.update} {k.expr}{init}"


def format_topk(t: TopK) -> str:
    """``V, I = topk(S, k=2, axis=1, largest)``"""
    which = "largest" if t.largest else "smallest"
    return f"{t.values}, {t.indices} = topk({t.src}, k={t.k}, axis={t.axis}, {which})"


def format_tensor(t: TensorDecl) -> str:
    shape = ",".join(map(str, t.shape))
    extras = [x for x in (t.binding, None if t.pad_value is None else f"pad={t.pad_value:g}") if x]
    return f"{t.role:<12} {t.name}: {t.dtype}[{shape}]" + (f"  ({'; '.join(extras)})" if extras else "")


def format_origin(origin: Origin | None) -> str:
    """``from convolution_1 (aten.convolution.default, conv)``; '' without an origin."""
    if origin is None:
        return ""
    where = ", ".join(x for x in (origin.op, origin.module) if x)
    return f"from {origin.node}" + (f" ({where})" if where else "")


def _with_origin(line: str, origin: Origin | None) -> str:
    text = format_origin(origin)
    if not text:
        return line
    return f"{line}; {text}" if "  # " in line else f"{line}  # {text}"


def format_step(step: Kernel | Reshape | TopK | Repeat | Cond, indent: str = "  ") -> list[str]:
    """The lines of one step (a repeat: its header, then its body indented by two more spaces),
    each ending with the step's origin as a comment when it has one."""
    if isinstance(step, Reshape):
        return [_with_origin(f"{indent}{step.name}: {step.out} = reshape({step.src})", step.origin)]
    if isinstance(step, TopK):
        return [_with_origin(f"{indent}{step.name}: {format_topk(step)}", step.origin)]
    if isinstance(step, Repeat):
        lines = [_with_origin(f"{indent}{step.name}: repeat {step.var}<{step.extent}:", step.origin)]
        for inner in step.steps:
            lines += format_step(inner, indent + "  ")
        return lines
    if isinstance(step, Cond):
        lines = [_with_origin(f"{indent}{step.name}: {', '.join(step.outs) or '()'} = switch {step.index}:",
                              step.origin)]
        for b, branch in enumerate(step.branches):
            lines.append(f"{indent}  case {b}:")
            for inner in branch:
                lines += format_step(inner, indent + "    ")
        return lines
    return [_with_origin(f"{indent}{step.name}: {format_kernel(step)}", step.origin)]


def format_program(p: Program) -> str:
    lines = [f"program {p.name}(" + ", ".join(p.inputs) + ")"]
    lines += ["  " + format_tensor(t) for t in p.tensors]
    for step in p.steps:
        lines += format_step(step)
    lines.append("  return " + ", ".join(p.outputs))
    return "\n".join(lines)
