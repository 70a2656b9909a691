"""Accelerator specs: the peaks and capacities every bound divides by.

A bound is only as trustworthy as the figures under it, so a spec is strict: SI base units
in the field names, dense peaks only, a cited source, and a load that refuses anything it
does not understand (unknown keys, wrong types, non-positive figures, duplicate keys)
with a message naming the file and the field, instead of guessing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PositiveFloat,
    PositiveInt,
    StringConstraints,
    ValidationError,
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
    peak_flop_per_s: dict[DType, PositiveFloat] = Field(min_length=1)
    """Dense peak per dtype in FLOP/s (1 MAC = 2 FLOP), never MAC/s, TFLOPS or sparse figures.
    A missing dtype is absent on purpose: the part has no such path, or no figure is published."""
    dram_bytes_per_s: PositiveFloat
    """Peak DRAM (HBM, GDDR or LPDDR) bandwidth in bytes/s, decimal as datasheets quote it."""
    dram_capacity_bytes: PositiveInt
    """DRAM capacity in bytes (datasheet GB of HBM/GDDR read as GiB: the devices are binary-sized)."""
    onchip_buffer_bytes: PositiveInt
    """Capacity of the last on-chip buffer a tiling can keep data in (L2), in bytes."""
    onchip_bytes_per_s: PositiveFloat | None = None
    """On-chip buffer bandwidth in bytes/s; None where no credible figure is published."""
    shared_memory_bytes: PositiveInt | None = None
    """All SMs' combined L1 data cache / shared memory in bytes (per-SM figure × SMs); None where
    not published. With the register files it joins the L2 in ``onchip_total_bytes``."""
    register_file_bytes: PositiveInt | None = None
    """All SMs' register files in bytes (per-SM figure × SMs), plus any other per-SM operand store a
    schedule can keep data in (Blackwell's tensor memory); None where not published."""
    clock_hz: PositiveFloat | None
    """Maximum boost clock in Hz; informative only, bounds use the peaks."""
    sources: list[NonEmptyStr] = Field(min_length=1)
    """Datasheet or paper, and which table, for each figure: an unsourced figure cannot be audited."""

    @property
    def onchip_total_bytes(self) -> int:
        """Every byte of on-chip storage a schedule can hold data in: the L2 (``onchip_buffer_bytes``)
        plus shared memory / L1 and register files where the spec gives them. The provable
        cache-aware lower bound uses this (more capacity, a lower bound: the safe direction)."""
        return int(self.onchip_buffer_bytes) + int(self.shared_memory_bytes or 0) + int(self.register_file_bytes or 0)

    def peak_for(self, dtype: Any) -> float:
        """Dense peak for a dtype as a workload names it (``torch.float32``, ``bfloat16``, ``fp8``…).

        Raises rather than falling back to another dtype's peak: borrowing the fp32 peak for
        an fp8 GEMM would make the bound wrong by an order of magnitude without saying so.
        """
        key = canonical_dtype(dtype)
        if key is None:
            raise HardwareError(
                f"{self.name}: unknown dtype {str(dtype)!r}; "
                f"known: {', '.join(DTYPES)} (or torch/numpy names such as float32, bfloat16)"
            )
        if key not in self.peak_flop_per_s:
            raise HardwareError(
                f"{self.name}: no peak FLOP/s for dtype {key!r} (asked as {str(dtype)!r}); "
                f"this spec has: {', '.join(self.peak_flop_per_s)}"
            )
        return self.peak_flop_per_s[key]

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


def hardware_dir() -> Path:
    """Where specs live: ``$SOLAR_HARDWARE_DIR`` (tests, other checkouts) or the repo's ``hardware/``."""
    override = os.environ.get(HARDWARE_DIR_ENV)
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[2] / "hardware"


def list_hardware(directory: Path | str | None = None) -> list[str]:
    """Names of the specs in a directory (sorted), i.e. the hardware partition keys."""
    root = Path(directory) if directory is not None else hardware_dir()
    return sorted(p.stem for p in root.glob("*.yaml") if p.is_file())


def load_hardware(name_or_path: str | Path, directory: Path | str | None = None) -> HardwareSpec:
    """A validated spec, by name (looked up in ``directory``) or by path to a YAML file."""
    path = _resolve(name_or_path, directory)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise HardwareError(f"{path}: cannot read hardware spec: {e.strerror or e}") from e
    return parse_hardware(text, path)


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


def _resolve(name_or_path: str | Path, directory: Path | str | None) -> Path:
    """A name is looked up among the known specs; anything path-like is taken as a file."""
    text = str(name_or_path)
    looks_like_path = (
        isinstance(name_or_path, Path)
        or text.endswith((".yaml", ".yml"))
        or os.sep in text
        or "/" in text
    )
    if looks_like_path:
        path = Path(name_or_path)
        if not path.is_file():
            raise HardwareError(f"{path}: no such hardware spec file")
        return path
    root = Path(directory) if directory is not None else hardware_dir()
    path = root / f"{text}.yaml"
    if not path.is_file():
        known = list_hardware(root)
        raise HardwareError(
            f"unknown hardware {text!r} (no {path}); known: {', '.join(known) or 'none'}"
        )
    return path


def _format_validation(path: Path, error: ValidationError) -> str:
    """One line per fault, each naming the file and the dotted field path."""
    lines = []
    for item in error.errors(include_url=False):
        loc = ".".join(str(part) for part in item["loc"] if part != "[key]")
        message = item["msg"]
        if item["type"] == "extra_forbidden":
            message += f" (known fields: {', '.join(HardwareSpec.model_fields)})"
        lines.append(f"{path}: field '{loc or '<root>'}': {message}")
    return "\n".join(lines)


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
