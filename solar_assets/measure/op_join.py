"""Join a profile's calls with the per-op SOL: each call of the user's code, measured, against its bound.

The IR knows each op's call (``Origin.call``: ``linear_1`` for the ``permute`` and ``addmm`` an
``nn.Linear`` became), and the profile the calls the run made (``op_profile``), in the order both
ran. Per iteration, the two sequences of op names are aligned (``difflib``'s longest matching
blocks: a call the tracer dropped or the framework added leaves the rest in step), and a matched
call's time is one sample of that call. Nothing is dropped silently:

* a call of the profile with no IR call is listed as **in the profile, not the IR** (an allocator
  call, a copy or a no-op the export removed), with its time;
* an IR call that moves data but matched no profile call is listed as **not attributed**, with why.

The audit per call: ``sol_s`` (the per-op rows' unfused time: every tensor crossing DRAM once) is
what an eager kernel at the roofline would take, but not a bound in context — the previous op may
leave its inputs in cache. ``floor_s`` is: the call's compute at peak, and its tensors' bytes beyond
twice the on-chip buffer at DRAM bandwidth (at most a buffer's worth can be cached before the call
and a buffer's worth left cached after it). A fastest run below ``floor_s`` is a **violation**; one
between the two is listed as explained.
"""
from __future__ import annotations

import difflib
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ir_schemas import MeasuredOpRow, PerOpRow
from solar_assets.measure.op_profile import Profile
from solar_assets.report.per_op import op_key


@dataclass(frozen=True)
class IRCall:
    """One call of the user's code as the IR has it: its op and the per-op rows it became."""

    name: str  # Origin.call ("linear_1"), or the node without one
    op: str  # Origin.call_op ("aten.linear.default")
    label: str  # "linear#2"
    rows: tuple[PerOpRow, ...] = ()  # its per-op rows on one hardware; none for a view


@dataclass
class OpJoin:
    """The joined rows of one workload × backend on one hardware, and what did not join."""

    workload: str
    hardware: str
    backend: str
    rows: list[MeasuredOpRow] = field(default_factory=list)
    profile_only: list[str] = field(default_factory=list)  # calls in the profile, not the IR
    not_attributed: list[str] = field(default_factory=list)  # IR calls with no profile call
    notes: list[str] = field(default_factory=list)
    iterations: int = 0
    profile_total_s: float = 0.0  # median over iterations of the sum of every profiled call's time

    @property
    def violations(self) -> list[MeasuredOpRow]:
        return [r for r in self.rows if r.violation]

    @property
    def measured_total_s(self) -> float:
        return sum(r.measured_s for r in self.rows)

    def to_dict(self) -> dict:
        return {"workload": self.workload, "hardware": self.hardware, "backend": self.backend,
                "iterations": self.iterations, "rows": [r.to_dict() for r in self.rows],
                "violations": len(self.violations), "profile_only": self.profile_only,
                "not_attributed": self.not_attributed, "notes": self.notes}


def ir_calls(graph, rows: Sequence[PerOpRow]) -> list[IRCall]:
    """The user's calls in program order (views included: the profile has them too), each with its
    per-op rows (``rows``: one hardware's)."""
    from solar_assets.graph.op_groups import op_groups
    from solar_assets.report.per_op import call_labels, call_of

    groups = op_groups(graph)
    labels = call_labels(groups)
    by_node: dict[str, list[PerOpRow]] = {}
    for r in rows:
        by_node.setdefault(r.node, []).append(r)
    calls: dict[str, list] = {}
    for g in groups:
        if g.origin is None:
            name, op = g.key, ""
        else:
            name, op = call_of(g.origin)
        entry = calls.setdefault(name, [op, labels[g.key], []])
        entry[2] += by_node.get(g.key, [])
    return [IRCall(name, op, label, tuple(rs)) for name, (op, label, rs) in calls.items()]


def align(ir: Sequence[IRCall], profiled: Sequence) -> list[tuple[int, int]]:
    """(IR index, profile index) of the calls that match, in order."""
    a = [op_key(c.op or c.name) for c in ir]
    b = [op_key(p.name) for p in profiled]
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    return [(i + k, j + k) for i, j, n in matcher.get_matching_blocks() for k in range(n)]


def floor_s(rows: Sequence[PerOpRow], onchip_bytes: int, dram_bytes_per_s: float) -> float:
    """What no run of the call beats: max(its compute at peak, its DRAM bytes beyond twice the
    on-chip buffer / bandwidth). Tensors each op reads or writes once: ``bytes``."""
    compute = sum(r.compute_s for r in rows)
    traffic = max(0, sum(r.bytes for r in rows) - 2 * int(onchip_bytes))
    return max(compute, traffic / dram_bytes_per_s if dram_bytes_per_s > 0 else 0.0)


def join_profile(workload: str, hardware: str, backend: str, calls: Sequence[IRCall], profile: Profile,
                 onchip_bytes: int, dram_bytes_per_s: float) -> OpJoin:
    """Each IR call's samples over the profile's iterations, its statistics and its audit."""
    out = OpJoin(workload, hardware, backend, notes=list(profile.notes), iterations=len(profile.iterations))
    samples: dict[int, list[float]] = {}
    extra: dict[str, list[float]] = {}
    totals = []
    for calls_run in profile.iterations:
        totals.append(sum(c.time_s for c in calls_run))
        matched = align(calls, calls_run)
        used = set()
        for i, j in matched:
            samples.setdefault(i, []).append(calls_run[j].time_s)
            used.add(j)
        for j, c in enumerate(calls_run):
            if j not in used:
                extra.setdefault(c.name, []).append(c.time_s)
    out.profile_total_s = float(np.median(totals)) if totals else 0.0
    n_iter = max(len(profile.iterations), 1)
    for name, times in sorted(extra.items(), key=lambda kv: -sum(kv[1])):
        view = " (a view: no kernel)" if _is_torch_view(name) else ""
        out.profile_only.append(f"{name}{view}: {len(times) / n_iter:.3g} call(s), "
                                f"{_fmt(sum(times) / n_iter)} per iteration")
    joined = []
    for i, call in enumerate(calls):
        times = samples.get(i, [])
        moves = [r for r in call.rows if r.bytes or r.flops]
        if not times:
            if moves:
                out.not_attributed.append(
                    f"{call.label} ({' + '.join(r.label for r in moves)}): no {op_key(call.op or call.name)} call in "
                    "the profile at its place in the program")
            continue
        if not moves:
            continue  # a view: no kernel, its time is the framework's bookkeeping
        joined.append(_row(workload, hardware, backend, call, moves, times, onchip_bytes, dram_bytes_per_s,
                           profile.device))
    if calls and not samples:
        out.notes.append("no call of the IR matched the profile: is it a profile of this workload?")
    joined.sort(key=lambda r: -r.recoverable_s)
    out.rows = [r.model_copy(update={"rank": k}) for k, r in enumerate(joined, 1)]
    partial = [r for r in out.rows if r.runs < n_iter]
    if partial:
        out.notes.append(f"{len(partial)} call(s) matched in fewer than all {n_iter} iterations: "
                         + ", ".join(f"{r.call} ({r.runs})" for r in partial[:5]))
    return out


def _row(workload: str, hardware: str, backend: str, call: IRCall, rows: Sequence[PerOpRow], times: list[float],
         onchip_bytes: int, dram_bytes_per_s: float, device: bool) -> MeasuredOpRow:
    t = np.asarray(times, dtype=float)
    median, fastest = float(np.median(t)), float(t.min())
    sol = sum(r.time_s for r in rows)
    floor = floor_s(rows, onchip_bytes, dram_bytes_per_s)
    violation = fastest < floor
    audit = ""
    if violation:
        audit = (f"VIOLATION: fastest run {_fmt(fastest)} < floor {_fmt(floor)} (compute at peak, and the bytes "
                 "beyond twice the on-chip buffer at DRAM bandwidth)")
    elif fastest < sol:
        audit = (f"below the per-op SOL {_fmt(sol)} (every tensor from DRAM) but not its floor {_fmt(floor)}: "
                 "its tensors may be cached from the op before")
    first = rows[0]
    return MeasuredOpRow(
        workload=workload, hardware=hardware, backend=backend, rank=0, call=call.label,
        op=call.op or call.name, module=first.module, module_class=first.module_class, source=first.source,
        ir_ops="+".join(r.label for r in rows), sol_s=sol, floor_s=floor, measured_s=median,
        p10_s=float(np.percentile(t, 10)), p90_s=float(np.percentile(t, 90)), min_s=fastest, runs=len(times),
        device_time=device, headroom=median / sol if sol > 0 else None,
        pct_of_sol=100 * sol / median if median > 0 and sol > 0 else None, recoverable_s=median - sol,
        violation=violation, audit=audit)


def with_measured_rows(rows: Sequence[PerOpRow], joins: Sequence[OpJoin]) -> list[PerOpRow]:
    """The per-op rows with the measured fields of their call where the call is that row alone
    (a call of several rows keeps its figures on the call: ``OpJoin.rows``)."""
    one = {(j.workload, j.hardware, r.ir_ops): r for j in joins for r in j.rows if "+" not in r.ir_ops}
    out = []
    for r in rows:
        m = one.get((r.workload, r.hardware, r.label))
        out.append(r if m is None else r.model_copy(update={
            "measured_s": m.measured_s, "headroom": m.measured_s / r.time_s if r.time_s > 0 else None,
            "pct_of_sol": 100 * r.time_s / m.measured_s if m.measured_s > 0 else None}))
    return out


def _is_torch_view(name: str) -> bool:
    """Whether a profiled ``aten::`` call only re-views its input (every overload's schema says so);
    asked only when torch is already loaded (a torch profile's workload loaded it)."""
    torch = sys.modules.get("torch")
    if torch is None or not name.startswith("aten::"):
        return False
    try:
        packet = getattr(torch.ops.aten, name[len("aten::"):])
        overloads = [getattr(packet, o) for o in packet.overloads()]
    except (AttributeError, RuntimeError):
        return False
    return bool(overloads) and all(getattr(o, "is_view", False) for o in overloads)


def _fmt(seconds: float) -> str:
    from solar_assets.report.table import format_seconds

    return format_seconds(seconds) if math.isfinite(seconds) else str(seconds)
