"""Join a measurement file (``gpu_runner``) with a bounds file (``solar analyze --json``): headroom
per mode and the violation audit, for runs made on another machine.

The bounds file may be what ``solar analyze --json`` prints (a bare JSON list of report rows, or a
document ``{"schema_version"|"schema": ..., "rows": [...], "failures": [...]}``) or a run's
``report.json`` (``ir_schemas/report_document.py``); only its rows are read. A measurement joins the
row with the same workload (the file stem) on the same hardware (``--hardware``, else the
measurement's ``device.hardware``); where several rows share the stem, the one whose ``source``
shares the longest path tail with the measured file.

Headroom is a backend's median run over a bound, per mode: unfused, fused, the best modelled
cache-aware schedule (``sol_cache_aware_s``) and the cache-aware lower bound
(``sol_cache_aware_lb_s``). The audit is ``solar_assets.measure.audit.audit``, unchanged: a
violation is a backend's fastest run below a provable bound (fused, or the cache-aware lower
bound), listed with both figures and never clamped; a run below unfused or the modelled schedule
is listed as explained.
"""
from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ir_schemas import ReportRow
from solar_assets.errors import SolarError
from solar_assets.measure.audit import audit
from solar_assets.measure.runtime import Timing

MEASUREMENT_SCHEMA = "solar.gpu_measurement.v1"


class JoinError(SolarError):
    """A bounds or measurement file that cannot be read; the message names the file."""


@dataclass(frozen=True)
class HeadroomRow:
    """One workload × hardware × backend: the measured run against each bound."""

    workload: str
    source: str
    hardware: str
    backend: str
    label: str
    median_s: float
    p10_s: float
    p90_s: float
    min_s: float
    runs: int
    sol_unfused_s: float
    sol_fused_s: float
    sol_cache_aware_s: float | None
    sol_cache_aware_lb_s: float | None
    headroom_unfused: float | None
    headroom_fused: float | None
    headroom_cache_aware: float | None
    headroom_cache_aware_lb: float | None
    violation: bool
    audit: tuple[str, ...] = ()

    def as_dict(self) -> dict:
        d = asdict(self)
        d["audit"] = "; ".join(self.audit)
        return d


@dataclass
class Join:
    """The joined rows, and what did not join (one line each)."""

    rows: list[HeadroomRow] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # backends that did not run, with the runner's reason
    unmatched: list[str] = field(default_factory=list)  # measured workloads with no bounds row
    unmeasured: list[str] = field(default_factory=list)  # bounds rows (on this hardware) with no measurement
    notes: list[str] = field(default_factory=list)  # what the reader must know about the comparison
    hardware: str = ""
    device: dict = field(default_factory=dict)

    @property
    def violations(self) -> list[HeadroomRow]:
        return [r for r in self.rows if r.violation]

    def to_dict(self) -> dict:
        return {"hardware": self.hardware, "device": self.device, "rows": [r.as_dict() for r in self.rows],
                "violations": sum(r.violation for r in self.rows), "skipped": self.skipped,
                "unmatched": self.unmatched, "unmeasured": self.unmeasured, "notes": self.notes}


MAX_FILE_BYTES = 256 << 20
"""The largest bounds or measurement file read (a report of thousands of rows is a few MiB)."""


def _read_json(path: Path, what: str) -> object:
    try:
        if Path(path).stat().st_size > MAX_FILE_BYTES:
            raise JoinError(f"{path}: the {what} is over {MAX_FILE_BYTES >> 20} MiB: not a {what}")
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise JoinError(f"{path}: cannot read the {what}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise JoinError(f"{path}: the {what} is not UTF-8 text (a binary file?)") from None
    except json.JSONDecodeError as e:
        raise JoinError(f"{path}: the {what} is not JSON: {e.msg} at line {e.lineno}") from None
    except RecursionError:
        raise JoinError(f"{path}: the {what} nests arrays or objects too deeply to be one") from None


def _seconds(value: object, where: str) -> float:
    """A time in seconds: a finite, positive number, else a ``JoinError`` naming where it is."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise JoinError(f"{where} is {value!r}, not a number of seconds")
    if not math.isfinite(value) or value <= 0:
        raise JoinError(f"{where} is {value!r}: a time must be a finite, positive number of seconds")
    return float(value)


def check_timing(t: object, where: str) -> dict:
    """A measurement file's ``timings`` entry that ran, its figures checked (``_seconds``)."""
    if not isinstance(t, dict):
        raise JoinError(f"{where} is not an object")
    if not isinstance(t.get("backend"), str) or not t["backend"]:
        raise JoinError(f"{where}: backend is {t.get('backend')!r}, not a backend's name")
    times = t.get("times_s")
    if not isinstance(times, list):
        raise JoinError(f"{where}: times_s is {times!r}, not a list of seconds")
    for i, x in enumerate(times):
        _seconds(x, f"{where}: times_s[{i}]")
    for key in ("median_s", "p10_s", "p90_s"):
        if t.get(key) is not None:
            _seconds(t[key], f"{where}: {key}")
    return t


def check_bounds(row: ReportRow, where: str) -> ReportRow:
    """A bounds row a measurement is judged against: its provable bounds finite and positive (a
    NaN or negative bound would make every run pass the audit)."""
    for key in ("sol_unfused_s", "sol_fused_s"):
        value = getattr(row, key)
        if not (math.isfinite(value) and value > 0):
            raise JoinError(f"{where}: {key} is {value!r}: a bound must be a finite, positive number of seconds")
    lb = row.sol_cache_aware_lb_s
    if lb is not None and not (math.isfinite(lb) and lb > 0):
        raise JoinError(f"{where}: sol_cache_aware_lb_s is {lb!r}: a bound must be a finite, positive number "
                        "of seconds")
    return row


def load_bounds(path: Path) -> list[ReportRow]:
    """The report rows of a bounds file: a list of rows, or a document with ``rows``."""
    data = _read_json(path, "bounds file")
    rows = data.get("rows") if isinstance(data, dict) else data
    if not isinstance(rows, list):
        raise JoinError(f"{path}: not a bounds file: expected a JSON list of report rows or an object with "
                        "'rows' (what `solar analyze --json` writes, or report.json)")
    out = []
    for i, row in enumerate(rows):
        try:
            out.append(ReportRow.model_validate(_finite(row)))
        except ValueError as e:
            first = str(e).splitlines()
            raise JoinError(f"{path}: row {i} is not a report row: {first[1] if len(first) > 1 else first[0]}") \
                from None
    return out


def _finite(row: object) -> object:
    """report.json writes a non-finite figure as null (its ``nonfinite_note`` says which): read it
    back as NaN, so a row with one is still a row (and fails no comparison by accident)."""
    if not isinstance(row, dict):
        return row
    fields = ReportRow.model_fields
    return {k: (math.nan if v is None and k in fields and fields[k].annotation is float else v)
            for k, v in row.items()}


def load_measurements(path: Path) -> dict:
    data = _read_json(path, "measurement file")
    if not isinstance(data, dict) or data.get("schema") != MEASUREMENT_SCHEMA:
        raise JoinError(f"{path}: not a measurement file (schema {MEASUREMENT_SCHEMA!r}, written by "
                        "solar_assets/measure/gpu_runner.py)")
    if not isinstance(data.get("workloads"), list):
        raise JoinError(f"{path}: 'workloads' is missing or not a list")
    return data


def _tail_match(a: str, b: str) -> int:
    """How many trailing path components ``a`` and ``b`` share."""
    pa, pb = Path(a).parts[::-1], Path(b).parts[::-1]
    n = 0
    while n < min(len(pa), len(pb)) and pa[n] == pb[n]:
        n += 1
    return n


def _ratio(measured: float, bound: float | None) -> float | None:
    if bound is None or not bound > 0 or not math.isfinite(bound):
        return None
    return measured / bound


def match_row(rows: Sequence[ReportRow], workload: str, path: str) -> ReportRow | None:
    candidates = [r for r in rows if r.workload == workload]
    if not candidates:
        return None
    return max(candidates, key=lambda r: _tail_match(r.source, path))


def join(bounds: Sequence[ReportRow], measurements: dict, hardware: str | None = None,
         source: str = "the measurement file") -> Join:
    """Headroom and the audit for every measured backend that ran, on ``hardware``."""
    device = measurements.get("device") or {}
    hardware = hardware or device.get("hardware")
    if not hardware:
        raise JoinError("the measurement file names no hardware spec for its device: give --hardware "
                        f"(e.g. H200 for a {device.get('name', 'GPU')})")
    from solar_assets.hardware import canonical_hardware_name

    hardware = canonical_hardware_name(hardware)
    on_hw = [r for r in bounds if r.hardware.lower() == hardware.lower()]
    result = Join(hardware=hardware, device=device)
    if not on_hw:
        have = sorted({r.hardware for r in bounds})
        raise JoinError(f"the bounds file has no row on {hardware} (it has: {', '.join(have) or 'no rows'})")
    measured = set()
    for k, w in enumerate(measurements["workloads"]):
        if not isinstance(w, dict):
            raise JoinError(f"{source}: workloads[{k}] is not an object")
        name, path = str(w.get("workload", "")), str(w.get("path", ""))
        row = match_row(on_hw, name, path)
        timings = w.get("timings") or []
        if not isinstance(timings, list):
            raise JoinError(f"{source}: workloads[{k}] ({name}): timings is not a list")
        if row is None:
            result.unmatched.append(f"{path or name}: no bounds row for {name!r} on {hardware}")
            continue
        measured.add(id(row))
        if w.get("error"):
            result.skipped.append(f"{name}: not loaded: {w['error']}")
        for t in timings:
            if not isinstance(t, dict):
                raise JoinError(f"{source}: workloads[{k}] ({name}): a timing is not an object")
            if t.get("status") != "ok" or not t.get("times_s"):
                result.skipped.append(f"{name}: {t.get('label', t.get('backend'))} {t.get('status')}: "
                                      f"{t.get('reason', '')}")
                continue
            check_timing(t, f"{source}: workloads[{k}] ({name}), {t.get('label') or t.get('backend')}")
            check_bounds(row, f"the bounds row of {row.workload} on {row.hardware}")
            result.rows.append(headroom_row(row, t))
    result.unmeasured = [f"{r.workload} ({r.source})" for r in on_hw if id(r) not in measured]
    result.notes += _cache_notes(on_hw, device)
    if device.get("kind") == "cpu" and hardware != "host":
        result.notes.append(f"measured on a CPU ({device.get('name')}), bounds on {hardware}: the headroom compares "
                            "two different machines")
    return result


def _cache_notes(rows: Sequence[ReportRow], device: dict) -> list[str]:
    """A device whose L2 is larger than the spec's on-chip buffer: the cache-aware figures assumed
    less on-chip storage than the chip has (the fused bound does not depend on it)."""
    l2 = device.get("l2_bytes")
    buffers = {r.onchip_buffer_bytes for r in rows if r.onchip_buffer_bytes}
    if not isinstance(l2, int) or not buffers or l2 <= min(buffers):
        return []
    return [f"the measured device reports {l2 / 2**20:.3g} MiB of L2, more than the spec's on-chip buffer of "
            f"{min(buffers) / 2**20:.3g} MiB: its cache-aware figures assume less on-chip storage than the chip has"]


def headroom_row(row: ReportRow, t: dict) -> HeadroomRow:
    """One backend's timing (a measurement file's ``timings`` entry) against ``row``'s bounds."""
    times = tuple(float(x) for x in t["times_s"])
    timing = Timing(backend=str(t["backend"]), label=str(t.get("label") or t["backend"]), times_s=times)
    violation, clauses = audit(row, [timing])
    median = float(t["median_s"]) if t.get("median_s") is not None else timing.median_s
    lb = row.sol_cache_aware_lb_s
    return HeadroomRow(
        workload=row.workload, source=row.source, hardware=row.hardware, backend=timing.backend,
        label=timing.label, median_s=median, p10_s=float(t.get("p10_s") or timing.p10_s),
        p90_s=float(t.get("p90_s") or timing.p90_s), min_s=timing.min_s, runs=len(times),
        sol_unfused_s=row.sol_unfused_s, sol_fused_s=row.sol_fused_s, sol_cache_aware_s=row.sol_cache_aware_s,
        sol_cache_aware_lb_s=lb, headroom_unfused=_ratio(median, row.sol_unfused_s),
        headroom_fused=_ratio(median, row.sol_fused_s), headroom_cache_aware=_ratio(median, row.sol_cache_aware_s),
        headroom_cache_aware_lb=_ratio(median, lb), violation=violation, audit=tuple(clauses))


def join_files(bounds: Path, measurements: Path, hardware: str | None = None) -> Join:
    return join(load_bounds(bounds), load_measurements(measurements), hardware, source=str(measurements))


def format_join(result: Join) -> str:
    """The headroom table (one line per workload × backend), then the audit."""
    from solar_assets.report.table import format_seconds

    def x(v: float | None) -> str:
        return f"{v:.3g}×" if v is not None else "-"

    header = ("workload", "backend", "median", "p10–p90", "fused SOL", "× unfused", "× fused", "× cache-aware",
              "× ca lower")
    lines = [header]
    for r in result.rows:
        lines.append((r.workload, r.label, format_seconds(r.median_s),
                      f"{format_seconds(r.p10_s)}–{format_seconds(r.p90_s)}", format_seconds(r.sol_fused_s),
                      x(r.headroom_unfused), x(r.headroom_fused), x(r.headroom_cache_aware),
                      x(r.headroom_cache_aware_lb)))
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(header))]
    text = ["  ".join(f"{c:<{w}}" for c, w in zip(line, widths)).rstrip() for line in lines]
    name = result.device.get("name") or result.device.get("kind") or "?"
    out = [f"Headroom on {result.hardware} ({name}): measured median / SOL; audit: fastest run against each bound",
           *text]
    violations = result.violations
    out.append(f"\n{len(violations)} violation(s) of a true lower bound" + (":" if violations else "."))
    for r in violations:
        out += [f"  {r.workload}: {c}" for c in r.audit if c.startswith("VIOLATION")]
    explained = [(r, c) for r in result.rows for c in r.audit if not c.startswith("VIOLATION")]
    if explained:
        out.append(f"{len(explained)} run(s) below a bound that is not a lower bound of every schedule (explained):")
        out += [f"  {r.workload}: {c}" for r, c in explained]
    for title, items in (("note", result.notes), ("not timed", result.skipped), ("no bounds row", result.unmatched),
                         ("no measurement", result.unmeasured)):
        if items:
            out.append(f"{title} ({len(items)}):")
            out += [f"  {line}" for line in items]
    return "\n".join(out)
