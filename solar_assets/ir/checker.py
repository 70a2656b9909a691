"""Static checks of an Affine Loop IR program, with messages that say where the fault is.

The executor and the analysis trust a checked program: every subscript is affine (or an
indirect read of an integer tensor, whose value is checked at execution), every affine access
stays inside its tensor (or reads a declared pad value), every name is declared and defined
before it is read. Numba does not check bounds, so this is the place it happens. Kernels in the
body of a ``Repeat`` are checked with the repeat variables ranging over their whole extents.
"""
from __future__ import annotations

from ir_schemas import Cond, Kernel, Linalg, Program, Repeat, Reshape, TopK
from solar_assets.ir.linalg import ROUTINES
from solar_assets.ir.linalg import result_shapes as linalg_result_shapes
from solar_assets.errors import IRError
from solar_assets.ir.expr import Access, Indirect, ParsedKernel, parse_kernel
from solar_assets.ir.printer import format_kernel
from solar_assets.ir.shapes import topk_shape
from solar_assets.ir.updates import UPDATES_PREFIX, updated_target

INTEGER_DTYPES = ("int64", "int32", "int16", "int8", "uint8")


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _check_access(acc: Access, p: Program, pk: ParsedKernel, box: dict[str, int], source: str,
                  writing: bool) -> None:
    k = pk.kernel
    where = f"{source}: kernel {k.name!r}\n  in: {format_kernel(k)}\n "
    tensors = p.tensor_map()
    if acc.tensor not in tensors:
        raise IRError(f"{where} {'writes' if writing else 'reads'} undeclared tensor {acc.tensor!r}")
    t = tensors[acc.tensor]
    if len(acc.index) != len(t.shape):
        raise IRError(f"{where} {acc} has {len(acc.index)} subscripts but {t.name} has rank {len(t.shape)}")
    for d, a in enumerate(acc.index):
        if not isinstance(a, Indirect):
            continue
        idx = tensors.get(a.index.tensor)
        if idx is not None and idx.dtype not in INTEGER_DTYPES:
            raise IRError(f"{where} subscript {d} of {acc} reads {idx.name}, which is {idx.dtype}; an index "
                          f"tensor must have an integer dtype ({', '.join(INTEGER_DTYPES)})")
        if writing and k.update != "=" and k.init != "keep":
            raise IRError(f"{where} {acc} is an indirect output of an accumulating kernel, which must use "
                          f"init 'keep' (accumulate into values a previous kernel wrote)")
        _check_access(a.index, p, pk, box, source, writing=False)
    if pk.iterations == 0:
        return
    for d, (a, size) in enumerate(zip(acc.index, t.shape)):
        if isinstance(a, Indirect):
            continue  # its value is checked when the kernel runs
        lo, hi = a.range(box)
        if lo >= 0 and hi < size:
            continue
        if writing or t.pad_value is None:
            raise IRError(
                f"{where} subscript {d} of {acc} ranges over [{lo}, {hi}] but {t.name} has extent {size}"
                + ("" if writing else " and no pad_value")
            )


def idle_loop_vars(pk: ParsedKernel) -> list[str]:
    """Loop variables (trip count > 1) that appear in no subscript of the output or of any read,
    index reads included. Such a loop only repeats the same iteration (a cost-faithful IR has none:
    an IR ``for m, n, k, r<1024: Y[m, n] += X[m, k] * W[n, k] / 1024`` reproduces the outputs with
    1024× the MACs). A trip-count-1 loop is harmless and tolerated."""
    used: set[str] = set()

    def note(acc: Access) -> None:
        for a in acc.index:
            used.update(a.vars)
        for inner in acc.index_reads():
            note(inner)

    note(pk.out)
    for acc in pk.reads:
        note(acc)
    return [lp.var for lp in pk.kernel.loops if lp.extent > 1 and lp.var not in used]


def check_kernel(k: Kernel, p: Program, source: str, free: dict[str, int] | None = None) -> ParsedKernel:
    """Check one kernel against the program's declarations; returns it parsed.

    ``free`` maps the variables of enclosing repeats (outermost first) to their extents.
    """
    free = free or {}
    try:
        pk = parse_kernel(k, tuple(free))
    except IRError as e:
        raise IRError(f"{source}: {e}\n  in: {format_kernel(k)}") from None
    box = pk.box(free)
    _check_access(pk.out, p, pk, box, source, writing=True)
    for acc in pk.reads:
        _check_access(acc, p, pk, box, source, writing=False)
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
    idle = idle_loop_vars(pk)
    if idle:
        lp = next(lp for lp in k.loops if lp.var == idle[0])
        raise IRError(
            f"{source}: kernel {k.name!r} loops over {lp.var!r} ({lp.extent} iterations), which indexes neither "
            f"the output nor any operand: every iteration repeats the same work, so its MACs and FLOPs would "
            f"count {lp.extent}× what the computation needs; drop the loop (and any factor that undoes it)\n"
            f"  in: {format_kernel(k)}"
        )
    return pk


class _Checker:
    def __init__(self, p: Program, source: str):
        self.p, self.source = p, source
        self.tensors = p.tensor_map()
        # an output updating a tensor in place holds that tensor's values from the start
        self.defined = {t.name for t in p.tensors if t.role in ("input", "weight") or updated_target(t)}
        self.step_names: set[str] = set()
        self.views: dict[str, str] = {}  # a view kernel's result -> the view's name
        self.written: set[str] = set()  # tensors a kernel wrote so far
        self.nested = 0  # depth inside repeats and cond branches

    def need(self, step_name: str, what: str, name: str) -> None:
        if name not in self.tensors:
            raise IRError(f"{self.source}: {what} {step_name!r} names undeclared tensor {name!r}")
        if name in self.views:
            raise IRError(f"{self.source}: {what} {step_name!r} uses {name!r}, the result of view "
                          f"{self.views[name]!r}; a view is a program output only")

    def steps(self, steps: tuple, free: dict[str, int]) -> list[ParsedKernel | None]:
        parsed: list[ParsedKernel | None] = []
        for i, step in enumerate(steps):
            if step.name in self.step_names:
                raise IRError(f"{self.source}: step {i} reuses the step name {step.name!r}")
            self.step_names.add(step.name)
            if isinstance(step, Reshape):
                self.reshape(step)
            elif isinstance(step, TopK):
                self.topk(step)
            elif isinstance(step, Linalg):
                self.linalg(step)
            elif isinstance(step, Repeat):
                self.repeat(step, free)
            elif isinstance(step, Cond):
                self.cond(step, free)
            else:
                parsed.append(self.kernel(step, free))
                continue
            parsed.append(None)
        return parsed

    def reshape(self, step: Reshape) -> None:
        for n in (step.src, step.out):
            self.need(step.name, "reshape", n)
        if step.src not in self.defined:
            raise IRError(f"{self.source}: reshape {step.name!r} reads {step.src!r} before any step writes it")
        src, out = self.tensors[step.src], self.tensors[step.out]
        if _numel(src.shape) != _numel(out.shape) or src.dtype != out.dtype:
            raise IRError(
                f"{self.source}: reshape {step.name!r} changes {step.src}: {src.dtype}{src.shape} into "
                f"{step.out}: {out.dtype}{out.shape}; element count and dtype must match"
            )
        self.defined.add(step.out)

    def topk(self, step: TopK) -> None:
        where = f"{self.source}: topk {step.name!r}"
        for n in (step.src, step.values, step.indices):
            self.need(step.name, "topk", n)
        if step.src not in self.defined:
            raise IRError(f"{where} reads {step.src!r} before any step writes it")
        src, values, indices = (self.tensors[n] for n in (step.src, step.values, step.indices))
        if step.axis >= len(src.shape):
            raise IRError(f"{where}: axis {step.axis} is out of range for {src.name} of rank {len(src.shape)}")
        if step.k > src.shape[step.axis]:
            raise IRError(f"{where}: k={step.k} exceeds the extent {src.shape[step.axis]} of axis {step.axis}")
        want = topk_shape(src.shape, step.axis, step.k)
        for t, dtype in ((values, src.dtype), (indices, "int64")):
            if tuple(t.shape) != want or t.dtype != dtype:
                raise IRError(f"{where}: {t.name} is {t.dtype}{tuple(t.shape)}, expected {dtype}{want}")
            if t.role in ("input", "weight"):
                raise IRError(f"{where} writes {t.role} tensor {t.name!r}")
        if len({step.src, step.values, step.indices}) != 3:
            raise IRError(f"{where}: src, values and indices must be three different tensors")
        self.defined |= {step.values, step.indices}

    def linalg(self, step: Linalg) -> None:
        """Operands written before, results of the routine's shapes, none an input, all distinct."""
        where = f"{self.source}: linalg {step.name!r} ({step.routine})"
        routine = ROUTINES[step.routine]
        if len(step.args) != routine.n_args:
            raise IRError(f"{where} takes {routine.n_args} operands, got {len(step.args)}")
        for n in (*step.args, *step.outs):
            self.need(step.name, "linalg", n)
        for n in step.args:
            if n not in self.defined:
                raise IRError(f"{where} reads {n!r} before any step writes it")
        args = [self.tensors[n] for n in step.args]
        if routine.matrix_first and len(args[0].shape) < 2:
            raise IRError(f"{where}: its first operand is a matrix (rank >= 2)")
        want = linalg_result_shapes(step.routine, [tuple(a.shape) for a in args], step.options())
        if len(step.outs) != len(want):
            raise IRError(f"{where} has {len(want)} results, got {len(step.outs)}")
        dtypes = routine.result_dtypes(step.options())
        for k, (n, shape) in enumerate(zip(step.outs, want)):
            t = self.tensors[n]
            dtype = (dtypes[k] if k < len(dtypes) else None) or args[0].dtype
            if tuple(t.shape) != shape or t.dtype != dtype:
                raise IRError(f"{where}: result {n} is {t.dtype}{tuple(t.shape)}, expected {dtype}{shape}")
            if t.role in ("input", "weight"):
                raise IRError(f"{where} writes {t.role} tensor {n!r}")
        if len(set(step.outs) | set(step.args)) != len(step.outs) + len(set(step.args)):
            raise IRError(f"{where}: results must be new tensors, distinct from each other and the operands")
        self.defined |= set(step.outs)

    def repeat(self, step: Repeat, free: dict[str, int]) -> None:
        if step.var in free:
            raise IRError(f"{self.source}: repeat {step.name!r} reuses the variable {step.var!r} of an "
                          f"enclosing repeat")
        self.nested += 1
        self.steps(step.steps, {**free, step.var: step.extent})
        self.nested -= 1

    def cond(self, step: Cond, free: dict[str, int]) -> None:
        """Each branch is checked like a repeat body, from the tensors defined before the step;
        afterwards only what every branch defines counts as defined (all of ``outs`` at least)."""
        where = f"{self.source}: cond {step.name!r}"
        self.need(step.name, "cond", step.index)
        index = self.tensors[step.index]
        if tuple(index.shape) != () or index.dtype not in (*INTEGER_DTYPES, "bool"):
            raise IRError(f"{where}: index {step.index!r} must be a rank-0 integer or bool tensor, "
                          f"not {index.dtype}{tuple(index.shape)}")
        if step.index not in self.defined:
            raise IRError(f"{where} reads its index {step.index!r} before any step writes it")
        for n in step.outs:
            self.need(step.name, "cond", n)
            if self.tensors[n].role in ("input", "weight"):
                raise IRError(f"{where} writes {self.tensors[n].role} tensor {n!r}")
        before, after = set(self.defined), None
        for b, branch in enumerate(step.branches):
            self.defined = set(before)
            self.nested += 1
            self.steps(branch, free)
            self.nested -= 1
            missing = [n for n in step.outs if n not in self.defined or n in before and not _writes(branch, n)]
            if missing:
                raise IRError(f"{where}: branch {b} does not write its result {missing[0]!r}")
            after = set(self.defined) if after is None else after & self.defined
        self.defined = after if after is not None else before

    def kernel(self, step: Kernel, free: dict[str, int]) -> ParsedKernel:
        pk = check_kernel(step, self.p, self.source, free)
        for acc in pk.reads:
            if acc.tensor not in self.defined and acc.tensor != pk.out.tensor:
                raise IRError(f"{self.source}: kernel {step.name!r} reads {acc.tensor!r} before any step writes it")
            if acc.tensor in self.views:
                raise IRError(f"{self.source}: kernel {step.name!r} reads {acc.tensor!r}, the result of view "
                              f"{self.views[acc.tensor]!r}; a view is a program output only (read its source "
                              f"through the same subscripts instead)")
        if pk.out.tensor in self.views:
            raise IRError(f"{self.source}: kernel {step.name!r} writes {pk.out.tensor!r}, the result of view "
                          f"{self.views[pk.out.tensor]!r}")
        if step.view:
            self.view(step, pk, free)
        self.written.add(pk.out.tensor)
        if step.init == "keep" and pk.out.tensor not in self.defined:
            raise IRError(f"{self.source}: kernel {step.name!r} accumulates into {pk.out.tensor!r} (init 'keep') "
                          f"before it is written")
        self.defined.add(pk.out.tensor)
        return pk

    def view(self, step: Kernel, pk: ParsedKernel, free: dict[str, int]) -> None:
        """A view kernel makes a program output alias what it reads: outside repeats and branches,
        its output a plain ``Y[i0, …, in]`` over its own loops (one per dim, in order) that no other
        step writes, of the same dtype as its source."""
        where = f"{self.source}: view {step.name!r}"
        out = self.tensors[pk.out.tensor]
        src = self.tensors[pk.reads[0].tensor]
        plain = [a.vars[0] if len(a.coefs) == 1 and a.coefs[0][1] == 1 and a.const == 0 else None
                 for a in pk.out.index]
        if free or self.nested:
            raise IRError(f"{where} is inside a repeat or a branch; views are top-level steps")
        if plain != [lp.var for lp in step.loops] or tuple(lp.extent for lp in step.loops) != tuple(out.shape):
            raise IRError(f"{where} must write {out.name} whole, one loop per dimension in order "
                          f"(like {out.name}[i0, i1]), got {step.out}\n  in: {format_kernel(step)}")
        if out.role != "output" or src.dtype != out.dtype or pk.out.tensor in self.views or \
                pk.out.tensor in self.written:
            raise IRError(f"{where}: a view's result is a program output written by nothing else, of its "
                          f"source's dtype\n  in: {format_kernel(step)}")
        self.views[pk.out.tensor] = step.name


def _writes(steps: tuple, name: str) -> bool:
    """Whether some step in ``steps`` (or nested in them) writes ``name``."""
    for st in steps:
        if isinstance(st, Kernel) and st.out.split("[", 1)[0].strip() == name:
            return True
        if isinstance(st, Reshape) and st.out == name or isinstance(st, TopK) and name in (st.values, st.indices):
            return True
        if isinstance(st, Linalg) and name in st.outs:
            return True
        if isinstance(st, Repeat) and _writes(st.steps, name):
            return True
        if isinstance(st, Cond) and (name in st.outs or any(_writes(b, name) for b in st.branches)):
            return True
    return False


def check_program(p: Program, source: str = "<program>") -> list[ParsedKernel | None]:
    """Check the whole program; returns the parsed form of each top-level step (None for
    composition ops and repeats; a repeat body's kernels parse with ``parse_kernel(k, free)``)."""
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
        if t.binding and t.role not in ("input", "weight") and updated_target(t) is None:
            raise IRError(f"{source}: {t.role} tensor {t.name!r} has binding {t.binding!r}; only inputs, weights and "
                          f"outputs that update one in place ('{UPDATES_PREFIX}<its binding>') are bound")
    bound = [t.binding for t in p.tensors if t.role in ("input", "weight")]
    for t in p.tensors:
        target = updated_target(t)
        if target is not None and bound.count(target) != 1:
            raise IRError(f"{source}: output {t.name!r} updates {target!r} in place, but the program declares "
                          f"{bound.count(target)} input or weight tensors bound to it (it needs exactly one)")
    checker = _Checker(p, source)
    parsed = checker.steps(p.steps, {})
    for n in p.outputs:
        if n not in checker.defined:
            raise IRError(f"{source}: output {n!r} is never written")
    return parsed
