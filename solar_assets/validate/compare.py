"""Compare IR outputs with golden outputs: per output, dtype-aware tolerances, clear messages.

An output passes when every element satisfies ``|got - ref| <= atol_scale·max|ref| + rtol·|ref|``
(non-finite values must sit at the same places with the same values: a NaN where the reference
is finite fails, and the reverse); integer and bool outputs must match exactly. A float64 check
of a result that cancelled (a mean of group-normalised values, ~1e-16 from terms ~1) follows the
magnitude of the summed terms instead of max|ref| (``_cancellation_scale``), and so does the
float32 check of a framework output that is exactly zero (``_zero_reference_floor``). The float
comparison is one compiled pass over the arrays (``np.allclose`` on big arrays costs seconds).

Validation refuses what checks nothing: a golden output that is all NaN/inf, or one that is
constant while the IR computes it from no input or weight (an IR writing the constant ``nan``
or ``0``), is a failed check naming the output. The tracer's IR is exempt from the second: its
constants are the exported graph's own (``torch.full``, a window of length one), so comparing
them checks the value and the shape.

Narrow dtypes (bf16, fp16, fp8): the framework rounds every op's result to the dtype, the IR
and the float64 reference only where the program converts into it (a cast, a requested dtype:
``golden.reference64``), so a program that stores values in a narrow dtype is compared, against
both references, at the tolerance of its narrowest such dtype, scaled by the square root of its
longest reduction over 256 (at least 1), and widened to twice the framework's own drift from
the float64 reference where that is larger.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import math
import re

import numba
import numpy as np

from ir_schemas import Program
from solar_assets.ir.scalar_functions import expression_accuracy
from solar_assets.ir.dtypes import DTYPES, NARROW_FLOAT_DTYPES, numpy_dtype
from solar_assets.stage_clock import clocked, timed, watch_numba

TINY = float(np.finfo(np.float64).tiny)

# dtype -> (rtol, atol_scale). float64 is the strong check: IR and reference both in float64.
TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-9, 1e-9),
    "float32": (1e-4, 1e-4),
    "float16": (1e-2, 1e-2),
    "bfloat16": (1e-2, 1e-2),  # 8 significant bits: a rounding is up to 2^-8 = 3.9e-3
    "float8_e4m3fn": (1.25e-1, 1.25e-1),  # 4 significant bits: 2^-4 = 6.25e-2
    "float8_e5m2": (2.5e-1, 2.5e-1),  # 3 significant bits: 2^-3 = 1.25e-1
}
_NAME = re.compile(r"[A-Za-z_]\w*")
CANCELLATION_RATIO = 2.0 ** 16  # summed terms this much larger than the result: it cancelled
REDUCTION_SCALE_FROM = 256  # narrow tolerances grow as sqrt(longest reduction / this), at least 1


@dataclass(frozen=True)
class OutputCheck:
    """One output compared with its golden value."""

    name: str
    shape: tuple[int, ...]
    golden_shape: tuple[int, ...]
    dtype: str  # the precision compared at: 'float64' for the strong check, else the declared dtype
    max_abs_error: float
    max_rel_error: float  # max|got - ref| / max|ref|
    tolerance_abs: float  # atol_scale · max|ref|, the absolute part of the tolerance
    ok: bool
    message: str
    rtol: float = 0.0
    reference: str = "outputs"  # which golden list: 'outputs' (framework) or 'outputs64'


@dataclass(frozen=True)
class ValidationResult:
    """The verdict on one program: ok only if every check passed."""

    ok: bool
    checks: list[OutputCheck]
    max_abs_error: float
    max_rel_error: float
    seconds: float
    notes: list[str] = field(default_factory=list)

    def failures(self) -> list[str]:
        return [c.message for c in self.checks if not c.ok]

    def __str__(self) -> str:
        head = (f"validation {'passed' if self.ok else 'FAILED'}: max abs error {self.max_abs_error:.3g}, "
                f"max rel error {self.max_rel_error:.3g} ({len(self.checks)} checks, {self.seconds:.2f} s)")
        return "\n".join([head, *("  " + m for m in self.failures()), *("  note: " + n for n in self.notes)])


class GoldenLike(Protocol):
    outputs: list[np.ndarray]
    outputs64: list[np.ndarray] | None

    def bindings(self, dtype: type | None = ...) -> dict[str, np.ndarray]: ...


def _category(dtype: np.dtype | str) -> str:
    kind = DTYPES[str(dtype)].kind if str(dtype) in DTYPES else np.dtype(dtype).kind
    return {"f": "float", "c": "complex", "b": "bool", "i": "integer", "u": "integer"}.get(kind, str(dtype))


def tolerance_for(*dtypes: str) -> tuple[float, float]:
    """(rtol, atol_scale) of the loosest float dtype among ``dtypes``; (0, 0) when none is a float."""
    known = [TOLERANCES[d] for d in dtypes if d in TOLERANCES]
    if not known:
        return 0.0, 0.0
    return max(t[0] for t in known), max(t[1] for t in known)


@numba.njit(cache=True, nogil=True)
def _float_errors(got, ref, rtol, atol_scale, atol_floor):  # pragma: no cover - compiled
    """One pass for max|ref|, one for the errors. Returns (max|ref|, max abs error, its index,
    elements outside tolerance, first such index, non-finite mismatches, first such index)."""
    max_ref = 0.0
    n_nonfinite = 0
    first_nonfinite = -1
    for i in range(ref.size):
        r, g = np.float64(ref[i]), np.float64(got[i])
        if np.isfinite(r):
            if abs(r) > max_ref:
                max_ref = abs(r)
            if not np.isfinite(g):
                n_nonfinite += 1
                if first_nonfinite < 0:
                    first_nonfinite = i
        elif not (r == g or (r != r and g != g)):
            n_nonfinite += 1
            if first_nonfinite < 0:
                first_nonfinite = i
    atol = max(atol_scale * max_ref, atol_floor)
    max_err = 0.0
    worst = -1
    n_bad = 0
    first_bad = -1
    for i in range(ref.size):
        r, g = np.float64(ref[i]), np.float64(got[i])
        if not (np.isfinite(r) and np.isfinite(g)):
            continue
        err = abs(g - r)
        if err > max_err or worst < 0:
            max_err = err
            worst = i
        if err > atol + rtol * abs(r):
            n_bad += 1
            if first_bad < 0:
                first_bad = i
    return max_ref, max_err, worst, n_bad, first_bad, n_nonfinite, first_nonfinite


@numba.njit(cache=True, nogil=True)
def _pair_extremes(a, b):  # pragma: no cover - compiled
    """Over the elements finite in both (in float64): (how many, max|a-b|, max|a|, max|b|)."""
    n = 0
    diff = 0.0
    max_a = 0.0
    max_b = 0.0
    for i in range(a.size):
        x, y = np.float64(a[i]), np.float64(b[i])
        if np.isfinite(x) and np.isfinite(y):
            n += 1
            diff = max(diff, abs(x - y))
            max_a = max(max_a, abs(x))
            max_b = max(max_b, abs(y))
    return n, diff, max_a, max_b


def _flat(a: Any) -> np.ndarray:
    """One contiguous row of ``a`` as the compiled passes read it: float32 / float64 as they are
    (no float64 copy of a large output), anything else widened to float64."""
    a = np.asarray(a)
    if a.dtype not in (np.float32, np.float64):
        a = a.astype(np.float64)
    return np.ascontiguousarray(a).reshape(-1)


def pair_extremes(a: Any, b: Any) -> tuple[int, float, float, float]:
    """``_pair_extremes`` of two arrays of one shape, in one compiled pass (numpy's masks and
    float64 copies took seconds on a 50M-element output, twice per output)."""
    n, diff, max_a, max_b = _pair_extremes(_flat(a), _flat(b))
    return int(n), float(diff), float(max_a), float(max_b)


@numba.njit(cache=True, nogil=True)
def _max_abs_finite(a):  # pragma: no cover - compiled
    top = 0.0
    for i in range(a.size):
        x = np.float64(a[i])
        if np.isfinite(x) and abs(x) > top:
            top = abs(x)
    return top


def max_abs_finite(a: Any) -> float:
    """The largest magnitude among the finite elements of a float array (0.0 when none), in one
    compiled pass: a masked copy and its absolute value cost node-wise validation of a full-size
    model seconds per tensor (12×4096² attention scores)."""
    return float(_max_abs_finite(_flat(a)))


def _at(flat_index: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(flat_index, shape)) if shape else ()


def _check_one(name: str, got: np.ndarray, ref: np.ndarray, dtype: str, rtol: float | None,
               atol_scale: float | None, reference: str, atol_floor: float = 0.0) -> OutputCheck:
    label = f"output {name!r} ({dtype} check against {reference})"
    shape, golden_shape = tuple(got.shape), tuple(ref.shape)
    cat_got, cat_ref = _category(dtype), _category(ref.dtype)
    if shape != golden_shape:
        return OutputCheck(name, shape, golden_shape, dtype, float("inf"), float("inf"), float("nan"), False,
                           f"{label}: shape {shape} but golden has shape {golden_shape}", 0.0, reference)
    if cat_got != cat_ref or _category(got.dtype) != cat_ref:
        return OutputCheck(name, shape, golden_shape, dtype, float("inf"), float("inf"), float("nan"), False,
                           f"{label}: the IR output is {dtype} ({got.dtype}) but golden is {ref.dtype}", 0.0,
                           reference)
    if cat_ref != "float":  # integers and bools: exactly equal
        diff = got != ref
        n_bad = int(np.count_nonzero(diff))
        max_abs = float(np.max(np.abs(got.astype(np.float64) - ref.astype(np.float64)))) if got.size else 0.0
        max_ref = float(np.max(np.abs(ref.astype(np.float64)))) if ref.size else 0.0
        if n_bad == 0:
            return OutputCheck(name, shape, golden_shape, dtype, 0.0, 0.0, 0.0, True,
                               f"{label}: exact match, shape {shape}", 0.0, reference)
        at = _at(int(np.flatnonzero(diff)[0]), shape)
        return OutputCheck(name, shape, golden_shape, dtype, max_abs, max_abs / max(max_ref, TINY), 0.0, False,
                           f"{label}: {n_bad} of {got.size} elements differ (integers must match exactly; "
                           f"first at {at}: got {got[at]}, golden {ref[at]}), max abs error {max_abs:.6g}, "
                           f"shape {shape}", 0.0, reference)
    if rtol is None or atol_scale is None:
        default = tolerance_for(dtype, str(ref.dtype))
        rtol = default[0] if rtol is None else rtol
        atol_scale = default[1] if atol_scale is None else atol_scale
    g, r = _flat(got), _flat(ref)
    max_ref, max_abs, worst, n_bad, first_bad, n_nonfinite, first_nonfinite = _float_errors(g, r, rtol, atol_scale,
                                                                                          atol_floor)
    max_rel = max_abs / max(max_ref, TINY)
    tol_abs = max(atol_scale * max_ref, atol_floor)
    tolerance = f"|got-ref| <= {atol_scale:g}*max|ref| (= {tol_abs:.3g}) + {rtol:g}*|ref|" if not atol_floor \
        else f"|got-ref| <= {tol_abs:.3g} (the reference is all zero: {atol_scale:g}*the cancelled terms) + {rtol:g}*|ref|"
    errors = f"max abs error {max_abs:.6g}"
    if worst >= 0:
        at = _at(worst, shape)
        errors += f" at {at} (got {g[worst]:.9g}, golden {r[worst]:.9g})"
    errors += f", max rel error {max_rel:.3g} (max|ref| {max_ref:.3g})"
    if n_nonfinite:
        at = _at(first_nonfinite, shape)
        return OutputCheck(name, shape, golden_shape, dtype, float(max_abs), float(max_rel), tol_abs, False,
                           f"{label}: {n_nonfinite} of {g.size} elements are NaN/inf where golden is not "
                           f"(or the reverse); first at {at}: got {g[first_nonfinite]}, golden "
                           f"{r[first_nonfinite]}; {errors}; shape {shape}", rtol, reference)
    if n_bad:
        at = _at(first_bad, shape)
        return OutputCheck(name, shape, golden_shape, dtype, float(max_abs), float(max_rel), tol_abs, False,
                           f"{label}: {errors}; {n_bad} of {g.size} elements outside {tolerance} "
                           f"(first at {at}); shape {shape}", rtol, reference)
    return OutputCheck(name, shape, golden_shape, dtype, float(max_abs), float(max_rel), tol_abs, True,
                       f"{label}: ok, {errors}; tolerance {tolerance}; shape {shape}", rtol, reference)


def compare_outputs(names: Sequence[str], got: Sequence[np.ndarray], golden: Sequence[np.ndarray],
                    rtol: float | None = None, atol_scale: float | None = None, *,
                    dtypes: Sequence[str] | None = None, reference: str = "outputs",
                    atol_floor: float = 0.0) -> list[OutputCheck]:
    """One check per output. ``rtol`` / ``atol_scale`` default to the tolerance of the looser of
    the declared dtype (``dtypes``, else the array's) and the golden array's dtype; ``atol_floor``:
    the least absolute tolerance (``_zero_reference_floor``)."""
    got = [np.asarray(a) for a in got]
    golden = [np.asarray(a) for a in golden]
    dtypes = list(dtypes) if dtypes is not None else [str(a.dtype) for a in got]
    checks = [_check_one(n, g, r, d, rtol, atol_scale, reference, atol_floor)
              for n, g, r, d in zip(names, got, golden, dtypes)]
    for i in range(len(golden), len(got)):
        checks.append(OutputCheck(names[i], tuple(got[i].shape), (), dtypes[i], float("inf"), float("inf"),
                                  float("nan"), False, f"output {names[i]!r}: the IR returns it but golden "
                                  f"{reference} has only {len(golden)} outputs", 0.0, reference))
    for i in range(len(got), len(golden)):
        checks.append(OutputCheck(f"golden[{i}]", (), tuple(golden[i].shape), str(golden[i].dtype), float("inf"),
                                  float("inf"), float("nan"), False, f"golden {reference} output {i} (shape "
                                  f"{tuple(golden[i].shape)}) has no IR output: the IR returns {len(got)}",
                                  0.0, reference))
    return checks


def _stored_like(a: np.ndarray, ref: Any, declared: str) -> np.ndarray:
    """The IR's float64 result as the framework stores it: rounded to the declared dtype where that
    is narrow (bf16, fp8: kept as float32, like the golden arrays), else to the golden array's
    float dtype (float32, normally)."""
    ref = np.asarray(ref)
    if _category(a.dtype) == "float" and _category(ref.dtype) == "float":
        if declared in NARROW_FLOAT_DTYPES:
            return a.astype(numpy_dtype(declared)).astype(np.float32)
        return a.astype(ref.dtype)
    return a


def narrow_storage(program: Program) -> list[str]:
    """The narrow float dtypes (bf16, fp16, fp8) the program stores computed values in (its
    intermediates and outputs; an fp8 input is exact and rounds nothing), narrowest first."""
    found = {t.dtype for t in program.tensors if t.role in ("intermediate", "output")
             and t.dtype in NARROW_FLOAT_DTYPES}
    return sorted(found, key=lambda d: DTYPES[d].mantissa_bits)


def narrow_compute(program: Program) -> list[str]:
    """The narrow float dtypes some kernel computes in from values of that dtype (a bf16 matmul,
    a bf16 add): there the framework rounds each result and the IR, like the float64 reference,
    does not. A kernel converting into the dtype (a cast, a scaled fp8 GEMM writing bf16) rounds
    in all three, so a program whose narrow values all come from conversions keeps the strong
    float64 check."""
    tensors = program.tensor_map()
    found: set[str] = set()
    for st, _ in program.walk_steps():
        if st.kind != "kernel":
            continue
        dtype = tensors[st.out.split("[", 1)[0].strip()].dtype
        if dtype in NARROW_FLOAT_DTYPES and any(tensors[n].dtype == dtype for n in _NAME.findall(st.expr)
                                                if n in tensors):
            found.add(dtype)
    return sorted(found, key=lambda d: DTYPES[d].mantissa_bits)


def narrow_tolerance(program: Program, dtypes: Sequence[str]) -> tuple[float, float] | None:
    """(rtol, atol_scale) for a program storing values in the narrow ``dtypes`` (module docstring);
    None when it stores none."""
    if not dtypes:
        return None
    from solar_assets.sizing import reduction_lengths

    rtol, atol_scale = tolerance_for(*dtypes)
    scale = max(1.0, math.sqrt(max(reduction_lengths(program), default=1) / REDUCTION_SCALE_FROM))
    return rtol * scale, atol_scale * scale


Extremes = tuple[int, float, float, float]  # ``pair_extremes``: (finite pairs, max drift, max|ref|, max|ref64|)


def _extremes(golden: GoldenLike, i: int) -> Extremes | None:
    """``pair_extremes`` of output ``i`` against its float64 result; None without one of its shape."""
    if golden.outputs64 is None or i >= len(golden.outputs) or i >= len(golden.outputs64):
        return None
    ref, ref64 = np.asarray(golden.outputs[i]), np.asarray(golden.outputs64[i])
    if ref.shape != ref64.shape or not ref.size:
        return None
    return pair_extremes(ref, ref64)


def _float32_terms(golden: GoldenLike, i: int, extremes: Extremes | None) -> float | None:
    """The magnitude M of the terms summed into float32 output ``i``: a float32 result lies about
    one unit roundoff (2^-24) of M from the exact value, whatever its own size, so the framework's
    float32 drift from its float64 result over 2^-24 estimates M. None for another dtype or
    without a finite pair."""
    if extremes is None or not extremes[0] or np.asarray(golden.outputs[i]).dtype != np.float32:
        return None
    return extremes[1] / 2.0 ** -24


def _widened_by_drift(name: str, declared: str, atol_scale: float, extremes: Extremes | None,
                      what: str, notes: list[str]) -> float:
    """``atol_scale``, or twice the framework's drift from its float64 result (relative to
    max|ref|) where that is larger, with a note saying so."""
    if extremes is None or not extremes[0] or _category(declared) != "float":
        return atol_scale
    _, drift, scale, _ = extremes
    scale = scale or 1.0
    if 2 * drift / scale > atol_scale:
        notes.append(f"output {name!r}: the framework's {what} result drifts {drift:.3g} from its float64 "
                     f"result; tolerance widened to twice that")
        return 2 * drift / scale
    return atol_scale


def _cancellation_scale(name: str, i: int, golden: GoldenLike, atol_scale: float, notes: list[str]) -> float:
    """The float64 check's ``atol_scale`` for output ``i``, following the magnitude of what was summed
    where the result cancelled (a GroupNorm's output averaged: |ref| ~ 1e-16 from terms ~ 1).

    Where the summed terms' magnitude M (``_float32_terms``) exceeds max|ref|, the float64 check
    allows ``atol_scale``·M: the same 1e-9 relative strength, measured against the terms rather
    than against their cancelled sum. Only a real cancellation counts (M above
    ``CANCELLATION_RATIO``·max|ref|): elsewhere float32 drift is a few roundings of max|ref| and the
    plain check stands."""
    extremes = _extremes(golden, i)
    magnitude = _float32_terms(golden, i, extremes)
    if magnitude is None:
        return atol_scale
    max_ref = extremes[3]
    if max_ref <= 0.0 or magnitude <= CANCELLATION_RATIO * max_ref:
        return atol_scale
    notes.append(f"output {name!r} cancels (max|ref| {max_ref:.3g}; its float32 drift puts the summed terms "
                 f"near {magnitude:.3g}): the float64 check allows {atol_scale:g}*{magnitude:.3g}")
    return atol_scale * magnitude / max_ref


def _zero_reference_floor(name: str, i: int, golden: GoldenLike, atol_scale: float, extremes: Extremes | None,
                          notes: list[str]) -> float:
    """An absolute tolerance for a float32 framework output that is exactly zero everywhere while
    its float64 result is not: a sum that cancels (a weight gradient through a ``min`` whose terms
    cancel, 0 in float32, 1e-17 in float64), where ``atol_scale``·max|ref| allows nothing. The check
    allows ``atol_scale``·M, M the summed terms' magnitude (``_float32_terms``). 0 elsewhere."""
    magnitude = _float32_terms(golden, i, extremes)
    if magnitude is None or extremes[2] > 0.0 or magnitude <= 0.0:
        return 0.0
    notes.append(f"output {name!r} is 0 in float32 and at most {extremes[1]:.3g} in float64 (terms near "
                 f"{magnitude:.3g} cancelled): its float32 check allows {atol_scale:g}*{magnitude:.3g}")
    return atol_scale * magnitude


def _framework_precision_checks(names: list[str], stored: list[np.ndarray], golden: GoldenLike,
                                declared: list[str], narrow: tuple[float, float] | None,
                                notes: list[str]) -> list[OutputCheck]:
    """The comparison with the framework's own outputs, at the declared dtype's tolerance (or the
    program's narrow one). Where the framework's result is itself further from its float64 result
    than that (long float32 sums drift, bf16 rounds every op), the allowed error grows to twice
    that drift: the IR cannot be asked to reproduce the framework's rounding, and the float64
    check pins the meaning."""
    checks: list[OutputCheck] = []
    for i, name in enumerate(names):
        rtol, atol_scale = tolerance_for(declared[i], str(np.asarray(golden.outputs[i]).dtype)) \
            if i < len(golden.outputs) else (None, None)
        if narrow is not None and rtol is not None and _category(declared[i]) == "float":
            rtol, atol_scale = max(rtol, narrow[0]), max(atol_scale, narrow[1])
        floor = 0.0
        if atol_scale is not None:
            extremes = _extremes(golden, i)  # one pass over the output and its float64 result
            what = declared[i] if narrow is None else "narrow-precision"
            atol_scale = _widened_by_drift(name, declared[i], atol_scale, extremes, what, notes)
            floor = _zero_reference_floor(name, i, golden, atol_scale, extremes, notes)
        checks += compare_outputs([name], stored[i:i + 1], golden.outputs[i:i + 1], rtol, atol_scale,
                                  dtypes=declared[i:i + 1], reference="outputs", atol_floor=floor)
    return checks


def input_dependent(program: Program) -> set[str]:
    """The tensors whose values depend on some input or weight (the program's data flow; a
    repeat's carried state and a cond's index are followed to a fixed point)."""
    tensors = program.tensor_map()
    live = {t.name for t in program.tensors if t.role in ("input", "weight")}
    steps = program.walk_steps()
    changed = True
    while changed:
        changed = False
        for st, _ in steps:
            if st.kind == "kernel":
                reads = {n for n in _NAME.findall(st.expr + " " + st.out.split("[", 1)[-1]) if n in tensors}
                if st.init == "keep" and st.update != "=":
                    reads.add(st.out.split("[", 1)[0].strip())
                new = {st.out.split("[", 1)[0].strip()} if reads & live else set()
            elif st.kind == "reshape":
                new = {st.out} if st.src in live else set()
            elif st.kind == "topk":
                new = {st.values, st.indices} if st.src in live else set()
            elif st.kind == "linalg":
                new = set(st.outs) if set(st.args) & live else set()
            elif st.kind == "cond":
                new = set(st.outs) if st.index in live else set()
            else:
                new = set()
            if new - live:
                live |= new
                changed = True
    return live


@dataclass(frozen=True)
class OutputSummary:
    """What the refusals (``_refusals``) need of a golden output, without its values: node-wise
    validation takes it as each output is made and need not hold the outputs to the pass's end."""

    shape: tuple[int, ...]
    dtype: str
    size: int
    nonfinite: bool  # a float output none of whose values is finite
    constant: bool  # every value equal (NaN equal to NaN for a float)
    first: Any  # the first value (in the messages)


def summarise(ref: Any) -> OutputSummary:
    """``ref``'s ``OutputSummary`` (one pass over it); an ``OutputSummary`` as it is."""
    if isinstance(ref, OutputSummary):
        return ref
    ref = np.asarray(ref)
    shape, size = tuple(ref.shape), int(ref.size)
    if not size:
        return OutputSummary(shape, str(ref.dtype), 0, False, False, None)
    flat = ref.reshape(-1)
    is_float = _category(ref.dtype) == "float"
    nonfinite = is_float and not np.isfinite(flat.astype(np.float64)).any()
    constant = bool(np.all((flat == flat[0]) | (np.isnan(flat) & np.isnan(flat[0])))) if is_float \
        else bool(np.all(flat == flat[0]))
    return OutputSummary(shape, str(ref.dtype), size, bool(nonfinite), constant, flat[0])


def _refusals(program: Program, golden: GoldenLike, names: list[str], declared: list[str], traced: bool = False,
              notes: list[str] | None = None) -> list[OutputCheck]:
    """Failed checks for outputs whose comparison would check nothing (module docstring). A constant
    that a ``traced`` program computes from no input is what the framework's own graph computes from
    no input (``torch.full``, ``jnp.zeros``, a window of one): compared, with a note. ``golden``'s
    outputs may be arrays or their ``OutputSummary``."""
    checks: list[OutputCheck] = []
    live = None
    for i, name in enumerate(names[:len(golden.outputs)]):
        ref = summarise(golden.outputs[i])
        if not ref.size:
            continue
        shape = ref.shape
        why = None
        if ref.nonfinite:
            why = (f"the golden output is all NaN/inf (shape {shape}): comparing with it checks nothing; the "
                   f"workload must compute finite values on its inputs")
        else:
            live = input_dependent(program) if live is None else live
            if name not in live and ref.constant and traced:
                if notes is not None:
                    notes.append(f"output {name!r} is a constant ({ref.first!r}, shape {shape}) that the traced graph "
                                 f"computes from no input: its value and shape are what is compared")
            elif name not in live and ref.constant:
                why = (f"the IR computes it from no input or weight and the golden output is constant "
                       f"({ref.first!r} everywhere, shape {shape}): comparing them checks nothing")
        if why is not None:
            checks.append(OutputCheck(name, shape, shape, declared[i], float("inf"), float("inf"), float("nan"),
                                      False, f"output {name!r}: {why}", 0.0, "outputs"))
    return checks


# Results fixed only up to the sign of each vector: (routine, result index, vectors along axis -1
# (columns) or -2 (rows), the result index whose signs decide for it too)
SIGN_FREE = {("eigh", 1): (-1, 1), ("svd", 0): (-1, 0), ("svd", 2): (-2, 0)}


def _align_signs(program: Program, names: list[str], got: list[np.ndarray], ref: Sequence[Any],
                 notes: list[str]) -> list[np.ndarray]:
    """Eigenvectors and singular vectors as the framework's up to sign: each vector of the IR's
    result flipped where its dot product with the framework's is negative (for an SVD, U's
    columns and Vh's rows together, decided by U when the program returns it)."""
    position = {n: i for i, n in enumerate(names)}
    got = list(got)
    for st, _ in program.walk_steps():
        if st.kind != "linalg":
            continue
        signs: dict[int, np.ndarray] = {}
        for (routine, k), (axis, decider) in sorted(SIGN_FREE.items(), key=lambda kv: kv[1][1] != kv[0][1]):
            if routine != st.routine or k >= len(st.outs) or st.outs[k] not in position:
                continue
            i = position[st.outs[k]]
            if i >= len(ref) or ref[i] is None:
                continue
            g, r = np.asarray(got[i], dtype=np.float64), np.asarray(ref[i], dtype=np.float64)
            if g.shape != r.shape:
                continue
            if decider not in signs:
                dots = np.sum(g * r, axis=-2 if axis == -1 else -1)
                signs[decider if st.outs[decider] in position else k] = np.where(dots < 0, -1.0, 1.0)
            s = signs.get(decider, signs.get(k))
            got[i] = (g * (s[..., None, :] if axis == -1 else s[..., :, None])).astype(np.asarray(got[i]).dtype)
            notes.append(f"output {st.outs[k]!r} ({st.routine}'s vectors) is compared up to the sign of each "
                         f"vector, which the decomposition leaves free")
    return got


def _align_phases(program: Program, names: list[str], got: list[np.ndarray], ref: Sequence[Any],
                  notes: list[str]) -> list[np.ndarray]:
    """Complex eigenvectors (a general ``eig``'s, as real and imaginary planes) as the framework's up
    to a unit phase each: every vector of the IR's result turned by the phase of its inner product
    with the framework's."""
    position = {n: i for i, n in enumerate(names)}
    got = list(got)
    for st, _ in program.walk_steps():
        if st.kind != "linalg" or st.routine != "eig":
            continue
        for k in range(2, len(st.outs), 2):
            re_name, im_name = st.outs[k], st.outs[k + 1]
            if re_name not in position or im_name not in position:
                continue
            i, j = position[re_name], position[im_name]
            if max(i, j) >= len(ref) or ref[i] is None or ref[j] is None:
                continue
            gr, gi = np.asarray(got[i], np.float64), np.asarray(got[j], np.float64)
            rr, ri = np.asarray(ref[i], np.float64), np.asarray(ref[j], np.float64)
            if gr.shape != rr.shape or not gr.size:
                continue
            p_re, p_im = np.sum(gr * rr + gi * ri, axis=-2), np.sum(gr * ri - gi * rr, axis=-2)
            norm = np.hypot(p_re, p_im)
            cos = np.where(norm > 0, p_re / np.where(norm > 0, norm, 1.0), 1.0)[..., None, :]
            sin = np.where(norm > 0, p_im / np.where(norm > 0, norm, 1.0), 0.0)[..., None, :]
            got[i] = (gr * cos - gi * sin).astype(np.asarray(got[i]).dtype)
            got[j] = (gr * sin + gi * cos).astype(np.asarray(got[j]).dtype)
            notes.append(f"outputs {re_name!r}, {im_name!r} (eig's vectors) are compared up to a unit phase per "
                         f"vector, which the decomposition leaves free")
    return got


def _update_conditioned(program: Program, names: list[str], got64: list[np.ndarray], golden: GoldenLike,
                        notes: list[str]) -> list[Any]:
    """The float64 references in ``names``' order, a training step's optimizer results replaced by
    the optimizer's update of the IR's own gradients (``golden.update_reference``): the gradients
    are checked against autograd's, the update against the optimizer on exactly those gradients."""
    from solar_assets.ir.updates import updated_target

    reference = list(golden.outputs64)
    conditioned = getattr(golden, "update_reference64", None)
    if conditioned is None:
        return reference
    returned = [j for j, n in enumerate(names) if updated_target(program.tensor(n)) is None]
    updates = conditioned({r: got64[j] for r, j in enumerate(returned) if j < len(got64)})
    replaced = 0
    for r, value in updates.items():
        if r < len(returned) and returned[r] < len(reference):
            reference[returned[r]] = value
            replaced += 1
    if replaced:
        notes.append(f"{replaced} optimizer results (updated parameters and states) are checked in float64 "
                     f"against the optimizer's update of the IR's own gradients, which are checked against "
                     f"autograd's")
    return reference


class _WithOutputs:
    """``golden`` with other float32 outputs (its vectors' signs aligned with its float64 ones)."""

    def __init__(self, golden: GoldenLike, outputs: list[np.ndarray]):
        self._golden, self.outputs = golden, outputs

    def __getattr__(self, name: str) -> Any:
        return getattr(self._golden, name)


@clocked("comparison")
def validate_program(program: Program, golden: GoldenLike, *, source: str = "<program>",
                     einsum: bool = True, traced: bool = False) -> ValidationResult:
    """Run ``program`` in float64 on the golden inputs (rounding where it converts into a narrow
    dtype) and compare: with ``golden.outputs64`` at 1e-9·max|ref| (the strong check, when present;
    at the narrow tolerance where the program computes in bf16 / fp16 / fp8) and, rounded to the
    declared dtype, with ``golden.outputs`` at that dtype's tolerance (module docstring). Outputs
    whose comparison would check nothing fail first (``_refusals``; ``traced``: the program is the
    deterministic tracer's, whose constants are the exported graph's). IR errors (checker, missing
    bindings) raise."""
    from solar_assets.execute import execute_program

    watch_numba()
    start = time.perf_counter()
    if hasattr(golden, "for_program"):  # in-place updates: the updated tensors' values after the call
        golden = golden.for_program(program)
    names = list(program.outputs)
    declared = [program.tensor(n).dtype for n in names]
    with timed("IR execution"):
        got64 = execute_program(program, golden.bindings(None), np.float64, einsum=einsum, source=source)
    checks: list[OutputCheck] = []
    notes: list[str] = []
    if golden.outputs64 is not None:  # the framework's own float32 vectors may take other signs too
        aligned = _align_signs(program, names, list(golden.outputs), golden.outputs64, [])
        golden = _WithOutputs(golden, _align_phases(program, names, aligned, golden.outputs64, []))
    reference = golden.outputs64 if golden.outputs64 is not None else golden.outputs
    got64 = _align_phases(program, names, _align_signs(program, names, got64, reference, notes), reference, notes)
    reference64 = _update_conditioned(program, names, got64, golden, notes) if golden.outputs64 is not None else None
    checks += _refusals(program, golden, names, declared, traced, notes)
    narrow_dtypes, computing = narrow_storage(program), narrow_compute(program)
    narrow = narrow_tolerance(program, narrow_dtypes)
    if narrow is not None:
        notes.append(f"the program stores values in {', '.join(narrow_dtypes)}: the comparison with the framework "
                     f"runs at rtol {narrow[0]:.3g}, atol {narrow[1]:.3g}·max|ref|")
    if computing:
        notes.append(f"the program computes in {', '.join(computing)}: the framework rounds every such op, the IR "
                     f"and the float64 reference only the conversions into it, so the float64 check runs at the "
                     f"same narrow tolerance")
    computed = narrow_tolerance(program, computing)
    if golden.outputs64 is not None:
        if computed is None:
            rtol, atol_scale = TOLERANCES["float64"]
            accuracy, coarse = expression_accuracy([st.expr for st, _ in program.walk_steps() if st.kind == "kernel"])
            if accuracy > rtol:
                rtol, atol_scale = max(rtol, accuracy), max(atol_scale, accuracy)
                notes.append(f"the program calls {', '.join(coarse)}, which a framework's float64 run computes only to "
                             f"{accuracy:.2g} relative: the float64 check runs at that tolerance")
            for i, name in enumerate(names):
                # an output stored in a narrow dtype is rounded on both sides: a float64 value a hair
                # either side of a rounding boundary lands one step of that dtype apart (one ulp,
                # 2^-mantissa_bits relative), which is rounding, not an indexing fault
                one_ulp = 2.0 ** -DTYPES[declared[i]].mantissa_bits if declared[i] in NARROW_FLOAT_DTYPES else 0.0
                checks += compare_outputs([name], got64[i:i + 1], reference64[i:i + 1], max(rtol, one_ulp),
                                          _cancellation_scale(name, i, golden, atol_scale, notes),
                                          dtypes=["float64" if _category(declared[i]) == "float" else declared[i]],
                                          reference="outputs64")
        else:
            for i, name in enumerate(names):
                atol_scale = _widened_by_drift(name, declared[i], computed[1], _extremes(golden, i),
                                               "narrow-precision", [])
                checks += compare_outputs([name], got64[i:i + 1], reference64[i:i + 1], computed[0], atol_scale,
                                          dtypes=["float64" if _category(declared[i]) == "float" else declared[i]],
                                          reference="outputs64")
    else:
        notes.append("no float64 golden outputs: only the float32 comparison ran")
    stored = [_stored_like(a, r, d) for a, r, d in zip(got64, golden.outputs, declared)] + got64[len(golden.outputs):]
    checks += _framework_precision_checks(names, stored, golden, declared, narrow, notes)
    return ValidationResult(
        ok=bool(checks) and all(c.ok for c in checks),
        checks=checks,
        max_abs_error=max((c.max_abs_error for c in checks), default=0.0),
        max_rel_error=max((c.max_rel_error for c in checks), default=0.0),
        seconds=time.perf_counter() - start,
        notes=notes,
    )
