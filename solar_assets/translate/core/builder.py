"""The program being built while the tracer walks an exported graph."""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator, Sequence

from ir_schemas import Cond, Kernel, Linalg, Loop, Origin, Program, Repeat, Reshape, TensorDecl, TopK
from solar_assets.ir.expr import parse_kernel
from solar_assets.ir.updates import updates_binding
from solar_assets.translate.core.affine import Lin, SymTensor, split_reshape, view_dim

def fold_idle_loops(loops: Sequence[tuple[str, int]], out: str, update: str, expr: str, where: str | None,
                    free: tuple[str, ...] = ()) -> tuple[list[tuple[str, int]], str]:
    """A reduction over a loop that no subscript and no expression uses — the sum of a broadcast:
    ``x.expand(64, d).sum(0)``, a bias's gradient in a backward graph — adds ``n`` copies of one
    term. The loop is dropped and the term scaled by ``n`` (``+=``), raised to the ``n``-th power
    (``*=``) or kept once (``max=`` / ``min=``), so the kernel costs what the computation needs
    (the checker refuses an idle loop: ``ir.checker.idle_loop_vars``)."""
    import math
    import re

    from solar_assets.ir.checker import idle_loop_vars

    loops = [(v, int(e)) for v, e in loops]
    if update not in ("+=", "*=", "max=", "min="):
        return loops, expr
    try:
        pk = parse_kernel(Kernel(name="k", loops=tuple(Loop(var=v, extent=e) for v, e in loops), out=out,
                                 update=update, expr=expr, where=where), free)
    except Exception:  # noqa: BLE001 - not this function's to judge: the checker names the fault
        return loops, expr
    named = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", f"{expr} {where or ''}"))
    idle = [v for v in idle_loop_vars(pk) if v not in named]
    if not idle:
        return loops, expr
    n = math.prod(e for v, e in loops if v in idle)
    kept = [(v, e) for v, e in loops if v not in idle]
    if update == "+=":
        expr = f"{n} * ({expr})"
    elif update == "*=":
        expr = f"pow({expr}, {n})"
    return kept, expr


@dataclass
class _Decl:
    shape: tuple[int, ...]
    dtype: str
    role: str
    binding: str | None = None
    pad_value: float | None = None


def loop_vars(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def lins(vars_: Sequence[str]) -> list[Lin]:
    return [Lin.of(v) for v in vars_]


def fmt_const(x: float | int | bool) -> str:
    if isinstance(x, bool):
        return "1" if x else "0"
    if isinstance(x, int):
        return str(x)
    if x != x:
        return "nan"
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    return repr(float(x))


OUTPUT_ORIGIN = Origin(node="output", op="output")
"""The origin of the copies that make a view a program output (both tracers: the graph's outputs)."""


def with_origin(step: Kernel | Reshape | TopK | Repeat | Cond, origin: Origin, replace: bool = False):
    """``step`` with ``origin`` where it has none (every step, with ``replace``), recursively through
    repeat and cond bodies."""
    update: dict = {}
    if step.origin is None or replace:
        update["origin"] = origin
    if isinstance(step, Repeat):
        update["steps"] = tuple(with_origin(st, origin, replace) for st in step.steps)
    elif isinstance(step, Cond):
        update["branches"] = tuple(tuple(with_origin(st, origin, replace) for st in b) for b in step.branches)
    return step.model_copy(update=update) if update else step


@dataclass
class ProgramBuilder:
    name: str
    decls: dict[str, _Decl] = field(default_factory=dict)
    steps: list[Kernel | Reshape | TopK | Repeat] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    checked_only: list[str] = field(default_factory=list)  # outputs validated, not charged (Program.checked_only)
    _used: dict[str, set[str]] = field(default_factory=lambda: {"tensor": set(), "step": set()})
    free: tuple[str, ...] = ()  # variables of the repeats being built (innermost last)
    in_place_tensors: dict[str, str] = field(default_factory=dict)  # an update's tensor -> the input it updates
    uninitialised: set[str] = field(default_factory=set)  # storage no step has written yet (torch.empty)
    data_sizes: dict[str, int] = field(default_factory=dict)
    """Sizes the sample's values decided (a data-dependent size's symbol, ``u0``, -> its value)."""

    @contextmanager
    def repeat(self, hint: str, var: str, extent: int) -> Iterator[str]:
        """Steps added inside the ``with`` block form the body of one Repeat step over ``var``."""
        outer, self.steps = self.steps, []
        self.free = self.free + (var,)
        try:
            yield var
        finally:
            body, self.steps = self.steps, outer
            self.free = self.free[:-1]
        self.steps.append(Repeat(name=self.fresh(hint, "step"), var=var, extent=int(extent), steps=tuple(body)))

    @contextmanager
    def branch(self) -> Iterator[list]:
        """Steps added inside the ``with`` block are collected into the yielded list (one branch
        of a Cond step, passed to ``cond``) instead of the program."""
        outer, self.steps = self.steps, []
        body: list = []
        try:
            yield body
        finally:
            body.extend(self.steps)
            self.steps = outer

    def cond(self, hint: str, index: str, branches: Sequence[list], outs: Sequence[str]) -> None:
        """A Cond step: run ``branches[index]`` (each built with ``branch``), which write ``outs``."""
        self.steps.append(Cond(name=self.fresh(hint, "step"), index=index,
                               branches=tuple(tuple(b) for b in branches), outs=tuple(outs)))

    def topk(self, hint: str, src: SymTensor, axis: int, k: int, largest: bool) -> tuple[SymTensor, SymTensor]:
        """A TopK step over a whole tensor (a view is copied first)."""
        src = self.materialize(src, hint + "_src")
        shape = tuple(k if d == axis else n for d, n in enumerate(src.shape))
        values = self.declare(hint + "_values", shape, src.dtype)
        indices = self.declare(hint + "_indices", shape, "int64")
        self.steps.append(TopK(name=self.fresh(hint, "step"), src=src.base, axis=axis, k=int(k),
                               largest=bool(largest), values=values.base, indices=indices.base))
        return values, indices

    def linalg(self, hint: str, routine: str, args: Sequence[SymTensor], options: dict | None = None
               ) -> list[SymTensor]:
        """A Linalg step (``ir.linalg``) on whole tensors (views copied first); its new results."""
        from solar_assets.ir.linalg import ROUTINES, result_shapes

        options = {k: v for k, v in (options or {}).items() if v is not None}
        options = {**Linalg.model_construct().options(), **options}
        args = [self.materialize(a, f"{hint}_arg{k}") for k, a in enumerate(args)]
        shapes = result_shapes(routine, [a.shape for a in args], options)
        dtypes = ROUTINES[routine].result_dtypes(options)
        outs = [self.declare(f"{hint}_{k}", shape, (dtypes[k] if k < len(dtypes) else None) or args[0].dtype)
                for k, shape in enumerate(shapes)]
        self.steps.append(Linalg(name=self.fresh(hint, "step"), routine=routine, args=tuple(a.base for a in args),
                                 outs=tuple(o.base for o in outs), **options))
        return outs

    def tag_origin(self, start: int, origin: Origin) -> None:
        """Give ``origin`` to the steps emitted since ``len(self.steps) == start`` (and to the steps
        nested in them) that have none yet: the tracers call this once per framework op, so every
        lowering template is tagged without knowing it. A step a nested op already tagged (an
        equation inside a JAX sub-program) keeps its own, more specific origin."""
        self.steps[start:] = [with_origin(st, origin) for st in self.steps[start:]]

    def fresh(self, hint: str, space: str = "tensor") -> str:
        """A unique identifier from ``hint`` (tensors and steps have separate name spaces)."""
        base = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in hint) or "t"
        if base[0].isdigit():
            base = "t_" + base
        name, i = base, 1
        while name in self._used[space]:
            name, i = f"{base}_{i}", i + 1
        self._used[space].add(name)
        return name

    def declare(self, hint: str, shape: Sequence[int], dtype: str, role: str = "intermediate",
                binding: str | None = None) -> SymTensor:
        name = self.fresh(hint)
        self.decls[name] = _Decl(tuple(int(s) for s in shape), dtype, role, binding)
        if role == "input":
            self.inputs.append(name)
        return SymTensor.whole(name, shape, dtype)

    def kernel(self, hint: str, loops: Sequence[tuple[str, int]], out: str, update: str, expr: str,
               init: str = "identity", where: str | None = None, view: bool = False) -> None:
        loops, expr = fold_idle_loops(loops, out, update, expr, where, self.free)
        self.steps.append(Kernel(
            name=self.fresh(hint, "step"), loops=tuple(Loop(var=v, extent=int(e)) for v, e in loops),
            out=out, update=update, expr=expr, init=init, where=where, view=view,
        ))

    def padded(self, x: SymTensor, pad_value: float, hint: str, dims: Sequence[int] | None = None) -> SymTensor:
        """``x`` on a base tensor whose out-of-range reads (along ``dims``, default any) give ``pad_value``."""
        decl = self.decls[x.base]
        if x.per_dim_monotone(decl.shape, dims) and decl.pad_value in (None, pad_value):
            decl.pad_value = pad_value
            return x
        y = self.materialize(x, hint, force=True)
        self.decls[y.base].pad_value = pad_value
        return y

    def materialize(self, x: SymTensor, hint: str, force: bool = False) -> SymTensor:
        """A whole, contiguous tensor holding ``x`` (a copy kernel unless it already is one)."""
        if not force and x.is_whole(self.decls[x.base].shape):
            return x
        y = self.declare(hint, x.shape, x.dtype)
        v = loop_vars("i", len(x.shape))
        self.kernel(hint, list(zip(v, x.shape)), y.access(lins(v)), "=", x.access(lins(v)))
        return y

    def reshape(self, x: SymTensor, shape: Sequence[int], hint: str) -> SymTensor:
        """PyTorch view/reshape: lazy when it only splits dims, an alias of a contiguous
        tensor otherwise, and a real copy first when the source is not contiguous (as torch does)."""
        shape = tuple(int(s) for s in shape)
        old_of_new = split_reshape(x.shape, shape)
        if old_of_new is not None:
            return x.reindex(shape, old_of_new)
        src = self.materialize(x, hint + "_contig")
        out = self.declare(hint, shape, x.dtype)
        self.steps.append(Reshape(name=self.fresh(hint, "step"), src=src.base, out=out.base))
        return out

    def permute(self, x: SymTensor, dims: Sequence[int]) -> SymTensor:
        dims = [d % len(x.shape) for d in dims]
        old_of_new = [Lin() for _ in dims]
        for new, old in enumerate(dims):
            old_of_new[old] = Lin.of(view_dim(new))
        return x.reindex([x.shape[d] for d in dims], old_of_new)

    def expand(self, x: SymTensor, sizes: Sequence[int]) -> SymTensor:
        offset = len(sizes) - len(x.shape)
        new_shape = [x.shape[d - offset] if (s == -1 and d >= offset) else int(s) for d, s in enumerate(sizes)]
        old_of_new = []
        for j, old in enumerate(x.shape):
            nd = j + offset
            old_of_new.append(Lin.constant(0) if old == 1 and new_shape[nd] != 1 else Lin.of(view_dim(nd)))
        return x.reindex(new_shape, old_of_new)

    def broadcast_access(self, x: SymTensor, out_idx: Sequence[Lin], out_shape: Sequence[int]) -> str:
        """Read ``x`` at the position of a broadcast output (numpy rules)."""
        offset = len(out_shape) - len(x.shape)
        idx = [Lin.constant(0) if (s == 1 and out_shape[d + offset] != 1) else out_idx[d + offset]
               for d, s in enumerate(x.shape)]
        return x.access(idx)

    def set_output(self, x: SymTensor, hint: str, view: bool = False, updates: str | None = None) -> None:
        """Make ``x`` a program output: relabel a whole intermediate, alias a split view of one
        (both free, as in PyTorch), and copy anything else (a view of an input, a permuted view).
        ``view``: the framework returns ``x`` as an alias of its source (eager PyTorch's
        ``x.t()``), so the copy is a view kernel, which executes but moves no bytes. ``updates``:
        the binding of the input or buffer whose storage this output is after an in-place update
        (``solar_assets.ir.updates``)."""
        binding = None if updates is None else updates_binding(updates)
        decl = self.decls[x.base]
        if decl.role == "intermediate" and x.is_whole(decl.shape):
            decl.role, decl.binding = "output", binding
            self.outputs.append(x.base)
            return
        out = self.declare(hint, x.shape, x.dtype, role="output", binding=binding)
        old_of_new = split_reshape(decl.shape, x.shape)
        if decl.role == "intermediate" and old_of_new is not None and \
                SymTensor.whole(x.base, decl.shape, x.dtype).reindex(x.shape, old_of_new) == x:
            self.steps.append(Reshape(name=self.fresh(hint, "step"), src=x.base, out=out.base))
        else:
            v = loop_vars("i", len(x.shape))
            self.kernel(hint + ("_view" if view else "_copy"), list(zip(v, x.shape)), out.access(lins(v)), "=",
                        x.access(lins(v)), view=view)
        self.outputs.append(out.base)

    def build(self) -> Program:
        """The finished program, declaring only the tensors some step touches."""
        used = set(self.inputs) | set(self.outputs)

        def collect(steps: Sequence, free: tuple[str, ...]) -> None:
            nonlocal used
            for step in steps:
                if isinstance(step, Reshape):
                    used |= {step.src, step.out}
                elif isinstance(step, TopK):
                    used |= {step.src, step.values, step.indices}
                elif isinstance(step, Linalg):
                    used |= {*step.args, *step.outs}
                elif isinstance(step, Repeat):
                    collect(step.steps, free + (step.var,))
                elif isinstance(step, Cond):
                    used |= {step.index, *step.outs}
                    for branch in step.branches:
                        collect(branch, free)
                else:
                    pk = parse_kernel(step, free)
                    used |= {pk.out.tensor} | {a.tensor for a in pk.reads}

        collect(self.steps, ())
        targets = {updated for d in self.decls.values() if (updated := _updated(d)) is not None}
        used |= {n for n, d in self.decls.items() if d.role in ("input", "weight") and d.binding in targets}
        tensors = tuple(
            TensorDecl(name=n, shape=d.shape, dtype=d.dtype, role=d.role, binding=d.binding, pad_value=d.pad_value)
            for n, d in self.decls.items() if n in used
        )
        return Program(name=self.name, tensors=tensors, inputs=tuple(self.inputs), outputs=tuple(self.outputs),
                       steps=tuple(self.steps), checked_only=tuple(self.checked_only))


def _updated(decl: _Decl) -> str | None:
    """The binding an output declaration updates in place (its storage must stay declared)."""
    prefix = updates_binding("")
    return decl.binding[len(prefix):] if decl.role == "output" and (decl.binding or "").startswith(prefix) else None
