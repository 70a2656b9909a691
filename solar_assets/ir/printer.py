"""A readable, stable text form of the IR: one line per step, reading like loop code.

The header is the program's signature with a type at every binder: the inputs in argument order,
the weights after ``;`` and the outputs after ``->``, each ``name: dtype[shape]``
(``program mlp(x: float32[4,8]; weights w: float32[8,16]) -> y: float32[4,16]``); the table of
every tensor (role, binding, pad value) follows. A reshape names its target shape
(``B = reshape(A, shape=[2,8])``). A repeat prints as a header line with its body indented below it; a cond as a header line
and one ``case b:`` line per branch with the branch indented below it; a topk as one line.
A step with an origin ends with it as a comment: ``# from convolution_1 (aten.convolution.default,
conv)``, so a reader sees which framework op each kernel came from.
"""
from __future__ import annotations

from collections.abc import Mapping

from ir_schemas import Cond, Kernel, Linalg, Origin, Program, Repeat, Reshape, TensorDecl, TopK


def format_kernel(k: Kernel) -> str:
    """``for m<4, n<8, k<16: Y[m, n] += A[m, k] * B[k, n]``; a condition follows the loops
    (``for i<8, j<8 where j <= i: …``), a view ends with ``# view``."""
    loops = ", ".join(f"{lp.var}<{lp.extent}" for lp in k.loops) or "()"
    cond = f" where {k.where}" if k.where is not None else ""
    init = "  # init keep" if k.init == "keep" and k.update != "=" else ""
    view = "  # view" if k.view else ""
    return f"for {loops}{cond}: {k.out} {k.update} {k.expr}{init}{view}"


def format_topk(t: TopK) -> str:
    """``V, I = topk(S, k=2, axis=1, largest)``"""
    which = "largest" if t.largest else "smallest"
    return f"{t.values}, {t.indices} = topk({t.src}, k={t.k}, axis={t.axis}, {which})"


def format_type(t: TensorDecl) -> str:
    """``float32[4,8]`` (``float32[]`` for a scalar)."""
    return f"{t.dtype}[{','.join(map(str, t.shape))}]"


def format_binder(t: TensorDecl) -> str:
    """``x: float32[4,8]``: a name where it is bound, with its type."""
    return f"{t.name}: {format_type(t)}"


def format_reshape(r: Reshape, tensors: Mapping[str, TensorDecl] | None = None) -> str:
    """``B = reshape(A, shape=[2,8])``; without the tensor table, ``B = reshape(A)``."""
    target = tensors.get(r.out) if tensors is not None else None
    shape = "" if target is None else f", shape=[{','.join(map(str, target.shape))}]"
    return f"{r.out} = reshape({r.src}{shape})"


def format_tensor(t: TensorDecl) -> str:
    extras = [x for x in (t.binding, None if t.pad_value is None else f"pad={t.pad_value:g}") if x]
    return f"{t.role:<12} {format_binder(t)}" + (f"  ({'; '.join(extras)})" if extras else "")


def format_header(p: Program) -> str:
    """``program name(inputs; weights ...) -> outputs``, every binder typed."""
    tensors = p.tensor_map()

    def binder(name: str) -> str:  # an undeclared name (a program not yet checked) prints bare
        return format_binder(tensors[name]) if name in tensors else name

    params = ", ".join(binder(n) for n in p.inputs)
    weights = [format_binder(t) for t in p.tensors if t.role == "weight"]
    if weights:
        params += ("; " if params else "") + "weights " + ", ".join(weights)
    outs = [binder(n) for n in p.outputs]
    result = outs[0] if len(outs) == 1 else f"({', '.join(outs)})"
    return f"program {p.name}({params}) -> {result}"


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


def format_linalg(t: Linalg) -> str:
    """``L = linalg.cholesky(A, upper=False)``"""
    defaults = type(t).model_construct().options()
    options = "".join(f", {k}={v!r}" for k, v in t.options().items() if v != defaults[k])
    return f"{', '.join(t.outs)} = linalg.{t.routine}({', '.join(t.args)}{options})"


def format_step(step: Kernel | Reshape | TopK | Repeat | Cond, indent: str = "  ",
                tensors: Mapping[str, TensorDecl] | None = None) -> list[str]:
    """The lines of one step (a repeat: its header, then its body indented by two more spaces),
    each ending with the step's origin as a comment when it has one. ``tensors`` (the program's
    table) gives a reshape's target shape."""
    if isinstance(step, Reshape):
        return [_with_origin(f"{indent}{step.name}: {format_reshape(step, tensors)}", step.origin)]
    if isinstance(step, TopK):
        return [_with_origin(f"{indent}{step.name}: {format_topk(step)}", step.origin)]
    if isinstance(step, Linalg):
        return [_with_origin(f"{indent}{step.name}: {format_linalg(step)}", step.origin)]
    if isinstance(step, Repeat):
        lines = [_with_origin(f"{indent}{step.name}: repeat {step.var}<{step.extent}:", step.origin)]
        for inner in step.steps:
            lines += format_step(inner, indent + "  ", tensors)
        return lines
    if isinstance(step, Cond):
        lines = [_with_origin(f"{indent}{step.name}: {', '.join(step.outs) or '()'} = switch {step.index}:",
                              step.origin)]
        for b, branch in enumerate(step.branches):
            lines.append(f"{indent}  case {b}:")
            for inner in branch:
                lines += format_step(inner, indent + "    ", tensors)
        return lines
    return [_with_origin(f"{indent}{step.name}: {format_kernel(step)}", step.origin)]


def format_program(p: Program) -> str:
    """The header, the tensor table, one line per step, ``return`` the outputs."""
    tensors = p.tensor_map()
    lines = [format_header(p)]
    lines += ["  " + format_tensor(t) for t in p.tensors]
    for step in p.steps:
        lines += format_step(step, tensors=tensors)
    lines.append("  return " + ", ".join(p.outputs))
    return "\n".join(lines)
