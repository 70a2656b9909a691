"""The validation size: the file's own size where validating it is cheap, a smaller one where not.

Analysis (tracing, einsum graph, bounds) always happens at the file's own size. Validation needs
real tensors twice over (the golden run in PyTorch, then the IR executed in float64), and files
with production sizes (a 4096³ GEMM, 16 images of 512²) do not fit that comfortably. So:

1. A file that declares ``SOLAR_VALIDATION_SIZES = {"BATCH": 3, ...}`` is validated at that size.
2. Otherwise the full-size IR's cost is estimated (``program_cost``): bytes of every tensor it
   declares (inputs, weights, intermediates, outputs; 8 bytes an element, as the executor runs
   in float64) and the iterations of all its kernels. Within ``ValidationBudget`` (1 GiB,
   2e9 iterations) it is validated at full size.
3. Otherwise its integer module constants are scaled down (``scaling_tiers``, ``scale_constants``),
   in every spelling ``solar_assets.workloads.sizes`` reads (``batch_size = 16``, ``N = 2048 * 2``,
   ``M = K = N = 8192``, the element ``input_shape[0]`` of ``input_shape = (32768,)``):
   first the batch, then every size except reduction lengths (so accumulation is exercised at
   full length), then all of them; by 1/8 to odd values ≥ 3 (odd sizes make swapped dimensions
   stand out), keeping divisibility between constants (``DIM % HEADS``), or by plain division
   where odd values break the model; by 1/16, 1/32, … while over budget, by 1/4 and 1/2 where 1/8
   is too small for the model (a 224² AlexNet input cut to 27² pools down to nothing). Each
   candidate is traced; the tier is the first with a candidate within the budget that has the
   full-size IR's structure (``structure_difference``), and within it the size goes on down to the
   scaled target (``ValidationBudget.scaled_target``, 1/8 of the budget: a larger scaled size
   checks nothing a smaller one of the same structure does not, and costs the golden run and the
   IR's execution in proportion), keeping the cheapest that fits where the odd sizes reach their
   floor first. After an over-target candidate the next factor is extrapolated (``_next_factor``:
   the log-log line through the last two costs) instead of only doubled; at most ``MAX_ATTEMPTS``
   traces. A candidate
   that fails to build or export after a scaled size fell below a kept one it was at least
   (``crossed_order``: a causal-mask buffer of ``max_seqlen`` sliced to a kept ``seq_len``) is
   retried at once with those sizes as written (unless that leaves nothing scaled: then the
   plain-division variant is next, which keeps ratios such as ``2*width == out_channels`` that
   odd sizes break); a tier that keeping them made no cheaper than an
   earlier tier at the same factor is given up, leaving the attempts to the next (which scales the
   pair together).

The IR at the validation size must have the same structure as the full-size one — the same
steps, kernel statements, tensor names, roles and dtypes, with every number normalised away —
otherwise validating it would say nothing about the IR whose bounds are reported.
"""
from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ir_schemas import Program
from solar_assets.errors import SolarError
from solar_assets.logconf import fake_tensor_failures_quiet
from solar_assets.ir.structure import structure_of
from solar_assets.workloads.sizes import (
    SIZE_DECLARATION,
    SizeConstant,
    declared_validation_sizes,
    size_constants,
    size_label,
)

log = logging.getLogger(__name__)

ELEMENT_BYTES = 8  # the executor runs in float64 (integers in int64)
SCALE_FACTORS = (8, 16, 32, 64, 128, 256, 512, 1024, 4096, 16384)
MIN_SCALED_SIZE = 3  # scaled sizes stay ≥ 3: a size of 1 or 2 can change what torch.export traces
MIN_SCALABLE_SIZE = 8  # constants below this are left alone (kernel sizes, strides, small counts)
MAX_ATTEMPTS = 8  # candidate sizes traced before giving up
STALLED = 0.75  # a smaller factor that leaves ≥ 75 % of the cost: the tier's fixed sizes dominate it
# Counts of layers / blocks / steps change the program's structure, not its sizes (but
# ``layer_sizes = [400, 800]`` are widths); kernel sizes, strides, paddings, dilations and group counts
# are the operator's parameters, and scale factors, clamp bounds and the like are values the program
# computes with. Matched in any case, on the constant's name (``num_layers``, ``KERNEL_SIZE``,
# ``pool_kernel_size``, ``stride[1]``): ``not_a_size``.
_COUNT = re.compile(r"(^|_)(DEPTH|LAYERS?|N_LAYERS?|NUM_LAYERS|BLOCKS|NUM_BLOCKS|STAGES|REPEATS?|ITERS?|"
                    r"ITERATIONS|STEPS|SEED)($|_|\[)", re.IGNORECASE)
_WIDTH = re.compile(r"(^|_)(SIZES?|WIDTHS?|DIMS?|FEATURES|CHANNELS|UNITS)($|\[)", re.IGNORECASE)
_PARAMETER = re.compile(r"(^|_)(KERNEL|KERNELS|STRIDES?|PAD|PADDING|PADDINGS|DILATIONS?|GROUPS?|AXIS|AXES|"
                        r"SCALE|SCALING|FACTOR|DIVISOR|CLAMP|EPS|SLOPE|ALPHA|BETA|MOMENTUM|DROPOUT)($|_|\[)",
                        re.IGNORECASE)


def not_a_size(name: str) -> bool:
    """Named as a count (not a list of widths: ``layer_sizes``) or as an operator parameter / value."""
    return bool(_PARAMETER.search(name)) or (bool(_COUNT.search(name)) and not _WIDTH.search(name))




class ValidationSizeError(SolarError):
    """No usable validation size, or one whose IR differs in structure; the message names the file.
    ``nodewise_at``: the cheapest scaled size the search traced whose IR has the full-size IR's
    structure but is over the whole-program budget (None if none): node-wise validation, which
    holds only the live values of one pass, may still fit there when the file's own size does not."""

    def __init__(self, message: str, nodewise_at: Mapping[str, int] | None = None):
        super().__init__(message)
        self.nodewise_at = dict(nodewise_at) if nodewise_at else None

    def __reduce__(self) -> tuple:  # across a worker's pipe with what it found
        return type(self), (str(self), self.nodewise_at)


@dataclass(frozen=True)
class ValidationBudget:
    """The most a validation may cost: tensor bytes (float64) and kernel iterations of the IR.
    ``scaled_share``: a scaled-down size aims at ``1/scaled_share`` of it (``scaled_target``)."""

    tensor_bytes: int = 1 << 30
    iterations: int = 2_000_000_000
    scaled_share: int = 8

    def scaled_target(self) -> ValidationBudget:
        """What a scaled-down size aims at, within the tier the whole budget picks: once the sizes
        are scaled, a larger one checks nothing a smaller one of the same structure does not (the
        same kernels, loops and roles, reduction lengths kept as the tier keeps them), and the golden
        run and the IR's execution cost in proportion to it."""
        share = max(1, self.scaled_share)
        return ValidationBudget(max(1, self.tensor_bytes // share), max(1, self.iterations // share), 1)

    def __str__(self) -> str:
        return f"{_bytes(self.tensor_bytes)} of tensors and {self.iterations:.3g} iterations"


@dataclass(frozen=True)
class ValidationCost:
    """What validating an IR costs: its tensors' bytes in float64 and its kernels' iterations."""

    tensor_bytes: int
    iterations: int

    def within(self, budget: ValidationBudget) -> bool:
        return self.tensor_bytes <= budget.tensor_bytes and self.iterations <= budget.iterations

    def load(self, budget: ValidationBudget) -> float:
        """How far over (> 1) or under the budget, on its tighter dimension."""
        return max(self.tensor_bytes / budget.tensor_bytes, self.iterations / budget.iterations)

    def __str__(self) -> str:
        return f"{_bytes(self.tensor_bytes)} of tensors, {self.iterations:.3g} iterations"


@dataclass(frozen=True)
class ValidationSize:
    """The size a workload is validated at: rebound constants ({} = the file's own size) and why."""

    constants: dict[str, int] = field(default_factory=dict)
    reason: str = ""

    @property
    def label(self) -> str:
        return size_label(self.constants)

    @property
    def full(self) -> bool:
        return not self.constants

    def to_json(self) -> str:
        return json.dumps({"constants": self.constants, "reason": self.reason})

    @classmethod
    def from_json(cls, text: str) -> ValidationSize:
        data = json.loads(text)
        return cls(constants=dict(data["constants"]), reason=data["reason"])


def _bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} TiB"


# ---------------------------------------------------------------------------- cost
def program_cost(program: Program) -> ValidationCost:
    """Bytes of every tensor the IR declares (reshape results are views and not counted) at 8 bytes
    an element, and the iterations of every kernel (product of its loop extents, times the extents
    of the repeats around it; a topk counts the elements of its source)."""
    steps = program.walk_steps()
    views = {s.out for s, _ in steps if s.kind == "reshape"}
    tensor_bytes = sum(math.prod(t.shape) * ELEMENT_BYTES for t in program.tensors if t.name not in views)
    tensors = program.tensor_map()
    iterations = 0
    for s, enclosing in steps:
        times = math.prod(r.extent for r in enclosing)
        if s.kind == "kernel":
            iterations += times * math.prod(lp.extent for lp in s.loops)
        elif s.kind == "topk":
            iterations += times * math.prod(tensors[s.src].shape)
        elif s.kind == "linalg":  # about n³ per matrix: a cube of its first operand's elements per matrix
            first = tensors[s.args[0]].shape
            iterations += times * math.prod(first) * max(first[-1] if first else 1, 1)
    return ValidationCost(int(tensor_bytes), int(iterations))


# ---------------------------------------------------------------------------- structure
def structure_difference(full: Program, small: Program) -> str | None:
    """None when the two programs have the same structure, else the first difference, readable."""
    (full_tensors, full_steps), (small_tensors, small_steps) = structure_of(full), structure_of(small)
    for what, a, b in (("tensor", full_tensors, small_tensors), ("step", full_steps, small_steps)):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return f"{what} {i}: full size has `{x}`, the validation size `{y}`"
        if len(a) != len(b):
            longer, n = ("full size", len(a)) if len(a) > len(b) else ("the validation size", len(b))
            first_extra = (a if len(a) > len(b) else b)[min(len(a), len(b))]
            return (f"{len(a)} {what}s at full size, {len(b)} at the validation size; {longer} also has "
                    f"{what} {min(len(a), len(b))} of {n}: `{first_extra}`")
    return None


def check_same_structure(path: str, full: Program, small: Program, constants: Mapping[str, int]) -> None:
    diff = structure_difference(full, small)
    if diff is not None and "hf_layers" in constants:  # the same model with fewer layers (hf_offline)
        from solar_assets.workloads.hf_offline import layered_structure_difference

        diff = layered_structure_difference(full, small, path, constants)
    if diff is not None:
        raise ValidationSizeError(f"{path}: the IR at validation size {size_label(constants)} does not have the "
                                  f"structure of the full-size IR, so validating it would not vouch for the "
                                  f"analysed one: {diff}")


# ---------------------------------------------------------------------------- candidates
def _loop_vars(access: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_]\w*", access.split("[", 1)[1])) if "[" in access else set()


def reduction_lengths(program: Program) -> set[int]:
    """Extents of reduction loops: loops of an accumulating kernel whose variable the output omits."""
    found: set[int] = set()
    for s, _ in program.walk_steps():
        if s.kind != "kernel" or s.update == "=":
            continue
        written = _loop_vars(s.out)
        found.update(lp.extent for lp in s.loops if lp.var not in written)
    return found


def program_sizes(program: Program) -> set[int]:
    """Every tensor extent and loop extent of the program."""
    sizes = {d for t in program.tensors for d in t.shape}
    steps = [s for s, _ in program.walk_steps()]
    sizes.update(lp.extent for s in steps for lp in (getattr(s, "loops", None) or ()))
    sizes.update(s.extent for s in steps if s.kind == "repeat")
    return sizes


@dataclass(frozen=True)
class ScalingTier:
    """Which constants one tier of the search scales."""

    name: str  # "batch", "all but reduction lengths", "all"
    names: tuple[str, ...]


def scaling_tiers(constants: Mapping[str, SizeConstant], program: Program) -> list[ScalingTier]:
    """The constants to scale, least disruptive first: the batch (the leading size of an input, not
    a reduction length), then every size except reduction lengths (so accumulation runs at full
    length), then all.

    A constant (or tuple / list element) can be scaled when it is assigned a literal expression, is
    ≥ 8, is not named like a count of layers / blocks / steps or an operator parameter (``not_a_size``,
    any case: ``kernel_size``, ``stride[1]``, ``num_groups``), and its value is an extent somewhere in
    the full-size IR; it is a
    reduction length when its value is the extent of a loop an accumulating kernel reduces over."""
    sizes, reductions = program_sizes(program), reduction_lengths(program)
    scalable = [c.name for c in constants.values()
                if c.free and c.value >= MIN_SCALABLE_SIZE and not not_a_size(c.name) and c.value in sizes]
    leading = {t.shape[0] for t in program.tensors if t.role == "input" and t.shape}
    rows = [n for n in scalable if constants[n].value not in reductions]
    batch = [n for n in rows if constants[n].value in leading]
    tiers: list[ScalingTier] = []
    for name, names in (("batch", batch), ("all but reduction lengths", rows), ("all", scalable)):
        if names and all(set(names) != set(t.names) for t in tiers):
            tiers.append(ScalingTier(name, tuple(names)))
    return tiers


def _nearest_multiple(target: int, step: int, prefer_odd: bool, at_least: int = 1) -> int:
    k = max(at_least, round(target / step))
    if prefer_odd and step % 2 and k % 2 == 0:
        below_ok = k - 1 >= at_least and abs((k - 1) * step - target) <= abs((k + 1) * step - target)
        k = k - 1 if below_ok else k + 1
    return k * step


def scale_constants(values: Mapping[str, int], names: Iterable[str], factor: int, exact: bool) -> dict[str, int]:
    """The named constants divided by ``factor`` — to odd values ≥ 3, or (``exact``) by floor division
    to values ≥ 2 — keeping the divisibility the model may rely on (``DIM % HEADS == 0``):

    - a constant stays a multiple (at least twice, as it was a proper multiple) of the constants
      that divided it: scaled ones at their new value; unscaled ones only when small (< 8: head and
      group counts), since a large one (a kept reduction length) usually divides by coincidence,
      and, for odd values, only when odd (an even one would make them even: plain division keeps
      those);
    - with plain division, it also still divides the unscaled constants it divided
      (``HIDDEN % HEADS`` with ``HIDDEN`` kept), where some value near the target does.

    Smaller constants are scaled first; only the changed ones are returned."""
    chosen = {name: values[name] for name in names}
    new = dict(values)
    for name in sorted(chosen, key=lambda n: (values[n], n)):
        v = values[name]
        if exact:
            target = max(2, v // factor)
        else:
            target = max(MIN_SCALED_SIZE, round(v / factor))
            if target % 2 == 0:
                target = target - 1 if target - 1 >= MIN_SCALED_SIZE else target + 1
        divisors = [new[b] for b, bv in values.items()
                    if b != name and 2 <= bv < v and v % bv == 0 and new[b] > 1
                    and (b in chosen or (bv < MIN_SCALABLE_SIZE and (exact or bv % 2)))]
        step = math.lcm(*divisors) if divisors else 1
        if step > 1:
            target = _nearest_multiple(target, step, prefer_odd=not exact, at_least=2)
        if exact:
            multiples = [u for b, u in values.items() if b not in chosen and u > v and u % v == 0]
            if multiples:
                bound = math.gcd(*multiples)
                fitting = [d for d in range(step, bound + 1, step) if bound % d == 0 and 2 <= d < v]
                if fitting:
                    target = min(fitting, key=lambda d: (abs(d - target), d))
        new[name] = target if target < v else v
    return {name: new[name] for name in values if name in chosen and new[name] != values[name]}


# ---------------------------------------------------------------------------- the choice
class _Search:
    """The attempts of one ``choose_validation_size``: traces, their outcomes, the attempt cap."""

    def __init__(self, path: str, full: Program, trace: Callable[[dict[str, int]], Program],
                 budget: ValidationBudget):
        self.path, self.full, self.trace, self.budget = path, full, trace, budget
        self.target = budget.scaled_target()
        self.tried: list[str] = []
        self.seen: set[str] = set()
        self.attempts = 0
        self.trace_failed = False  # the last "failed" attempt failed to trace (not: another structure)
        self.over_at: dict[int, ValidationCost] = {}  # factor -> an earlier tier's over-budget cost there
        self.cheapest_over: tuple[ValidationCost, dict[str, int]] | None = None  # with the full IR's structure

    def attempt(self, constants: dict[str, int]) -> tuple[str, ValidationCost | None]:
        """("ok" | "fits" | "over" | "failed" | "seen" | "exhausted", the cost when traced): "ok"
        within the scaled target, "fits" within the budget but not the target (both with the full
        IR's structure), "over" over the budget, "failed" when it does not trace or its structure
        differs."""
        key = json.dumps(constants, sort_keys=True)
        if not constants or key in self.seen:
            return "seen", None
        if self.attempts >= MAX_ATTEMPTS:
            return "exhausted", None
        self.seen.add(key)
        self.attempts += 1
        label = size_label(constants)
        try:
            with fake_tensor_failures_quiet(shown_when_verbose=False):  # a too-small candidate is expected
                small = self.trace(constants)
        except SolarError as e:
            self.trace_failed = True
            return self._note("failed", f"{label}: {_first_line(str(e), self.path)}"), None
        self.trace_failed = False
        cost = program_cost(small)
        if not cost.within(self.budget):
            self._keep_if_cheapest(constants, small, cost)
            return self._note("over", f"{label}: {cost}, over budget"), cost
        diff = structure_difference(self.full, small)
        if diff is not None:
            return self._note("failed", f"{label}: structure differs ({diff})"), cost
        if not cost.within(self.target):
            return self._note("fits", f"{label}: {cost}, within budget, over the scaled target"), cost
        return "ok", cost

    def _keep_if_cheapest(self, constants: dict[str, int], small: Program, cost: ValidationCost) -> None:
        """Remember an over-budget candidate with the full IR's structure if it is the cheapest so far
        (``ValidationSizeError.nodewise_at``)."""
        cheaper = self.cheapest_over is None or _cheaper(cost, self.cheapest_over[0])
        if cheaper and structure_difference(self.full, small) is None:
            self.cheapest_over = (cost, dict(constants))

    def _note(self, outcome: str, line: str) -> str:
        self.tried.append(line)
        log.debug("%s: validation size %s", self.path, line)
        return outcome


def choose_validation_size(path: str | Path, full: Program, trace: Callable[[dict[str, int]], Program],
                           budget: ValidationBudget | None = None) -> ValidationSize:
    """The size to validate the workload at. ``full`` is its IR at the file's own size; ``trace``
    gives the IR with constants rebound (it may raise ``SolarError``). Raises
    ``ValidationSizeError`` naming the file when no size is usable.

    Per tier (``scaling_tiers``), factor 8 first (odd values, then plain division where odd ones
    fail); over budget: 16, 32, … until the cost stops falling; too small for the model (a trace
    error or another structure): 4, then 2."""
    budget = budget or ValidationBudget()
    path = str(path)
    full_cost = program_cost(full)
    declared = declared_validation_sizes(path)
    if declared is None and not full_cost.within(budget):  # a HuggingFace model: fewer layers too
        from solar_assets.workloads.hf_offline import validation_sizes

        declared = validation_sizes(path)
    if declared is not None:
        small = trace(declared)
        check_same_structure(path, full, small, declared)
        cost = program_cost(small)
        how = "fewer layers (hf_offline)" if "hf_layers" in declared else f"declared by {SIZE_DECLARATION}"
        if not cost.within(budget):
            log.warning("%s: the size %s (%s) is over the validation budget (%s); validating anyway",
                        path, how, cost, budget)
        return ValidationSize(declared, f"{how}: {cost} (full size: {full_cost})")
    if full_cost.within(budget):
        return ValidationSize({}, f"full size: {full_cost}")
    constants = size_constants(path)
    values = {c.name: c.value for c in constants.values()}
    tiers = scaling_tiers(constants, full)
    if not tiers:
        raise ValidationSizeError(
            f"{path}: validating at full size needs {full_cost}, over the budget of {budget}, and the file "
            f"has no integer module constant (≥ {MIN_SCALABLE_SIZE}, sizing the IR) to scale down; size it with "
            f"module constants or declare {SIZE_DECLARATION} = {{\"NAME\": small, ...}}")
    search = _Search(path, full, trace, budget)
    for tier in tiers:
        found = _search_tier(search, tier, values, full_cost)
        if found is not None:
            constants_found, factor, exact, cost = found
            how = "divided" if exact else "scaled to odd sizes"
            reason = f"{tier.name} {how} by {factor}: {cost} (full size: {full_cost})"
            return ValidationSize(constants_found, reason)
    raise ValidationSizeError(
        f"{path}: validating at full size needs {full_cost}, over the budget of {budget}, and no scaled-down "
        f"size worked (tried {'; '.join(search.tried) or 'none'}); declare {SIZE_DECLARATION} = "
        f"{{\"NAME\": small, ...}} in the file",
        nodewise_at=search.cheapest_over[1] if search.cheapest_over is not None else None)


def _stalled(cost: ValidationCost, last: ValidationCost, budget: ValidationBudget) -> bool:
    """A dimension (tensor bytes, iterations) still over budget kept ≥ ``STALLED`` of its last value:
    shrinking this tier's constants no longer helps, its fixed sizes dominate that dimension."""
    return any(now > limit and now > STALLED * before
               for now, before, limit in ((cost.tensor_bytes, last.tensor_bytes, budget.tensor_bytes),
                                          (cost.iterations, last.iterations, budget.iterations)))


def _search_tier(search: _Search, tier: ScalingTier, values: Mapping[str, int], full_cost: ValidationCost
                 ) -> tuple[dict[str, int], int, bool, ValidationCost] | None:
    """The tier's size: the first within the scaled target, else the cheapest within the budget
    (a "fits": the tier is the one the budget picks, the target only how far it is scaled), or
    None. A tier whose candidate leaves a dimension over the budget at ≥ ``STALLED`` of the last
    cost (an MLP's 16384² weights do not shrink with its batch) ends there, leaving the attempts to
    the tiers that scale what dominates; once a size fits, the same against the target ends the
    scaling on."""
    factor, direction, last = _first_factor(tier, full_cost, search.target), 0, full_cost  # direction: +1 smaller
    last_factor = 1  # where ``last`` was traced
    visited: set[int] = set()  # the factors this tier has been at
    kept: set[str] = set()  # constants whose scaling reversed an order the model needs (``crossed_order``)
    over_here: dict[int, ValidationCost] = {}
    fits: tuple[dict[str, int], int, bool, ValidationCost] | None = None  # the cheapest "fits" so far
    target = search.target
    try:
        while 2 <= factor <= SCALE_FACTORS[-1]:
            # reached by a jump (the first factor's, or an extrapolation's): the gentler factor below
            # was skipped, so it is halved back to before plain division or giving up
            jumped = factor > SCALE_FACTORS[0] and factor // 2 not in visited
            visited.add(factor)
            outcomes = []
            for exact in (False, True):
                if exact and jumped:
                    break  # the odd sizes at a gentler factor first (halving back), as a walk would have met them
                scaled = _without(scale_constants(values, tier.names, factor, exact), kept)
                outcome, cost = search.attempt(scaled)
                if outcome == "failed" and search.trace_failed:
                    crossed = crossed_order(values, scaled)
                    if crossed and _without(scaled, crossed):  # retry at once with those sizes as written, for
                        # the rest of the tier too (unless that scales nothing: the full size, over budget)
                        kept |= crossed
                        scaled = _without(scaled, kept)
                        outcome, cost = search.attempt(scaled)
                if outcome == "ok":
                    return scaled, factor, exact, cost
                if outcome == "seen" and not exact and fits is not None and direction > 0:
                    return fits  # the odd sizes are at their floor: the target is not worth sizes of 2
                if outcome == "fits":
                    if fits is None or _cheaper(cost, fits[3]):
                        fits = (scaled, factor, exact, cost)
                    outcome = "over"  # of the target: scaled on
                outcomes.append(outcome)
                if outcome == "exhausted":
                    return fits
                if outcome == "over":
                    earlier = search.over_at.get(factor)
                    limit = search.budget if fits is None else target  # the tier first; how far, once it fits
                    if _stalled(cost, last, limit) or (kept and earlier and _stalled(cost, earlier, search.budget)):
                        return fits  # (or: sizes kept as written made it no cheaper than an earlier tier here)
                    next_factor = _next_factor(factor, cost, last_factor, last, target, search.budget)
                    last, last_factor = cost, factor
                    over_here[factor] = cost
                    break  # the other variant costs about the same
            if "over" in outcomes:
                if direction < 0:
                    return fits  # too small at the previous factor, over the target at this one
                direction, factor = 1, next_factor
                continue
            if "failed" in outcomes:
                if direction > 0:
                    if jumped:  # the extrapolation is a model: the skipped factors are tried (halving
                        factor //= 2  # back) before giving up
                        continue
                    return fits  # over the target one factor up, unusable here
                direction = -1
            elif direction == 0:
                return fits  # nothing new to try at 8 (the sizes are at their floor, or tried in an earlier tier)
            factor = factor * 2 if direction > 0 else factor // 2
        return fits
    finally:
        for f, c in over_here.items():
            search.over_at.setdefault(f, c)


def _first_factor(tier: ScalingTier, full_cost: ValidationCost, target: ValidationBudget) -> int:
    """8, or for the batch tier the first power of two at which the full cost divided by the factor
    is within the target: every tensor and loop nest holds the batch at most once, so the cost falls
    at most in proportion to it, and no smaller factor reaches the target (a factor too small for
    the model halves back, as from 8)."""
    if tier.name != "batch":
        return SCALE_FACTORS[0]
    over = max(full_cost.tensor_bytes / target.tensor_bytes, full_cost.iterations / target.iterations)
    if over <= SCALE_FACTORS[0]:
        return SCALE_FACTORS[0]
    return _power_of_two(math.log2(over))


def _cheaper(a: ValidationCost, b: ValidationCost) -> bool:
    return (a.tensor_bytes, a.iterations) < (b.tensor_bytes, b.iterations)


def _next_factor(factor: int, cost: ValidationCost, last_factor: int, last: ValidationCost,
                 target: ValidationBudget, budget: ValidationBudget | None = None) -> int:
    """The factor to trace after ``cost`` at ``factor`` was over ``target``: the smallest power of
    two whose cost, extrapolated on the line through this point and the last one (``last`` at
    ``last_factor``; the full size at 1) in log-log space, is within it on both dimensions; at
    least twice ``factor``, at most the largest factor. A dimension already within ``budget`` that
    barely falls (by less than 1 - ``STALLED`` a doubling: weights the tier does not scale) does
    not drive the jump: it would not reach the target at any factor.

    A cost is a sum of products of extents, each shrinking like 1/factor until it stops at its
    floor: its logarithm is convex in log factor, so the line under-estimates the cost beyond
    the two points and every factor skipped is over the target too (extents such as ``n/f - k + 1``
    bend the other way; a skip that lands on a size too small for the model halves back)."""
    need = math.log2(2 * factor)
    budget = budget or target
    for now, was, limit, ceiling in ((cost.tensor_bytes, last.tensor_bytes, target.tensor_bytes, budget.tensor_bytes),
                                     (cost.iterations, last.iterations, target.iterations, budget.iterations)):
        if now <= limit:
            continue
        within_budget = now <= ceiling
        if was <= now or factor <= last_factor:
            if within_budget:
                continue
            return 2 * factor  # not falling: the stall check decides, one factor on
        slope = math.log2(was / now) / math.log2(factor / last_factor)
        if within_budget and 2.0 ** -slope >= STALLED:
            continue
        need = max(need, math.log2(factor) + math.log2(now / limit) / slope)
    return _power_of_two(need)


def _power_of_two(log2: float) -> int:
    """The smallest power of two at or above ``2**log2``, at most the largest factor."""
    return 1 << min(math.ceil(log2 - 1e-9), SCALE_FACTORS[-1].bit_length() - 1)


def _without(scaled: dict[str, int], kept: set[str]) -> dict[str, int]:
    return {n: v for n, v in scaled.items() if n not in kept}


def crossed_order(values: Mapping[str, int], scaled: Mapping[str, int]) -> set[str]:
    """The scaled constants now below a constant left as written that they exceeded at full size
    (``max_seqlen = 1024`` scaled to 127 under a kept ``seq_len = 512``). Such a pair is often an
    order the model relies on — a causal-mask buffer of ``max_seqlen`` sliced to the input's length —
    so a candidate that fails to build or export is retried with these constants as written; the
    structure check still judges the result."""
    kept = [v for n, v in values.items() if n not in scaled and v >= MIN_SCALABLE_SIZE]
    # strictly smaller at full size: a kept constant EQUAL to a scaled one is the same size under
    # another name (``num_channels = embed_dim``), not an order between two sizes
    return {n for n, new in scaled.items() if any(new < k < values[n] for k in kept)}


def _first_line(message: str, path: str) -> str:
    line = message.strip().splitlines()[0] if message.strip() else message
    return line[len(path) + 2:] if line.startswith(path + ": ") else line
