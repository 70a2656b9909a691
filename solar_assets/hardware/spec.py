"""Accelerator specs: the peaks and capacities every bound divides by.

A bound is only as trustworthy as the figures under it, so a spec is strict: SI base units
in the field names, dense peaks only, a cited source, and a load that refuses anything it
does not understand (unknown keys, wrong types, non-positive or non-finite figures, figures
outside a plausible range, hex or octal integers, duplicate keys) with a message naming the
file and the dotted field, instead of guessing. A figure off by a unit prefix (``3.35`` meant
as TB/s) is refused with the figure it probably meant.

Peaks are listed per unit: ``matrix`` (tensor cores, AMX: what runs a contraction) and
``vector`` (CUDA cores, SIMD: everything else), per dtype, each with its source in
``peak_sources``; ``solar_assets.bounds.units`` picks a node's unit.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
from pathlib import Path
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

from solar_assets.errors import SolarError

logger = logging.getLogger(__name__)

DType = Literal["fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "fp4", "int8"]
DTYPES: tuple[str, ...] = get_args(DType)

# Framework spellings -> spec keys. Workloads name dtypes the way torch and numpy print
# them; the spec uses the short names datasheets use.
DTYPE_ALIASES: dict[str, str] = {
    "float64": "fp64",
    "double": "fp64",
    "float32": "fp32",
    "float": "fp32",
    "float16": "fp16",
    "half": "fp16",
    "bfloat16": "bf16",
    "int8": "int8",
    "qint8": "int8",
}

HARDWARE_DIR_ENV = "SOLAR_HARDWARE_DIR"

NonEmptyStr = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class HardwareError(SolarError, ValueError):
    """A hardware spec that cannot be used; the message names the file and the field."""


# ---------------------------------------------------------------------------- plausibility
@dataclass(frozen=True)
class Plausible:
    """The range a figure of one kind must fall in, and how to guess a unit slip outside it.

    The ranges are wide (a Raspberry Pi to a rack-scale part) so that a real part is never
    refused, yet catch a figure typed in TB/s, TFLOP/s, GHz or GiB. ``prefixes`` are the unit
    scales a person may have typed the figure in (``3.35`` for TB/s); the hint names the one
    that lands closest to ``typical`` (log scale) inside the range.
    """

    what: str
    low: float
    high: float | None
    typical: float
    prefixes: tuple[tuple[str, float], ...]

    def check(self, value: float) -> float:
        if value >= self.low and (self.high is None or value <= self.high):
            return value
        span = f"{self.low:.0e} to {self.high:.0e}" if self.high is not None else f"at least {self.low:g}"
        message = f"{value!r} is outside the plausible range for {self.what} ({span})"
        hint = self.hint(value)
        raise ValueError(f"{message}; {hint}" if hint else message)

    def hint(self, value: float) -> str:
        """``3.35 looks like TB/s: write 3.35e+12``, or "" when no unit prefix lands in the range."""
        fits = [(unit, scale) for unit, scale in self.prefixes
                if value * scale >= self.low and (self.high is None or value * scale <= self.high)]
        if not fits:
            return ""
        unit, scale = min(fits, key=lambda f: abs(math.log10(value * f[1] / self.typical)))
        if isinstance(value, int):
            factor = f"2**{scale.bit_length() - 1}" if isinstance(scale, int) else f"{scale:g}"
            return f"{value} looks like {unit}: write {value * scale} ({value} * {factor})"
        return f"{value!r} looks like {unit}: write {_float_text(value * scale)}"


def _float_text(x: float) -> str:
    """``3.35e+12``: a float as a spec writes it (a dot and a signed exponent, read by every YAML loader)."""
    mantissa, exponent = f"{x:.6e}".split("e")
    mantissa = mantissa.rstrip("0")
    mantissa = mantissa + "0" if mantissa.endswith(".") else mantissa
    return f"{mantissa}e{int(exponent):+d}"


_DECIMAL = (("kB/s", 1e3), ("MB/s", 1e6), ("GB/s", 1e9), ("TB/s", 1e12), ("PB/s", 1e15))
# DRAM bandwidth from 1e8: a host spec measured on a busy machine can read below 1 GB/s, and
# every unit slip seen (3.35 for TB/s, 768 for GB/s) is still far below it.
BANDWIDTH = Plausible("a bandwidth in bytes/s", 1e8, 1e15, 1e12, _DECIMAL)
ONCHIP_BANDWIDTH = Plausible("an on-chip bandwidth in bytes/s", 1e9, 1e16, 1e13, _DECIMAL)
PEAK = Plausible("a peak in FLOP/s", 1e9, 1e19, 1e14,
                 (("GFLOP/s", 1e9), ("TFLOP/s", 1e12), ("PFLOP/s", 1e15)))
CLOCK = Plausible("a clock in Hz", 1e7, 1e11, 1.5e9, (("kHz", 1e3), ("MHz", 1e6), ("GHz", 1e9)))
_BINARY = (("KiB", 2**10), ("MiB", 2**20), ("GiB", 2**30), ("TiB", 2**40))
# capacities up to a rack-scale part's pooled HBM (1 PiB) and a wafer-scale chip's SRAM (128 GiB)
DRAM_CAPACITY = Plausible("a DRAM capacity in bytes", 2**10, 2**50, 2**36, _BINARY)
ONCHIP_CAPACITY = Plausible("an on-chip capacity in bytes", 2**10, 2**37, 2**25, _BINARY)


def _checked(rule: Plausible) -> AfterValidator:
    return AfterValidator(rule.check)


PositiveFinite = Annotated[float, Field(gt=0, allow_inf_nan=False)]
PeakFlops = Annotated[PositiveFinite, _checked(PEAK)]
BytesPerS = Annotated[PositiveFinite, _checked(BANDWIDTH)]
OnchipBytesPerS = Annotated[PositiveFinite, _checked(ONCHIP_BANDWIDTH)]
ClockHz = Annotated[PositiveFinite, _checked(CLOCK)]
DramBytes = Annotated[int, Field(gt=0), _checked(DRAM_CAPACITY)]
OnchipBytes = Annotated[int, Field(gt=0), _checked(ONCHIP_CAPACITY)]

Unit = Literal["matrix", "vector"]
UNITS: tuple[str, ...] = get_args(Unit)


class PeakTable(BaseModel):
    """Dense peak FLOP/s per dtype, per unit (1 MAC = 2 FLOP; never MAC/s, TFLOPS or sparse figures).

    ``matrix``: the tensor cores (or AMX), the unit a contraction (a sum of products) can run on,
    keyed by operand dtype (``tf32`` is the tensor-core path for fp32 operands). ``vector``: the
    CUDA cores / SIMD lanes that run elementwise ops, reductions and transcendentals (and IEEE
    fp32 contractions). A missing dtype is absent on purpose: the part has no such path, or no
    figure is published. ``table[dtype]`` is the single-peak view: the faster unit for that dtype.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    matrix: dict[DType, PeakFlops] = Field(default_factory=dict)
    vector: dict[DType, PeakFlops] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _units_not_dtypes(cls, data: Any) -> Any:
        if isinstance(data, dict) and (flat := [k for k in data if k in DTYPES]):
            raise ValueError(f"peaks are listed per unit: write 'matrix:' (tensor cores) and 'vector:' "
                             f"(CUDA cores / SIMD) mappings of dtype -> FLOP/s, not {', '.join(map(str, flat))} "
                             "directly (see hardware/H100_SXM.yaml)")
        return data

    @model_validator(mode="after")
    def _tf32_is_a_matrix_path(self) -> PeakTable:
        if "tf32" in self.vector:
            raise ValueError("'vector.tf32': TF32 exists only on tensor cores; list it under matrix")
        return self

    def unit(self, unit: str) -> dict[str, float]:
        return dict(self.matrix if unit == "matrix" else self.vector)

    def best(self, key: str) -> float | None:
        """The faster unit's peak for a canonical dtype key (None when neither unit has it)."""
        found = [t[key] for t in (self.matrix, self.vector) if key in t]
        return max(found) if found else None

    def dtypes(self) -> list[str]:
        return [d for d in DTYPES if d in self.matrix or d in self.vector]

    def __getitem__(self, key: str) -> float:
        value = self.best(key)
        if value is None:
            raise KeyError(key)
        return value

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.best(key) is not None

    def items(self) -> Iterator[tuple[str, float]]:
        """``("matrix.bf16", 9.895e14)``, … : every peak under its dotted field name."""
        for unit in UNITS:
            for dtype, value in self.unit(unit).items():
                yield f"{unit}.{dtype}", value


class PeakSources(BaseModel):
    """Where each peak comes from, in the same shape as ``peak_flop_per_s``."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    matrix: dict[DType, NonEmptyStr] = Field(default_factory=dict)
    vector: dict[DType, NonEmptyStr] = Field(default_factory=dict)


class HardwareSpec(BaseModel):
    """One accelerator's figures, in SI base units, as published by its vendor.

    Strict (no type coercion) so that a quoted number or a boolean in a YAML file is
    reported rather than silently converted.
    """

    model_config = ConfigDict(
        extra="forbid", frozen=True, strict=True, use_attribute_docstrings=True
    )

    name: NonEmptyStr
    """Equals the file stem, so a partition key always names the file it came from."""
    vendor: NonEmptyStr
    description: NonEmptyStr
    peak_flop_per_s: PeakTable
    """Dense peaks per unit (``matrix``, ``vector``) and dtype in FLOP/s (1 MAC = 2 FLOP)."""
    peak_sources: PeakSources
    """The source of every figure in ``peak_flop_per_s``, at the same dotted path."""
    dram_bytes_per_s: BytesPerS
    """Peak DRAM (HBM, GDDR or LPDDR) bandwidth in bytes/s, decimal as datasheets quote it."""
    dram_capacity_bytes: DramBytes
    """DRAM capacity in bytes (datasheet GB of HBM/GDDR read as GiB: the devices are binary-sized)."""
    onchip_buffer_bytes: OnchipBytes
    """Capacity of the last on-chip buffer a tiling can keep data in (L2), in bytes."""
    onchip_bytes_per_s: OnchipBytesPerS | None = None
    """On-chip buffer bandwidth in bytes/s; None where no credible figure is published."""
    shared_memory_bytes: OnchipBytes | None = None
    """All SMs' combined L1 data cache / shared memory in bytes (per-SM figure × SMs); None where
    not published. With the register files it joins the L2 in ``onchip_total_bytes``."""
    register_file_bytes: OnchipBytes | None = None
    """All SMs' register files in bytes (per-SM figure × SMs), plus any other per-SM operand store a
    schedule can keep data in (Blackwell's tensor memory); None where not published."""
    clock_hz: ClockHz | None
    """Maximum boost clock in Hz; informative only, bounds use the peaks."""
    sources: list[NonEmptyStr] = Field(min_length=1)
    """Datasheet or paper, and which table, for each figure: an unsourced figure cannot be audited."""

    @model_validator(mode="after")
    def _every_peak_sourced(self) -> HardwareSpec:
        problems = []
        for unit in UNITS:
            peaks, cited = self.peak_flop_per_s.unit(unit), getattr(self.peak_sources, unit)
            problems += [f"peak_sources.{unit}.{d}: missing (peak_flop_per_s.{unit}.{d} has no source)"
                         for d in peaks if d not in cited]
            problems += [f"peak_sources.{unit}.{d}: cites a peak peak_flop_per_s.{unit} does not list"
                         for d in cited if d not in peaks]
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @property
    def onchip_total_bytes(self) -> int:
        """Every byte of on-chip storage a schedule can hold data in: the L2 (``onchip_buffer_bytes``)
        plus shared memory / L1 and register files where the spec gives them. The provable
        cache-aware lower bound uses this (more capacity, a lower bound: the safe direction)."""
        return int(self.onchip_buffer_bytes) + int(self.shared_memory_bytes or 0) + int(self.register_file_bytes or 0)

    def peak_for(self, dtype: Any) -> float:
        """The faster unit's dense peak for a dtype as a workload names it (``torch.float32``,
        ``bfloat16``, ``fp8``…): the single-peak view; per-node bounds use ``unit_peak``.

        Raises rather than falling back to another dtype's peak: borrowing the fp32 peak for
        an fp8 GEMM would make the bound wrong by an order of magnitude without saying so.
        """
        key = self._key(dtype)
        value = self.peak_flop_per_s.best(key)
        if value is None:
            raise HardwareError(
                f"{self.name}: no peak FLOP/s for dtype {key!r} (asked as {str(dtype)!r}); "
                f"this spec has: {', '.join(self.peak_flop_per_s.dtypes())}"
            )
        return value

    def unit_peak(self, unit: str, dtype: Any) -> float | None:
        """The peak of one unit (``matrix`` or ``vector``) for a dtype; None when that unit lacks it."""
        return self.peak_flop_per_s.unit(unit).get(self._key(dtype))

    def _key(self, dtype: Any) -> str:
        key = canonical_dtype(dtype)
        if key is None:
            raise HardwareError(
                f"{self.name}: unknown dtype {str(dtype)!r}; "
                f"known: {', '.join(DTYPES)} (or torch/numpy names such as float32, bfloat16)"
            )
        return key

    def digest(self) -> str:
        """Content hash used as the Dagster data version of this hardware.

        Hashes canonical JSON of the validated figures, not the file bytes, so rewording a
        comment does not mark every bound on this hardware stale, while changing a figure does.
        """
        canonical = json.dumps(
            self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), allow_nan=False
        )
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:12]


def canonical_dtype(dtype: Any) -> str | None:
    """The spec key for a dtype spelled the torch, numpy or datasheet way; None if unknown."""
    if isinstance(dtype, type):  # numpy scalar types print as "<class 'numpy.float32'>"
        text = dtype.__name__
    elif not isinstance(dtype, str) and hasattr(dtype, "dtype"):  # arrays, tensors, jnp.float32
        text = str(dtype.dtype)
    else:
        text = str(dtype)
    text = text.strip().lower()
    for prefix in ("torch.", "numpy.", "np.", "jnp.", "jax.numpy."):
        text = text.removeprefix(prefix)
    if text in DTYPES:
        return text
    if text in DTYPE_ALIASES:
        return DTYPE_ALIASES[text]
    if text.startswith("float8"):  # float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, …
        return "fp8"
    if text.startswith("float4"):  # torch.float4_e2m1fn_x2, ml_dtypes float4_e2m1fn
        return "fp4"
    return None


SHIPPED_PACKAGE_DIR = Path(__file__).resolve().parents[1] / "_shipped" / "hardware"  # in a wheel


def shipped_hardware_dir() -> Path:
    """The specs solar ships: the repo's top-level ``hardware/`` (source checkout, editable install),
    else the copy a wheel carries as package data under ``solar_assets/_shipped/hardware/``."""
    repo = Path(__file__).resolve().parents[2] / "hardware"
    if repo.is_dir() and any(repo.glob("*.yaml")):
        return repo
    return SHIPPED_PACKAGE_DIR


def user_hardware_dir() -> Path:
    """Where the user's own specs go (``solar hardware detect`` writes here, never into the source
    tree): ``$SOLAR_HARDWARE_DIR``, else ``$SOLAR_HOME/hardware`` (``<repo>/data/solar_home/hardware``
    when SOLAR_HOME is unset)."""
    override = os.environ.get(HARDWARE_DIR_ENV)
    return Path(override) if override else _home_hardware_dir()


def _home_hardware_dir() -> Path:
    home = os.environ.get("SOLAR_HOME")
    base = Path(home) if home else Path(__file__).resolve().parents[2] / "data" / "solar_home"
    return base / "hardware"


def hardware_dirs() -> list[Path]:
    """The spec search path, first match wins: ``$SOLAR_HARDWARE_DIR``, ``$SOLAR_HOME/hardware``,
    then the shipped specs. A name found in an earlier directory shadows a shipped one."""
    dirs = [Path(os.environ[HARDWARE_DIR_ENV])] if os.environ.get(HARDWARE_DIR_ENV) else []
    return list(dict.fromkeys([*dirs, _home_hardware_dir(), shipped_hardware_dir()]))


def hardware_dir() -> Path:
    """The first directory of the search path: ``$SOLAR_HARDWARE_DIR`` when set, else the shipped
    specs (kept for callers that want one directory; lookups by name use ``hardware_dirs()``)."""
    override = os.environ.get(HARDWARE_DIR_ENV)
    if override:
        return Path(override)
    return shipped_hardware_dir()


def _search_dirs(directory: Path | str | None) -> list[Path]:
    """``directory`` first when given (a test's or Dagster's folder), then the search path."""
    dirs = hardware_dirs()
    return list(dict.fromkeys([Path(directory), *dirs])) if directory is not None else dirs


def list_hardware(directory: Path | str | None = None) -> list[str]:
    """Names of the specs (sorted), i.e. the hardware partition keys: those in ``directory`` when
    given, else every name on the search path (``hardware_dirs()``)."""
    roots = [Path(directory)] if directory is not None else hardware_dirs()
    return sorted({p.stem for root in roots for p in root.glob("*.yaml") if p.is_file()})


def canonical_hardware_name(name: str, directory: Path | str | None = None) -> str:
    """The spelling of a spec name on disk (``h100_sxm`` -> ``H100_SXM``); unknown names and paths
    come back unchanged, so the loader's error names them."""
    try:
        path = _resolve(name, directory)
    except HardwareError:
        return name
    return path.stem if not _looks_like_path(name) else name


MAX_SPEC_BYTES = 1 << 20  # the shipped specs are under 3 KiB; a YAML of megabytes takes minutes to load


def load_hardware(name_or_path: str | Path, directory: Path | str | None = None) -> HardwareSpec:
    """A validated spec, by name (looked up in ``directory``) or by path to a YAML file."""
    path = _resolve(name_or_path, directory)
    try:
        with open(path, "rb") as f:  # read at most the limit: a huge file is refused before YAML sees it
            data = f.read(MAX_SPEC_BYTES + 1)
    except OSError as e:
        raise HardwareError(f"{path}: cannot read hardware spec: {e.strerror or e}") from e
    if len(data) > MAX_SPEC_BYTES:
        raise HardwareError(f"{path}: hardware spec is larger than {MAX_SPEC_BYTES >> 20} MiB "
                            f"(a spec is a few dozen lines); refused without parsing it")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise HardwareError(f"{path}: cannot read hardware spec: not UTF-8 text ({e.reason} at byte {e.start})") from e
    return parse_hardware(text, path)


def load_all_hardware(directory: Path | str | None = None) -> tuple[list[HardwareSpec], list[str]]:
    """Every spec in a directory that validates, and one line per file that does not.

    A bad spec fails only itself: ``solar hardware list`` shows the others and names the bad file.
    """
    specs, errors = [], []
    for name in list_hardware(directory):
        try:
            specs.append(load_hardware(name, directory))
        except HardwareError as e:
            errors.append("; ".join(line.strip() for line in str(e).splitlines() if line.strip()))
    return specs, errors


def parse_hardware(text: str, path: Path) -> HardwareSpec:
    """Validate YAML text as the spec stored at ``path`` (its stem must equal ``name``)."""
    try:
        data = yaml.load(text, Loader=_SpecLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as e:
        raise HardwareError(f"{path}: not valid YAML: {_yaml_problem(e)}") from e
    if not isinstance(data, dict):
        raise HardwareError(
            f"{path}: expected a mapping of fields, got {type(data).__name__}; "
            f"fields: {', '.join(HardwareSpec.model_fields)}"
        )
    try:
        spec = HardwareSpec.model_validate(data)
    except ValidationError as e:
        raise HardwareError(_format_validation(path, e)) from None
    if spec.name != path.stem:
        raise HardwareError(
            f"{path}: field 'name': {spec.name!r} must equal the file stem {path.stem!r}"
        )
    logger.debug("loaded hardware %s from %s (digest %s)", spec.name, path, spec.digest())
    return spec


def _looks_like_path(name_or_path: str | Path) -> bool:
    text = str(name_or_path)
    return isinstance(name_or_path, Path) or text.endswith((".yaml", ".yml")) or os.sep in text or "/" in text


def _resolve(name_or_path: str | Path, directory: Path | str | None) -> Path:
    """A name is looked up, case-insensitively, in ``directory`` (when given) and then on the search
    path (``hardware_dirs()``), first match wins; anything path-like is taken as a file."""
    text = str(name_or_path)
    if _looks_like_path(name_or_path):
        path = Path(name_or_path)
        if not path.is_file():
            raise HardwareError(f"{path}: no such hardware spec file")
        return path
    roots = _search_dirs(directory)
    for root in roots:
        path = root / f"{text}.yaml"
        if path.is_file():
            return path
    for root in roots:  # h100_sxm -> H100_SXM.yaml: part names are not case-sensitive
        matches = sorted(p for p in root.glob("*.yaml") if p.is_file() and p.stem.lower() == text.lower())
        if matches:
            return matches[0]
    known = list(dict.fromkeys(n for root in roots for n in list_hardware(root)))  # the given folder's first
    raise HardwareError(
        f"unknown hardware {text!r} (looked in {', '.join(str(r) for r in roots)}); "
        f"known: {', '.join(known) or 'none'}"
    )


def _format_validation(path: Path, error: ValidationError) -> str:
    """One line per fault, each naming the file and the dotted field path."""
    lines = []
    for item in error.errors(include_url=False):
        loc = ".".join(str(part) for part in item["loc"] if part != "[key]")
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            known = HardwareSpec.model_fields if len(item["loc"]) == 1 else (
                UNITS if item["loc"][0] in ("peak_flop_per_s", "peak_sources") and len(item["loc"]) == 2 else ())
            if known:
                message += f" (known fields: {', '.join(known)})"
        written = item.get("input")
        if isinstance(written, str) and _NOT_DECIMAL.fullmatch(written.strip()):
            message += (f": {written!r} is not a decimal figure (hex, octal, binary, sexagesimal and "
                        "underscored numbers are refused in specs); write it in decimal")
        lines.append(f"{path}: field '{loc or '<root>'}': {message}")
    return "\n".join(lines)


_NOT_DECIMAL = re.compile(r"[-+]?(?:0[xob][0-9a-fA-F_]+|0[0-7_]+|[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?|"
                          r"[0-9][0-9_]*_[0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?)")
"""YAML 1.1 number forms a spec refuses: ``0x10``, ``0o17``/``017``, ``0b101``, ``1:30``, ``1_000``."""


def _yaml_problem(error: yaml.YAMLError) -> str:
    """PyYAML's message, flattened to one line, with its 1-based line and column."""
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return where + " ".join(str(problem).split())


class _SpecLoader(yaml.SafeLoader):
    """SafeLoader that reads ``1e12`` as a float (YAML 1.2) and rejects duplicate keys.

    PyYAML follows YAML 1.1, where ``3.35e12`` (no dot, no exponent sign) is a string;
    a spec author means a number. A duplicate key would silently keep the last value.
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


_SpecLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def _construct_decimal_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int | str:
    """A plain decimal integer, else the text as written (``0x10``): the schema then refuses it
    at its own field, with the hint in ``_format_validation``, instead of reading 16."""
    text = loader.construct_scalar(node)
    return int(text) if re.fullmatch(r"[-+]?(?:0|[1-9][0-9]*)", text) else text


def _construct_decimal_float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float | str:
    """A float as YAML reads it, except sexagesimal (``1:30.5``) and underscored forms, kept as text."""
    text = loader.construct_scalar(node)
    if ":" in text or "_" in text:
        return text
    return loader.construct_yaml_float(node)


_SpecLoader.add_constructor("tag:yaml.org,2002:int", _construct_decimal_int)
_SpecLoader.add_constructor("tag:yaml.org,2002:float", _construct_decimal_float)
