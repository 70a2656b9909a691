"""The op-group checker node-wise validation runs for every framework (``nodewise`` for PyTorch,
``nodewise_jax`` for JAX): groups of IR steps, the points each written tensor is checked at, and
the comparison with the framework's own values at each point. The frameworks' passes feed it
values node by node; it imports neither framework at run time."""
from __future__ import annotations

import dataclasses
import logging
import math
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ir_schemas import Kernel, Program
from solar_assets.errors import SolarError
from solar_assets.ir.dtypes import NARROW_FLOAT_DTYPES
from solar_assets.ir.expr import parse_kernel
from solar_assets.validate.compare import (
    REDUCTION_SCALE_FROM,
    TINY,
    OutputCheck,
    ValidationResult,
    _category,
    OutputSummary,
    _refusals,
    max_abs_finite,
    summarise,
    tolerance_for,
)
from solar_assets.ir.updates import updated_sources
from solar_assets.validate import points as point_eval
from solar_assets.validate.points import LazyPoints, PointEvalError, PointEvaluator, step_io

if TYPE_CHECKING:
    import jax
    import torch
    from torch.export import ExportedProgram

    from ir_schemas.affine_loop_ir import Step
    from solar_assets.translate import Translation
    from solar_assets.workloads import WorkloadSource

log = logging.getLogger(__name__)

POINTS = 512  # sampled output points per written tensor of a group
EXACT_COST = 1 << 18  # a tensor whose every point costs at most this many evaluations in all is checked whole
LABEL = f"node-wise {POINTS} points/kernel"

LiveValues = dict[str, "torch.Tensor | jax.Array"]  # framework node -> its value, while a check needs it
MakeChecker = Callable[..., Any]
"""``(program, value_of, plan, order, source, points, reference64) ->`` an object with ``on_node``,
``exact``, ``sampled``, ``evaluations`` and ``result(note, start)``: ``_Checker`` here, or a worker's
session with its checker process (``workers.checker.NodewiseSession``), where the checking runs
out of the workload's reach."""


class NodewiseError(SolarError):
    """Node-wise validation cannot run on this workload (the message names the file and why)."""


@dataclass
class OpGroup:
    """The top-level steps lowered from one framework op, what they write and read from outside."""

    node: str
    op: str
    module: str
    steps: list[Step] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    external: set[str] = field(default_factory=set)

    @property
    def label(self) -> str:
        where = f", module {self.module}" if self.module else ""
        return f"op group {self.node} ({self.op}{where})"

    def kernel_names(self) -> list[str]:
        return [st.name for st in self.steps]


def op_groups(program: Program, key_of: Callable[[str], str] | None = None) -> list[OpGroup]:
    """The program's top-level steps grouped by ``origin.node`` (``key_of(origin.node)`` when
    given; a step without one is its own group), in order of first appearance."""
    groups: dict[str, OpGroup] = {}
    for step in program.steps:
        origin = step.origin
        key = (key_of or str)(origin.node) if origin is not None else f"step:{step.name}"
        g = groups.get(key)
        if g is None:
            g = groups[key] = OpGroup(key, origin.op if origin else step.kind, origin.module if origin else "")
        reads, writes = step_io(step)
        g.external |= {t for t in reads if t not in g.written}
        g.written += [t for t in dict.fromkeys(writes) if t not in g.written]
        g.steps.append(step)
    return list(groups.values())


FACE_POINTS = 4  # seeded points on each face of the output box (every dim at its first and its last index)
EXTREME_POINTS = 8  # points at the largest and at the smallest framework values (a clamp, a branch)


EXTREME_BLOCK = 4096  # elements per block when the extremes are found through block maxima


def extreme_points(flat: np.ndarray, k: int) -> list[int]:
    """Flat indices of the ``k`` largest and ``k`` smallest finite values. A large all-finite tensor
    is searched through its blocks' maxima and minima: the blocks holding the top k values are among
    the k blocks with the largest maxima, so only those are partitioned (exact, and one vectorised
    pass instead of a float64 copy and a partition of the whole tensor: node-wise validation of a
    full-size model spent most of its time here)."""
    if k <= 0:
        return []
    n = flat.size
    if n >= 4 * EXTREME_BLOCK * k:
        whole = n // EXTREME_BLOCK * EXTREME_BLOCK
        blocks = flat[:whole].reshape(-1, EXTREME_BLOCK)
        highs, lows = blocks.max(axis=1), blocks.min(axis=1)
        tail = flat[whole:]
        if np.isfinite(highs).all() and np.isfinite(lows).all() and np.isfinite(tail).all():
            tail_at = np.arange(whole, n, dtype=np.int64)
            picked: list[int] = []
            for largest, marks in ((True, highs), (False, lows)):  # no negation: it wraps unsigned dtypes
                chosen = np.argpartition(marks, -k)[-k:] if largest else np.argpartition(marks, k - 1)[:k]
                at = np.concatenate([(chosen[:, None] * EXTREME_BLOCK + np.arange(EXTREME_BLOCK)).reshape(-1),
                                     tail_at])
                vals = flat[at]
                best = np.argpartition(vals, -k)[-k:] if largest else np.argpartition(vals, k - 1)[:k]
                picked += [int(i) for i in at[best]]
            return picked
    finite = np.where(np.isfinite(flat), flat, np.nan).astype(np.float64)
    if not np.isfinite(finite).any():
        return []
    top = np.argpartition(np.nan_to_num(finite, nan=-np.inf), -k)[-k:]
    bottom = np.argpartition(np.nan_to_num(finite, nan=np.inf), k)[:k]
    return [int(i) for i in (*top, *bottom)]


def sample_points(shape: tuple[int, ...], n: int, seed_text: str, values: np.ndarray | None = None) -> np.ndarray:
    """Up to ``n`` distinct flat indices of ``shape``: its corners, ``FACE_POINTS`` on every face
    (an index off by one at a border or a loop one short shows on a face, not inside), the
    ``EXTREME_POINTS`` largest and smallest of ``values`` (the framework's result, flat: where a
    clamp or a branch decides, which random points of a bell-shaped input rarely reach), then a
    seeded random draw (the seed from ``seed_text``, so a rerun samples the same points)."""
    size = int(np.prod(shape, dtype=np.int64))
    if size <= n:
        return np.arange(size, dtype=np.int64)
    corners = {0, size - 1}
    for bits in range(min(1 << len(shape), n // 4)):
        coord = tuple((s - 1) if bits >> d & 1 else 0 for d, s in enumerate(shape))
        corners.add(int(np.ravel_multi_index(coord, shape)))
    rng = np.random.default_rng(zlib.crc32(seed_text.encode()))
    picked = set(corners)
    for d, extent in enumerate(shape):
        if not FACE_POINTS or extent < 2 or len(picked) + 2 * FACE_POINTS > n // 2:
            continue
        for side in (0, extent - 1):
            coords = [rng.integers(0, s, FACE_POINTS) for s in shape]
            coords[d] = np.full(FACE_POINTS, side)
            picked.update(int(i) for i in np.ravel_multi_index(tuple(coords), shape))
    if EXTREME_POINTS and values is not None and values.size == size and np.issubdtype(values.dtype, np.number):
        picked.update(extreme_points(values.reshape(-1), min(EXTREME_POINTS, size - 1)))
    while len(picked) < n:
        picked.update(int(i) for i in rng.integers(0, size, n - len(picked)))
    return np.array(sorted(picked), dtype=np.int64)


def _numpy(value: torch.Tensor | jax.Array | np.ndarray) -> np.ndarray:
    """A framework tensor as a NumPy array (narrow floats widened to float32, which is exact)."""
    if type(value).__module__.split(".")[0] != "torch":  # a JAX or NumPy array
        a = np.asarray(value)
        narrow = a.dtype.name in ("bfloat16", "float16") or "float8" in a.dtype.name
        return a.astype(np.float32) if narrow else a
    import torch

    t = value.detach()
    if t.dtype in (torch.bfloat16, torch.float16) or "float8" in str(t.dtype):
        t = t.float()
    return t.contiguous().numpy()


def _point_cost(program: Program, group: OpGroup, name: str) -> int:
    """Evaluations per output point of ``name``: the reduction lengths of its group's kernels."""
    cost = 0
    for st in group.steps:
        if isinstance(st, Kernel):
            pk = parse_kernel(st)
            out_vars = {v for a in pk.out.index for v in a.vars}
            cost += math.prod(lp.extent for lp in st.loops if lp.var not in out_vars)
    return max(cost, 1)


def _compare_points(label: str, name: str, dtype: str, got: np.ndarray, ref: np.ndarray, flat: np.ndarray,
                    shape: tuple[int, ...], max_ref: float, rtol: float, atol_scale: float, exact: bool,
                    magnitude: np.ndarray | None = None) -> OutputCheck:
    """One check of a tensor's IR values against the framework's at the same flat indices. The
    relative part of the tolerance follows ``magnitude`` (Σ|terms| of a sum at each point) where
    that is larger than |ref|: a float sum rounds relative to what it summed, not to its result."""
    where = "every point" if exact else f"{flat.size} sampled points"
    cat = _category(dtype)
    if cat != "float":
        bad = np.flatnonzero(got != ref)
        max_abs = float(np.max(np.abs(got - ref))) if got.size else 0.0
        if bad.size == 0:
            return OutputCheck(name, shape, shape, dtype, 0.0, 0.0, 0.0, True, f"{label}: {name!r} exact at {where}")
        at = tuple(int(i) for i in np.unravel_index(flat[bad[0]], shape))
        return OutputCheck(name, shape, shape, dtype, max_abs, max_abs / max(max_ref, TINY), 0.0, False,
                           f"{label}: {name!r} differs from the framework at {bad.size} of {where} (integers must "
                           f"match exactly; first at {at}: IR {got[bad[0]]:g}, framework {ref[bad[0]]:g})")
    finite_ref, finite_got = np.isfinite(ref), np.isfinite(got)
    nonfinite = np.flatnonzero((finite_ref != finite_got) | (~finite_ref & ~finite_got & ~(
        (got == ref) | (np.isnan(got) & np.isnan(ref)))))
    both = finite_ref & finite_got
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.where(both, np.abs(got - ref), 0.0)
    tol_abs = atol_scale * max_ref
    scale = np.abs(ref) if magnitude is None else np.maximum(np.abs(ref), magnitude)
    bad = np.flatnonzero(both & (err > tol_abs + rtol * scale))
    max_abs = float(err.max()) if err.size else 0.0
    max_rel = max_abs / max(max_ref, TINY)
    worst = int(np.argmax(err)) if err.size else 0
    tolerance = (f"|IR-framework| <= {atol_scale:g}*max|framework| (= {tol_abs:.3g}) + {rtol:g}*"
                 + ("|framework|" if magnitude is None else "max(|framework|, sum of |terms|)"))
    first = nonfinite[0] if nonfinite.size else (bad[0] if bad.size else worst)
    at = tuple(int(i) for i in np.unravel_index(flat[first], shape)) if flat.size else ()
    detail = f"first at {at}: IR {got[first]:.9g}, framework {ref[first]:.9g}" if flat.size else ""
    ok = not nonfinite.size and not bad.size
    if nonfinite.size:
        why = f"{nonfinite.size} of {where} are NaN/inf where the framework's are not (or the reverse); {detail}"
    elif bad.size:
        why = f"{bad.size} of {where} outside {tolerance}; {detail}; max abs error {max_abs:.3g}"
    else:
        why = f"ok at {where}, max abs error {max_abs:.3g} (tolerance {tolerance})"
    return OutputCheck(name, shape, shape, dtype, max_abs, max_rel, tol_abs, ok, f"{label}: {name!r} {why}", rtol,
                       "framework values")


@dataclass
class _Plan:
    """What the capture must keep and when each group is checked."""

    groups: list[OpGroup]
    check_at: dict[int, list[OpGroup]]  # graph position -> groups checked once that node has run
    extra: dict[str, int]  # fx node -> the last position a check needs its value
    writes: set[tuple[str, str]] = field(default_factory=set)  # (group node, tensor it writes)


def _plan(program: Program, value_of: dict[str, str], order: dict[str, int], key: Callable[[str], str] | None = None) -> _Plan:
    end = max(order.values())
    groups = op_groups(program, key)
    check_at: dict[int, list[OpGroup]] = {}
    extra: dict[str, int] = {}
    sources = updated_sources(program)  # an in-place update starts from its source's values
    writes = {(g.node, t) for g in groups for t in g.written}
    for g in groups:
        own = order.get(g.node, end)
        mapped = [value_of[t] for t in g.written if t in value_of  # not a storage a later update writes again
                  and not (t in sources and value_of[t] != g.node and (value_of[t], t) in writes)]
        at = max([own, *(order[m] for m in mapped if m in order)])
        check_at.setdefault(at, []).append(g)
        for t in [*g.external, *g.written, *(sources[t] for t in g.written if t in sources)]:
            node = value_of.get(t)
            if node in order:
                extra[node] = max(extra.get(node, 0), at)
    return _Plan(groups, check_at, extra, writes)  # an output's value is summarised where it is made (``on_node``)


class _Checker:
    """Checks op groups as the capture reaches them (``on_node``)."""

    def __init__(self, program: Program, value_of: dict[str, str], plan: _Plan, order: dict[str, int],
                 source: str, points: int, reference64: bool = False):
        self.program = program
        self.reference64 = reference64  # the framework's values come from a float64 pass: hold to float64
        self.tensors = program.tensor_map()
        self.value_of = value_of
        self.plan = plan
        self.order = order
        self.source = source
        self.points = points
        self.checks: list[OutputCheck] = []
        self.ir_values: dict[str, np.ndarray] = {}  # escaping tensors no fx node holds: the IR's own values
        self.written_before: set[str] = {t.name for t in program.tensors if t.role in ("input", "weight")}
        self.evaluations = 0
        self.exact = 0
        self.sampled = 0
        self.outputs: list[OutputSummary] | None = None  # set at the output node
        self._summaries: dict[int, OutputSummary] = {}  # output position -> its summary, taken as it is made
        self._outputs_of: dict[str, list[int]] = {}
        for i, t in enumerate(program.outputs):
            self._outputs_of.setdefault(value_of.get(t, ""), []).append(i)

    def result(self, note: str, start: float) -> ValidationResult:
        """The verdict once the pass has ended (``checker_result``)."""
        return checker_result(self.program, self, note, start)

    def on_node(self, name: str, live: LiveValues) -> None:
        for g in self.plan.check_at.get(self.order[name], ()):
            self.check(g, live)
        for i in self._outputs_of.get(name, ()):  # an output's value, summarised as it is made: the pass
            self._summaries[i] = summarise(_numpy(live[name]))  # need not hold the outputs to its end
        if name == "output" and self.outputs is None:
            self.outputs = [self._summaries[i] if i in self._summaries else summarise(_numpy(live[self.value_of[t]]))
                            for i, t in enumerate(self.program.outputs)]

    def _framework(self, t: str, live: LiveValues, cache: dict[str, np.ndarray]) -> np.ndarray:
        if t in cache:
            return cache[t]
        node = self.value_of.get(t)
        if node is not None and node in live:
            arr = _numpy(live[node])
        elif t in self.ir_values:
            arr = self.ir_values[t]
        else:
            raise PointEvalError(f"{self.source}: IR tensor {t!r} holds no framework value and no earlier "
                                 f"group computed it")
        if tuple(arr.shape) != tuple(self.tensors[t].shape):
            raise PointEvalError(f"{self.source}: IR tensor {t!r} is declared {self.tensors[t].shape} but the "
                                 f"framework's value of node {node} has shape {tuple(arr.shape)}")
        cache[t] = arr
        return arr

    def check(self, g: OpGroup, live: LiveValues) -> None:
        cache: dict[str, np.ndarray] = {}
        label = g.label
        seeded = frozenset(t for t in g.written if t in self.written_before)
        try:
            ev = PointEvaluator(self.program, g.steps, lambda t: self._framework(t, live, cache), seeded, self.source)
            targets = [t for t in g.written if self._holds_result(t, g, live)]
            if not targets:
                escaping = [t for t in g.written if (t not in self.value_of or self._updated_later(t, g))
                            and self._read_later(t, g)]
                if not escaping:
                    raise PointEvalError(f"{self.source}: no tensor the group writes has a framework value, "
                                         f"and no later group reads one")
                self.checks.append(OutputCheck(g.node, (), (), "", 0.0, 0.0, 0.0, True,
                                               f"{label}: writes no tensor the framework holds whole; its IR values "
                                               f"of {', '.join(escaping)} feed the later groups, checked there"))
            for t in targets:
                self.checks.append(self._check_tensor(g, ev, t, label, live, cache))
            for t in g.written:  # unmapped tensors that later groups read: the IR's own values
                if t not in self.value_of and t not in self.ir_values and self._read_later(t, g) \
                        or self._updated_later(t, g) and self._read_later(t, g):
                    self.ir_values[t] = self._ir_values(g, ev, t, live, cache)
            self.evaluations += ev.evaluations
        except SolarError as e:  # PointEvalError, or the executor's error on a whole-run step
            self.checks.append(OutputCheck(g.node, (), (), "", math.inf, math.inf, math.nan, False,
                                           f"{label} (steps {', '.join(g.kernel_names())}): cannot check "
                                           f"node-wise: {str(e).removeprefix(self.source + ': ')}"))
        self.written_before |= set(g.written)

    def _ir_values(self, g: OpGroup, ev: PointEvaluator, t: str, live: LiveValues,
                   cache: dict[str, np.ndarray]) -> np.ndarray | LazyPoints:
        """``t``'s IR values for later groups: whole, or, over ``WHOLE_LIMIT`` elements, evaluated at
        the points later groups read (``LazyPoints``), on the framework values this group reads,
        fetched now while the pass still holds them."""
        if ev.numel(t) <= point_eval.WHOLE_LIMIT:
            return ev.whole(t).reshape(self.tensors[t].shape)
        for read in sorted(g.external):
            self._framework(read, live, cache)
        return LazyPoints(ev, t)

    def _holds_result(self, t: str, g: OpGroup, live: LiveValues) -> bool:
        """Whether the framework value mapped to ``t`` is this group's result: a node at or after
        the group's own (its getitems), or an output argument for the output copies; a tensor
        an earlier node already holds is only updated here, its earlier value is no reference."""
        node = self.value_of.get(t)
        if node not in live:
            return False
        return g.node == "output" or self.order[node] >= self.order.get(g.node, -1)

    def _updated_later(self, t: str, g: OpGroup) -> bool:
        """Whether ``t`` is a storage later in-place updates write again, so the framework node it
        maps to (its final value) comes after this group: until then its values are the IR's."""
        node = self.value_of.get(t)
        return node is not None and node != g.node and self.order.get(node, -1) > self.order.get(g.node, -1) \
            and (node, t) in self.plan.writes

    def _read_later(self, t: str, g: OpGroup) -> bool:
        return any(t in other.external for other in self.plan.groups if other is not g)

    def _check_tensor(self, g: OpGroup, ev: PointEvaluator, t: str, label: str, live: LiveValues,
                      cache: dict[str, np.ndarray]) -> OutputCheck:
        decl = self.tensors[t]
        ref_full = _numpy(live[self.value_of[t]])
        shape = tuple(decl.shape)
        size = int(np.prod(shape, dtype=np.int64))
        cost = _point_cost(self.program, g, t)
        exact = size * cost <= EXACT_COST
        flat = np.arange(size, dtype=np.int64) if exact else \
            sample_points(shape, self.points, f"{g.node}:{t}", ref_full.reshape(-1))
        if exact:
            self.exact += 1
        else:
            self.sampled += 1
        got = ev.value_at(t, flat)
        ref = ref_full.reshape(-1)[flat].astype(np.float64)
        max_ref = _max_magnitude(ref_full)
        rtol, atol_scale = tolerance_for("float64" if self.reference64 and _category(decl.dtype) == "float"
                                         else decl.dtype, str(ref_full.dtype))
        narrow = [self.tensors[w].dtype for w in g.written if self.tensors[w].dtype in NARROW_FLOAT_DTYPES]
        if narrow:
            scale = max(1.0, math.sqrt(cost / REDUCTION_SCALE_FROM))
            rtol, atol_scale = rtol * scale, atol_scale * scale
        writers = [g.steps[j].name for j in ev.writers.get(t, ())]
        where = f"{label}, kernel {', '.join(writers)}"
        dtype = decl.dtype if _category(decl.dtype) != "float" else decl.dtype
        magnitude = ev.summed_magnitude(t, flat)
        check = _compare_points(where, t, dtype, got, ref, flat, shape, max_ref, rtol, atol_scale, exact, magnitude)
        if not check.ok and not self.reference64 and ref_full.dtype == np.float32:
            check = self._float64_opinion(check, where, t, dtype, got, flat, shape, exact, magnitude, live) or check
        return dataclasses.replace(check, name=g.node if t == g.node else f"{g.node}/{t}")

    def _float64_opinion(self, first: OutputCheck, where: str, t: str, dtype: str, got: np.ndarray,
                         flat: np.ndarray, shape: tuple[int, ...], exact: bool, magnitude: np.ndarray | None,
                         live: LiveValues) -> OutputCheck | None:
        """Where the IR misses the framework's float32 value: the framework's op run again in float64
        on the same (widened) float32 inputs (``capture.CapturedValues.float64``), held to float64's
        tolerance. A float32 sum of millions of terms strays further than float32's tolerance of the
        summed terms (a convolution's weight gradient: 1e-3 of them); the float64 value is the one the
        IR must match. None, keeping the first verdict, where no recompute is possible or the IR
        misses that value too."""
        recompute = getattr(live, "float64", None)
        try:
            value = recompute(self.value_of[t]) if recompute is not None else None
        except Exception as e:  # noqa: BLE001 - an op that does not run in float64 keeps the first verdict
            log.debug("%s: no float64 recompute of %s: %s: %s", self.source, t, type(e).__name__, e)
            value = None
        if value is None:
            return None
        full = _numpy(value)
        if tuple(full.shape) != shape or _category(full.dtype) != "float":
            return None
        max_ref = _max_magnitude(full)
        rtol, atol_scale = tolerance_for("float64")
        ref64 = full.reshape(-1)[flat].astype(np.float64)
        second = _compare_points(where, t, dtype, got, ref64, flat, shape, max_ref, rtol, atol_scale, exact,
                                 magnitude)
        if not second.ok:
            return None
        log.info("%s: %s: the float32 value is off by %.3g; the op recomputed in float64 matches the IR",
                 self.source, where, first.max_abs_error)
        return dataclasses.replace(second, message=(
            f"{second.message}; against the framework's op recomputed in float64 on the same float32 inputs, "
            f"as its float32 value strays further (max abs error {first.max_abs_error:.3g}) than float32's "
            f"tolerance"), reference="the framework's op in float64")


def _max_magnitude(values: np.ndarray) -> float:
    """max |value| over the finite values (0.0 when there are none)."""
    if _category(values.dtype) == "float":
        return max_abs_finite(values)
    return float(np.max(np.abs(values))) if values.size else 0.0


def require_tracer_frame(src: WorkloadSource, translation: Translation, lowered: Program, what: str) -> None:
    """The value map pairs the framework's values with the tracer's tensors, so the IR under test
    must have the frame of the tracer's own lowering (``what``: "its export", "its jaxpr")."""
    if _frame(lowered) != _frame(translation.program):
        raise NodewiseError(f"{src.path}: node-wise validation needs the tracer's IR of the file; the "
                            f"{translation.translator} IR's tensors or steps differ from the tracer's lowering of "
                            f"{what}")


def _frame(program: Program) -> tuple[Any, ...]:
    """What the value map relies on: the tensors, the graph inputs and outputs, and each step's
    name, kind and origin (not the kernels' statements: those are what the validation checks)."""
    return (program.tensors, program.inputs, program.outputs,
            tuple((st.name, st.kind, st.origin) for st in program.steps))


def checker_result(program: Program, checker: _Checker, note: str, start: float) -> ValidationResult:
    """The verdict of a finished node-wise pass (PyTorch or JAX): the whole-program refusals on the
    framework's own outputs (an all-NaN or constant output checks nothing), then every group's checks."""
    checks = checker.checks
    notes = [note]
    if checker.outputs is not None:  # node-wise validation checks only the tracer's own lowering (``traced``):
        golden = type("_Outputs", (), {"outputs": checker.outputs, "outputs64": None})()  # a constant the graph
        names = list(program.outputs)  # makes from no input (a loss-sum's bias gradient) is compared, with a note
        checks = _refusals(program, golden, names, [program.tensor(n).dtype for n in names], True, notes) + checks
    return ValidationResult(ok=bool(checks) and all(c.ok for c in checks), checks=checks,
                            max_abs_error=max((c.max_abs_error for c in checks), default=0.0),
                            max_rel_error=max((c.max_rel_error for c in checks), default=0.0),
                            seconds=time.perf_counter() - start, notes=notes)
