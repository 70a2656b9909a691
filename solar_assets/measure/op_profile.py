"""The framework ops a run called, per iteration, from a Chrome trace written by ``torch.profiler``.

A per-op comparison needs what the user's code called — ``aten::linear``, not the ``aten::addmm``
and ``aten::t`` it runs inside — and how long each call took. Both come from the trace every
``torch.profiler`` user can export (``prof.export_chrome_trace``), so a trace from the user's own
run (a GPU run included) and one solar records itself (``profile_torch``) are read by one reader:

* a **call** is a ``cpu_op`` event that no other ``cpu_op`` event of its thread encloses;
* its **host time** is the event's duration (its callees included);
* its **device time**, when the trace holds device kernels, is the sum of the kernels launched
  inside it: a kernel's ``correlation`` names the runtime launch (``cudaLaunchKernel``…) that the
  call encloses;
* the **iterations** are the ``solar.iteration`` or ``ProfilerStep#N`` annotations, else each
  outermost ``nn.Module`` call (traces recorded ``with_stack=True``), else the whole trace.

The calls are read from the thread with the most top-level op time (the one that ran the
forward), so ops of an autograd or data-loader thread do not interleave with it.
"""
from __future__ import annotations

import gzip
import json
import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from solar_assets.errors import SolarError

logger = logging.getLogger(__name__)

ITERATION = "solar.iteration"
_STEP = re.compile(r"ProfilerStep#\d+$")
_MODULE = "nn.Module: "
_OP_CATEGORIES = {"cpu_op", "operator"}
_RUNTIME_CATEGORIES = {"cuda_runtime", "cuda_driver", "runtime"}
_DEVICE_CATEGORIES = {"kernel", "gpu_memcpy", "gpu_memset"}
MAX_TRACE_BYTES = 2 << 30
"""The largest trace read (a profile of a few iterations of a large model is some hundred MiB)."""


class ProfileError(SolarError):
    """A trace that cannot be read as a torch.profiler Chrome trace; the message names the file."""


@dataclass(frozen=True)
class ProfiledCall:
    """One call of the user's code as the profile saw it."""

    name: str  # as the profiler names it: "aten::linear"
    host_s: float  # the call's duration on its thread, callees included
    device_s: float | None = None  # the device kernels it launched, summed; None: the trace has no kernels
    modules: tuple[str, ...] = ()  # enclosing nn.Module calls, outermost first ("Model", "Linear")
    input_dims: tuple = ()

    @property
    def time_s(self) -> float:
        """What the call cost: its kernels' time where the trace has device kernels, else its host time."""
        return self.device_s if self.device_s is not None else self.host_s


@dataclass
class Profile:
    """The calls of every iteration, in the order they ran."""

    iterations: list[list[ProfiledCall]]
    device: bool  # the times are device kernel times
    source: str  # the trace file, or what recorded it
    notes: list[str] = field(default_factory=list)


def read_trace(path: str | Path) -> dict:
    """A Chrome trace (``.json`` or ``.json.gz``) as its JSON object."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_TRACE_BYTES:
            raise ProfileError(f"{path}: over {MAX_TRACE_BYTES >> 30} GiB: not a trace solar reads")
        raw = path.read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        data = json.loads(raw.decode("utf-8"))
    except OSError as e:
        raise ProfileError(f"{path}: cannot read the trace: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ProfileError(f"{path}: the trace is not UTF-8 JSON (a binary file?)") from None
    except json.JSONDecodeError as e:
        raise ProfileError(f"{path}: the trace is not JSON: {e.msg} at line {e.lineno}") from None
    if isinstance(data, list):  # the Chrome trace format allows a bare array of events
        data = {"traceEvents": data}
    if not isinstance(data, dict) or not isinstance(data.get("traceEvents"), list):
        raise ProfileError(f"{path}: not a Chrome trace: no 'traceEvents' list (write one with "
                           "torch.profiler's prof.export_chrome_trace)")
    return data


def _complete_events(trace: dict) -> list[dict]:
    out = []
    for e in trace["traceEvents"]:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        ts, dur = e.get("ts"), e.get("dur")
        if isinstance(ts, (int, float)) and isinstance(dur, (int, float)) and dur >= 0:
            out.append(e)
    return out


def _category(e: dict) -> str:
    return str(e.get("cat") or "").lower()


def profile_of(trace: dict, source: str = "the trace") -> Profile:
    """The calls per iteration of ``trace`` (a Chrome trace's JSON object; ``read_trace``)."""
    events = _complete_events(trace)
    ops = [e for e in events if _category(e) in _OP_CATEGORIES]
    if not ops:
        raise ProfileError(f"{source}: the trace records no operator (cpu_op) events: was it written by "
                           "torch.profiler with ProfilerActivity.CPU?")
    threads: dict[tuple, list[dict]] = {}
    for e in events:
        if _category(e) in _DEVICE_CATEGORIES:
            continue
        threads.setdefault((e.get("pid"), e.get("tid")), []).append(e)
    walks = {key: _walk(evs) for key, evs in threads.items()}
    main = max(walks, key=lambda k: sum(c["dur"] for c in walks[k].calls))
    walk = walks[main]
    kernels = [e for e in events if _category(e) in _DEVICE_CATEGORIES]
    device_of: dict[int, float] = {}
    for k in kernels:
        corr = (k.get("args") or {}).get("correlation")
        call = walk.launches.get(corr)
        if call is not None:
            device_of[call] = device_of.get(call, 0.0) + float(k["dur"]) * 1e-6
    device = bool(kernels)
    notes = []
    if device:
        unlinked = sum(1 for k in kernels if (k.get("args") or {}).get("correlation") not in walk.launches)
        if unlinked:
            notes.append(f"{unlinked} of {len(kernels)} device kernels were launched outside the profiled calls "
                         "(another thread, or before the trace's first call): not attributed to an op")
    calls = [ProfiledCall(name=str(c["name"]), host_s=float(c["dur"]) * 1e-6,
                          device_s=(device_of.get(i, 0.0) if device else None), modules=tuple(c["modules"]),
                          input_dims=tuple(map(_dims, (c.get("args") or {}).get("Input Dims") or ())))
             for i, c in enumerate(walk.calls)]
    iterations, how = _iterations(walk, calls)
    if how:
        notes.append(how)
    return Profile(iterations=iterations, device=device, source=source, notes=notes)


def _dims(d: object) -> tuple:
    return tuple(d) if isinstance(d, list) else ()


@dataclass
class _Walk:
    calls: list[dict] = field(default_factory=list)  # top-level cpu_op events, each with "modules"
    call_span: list[tuple[float, float]] = field(default_factory=list)
    launches: dict[object, int] = field(default_factory=dict)  # runtime correlation -> call index
    marks: list[tuple[float, float]] = field(default_factory=list)  # iteration annotations
    modules: list[tuple[float, float]] = field(default_factory=list)  # outermost nn.Module calls


def _walk(events: list[dict]) -> _Walk:
    """One thread's events nested by time: its top-level calls, what each launched, the marks."""
    out = _Walk()
    stack: list[tuple[float, dict, int | None]] = []  # (end, event, index of the top-level call it is in)
    for e in sorted(events, key=lambda e: (e["ts"], -e["dur"])):
        start, end = float(e["ts"]), float(e["ts"]) + float(e["dur"])
        while stack and stack[-1][0] <= start:
            stack.pop()
        call = next((c for _, _, c in reversed(stack) if c is not None), None)
        cat, name = _category(e), str(e.get("name", ""))
        if cat in _OP_CATEGORIES and call is None:
            modules = [str(s[1]["name"])[len(_MODULE):] for s in stack
                       if _category(s[1]) == "python_function" and str(s[1].get("name", "")).startswith(_MODULE)]
            out.calls.append({**e, "modules": [m.rsplit("_", 1)[0] for m in modules]})
            out.call_span.append((start, end))
            call = len(out.calls) - 1
        elif cat in _RUNTIME_CATEGORIES and call is not None:
            corr = (e.get("args") or {}).get("correlation")
            if corr is not None:
                out.launches[corr] = call
        elif cat == "user_annotation" and (name == ITERATION or _STEP.match(name)):
            out.marks.append((start, end))
        elif cat == "python_function" and name.startswith(_MODULE) and \
                not any(str(s[1].get("name", "")).startswith(_MODULE) for s in stack):
            out.modules.append((start, end))
        stack.append((end, e, call if cat in _OP_CATEGORIES else None))
    return out


def _iterations(walk: _Walk, calls: list[ProfiledCall]) -> tuple[list[list[ProfiledCall]], str]:
    """The calls split by iteration marks, else by the outermost module calls, else one iteration."""
    for spans, what in ((walk.marks, ""), (walk.modules, "")):
        if spans:
            groups = [[c for c, (s, e) in zip(calls, walk.call_span) if lo <= s and e <= hi] for lo, hi in sorted(spans)]
            groups = [g for g in groups if g]
            if groups:
                return groups, what
    return [calls], ("the trace marks no iteration (no ProfilerStep#N or solar.iteration annotation, no nn.Module "
                     "events): read as one iteration")


# ---------------------------------------------------------------------------- solar's own profile
def profile_torch(model: Callable[..., object], inputs: Iterable[object], iterations: int = 10, warmup: int = 3,
                  flush: Callable[[], None] | None = None, trace_file: str | Path | None = None) -> Profile:
    """Run ``model(*inputs)`` ``iterations`` times under ``torch.profiler`` (CUDA activity too when
    a GPU is present), each in a ``solar.iteration`` annotation and after ``flush`` (outside it), as
    the workload-level measurement runs; the exported trace is read back by ``profile_of``, so
    solar's profile and a user's are one format. ``trace_file``: keep the trace there."""
    import tempfile

    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    inputs = list(inputs)
    flush = flush or (lambda: None)
    activities = [ProfilerActivity.CPU]
    cuda = torch.cuda.is_available()
    if cuda:
        activities.append(ProfilerActivity.CUDA)
    with torch.no_grad():
        for _ in range(warmup):
            flush()
            model(*inputs)
        if cuda:
            torch.cuda.synchronize()
        with profile(activities=activities) as prof:
            for _ in range(iterations):
                flush()
                with record_function(ITERATION):
                    model(*inputs)
                    if cuda:
                        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory(prefix="solar-profile-") as tmp:
        path = Path(trace_file) if trace_file else Path(tmp) / "trace.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        prof.export_chrome_trace(str(path))
        return profile_of(read_trace(path), source=str(path) if trace_file else "torch.profiler on this host")
