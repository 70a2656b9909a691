"""Static checks of an Affine Loop IR program, with messages that say where the fault is.

The executor and the analysis trust a checked program: every subscript is affine, every
access stays inside its tensor (or reads a declared pad value), every name is declared
and defined before it is read. Numba does not check bounds, so this is the place it happens.
"""
from __future__ import annotations

from ir_schemas import Kernel, Program, Reshape
from solar_assets.errors import IRError
from solar_assets.ir.expr import Access, ParsedKernel, parse_kernel
from solar_assets.ir.printer import format_kernel


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _check_access(acc: Access, p: Program, pk: ParsedKernel, source: str, writing: bool) -> None:
    k = pk.kernel
    where = f"{source}: kernel {k.name!r}\n  in: {format_kernel(k)}\n "
    tensors = p.tensor_map()
    if acc.tensor not in tensors:
        raise IRError(f"{where} {'writes' if writing else 'reads'} undeclared tensor {acc.tensor!r}")
    t = tensors[acc.tensor]
    if len(acc.index) != len(t.shape):
        raise IRError(f"{where} {acc} has {len(acc.index)} subscripts but {t.name} has rank {len(t.shape)}")
    if pk.iterations == 0:
        return
    for d, (a, size) in enumerate(zip(acc.index, t.shape)):
        lo, hi = a.range(pk.extents)
        if lo >= 0 and hi < size:
            continue
        if writing or t.pad_value is None:
            raise IRError(
                f"{where} subscript {d} of {acc} ranges over [{lo}, {hi}] but {t.name} has extent {size}"
                + ("" if writing else " and no pad_value")
            )


def check_kernel(k: Kernel, p: Program, source: str) -> ParsedKernel:
    """Check one kernel against the program's declarations; returns it parsed."""
    try:
        pk = parse_kernel(k)
    except IRError as e:
        raise IRError(f"{source}: {e}\n  in: {format_kernel(k)}") from None
    _check_access(pk.out, p, pk, source, writing=True)
    for acc in pk.reads:
        _check_access(acc, p, pk, source, writing=False)
    role = p.tensor(pk.out.tensor).role
    if role in ("input", "weight"):
        raise IRError(f"{source}: kernel {k.name!r} writes {role} tensor {pk.out.tensor!r}")
    if k.update == "=":
        written = {v for a in pk.out.index for v in a.vars}
        missing = [lp.var for lp in k.loops if lp.var not in written and lp.extent > 1]
        if missing:
            raise IRError(
                f"{source}: kernel {k.name!r} assigns with '=' but loop {missing[0]!r} is not in the "
                f"output subscript, so each element would be overwritten; use a reduction update\n"
                f"  in: {format_kernel(k)}"
            )
    return pk


def check_program(p: Program, source: str = "<program>") -> list[ParsedKernel | None]:
    """Check the whole program; returns the parsed form of each step (None for composition ops)."""
    names = [t.name for t in p.tensors]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise IRError(f"{source}: tensor {sorted(dup)[0]!r} is declared more than once")
    tensors = p.tensor_map()
    for label, group, roles in (("input", p.inputs, {"input"}), ("output", p.outputs, {"output"})):
        for n in group:
            if n not in tensors:
                raise IRError(f"{source}: {label} {n!r} is not a declared tensor")
            if tensors[n].role not in roles:
                raise IRError(f"{source}: {label} {n!r} is declared with role {tensors[n].role!r}")
    for t in p.tensors:
        if t.role in ("input", "weight") and not t.binding:
            raise IRError(f"{source}: {t.role} tensor {t.name!r} has no binding (e.g. 'input:0' or 'param:fc.weight')")
        if t.role == "input" and t.name not in p.inputs:
            raise IRError(f"{source}: tensor {t.name!r} has role input but is not listed in inputs")
    defined = {t.name for t in p.tensors if t.role in ("input", "weight")}
    step_names: set[str] = set()
    parsed: list[ParsedKernel | None] = []
    for i, step in enumerate(p.steps):
        if step.name in step_names:
            raise IRError(f"{source}: step {i} reuses the step name {step.name!r}")
        step_names.add(step.name)
        if isinstance(step, Reshape):
            for n in (step.src, step.out):
                if n not in tensors:
                    raise IRError(f"{source}: reshape {step.name!r} names undeclared tensor {n!r}")
            if step.src not in defined:
                raise IRError(f"{source}: reshape {step.name!r} reads {step.src!r} before any step writes it")
            src, out = tensors[step.src], tensors[step.out]
            if _numel(src.shape) != _numel(out.shape) or src.dtype != out.dtype:
                raise IRError(
                    f"{source}: reshape {step.name!r} changes {step.src}: {src.dtype}{src.shape} into "
                    f"{step.out}: {out.dtype}{out.shape}; element count and dtype must match"
                )
            defined.add(step.out)
            parsed.append(None)
            continue
        pk = check_kernel(step, p, source)
        for acc in pk.reads:
            if acc.tensor not in defined and acc.tensor != pk.out.tensor:
                raise IRError(f"{source}: kernel {step.name!r} reads {acc.tensor!r} before any step writes it")
        if step.init == "keep" and pk.out.tensor not in defined:
            raise IRError(f"{source}: kernel {step.name!r} accumulates into {pk.out.tensor!r} (init 'keep') before it is written")
        defined.add(pk.out.tensor)
        parsed.append(pk)
    for n in p.outputs:
        if n not in defined:
            raise IRError(f"{source}: output {n!r} is never written")
    return parsed
