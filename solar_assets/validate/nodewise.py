"""Node-wise validation: each op group of the IR checked on the framework's own values, at the
file's own size.

Whole-program validation needs a size at which the IR can run whole; a file that hard-codes
``torch.randn(batch_size, 3, 224, 224)`` or lists layer widths cannot be shrunk by rebinding
constants. Here the framework runs once at full size (``solar_assets.golden.capture``, values
freed after their last use), and each group of IR steps lowered from one fx node
(``origin.node``) is evaluated on the framework's values of what it reads (graph inputs,
weights, earlier nodes' outputs, through the tracer's ``value_map``), in float64, at a sample
of its output points (``POINTS`` per written tensor, seeded, corners included; every point
when that is cheap, as for composition copies), with ``solar_assets.validate.points``. Each
sampled point is compared with the framework's value at the dtype's tolerance of
``compare.TOLERANCES`` (the absolute part relative to the whole framework tensor's max|ref|).
A float32 program's pass runs in float64 where it fits (twice the bytes); where it runs in float32
and a float32 value misses the IR by more than float32's tolerance (a sum of millions of terms
strays that far), the op is run again in float64 on the same inputs (``capture.CapturedValues.float64``)
and the IR is held to float64's tolerance against that value instead.

Only the tracer's IR is checked this way: the pass runs the translation's own fake-tensor export
with the model's real weights bound by name when this process made it (``translate.export_memo``),
else the file exported again on real tensors and re-lowered with the value map, which must give
the very program being validated.

Where one pass at the file's own size does not fit the capture budget either (a training step of
AlexNet at batch 1024: 6.5 GiB live), the pass runs at the cheapest scaled size the sizing search
traced with the full IR's structure (``sizing.ValidationSizeError.nodewise_at``), and the IR
checked is the tracer's at that size, as in a scaled whole-program validation: its weights do
not shrink (that is why no scaled size fitted the whole-program budget), its batch does.
"""
from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ir_schemas import Program
from solar_assets.validate.compare import ValidationResult, narrow_storage
from solar_assets.workloads.sizes import size_label
from solar_assets.validate.nodewise_check import (  # noqa: F401 - the public names of node-wise validation
    LABEL,
    POINTS,
    MakeChecker,
    NodewiseError,
    OpGroup,
    _Checker,
    _plan,
    checker_result,
    op_groups,
    require_tracer_frame,
    sample_points,
)

if TYPE_CHECKING:
    import torch
    from torch.export import ExportedProgram

    from solar_assets.translate import Translation
    from solar_assets.workloads import WorkloadSource

log = logging.getLogger(__name__)

FLOAT64_REFERENCE = True  # float32 programs: capture in float64 where it fits (``validate_nodewise``)


def _declared_bytes(program: Program, roles: tuple[str, ...]) -> int:
    """Bytes of the program's tensors with these roles, at their declared dtypes."""
    from solar_assets.ir.dtypes import DTYPES

    return sum(math.prod(t.shape) * DTYPES[t.dtype].bytes for t in program.tensors if t.role in roles)


def _with_op_inputs(ep: ExportedProgram, extra: Mapping[str, int], check_at: Mapping[int, list[OpGroup]]
                    ) -> dict[str, int]:
    """``extra`` with each checked op's inputs held until its check (a getitem's: its producer's),
    so that ``capture.CapturedValues.float64`` can run the op again there: a multi-output op (a
    convolution's backward) is checked at its getitems, after its inputs' last use."""
    from solar_assets.golden.capture import producer

    nodes = {n.name: n for n in ep.graph.nodes}
    kept = dict(extra)
    for at, groups in check_at.items():
        for g in groups:
            node = producer(nodes[g.node]) if g.node in nodes else None
            if node is None or node.op != "call_function":
                continue
            for read in node.all_input_nodes:
                kept[read.name] = max(kept.get(read.name, 0), at)
    return kept


def relower_with_values(src: WorkloadSource, constants: Mapping[str, int] | None = None,
                        under_test: Program | None = None
                        ) -> tuple[ExportedProgram, list[torch.Tensor], Program, dict[str, str]]:
    """The file's exported graph with real values (at its own size, or with ``constants`` rebound),
    its inputs, the tracer's program of that export and the value map (IR tensor -> fx node;
    program outputs -> the output node's arguments). The fake-tensor export this process lowered
    to ``under_test`` (``translate.export_memo``: the model's real weights bound by name), else the file
    exported again on real tensors: an export remembered with another program (a local module the
    file imports, edited since) is not the one under test."""
    from solar_assets.translate import export_memo
    from solar_assets.translate.torch_tracer import export_graph, lower_exported
    from solar_assets.workloads.in_forward import attributes_to_buffers
    from solar_assets.workloads import load_torch_workload

    w = load_torch_workload(src, dict(constants) if constants else None)
    remembered = export_memo.recall(src.path, src.sha256, constants)
    if remembered is not None and under_test is not None and (remembered.program is under_test
                                                               or remembered.program == under_test):
        ep = export_memo.with_real_state(remembered.ep, w.model)
    else:
        ep = None
    if ep is not None:  # the translation's own export and lowering, on this model's real values
        log.debug("%s: node-wise pass on the translation's export", src.name)
        program, values = remembered.program, dict(remembered.values)
    else:  # the model prepared as the translation's export prepared it (``torch_tracer.load_and_export``)
        attributes_to_buffers(w.model)
        ep = export_graph(w.model, w.inputs, src.path)
        values = {}
        program = lower_exported(ep, src.name, src.path, values=values)
    output = next(n for n in ep.graph.nodes if n.op == "output")
    for name, arg in zip(program.outputs, output.args[0]):
        values.setdefault(name, arg.name)
    return ep, list(w.inputs), program, values


def validate_nodewise(src: WorkloadSource, translation: Translation, *, points: int = POINTS,
                      budget_bytes: int | None = None, make_checker: MakeChecker | None = None,
                      constants: Mapping[str, int] | None = None) -> ValidationResult:
    """Check ``translation``'s IR op group by op group on one full-size forward pass of ``src``
    (module docstring), or on one pass with ``constants`` rebound, ``translation`` then being the
    tracer's IR at that size (``chain.stages.retrace``: the full-size IR's structure, checked).
    Raises ``CaptureTooBig`` (with the sizes) when that pass does not fit ``budget_bytes``
    (default ``capture.capture_budget()``), ``NodewiseError`` when the IR is not the tracer's
    lowering of the file. ``make_checker``: where the groups are evaluated and compared
    (``MakeChecker``; default in this process)."""
    from solar_assets.golden.capture import CaptureTooBig, capture_budget, estimate_capture, gib, run_capture

    from solar_assets.ir import check_program

    start = time.perf_counter()
    check_program(translation.program, str(src.path))  # an out-of-range subscript is refused, not sampled past
    budget = capture_budget() if budget_bytes is None else budget_bytes
    held = _declared_bytes(translation.program, ("input", "weight"))
    at = f"at {size_label(constants)}" if constants else "at the file's own size"
    if held > budget:  # refused before the model is built for real: its weights alone are too big
        raise CaptureTooBig(f"{src.path}: one forward pass {at} needs at least {gib(held)} for "
                            f"its inputs and weights, over the node-wise capture budget of {gib(budget)} (set "
                            f"$SOLAR_NODEWISE_BYTES)")
    if src.framework == "jax":
        if constants:
            raise NodewiseError(f"{src.path}: node-wise validation of a JAX workload runs at the file's own size only")
        from solar_assets.validate.nodewise_jax import validate_nodewise_jax

        return validate_nodewise_jax(src, translation, points=points, make_checker=make_checker)
    ep, inputs, lowered, value_of = relower_with_values(src, constants, translation.program)
    program = translation.program
    require_tracer_frame(src, translation, lowered, "its export")
    order = {n.name: i for i, n in enumerate(ep.graph.nodes)}
    plan = _plan(program, value_of, order)
    estimate = estimate_capture(ep, plan.extra)
    if estimate.total_bytes > budget:
        raise CaptureTooBig(f"{src.path}: one forward pass {at} needs {estimate}, over the "
                            f"node-wise capture budget of {gib(budget)} (set $SOLAR_NODEWISE_BYTES)")
    # float32 programs: the pass in float64 where it fits (at most twice the bytes), so each op group
    # is held to float64 rounding, as whole-program validation holds the IR to its float64 golden
    reference64 = FLOAT64_REFERENCE and not narrow_storage(program) and 2 * estimate.total_bytes <= budget
    if not reference64:  # a float32 pass: each op's inputs held to its check, for a float64 recompute there
        kept = _with_op_inputs(ep, plan.extra, plan.check_at)
        if estimate_capture(ep, kept).total_bytes <= budget:
            plan.extra = kept
    checker = (make_checker or _Checker)(program, value_of, plan, order, str(src.path), points, reference64)
    seconds = run_capture(ep, inputs, checker.on_node, plan.extra, float64=reference64)
    one_pass = f"one forward pass {at}" if constants else "one full-size forward pass"
    note = (f"node-wise: {len(plan.groups)} op groups on {one_pass} "
            f"{'in float64 ' if reference64 else ''}({seconds:.2f} s, {estimate}); {checker.exact} tensors checked "
            f"at every point, {checker.sampled} at up to {points} sampled points, {checker.evaluations:.3g} point "
            f"evaluations")
    log.info("%s: %s", src.name, note)
    return checker.result(note, start)
