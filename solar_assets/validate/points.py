"""Evaluate IR steps at chosen output points, in float64, without running whole kernels.

A perfect loop nest computes one output point from its reduction alone: fix the output
variables to the point's coordinates and only the remaining (reduction) variables range. So
a point costs its reduction length, and a sample of points of a huge convolution costs a few
million multiply-adds. ``PointEvaluator`` does that for a list of steps (one op group):

- a kernel whose output subscripts are each a constant, ``c·v + k`` of one loop variable, or
  a mixed-radix sum of variables (a grouped convolution's ``g*K + k`` channel) is evaluated
  at the points (each variable solved from the point, divisibility and range checked: a
  strided or phased write touches only some points), vectorised over the reduction
  variables (NumPy, in chunks);
- a tensor the steps read but do not write comes from ``external`` (the framework's values);
- a tensor written inside the steps (a softmax's row maxima, a padded copy) is evaluated, on
  demand, at just the points the later step reads, or whole and memoised when it is small;
- a kernel with any other output subscript (an overlapping sum ``p + r``, an indirect
  scatter) and a ``TopK`` run whole on their (small) tensors; a ``Reshape`` keeps the flat
  index.

The semantics follow the executor's generated code (``solar_assets.execute.codegen``):
NaN-propagating ``max`` / ``min`` / ``relu``, pad values at out-of-range reads, accumulation
identities, conversion kernels rounding to their narrow dtype.
"""
from __future__ import annotations

import ast
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ir_schemas import Cond, Kernel, Linalg, Loop, Program, Repeat, Reshape, TensorDecl, TopK
from solar_assets.errors import SolarError
from solar_assets.execute.codegen import dtype_kind
from solar_assets.execute.interpreter import topk_arrays
from solar_assets.ir.dtypes import NARROW_FLOAT_DTYPES, round_to
from solar_assets.ir.expr import SCALAR_FUNCTIONS, Access, Affine, Indirect, ParsedKernel, parse_kernel
from solar_assets.ir.interpreter import ExprInterpreter
from solar_assets.ir.scalar_functions import numpy_reference
from solar_assets.ir.scalar_numpy import nan_max, nan_min
from solar_assets.ir.updates import updated_sources

if TYPE_CHECKING:
    from ir_schemas.affine_loop_ir import Step

CHUNK = 1 << 21  # elements of one (points x reduction) block
SMALL_TENSOR = 1 << 20  # an internal tensor this small is computed whole when much of it is needed
WHOLE_LIMIT = 1 << 25  # the most elements (or iterations) a step is run whole on
IDENTITY = {"+=": 0.0, "*=": 1.0, "max=": -math.inf, "min=": math.inf}


class PointEvalError(SolarError):
    """A step the point evaluator cannot evaluate (a repeat, a cond, a too-large whole run)."""


COMPARE = {ast.Lt: np.less, ast.LtE: np.less_equal, ast.Gt: np.greater, ast.GtE: np.greater_equal,
           ast.Eq: np.equal, ast.NotEq: np.not_equal}


def _reduce(update: str, block: np.ndarray) -> np.ndarray:
    """Combine a (points, reduction) block along the reduction, as the loop nest would."""
    if update == "+=":
        return block.sum(axis=1)
    if update == "*=":
        return block.prod(axis=1)
    if update == "max=":
        return np.where(np.isnan(block).any(axis=1), np.nan, block.max(axis=1, initial=-math.inf))
    if update == "min=":
        return np.where(np.isnan(block).any(axis=1), np.nan, block.min(axis=1, initial=math.inf))
    return block[:, -1]


def combine(update: str, cur: np.ndarray, value: np.ndarray) -> np.ndarray:
    """``cur update value`` elementwise (``=`` takes ``value``)."""
    if update == "+=":
        return cur + value
    if update == "*=":
        return cur * value
    if update == "max=":
        return nan_max(value, cur)
    if update == "min=":
        return nan_min(value, cur)
    return value


def step_io(step: Step, free: tuple[str, ...] = ()) -> tuple[list[str], list[str]]:
    """(tensors read, tensors written) by one step, nested steps included; a kernel that
    accumulates into what it keeps reads its output too."""
    if isinstance(step, Kernel):
        pk = parse_kernel(step, free)
        reads = [a.tensor for a in pk.reads]
        if step.update != "=" and step.init == "keep":
            reads.append(pk.out.tensor)
        return reads, [pk.out.tensor]
    if isinstance(step, Reshape):
        return [step.src], [step.out]
    if isinstance(step, TopK):
        return [step.src], [step.values, step.indices]
    if isinstance(step, Linalg):
        return list(step.args), list(step.outs)
    reads: list[str] = []
    writes: list[str] = []
    if isinstance(step, Repeat):
        for st in step.steps:
            r, w = step_io(st, free + (step.var,))
            reads += [t for t in r if t not in writes]
            writes += w
    elif isinstance(step, Cond):
        reads.append(step.index)
        for branch in step.branches:
            for st in branch:
                r, w = step_io(st, free)
                reads += r
                writes += w
    return reads, writes


class _Unrestricted(Exception):
    """A kernel whose output subscripts cannot be solved for a point: run it whole instead."""


def _solve_subscript(a: Affine, num: np.ndarray, ext: dict[str, int]) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Each variable of the output subscript ``a`` (less its constant: ``num``) solved at the
    points, with where that value is valid: ``c·v`` by division; a sum of variables when it is a
    mixed-radix number (positive coefficients, each larger than the most all smaller terms can
    add, as a grouped convolution's ``g*K + k`` channel), digit by digit from the largest. Any
    other sum (``p + r``: several iterations per point) raises ``_Unrestricted``."""
    if len(a.coefs) == 1:
        v, c = a.coefs[0]
        val = num // c
        return [(v, val, (num % c == 0) & (val >= 0) & (val < ext[v]))]
    terms = sorted(a.coefs, key=lambda vc: vc[1])
    reach = 0  # the largest value the smaller terms add up to
    for v, c in terms:
        if c <= 0 or c <= reach:
            raise _Unrestricted
        reach += c * max(ext[v] - 1, 0)
    rest = num
    out: list[tuple[str, np.ndarray, np.ndarray]] = []
    for v, c in reversed(terms):
        val = np.where(rest >= 0, rest // c, -1)
        out.append((v, val, (val >= 0) & (val < ext[v])))
        rest = rest - c * val
    out[-1] = (out[-1][0], out[-1][1], out[-1][2] & (rest == 0))
    return out


def _inner_solutions(deferred: list[tuple[int, Affine]], solved: dict[str, np.ndarray],
                     ext: dict[str, int]) -> list[tuple[int, Affine, str | None, int]]:
    """For each output subscript with several iterations per point (``p + r``, ``2*p + r``), the
    variable solved from the point and the others' enumerated values (the one of largest extent
    not solved already: the input position, the kernel offset enumerated), or None where every
    variable is solved, taken or in another such subscript (then the subscript is only checked)."""
    taken = set(solved)
    elsewhere = [{v for v, _ in a.coefs} for _, a in deferred]
    out = []
    for i, (d, a) in enumerate(deferred):
        shared = set().union(*(vs for n, vs in enumerate(elsewhere) if n != i))
        free = [(ext[v], v, c) for v, c in a.coefs if v not in taken and v not in shared]
        if not free:
            out.append((d, a, None, 0))
            continue
        _, v, c = max(free)
        taken.add(v)
        out.append((d, a, v, c))
    return out


def _solve_inner(inner: list[tuple[int, Affine, str | None, int]], coords: Any, sel: np.ndarray,
                 env: dict[str, np.ndarray], ext: dict[str, int]) -> np.ndarray | None:
    """Bind each inner-solved variable in ``env`` (points × enumerated iterations) and return where
    the iteration writes the point; None when there is nothing to solve."""
    if not inner:
        return None
    hits: np.ndarray | bool = True
    for d, a, v, c in inner:
        rest = coords[d][sel][:, None] - a.const
        for u, cu in a.coefs:
            if u != v:
                rest = rest - cu * env[u]
        if v is None:
            hits = hits & (rest == 0)
            continue
        val = rest // c
        ok = (rest % c == 0) & (val >= 0) & (val < ext[v])
        env[v] = np.where(ok, val, 0)
        hits = hits & ok
    return np.asarray(hits)


class LazyPoints:
    """A tensor only an evaluator's steps compute (no framework value holds it), too big to evaluate
    whole: its points are evaluated when a later group reads them. A transposed convolution's
    uncropped output (level 2's 60 at batch 32: 35.7 M elements) feeds the crop that later groups
    read at 512 points each."""

    def __init__(self, evaluator: PointEvaluator, name: str) -> None:
        self.evaluator, self.name = evaluator, name
        self.shape = tuple(evaluator.tensors[name].shape)

    def at(self, flat: np.ndarray) -> np.ndarray:
        return self.evaluator.value_at(self.name, np.asarray(flat, dtype=np.int64))


class PointEvaluator:
    """Values of the tensors ``steps`` write, at chosen flat indices (module docstring).

    ``external(name)`` gives the array of a tensor the steps do not write (or its value before
    the steps, for one they update in place); ``seeded`` names the written tensors that held a
    value before the steps (else a written tensor starts as zeros, as in the executor, or, for an
    output that updates an input in place, as that input's value: ``solar_assets.ir.updates``)."""

    def __init__(self, program: Program, steps: Sequence[Step], external: Callable[[str], np.ndarray],
                 seeded: frozenset[str] = frozenset(), source: str = "<program>"):
        self.tensors: dict[str, TensorDecl] = program.tensor_map()
        self.steps = list(steps)
        self.external = external
        self.seeded = seeded
        self.prefill = updated_sources(program)
        self.source = source
        self.writers: dict[str, list[int]] = {}
        self.parsed: list[ParsedKernel | None] = []
        for j, st in enumerate(self.steps):
            if isinstance(st, Kernel):
                pk = parse_kernel(st)
                self.parsed.append(pk)
                self.writers.setdefault(pk.out.tensor, []).append(j)
            elif isinstance(st, Reshape):
                self.parsed.append(None)
                self.writers.setdefault(st.out, []).append(j)
            elif isinstance(st, TopK):
                self.parsed.append(None)
                self.writers.setdefault(st.values, []).append(j)
                self.writers.setdefault(st.indices, []).append(j)
            else:  # a repeat, a cond or a linalg routine: run whole (``_step_whole``)
                self.parsed.append(None)
                for t in dict.fromkeys(step_io(st)[1]):
                    self.writers.setdefault(t, []).append(j)
        self._whole: dict[tuple[str, int], np.ndarray] = {}
        # tensor -> {flat index: Σ|terms|} of its summing (+=) writers at the points evaluated: the
        # magnitude a float sum's rounding follows, even where the sum itself cancels to ~0
        self.sum_abs: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
        self.evaluations = 0  # expression evaluations done (points x reduction), for the report

    # ------------------------------------------------------------------ tensor values
    def summed_magnitude(self, name: str, flat: np.ndarray) -> np.ndarray | None:
        """Σ|terms| of ``name``'s summing writers at ``flat`` (0 where none ran); None if none did."""
        parts = self.sum_abs.get(name)
        if not parts:
            return None
        where = np.concatenate([p[0] for p in parts])
        uniq, inverse = np.unique(where, return_inverse=True)
        total = np.bincount(inverse, weights=np.concatenate([p[1] for p in parts]), minlength=uniq.size)
        pos = np.clip(np.searchsorted(uniq, flat), 0, uniq.size - 1)
        return np.where(uniq[pos] == flat, total[pos], 0.0)

    def numel(self, name: str) -> int:
        return int(np.prod(self.tensors[name].shape, dtype=np.int64))

    def value_at(self, name: str, flat: np.ndarray, before: int | None = None) -> np.ndarray:
        """``name``'s values at flat indices ``flat`` once the steps before position ``before``
        (all, by default) have run."""
        before = len(self.steps) if before is None else before
        ws = [j for j in self.writers.get(name, ()) if j < before]
        flat = np.asarray(flat, dtype=np.int64)
        if not ws:
            return self._initial(name, flat)
        key = (name, ws[-1])
        if key in self._whole:
            return self._whole[key][flat]
        n = self.numel(name)
        if n <= SMALL_TENSOR and flat.size * 4 >= n:
            self._whole[key] = self._points(name, np.arange(n, dtype=np.int64), ws)
            return self._whole[key][flat]
        uniq, inverse = np.unique(flat, return_inverse=True)
        return self._points(name, uniq, ws)[inverse]

    def whole(self, name: str, before: int | None = None) -> np.ndarray:
        """All of ``name`` (flat) after the steps before ``before``."""
        n = self.numel(name)
        if n > WHOLE_LIMIT:
            raise PointEvalError(f"{self.source}: tensor {name!r} ({n} elements) is too big to evaluate whole")
        return self.value_at(name, np.arange(n, dtype=np.int64), before)

    def _initial(self, name: str, flat: np.ndarray) -> np.ndarray:
        if name in self.prefill and name in self.writers and name not in self.seeded:
            name = self.prefill[name]
        elif name in self.writers and name not in self.seeded:
            return np.zeros(flat.shape, dtype=np.float64)
        arr = self.external(name)
        if isinstance(arr, LazyPoints):
            return arr.at(flat)
        return np.asarray(arr).reshape(-1)[flat].astype(np.float64)

    def _points(self, name: str, flat: np.ndarray, ws: list[int]) -> np.ndarray:
        cur = self._initial(name, flat)
        for j in ws:
            cur = self._apply(j, name, flat, cur)
        return cur

    # ------------------------------------------------------------------ one writer
    def _apply(self, j: int, name: str, flat: np.ndarray, cur: np.ndarray) -> np.ndarray:
        st = self.steps[j]
        if isinstance(st, Reshape):
            return self.value_at(st.src, flat, j)
        if isinstance(st, TopK):
            return self._topk(j, st, name)[flat]
        if not isinstance(st, Kernel):
            return self._step_whole(j, st)[name][flat]
        pk = self.parsed[j]
        assert pk is not None
        if any(a.tensor == name for a in pk.reads):  # reads its own output: a sequential nest (a scan)
            return self._kernel_sequential(j, pk, name)[flat]
        try:
            return self._kernel_points(j, pk, name, flat, cur)
        except _Unrestricted:
            return self._kernel_whole(j, pk, name)[flat]

    def _topk(self, j: int, st: TopK, name: str) -> np.ndarray:
        key = (name, j)
        if key not in self._whole:
            src = self.whole(st.src, j).reshape(self.tensors[st.src].shape)
            values, indices = topk_arrays(src, st.axis, st.k, st.largest)
            self._whole[(st.values, j)] = values.reshape(-1).astype(np.float64)
            self._whole[(st.indices, j)] = indices.reshape(-1).astype(np.float64)
        return self._whole[key]

    def _store(self, pk: ParsedKernel, values: np.ndarray) -> np.ndarray:
        """What the output tensor keeps of computed values: integers truncated, bools as 0/1,
        a conversion into a narrow float rounded (as ``Executor._round_conversion``)."""
        decl = self.tensors[pk.out.tensor]
        kind = dtype_kind(decl.dtype)
        if kind == "i":
            return np.trunc(np.nan_to_num(values))
        if kind == "b":
            return (values != 0).astype(np.float64)
        if decl.dtype in NARROW_FLOAT_DTYPES and not any(self.tensors[a.tensor].dtype == decl.dtype
                                                         for a in pk.reads):
            return round_to(values, decl.dtype)
        return values

    def _kernel_points(self, j: int, pk: ParsedKernel, name: str, flat: np.ndarray, cur: np.ndarray) -> np.ndarray:
        k = pk.kernel
        ext = pk.extents
        shape = self.tensors[name].shape
        coords = np.unravel_index(flat, shape) if shape else ()
        solved: dict[str, np.ndarray] = {}
        covered = np.ones(flat.shape, dtype=bool)
        deferred: list[tuple[int, Affine]] = []  # ``p + r``: several iterations per point
        for d, a in enumerate(pk.out.index):
            if isinstance(a, Indirect):
                raise _Unrestricted
            if not a.coefs:
                covered &= coords[d] == a.const
                continue
            try:
                parts = _solve_subscript(a, coords[d] - a.const, ext)
            except _Unrestricted:
                if k.update == "=":
                    raise  # which of a point's iterations writes last is the loop order's: run it whole
                deferred.append((d, a))
                continue
            for v, val, ok in parts:
                if v in solved:
                    ok &= solved[v] == val
                else:
                    solved[v] = val
                covered &= ok
        inner = _inner_solutions(deferred, solved, ext)
        solved_inside = {v for _, _, v, _ in inner}
        red = [lp.var for lp in k.loops if lp.var not in solved and lp.var not in solved_inside]
        red_ext = tuple(ext[v] for v in red)
        length = int(np.prod(red_ext, dtype=np.int64)) if red else 1
        if pk.where_expr is not None and k.update == "=" and length > 1:
            raise _Unrestricted  # which iteration writes last depends on the condition: run it whole
        rows = np.flatnonzero(covered)
        out = cur.copy()
        if rows.size == 0:
            return out
        accumulating = k.update != "="
        if length == 0:
            if accumulating and k.init == "identity":
                out[rows] = IDENTITY[k.update]
            return out
        per_chunk = max(1, CHUNK // length)
        lchunk = min(length, CHUNK)
        for r0 in range(0, rows.size, per_chunk):
            sel = rows[r0:r0 + per_chunk]
            acc: np.ndarray | None = None
            for l0 in range(0, length, lchunk):
                span = np.arange(l0, min(length, l0 + lchunk), dtype=np.int64)
                env = {v: solved[v][sel][:, None] for v in solved}
                if red:
                    for v, arr in zip(red, np.unravel_index(span, red_ext)):
                        env[v] = arr[None, :]
                hits = _solve_inner(inner, coords, sel, env, ext)
                block = np.broadcast_to(self._expr(pk.expr, env, j), (sel.size, span.size))
                if hits is not None:  # the enumerated iterations that do not land on the point add nothing
                    block = np.where(hits, block, IDENTITY[k.update])
                if pk.where_expr is not None:  # iterations outside the condition do nothing
                    runs = np.broadcast_to(self._expr(pk.where_expr, env, j) != 0, block.shape)
                    if k.update == "=":
                        block = np.where(runs, block, cur[sel][:, None])
                    else:
                        block = np.where(runs, block, IDENTITY[k.update])
                self.evaluations += block.size
                if k.update == "+=":
                    self.sum_abs.setdefault(name, []).append((flat[sel], np.abs(block).sum(axis=1)))
                elif length == 1 and self._carries_magnitude(pk):
                    terms = np.broadcast_to(_ArrayMagnitudes(self, env, j).run(pk.expr), block.shape)
                    self.sum_abs.setdefault(name, []).append((flat[sel], terms[:, -1]))
                part = _reduce(k.update, block)
                acc = part if acc is None else combine(k.update, acc, part) if accumulating else part
            assert acc is not None
            if accumulating and k.init == "keep":
                acc = combine(k.update, cur[sel], acc)
            out[sel] = self._store(pk, acc)
        return out

    def _step_whole(self, j: int, st: Step) -> dict[str, np.ndarray]:
        """Run a repeat or cond step whole with the executor, on the values of what it reads
        (memoised); its written tensors' values (flat) by name."""
        from solar_assets.execute.interpreter import Executor

        key = (f"step:{st.name}", j)
        if key in self._whole:
            return self._whole[key]  # type: ignore[return-value]
        reads, writes = step_io(st)
        writes = list(dict.fromkeys(writes))
        reads = sorted(set(reads) - set(writes))
        # each written tensor starts from its value before the step (a repeat's carried state):
        # a copy kernel from an input holding that value, so the checker sees every write
        seeds = {w: f"seed__{w}" for w in writes}
        decls = [self.tensors[r].model_copy(update={"role": "input", "binding": r}) for r in reads]
        decls += [self.tensors[w].model_copy(update={"name": seeds[w], "role": "input", "binding": seeds[w],
                                                     "pad_value": None}) for w in writes]
        decls += [self.tensors[w].model_copy(update={"role": "output", "binding": None}) for w in writes]
        copies = []
        for w in writes:
            vs = [f"s{d}" for d in range(len(self.tensors[w].shape))]
            at = f"[{', '.join(vs)}]" if vs else "[()]"
            copies.append(Kernel(name=f"seed_{w}", loops=tuple(Loop(var=v, extent=n) for v, n in
                                                                zip(vs, self.tensors[w].shape)),
                                 out=f"{w}{at}", update="=", expr=f"{seeds[w]}{at}"))
        sub = Program(name="step", tensors=tuple(decls), inputs=(*reads, *seeds.values()), outputs=tuple(writes),
                      steps=(*copies, st))
        executor = Executor(sub, np.float64, source=self.source)
        bindings = {r: self.whole(r, j).reshape(self.tensors[r].shape) for r in reads}
        bindings.update({seeds[w]: self.whole(w, j).reshape(self.tensors[w].shape) for w in writes})
        env = executor.run(executor.bind(bindings))
        self.evaluations += sum(self.numel(w) for w in writes)
        result = {w: np.asarray(env[w], dtype=np.float64).reshape(-1) for w in writes}
        self._whole[key] = result  # type: ignore[assignment]
        return result

    def _kernel_sequential(self, j: int, pk: ParsedKernel, name: str) -> np.ndarray:
        """Run a kernel that reads what it writes (``Y[i] = Y[i - 1] + X[i]``) whole, in loop
        order, with the executor's literal nest on the values of its reads (memoised)."""
        from solar_assets.execute.interpreter import Executor

        key = (name, j)
        if key in self._whole:
            return self._whole[key]
        if pk.iterations > WHOLE_LIMIT:
            raise PointEvalError(f"{self.source}: kernel {pk.kernel.name!r} reads its own output and is too big "
                                 f"({pk.iterations} iterations) to run whole")
        reads = sorted({a.tensor for a in pk.reads} - {name})
        decls = [self.tensors[r].model_copy(update={"role": "input", "binding": r}) for r in reads]
        decls.append(self.tensors[name].model_copy(update={"role": "output", "binding": None}))
        sub = Program(name="sequential", tensors=tuple(decls), inputs=tuple(reads), outputs=(name,),
                      steps=(pk.kernel,))
        executor = Executor(sub, np.float64, einsum=False, source=self.source)
        env = executor.bind({r: self.whole(r, j).reshape(self.tensors[r].shape) for r in reads})
        env[name] = self.whole(name, j).reshape(self.tensors[name].shape).copy()
        executor.kernel(pk.kernel, pk, env)
        self.evaluations += pk.iterations
        self._whole[key] = env[name].reshape(-1).astype(np.float64)
        return self._whole[key]

    def _kernel_whole(self, j: int, pk: ParsedKernel, name: str) -> np.ndarray:
        """Run one kernel over its whole loop box into the whole output (memoised)."""
        key = (name, j)
        if key in self._whole:
            return self._whole[key]
        k = pk.kernel
        if pk.iterations > WHOLE_LIMIT:
            raise PointEvalError(f"{self.source}: kernel {k.name!r} ({pk.iterations} iterations) writes through "
                                 f"subscripts {pk.kernel.out} that are not solvable per point, and is too big to "
                                 f"run whole")
        arr = self.whole(name, j).copy()
        shape = self.tensors[name].shape
        loops = [lp.var for lp in k.loops]
        n = pk.box_iterations
        grid = np.unravel_index(np.arange(n, dtype=np.int64), tuple(pk.extents[v] for v in loops))
        env = dict(zip(loops, grid))
        idx = [self._subscript(a, env, j) for a in pk.out.index]
        idx = np.broadcast_arrays(*idx) if idx else []
        target = np.ravel_multi_index(tuple(idx), shape) if shape else np.zeros(n, dtype=np.int64)
        target = np.broadcast_to(target, (n,))
        values = np.broadcast_to(self._expr(pk.expr, env, j), (n,)).astype(np.float64)
        if pk.where_expr is not None:  # iterations outside the condition do nothing
            runs = np.broadcast_to(self._expr(pk.where_expr, env, j) != 0, (n,))
            if k.update != "=" and k.init == "identity":
                arr[np.unique(target)] = IDENTITY[k.update]  # the written region starts at the identity
            target, values = target[runs], values[runs]
        self.evaluations += n
        if k.update == "=":
            arr[target] = values
        else:
            if k.init == "identity":
                arr[np.unique(target)] = IDENTITY[k.update]
            ufunc = {"+=": np.add, "*=": np.multiply, "max=": np.fmax, "min=": np.fmin}[k.update]
            nan_hit = np.zeros(arr.shape, dtype=bool)
            if k.update in ("max=", "min="):  # NaN-propagating, unlike fmax
                np.logical_or.at(nan_hit, target, np.isnan(values))
            ufunc.at(arr, target, values)
            arr[nan_hit] = np.nan
        touched = np.unique(target)
        arr[touched] = self._store(pk, arr[touched])
        self._whole[key] = arr
        return arr

    # ------------------------------------------------------------------ expressions
    def _subscript(self, a: Affine | Indirect, env: dict[str, np.ndarray], j: int) -> np.ndarray:
        if isinstance(a, Indirect):
            return self._read(a.index, env, j).astype(np.int64) + self._subscript(a.offset, env, j)
        value: Any = np.int64(a.const)
        for v, c in a.coefs:
            value = value + c * env[v]
        return np.asarray(value, dtype=np.int64)

    def _read(self, acc: Access, env: dict[str, np.ndarray], j: int, magnitude: bool = False) -> np.ndarray:
        """The values ``acc`` reads at the points; with ``magnitude``, the summed magnitude of each
        read element where its writer summed (``summed_magnitude``), else its |value|."""
        decl = self.tensors[acc.tensor]
        if not decl.shape:
            values = self.value_at(acc.tensor, np.zeros(1, dtype=np.int64), j).reshape(())
            return self._magnitude(acc.tensor, np.zeros((), dtype=np.int64), values) if magnitude else values
        idx = np.broadcast_arrays(*(self._subscript(a, env, j) for a in acc.index))
        inside = np.ones(idx[0].shape, dtype=bool)
        for d, size in enumerate(decl.shape):
            inside &= (idx[d] >= 0) & (idx[d] < size)
        if not inside.all() and decl.pad_value is None:
            raise PointEvalError(f"{self.source}: a read of {acc} falls outside {acc.tensor!r} {decl.shape}, "
                                 f"which has no pad value")
        clipped = tuple(np.clip(i, 0, size - 1) for i, size in zip(idx, decl.shape))
        flat = np.ravel_multi_index(clipped, decl.shape)
        values = self.value_at(acc.tensor, flat.reshape(-1), j).reshape(flat.shape)
        if decl.pad_value is not None:
            values = np.where(inside, values, decl.pad_value)
        return self._magnitude(acc.tensor, flat, values) if magnitude else values

    def _magnitude(self, name: str, flat: np.ndarray, values: np.ndarray) -> np.ndarray:
        """``max(|values|, summed magnitude)`` of ``name``'s elements at ``flat`` (``_read``)."""
        summed = self.summed_magnitude(name, flat.reshape(-1))
        return np.abs(values) if summed is None else np.maximum(np.abs(values), summed.reshape(flat.shape))

    def _expr(self, node: ast.expr, env: dict[str, np.ndarray], j: int) -> np.ndarray:
        """The expression's float64 values at the points ``env`` binds, reads as of step ``j``."""
        return _ArrayValues(self, env, j).run(node)

    def _carries_magnitude(self, pk: ParsedKernel) -> bool:
        """An overwrite reading a summed tensor (a running mean from a batch mean): its values are
        as exact as the sums' terms allow, so its tolerance follows their magnitude too."""
        return pk.kernel.update == "=" and pk.where_expr is None and \
            any(acc.tensor in self.sum_abs for acc in pk.reads)


_BINARY_ARRAYS: dict[type, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.divide, ast.Pow: np.power}


class _ArrayValues(ExprInterpreter[np.ndarray]):
    """The point evaluator's meaning of an expression: float64 arrays over the points ``env``
    binds (loop variables to index arrays), each read from the evaluator as of step ``j``."""

    def __init__(self, owner: PointEvaluator, env: dict[str, np.ndarray], j: int):
        super().__init__(set(env), "kernel")
        self.owner, self.env, self.j = owner, env, j

    def constant(self, value: object) -> np.ndarray:
        return np.float64(float(value))  # type: ignore[arg-type]

    def name(self, name: str) -> np.ndarray:
        if name in self.env:
            return self.env[name].astype(np.float64)
        return np.float64({"inf": math.inf, "nan": math.nan, "pi": math.pi}[name])

    def read(self, access: Access, node: ast.Subscript) -> np.ndarray:
        return self.owner._read(access, self.env, self.j)

    def unary(self, op: ast.unaryop, operand: ast.expr, node: ast.UnaryOp) -> np.ndarray:
        x = self.run(operand)
        if isinstance(op, ast.USub):
            return -x
        if isinstance(op, ast.Not):
            return (x == 0).astype(np.float64)
        return x

    def binary(self, op: ast.operator, left: ast.expr, right: ast.expr, node: ast.BinOp) -> np.ndarray:
        a, b = self.run(left), self.run(right)
        with np.errstate(all="ignore"):
            return _BINARY_ARRAYS[type(op)](a, b)

    def compare(self, left, ops, comparators, node: ast.Compare) -> np.ndarray:
        value = self.run(left)
        result: Any = True
        for op, right_node in zip(ops, comparators):
            right = self.run(right_node)
            result = result & COMPARE[type(op)](value, right)
            value = right
        return np.asarray(result, dtype=np.float64)

    def boolop(self, op: ast.boolop, values, node: ast.BoolOp) -> np.ndarray:
        parts = [self.run(v) != 0 for v in values]
        out = parts[0]
        for p in parts[1:]:
            out = (out & p) if isinstance(op, ast.And) else (out | p)
        return np.asarray(out, dtype=np.float64)

    def call(self, name: str, args, node: ast.Call) -> np.ndarray:
        if name not in SCALAR_FUNCTIONS:
            return self.unsupported(node)
        values = [self.run(a) for a in args]
        with np.errstate(all="ignore"):
            return np.asarray(numpy_reference(name)(*values), dtype=np.float64)

    def unsupported(self, node: ast.expr) -> np.ndarray:
        raise PointEvalError(f"{self.owner.source}: cannot evaluate {ast.unparse(node)!r}")


class _ArrayMagnitudes(_ArrayValues):
    """A bound on the magnitude of what an expression combines, for the tolerance of a value
    computed from sums (``PointEvaluator._carries_magnitude``): a summed read counts as its
    terms' magnitude, ``+`` / ``-`` add magnitudes, ``*`` multiplies them, ``/`` divides by the
    divisor's value; anything else (a function, a comparison) is its own |value|."""

    def __init__(self, owner: PointEvaluator, env: dict[str, np.ndarray], j: int):
        super().__init__(owner, env, j)
        self.values = _ArrayValues(owner, env, j)

    def _own(self, node: ast.expr) -> np.ndarray:
        return np.abs(self.values.run(node))

    def constant(self, value: object) -> np.ndarray:
        return np.abs(super().constant(value))

    def name(self, name: str) -> np.ndarray:
        return np.abs(super().name(name))

    def read(self, access: Access, node: ast.Subscript) -> np.ndarray:
        return self.owner._read(access, self.env, self.j, magnitude=True)

    def unary(self, op: ast.unaryop, operand: ast.expr, node: ast.UnaryOp) -> np.ndarray:
        return self.run(operand) if isinstance(op, (ast.USub, ast.UAdd)) else self._own(node)

    def binary(self, op: ast.operator, left: ast.expr, right: ast.expr, node: ast.BinOp) -> np.ndarray:
        with np.errstate(all="ignore"):
            if isinstance(op, (ast.Add, ast.Sub)):
                return self.run(left) + self.run(right)
            if isinstance(op, ast.Mult):
                return self.run(left) * self.run(right)
            if isinstance(op, ast.Div):
                return self.run(left) / self._own(right)
            return self._own(node)

    def compare(self, left, ops, comparators, node: ast.Compare) -> np.ndarray:
        return self._own(node)

    def boolop(self, op: ast.boolop, values, node: ast.BoolOp) -> np.ndarray:
        return self._own(node)

    def call(self, name: str, args, node: ast.Call) -> np.ndarray:
        return self._own(node)
