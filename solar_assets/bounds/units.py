"""Which unit of the part runs a node, at which peak: the per-node half of the roofline.

A part has two kinds of compute unit (``hardware/*.yaml``, ``peak_flop_per_s``):

* ``matrix`` — the tensor cores (AMX on a CPU). A *contraction* node (a sum-of-products kernel,
  ``Y += A * B``: it has MACs) runs there at the matrix peak of its operand dtype, or on the
  vector unit where that is faster or the part has no matrix path for the dtype (fp32 IEEE,
  fp64 on Ampere). It is charged 2 FLOP per MAC only: any other arithmetic in its product (a
  scale, a cast) can be hoisted out of the reduction, so charging it could overstate the bound.
* ``vector`` — the CUDA cores / SIMD lanes: elementwise ops, reductions and transcendentals,
  at the vector peak of the node's dtype (the fastest of the float dtypes it reads and writes).

fp32 contractions follow the **fp32-math policy** (``Fp32Math``): ``tf32`` runs them on the
TF32 tensor-core path, ``ieee`` on the CUDA cores; ``auto`` (the default) takes the fastest that
the framework's own defaults allow for that op: TF32 for PyTorch convolutions
(``torch.backends.cudnn.allow_tf32`` is True by default) and for JAX dots and convolutions
(default precision on GPUs is TF32), IEEE for PyTorch matmuls unless the workload file enables
TF32 (``torch.backends.cuda.matmul.allow_tf32 = True``, ``set_float32_matmul_precision('high')``;
``'medium'`` allows bf16). A node whose origin op is unknown gets TF32: the faster path keeps
the figure a lower bound whichever framework ran it.

Fused attention (``FUSED_ATTENTION_OPS``: SDPA, lowered whole by the tracer) in float32 runs its
contractions on the fastest float32 path of its kernels: PyTorch's memory-efficient attention
(the one its dispatcher picks for float32 on sm80+; FlashAttention takes only fp16/bf16) computes
float32 products as three TF32 MMAs (CUTLASS ``OpMultiplyAddFastF32``, "3xTF32"), a third of the
TF32 peak; the math fallback runs IEEE float32. ``auto`` takes the faster of the two on the part
(``tf32x3``): 165 TFLOP/s on an H100 SXM, IEEE's 38.7 on an A6000 where TF32/3 is slower.

Units run concurrently; the tensor cores are one unit across dtypes (a bf16 and a tf32 MMA
cannot overlap on one tensor core), while the vector pipes are kept apart per dtype (fp64 and
fp32 have their own pipes): ``unit_key`` is ``matrix`` or ``vector.<dtype>``. How the roofline
combines them: ``solar_assets.bounds.sol``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from solar_assets.errors import SolarError

Fp32Policy = Literal["auto", "tf32", "ieee"]
FP32_MATH_CHOICES: tuple[str, ...] = ("auto", "tf32", "ieee")
Fp32Path = Literal["tf32", "ieee", "bf16", "tf32x3"]
FUSED_ATTENTION_OPS = frozenset({"aten.scaled_dot_product_attention.default"})
"""Origin ops of fused attention: their float32 contractions follow ``Fp32Math.torch_attention``."""
TF32X3_PASSES = 3
"""MMAs per float32 product on the 3xTF32 path (a high and a low TF32 part: hi·hi + hi·lo + lo·hi)."""

BYTES: dict[str, int] = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "float8_e4m3fn": 1,
                         "float8_e5m2": 1, "int64": 8, "int32": 4, "int16": 2, "int8": 1, "uint8": 1, "bool": 1}
FLOAT_DTYPES = ("float64", "float32", "bfloat16", "float16", "float8_e4m3fn", "float8_e5m2")


class UnitError(SolarError, ValueError):
    """A node whose dtype has no peak on this part: that spec's rows are dropped, with this line."""


@dataclass(frozen=True)
class Fp32Math:
    """How fp32 contractions are charged: the policy asked for and what ``auto`` resolved to."""

    policy: str = "auto"
    torch_matmul: str = "ieee"  # cuBLAS default: torch.backends.cuda.matmul.allow_tf32 is False
    torch_conv: str = "tf32"  # cuDNN default: torch.backends.cudnn.allow_tf32 is True
    jax: str = "tf32"  # XLA's default precision for f32 dot/conv on GPUs
    torch_attention: str = "tf32x3"  # memory-efficient SDPA: 3xTF32 (or IEEE where that is faster)
    unknown: str = "tf32"  # no origin op: the faster path, so the figure stays a lower bound

    def __post_init__(self) -> None:
        if self.policy not in FP32_MATH_CHOICES:
            raise SolarError(f"fp32 math policy must be one of {', '.join(FP32_MATH_CHOICES)}, got {self.policy!r}")

    def path_for(self, origin: Any) -> str:
        """``tf32``, ``ieee`` or ``bf16`` for an fp32 contraction lowered from ``origin`` (or None)."""
        if self.policy != "auto":
            return self.policy
        op = str(getattr(origin, "op", "") or "") if origin is not None else ""
        if not op:
            return self.unknown
        if op in FUSED_ATTENTION_OPS:
            return self.torch_attention
        if op.startswith(("aten.", "torch.", "prims.")):
            return self.torch_conv if "conv" in op else self.torch_matmul
        return self.jax

    def describe(self) -> str:
        """One line for the report, e.g. ``auto (torch conv tf32, torch matmul ieee, jax tf32, unknown op tf32)``."""
        if self.policy != "auto":
            return self.policy
        return (f"auto (torch conv {self.torch_conv}, torch matmul {self.torch_matmul}, torch attention "
                f"{self.torch_attention}, jax {self.jax}, unknown op {self.unknown})")


_TRUE, _FALSE = r"\s*=\s*True\b", r"\s*=\s*False\b"
_MATMUL_TF32 = re.compile(r"backends\.cuda\.matmul\.allow_tf32" + _TRUE)
_CONV_TF32_ON = re.compile(r"backends\.cudnn\.allow_tf32" + _TRUE)
_CONV_TF32_OFF = re.compile(r"backends\.cudnn\.allow_tf32" + _FALSE)
_MATMUL_PRECISION = re.compile(r"set_float32_matmul_precision\(\s*['\"](\w+)['\"]")
_JAX_PRECISION = re.compile(r"(?:jax_default_matmul_precision['\"]\s*,|default_matmul_precision\()\s*['\"](\w+)['\"]")


def fp32_math_for(text: str, policy: str = "auto") -> Fp32Math:
    """The fp32-math policy for a workload file: ``policy``, with ``auto`` resolved from what the
    file's source text sets (an enabling statement anywhere counts: the faster path is the safe
    one for a lower bound; only a global switch to full precision moves a default to IEEE)."""
    if policy != "auto":
        return Fp32Math(policy=policy)
    matmul = "ieee"
    levels = [m.lower() for m in _MATMUL_PRECISION.findall(text)]
    if _MATMUL_TF32.search(text) or "high" in levels:
        matmul = "tf32"
    if "medium" in levels:
        matmul = "bf16"  # 'medium' lets cuBLAS use bf16 tensor cores for fp32 matmuls
    conv = "ieee" if _CONV_TF32_OFF.search(text) and not _CONV_TF32_ON.search(text) else "tf32"
    jax_levels = [m.lower() for m in _JAX_PRECISION.findall(text)]
    jax = "tf32"
    if jax_levels and all(level in ("highest", "float32") for level in jax_levels):
        jax = "ieee"
    elif "bfloat16" in jax_levels or "fastest" in jax_levels:
        jax = "bf16"
    return Fp32Math(policy="auto", torch_matmul=matmul, torch_conv=conv, jax=jax)


@dataclass(frozen=True)
class NodeUnit:
    """Where one node's arithmetic runs: ``kind`` ``matrix`` or ``vector``, at ``dtype``'s peak."""

    kind: str
    dtype: str  # the spec's key: fp32, tf32, bf16, … (or the framework name on a single-peak spec)
    peak_flop_per_s: float
    flops: int  # what the unit is charged: 2·MACs for a contraction, all FLOPs otherwise

    @property
    def key(self) -> str:
        """The concurrency unit: the tensor cores are one unit across dtypes; vector pipes per dtype."""
        return "matrix" if self.kind == "matrix" else f"vector.{self.dtype}"

    @property
    def label(self) -> str:
        return f"{self.kind}.{self.dtype}"

    @property
    def compute_s(self) -> float:
        return self.flops / self.peak_flop_per_s if self.flops else 0.0


def node_unit(node: Any, tensor_dtypes: dict[str, str], hw: Any, fp32: Fp32Math,
              dtype: str | None = None) -> NodeUnit | None:
    """The unit and peak of one einsum node on ``hw``; None for a node that does no arithmetic.

    ``dtype`` forces one peak for every node (``hw.peak_for(dtype)``, the single-peak what-if).
    A spec without per-unit peaks (only ``peak_for``) runs every unit at its dtype's peak.
    """
    if node.flops == 0 and node.macs == 0:
        return None
    contraction = node.macs > 0
    flops = 2 * node.macs if contraction else node.flops
    if dtype is not None:
        return NodeUnit("matrix" if contraction else "vector", str(dtype), float(hw.peak_for(dtype)), flops)
    reads = [tensor_dtypes[t] for t in _read_tensors(node)]
    written = [tensor_dtypes[w.tensor] for w in ((node.write,) if node.write else ()) + tuple(node.extra_writes)]
    if not hasattr(hw, "unit_peak"):
        return _single_peak_unit(node, hw, contraction, reads, written, flops)
    from solar_assets.hardware.spec import canonical_dtype

    if contraction and (key := canonical_dtype(_widest([d for d in reads if d in FLOAT_DTYPES] or reads or written))):
        if key == "fp32":
            path = fp32.path_for(getattr(node, "origin", None))
            if path in ("tf32", "bf16") and (peak := hw.unit_peak("matrix", path)) is not None:
                return NodeUnit("matrix", path, float(peak), flops)
            if path == "tf32x3" and (peak := hw.unit_peak("matrix", "tf32")) is not None:
                ieee = hw.unit_peak("vector", "fp32")
                if ieee is None or peak / TF32X3_PASSES > ieee:
                    return NodeUnit("matrix", "tf32x3", float(peak) / TF32X3_PASSES, flops)
        candidates = [(float(p), kind) for kind in ("matrix", "vector") if (p := hw.unit_peak(kind, key)) is not None]
        if not candidates:
            raise UnitError(f"{hw.name}: no peak FLOP/s for dtype {key!r} (contraction {node.name!r}); "
                            f"this spec has: {', '.join(hw.peak_flop_per_s.dtypes())}")
        peak, kind = max(candidates)
        return NodeUnit(kind, key, peak, flops)
    floats = [d for d in dict.fromkeys(reads + written) if d in FLOAT_DTYPES]
    if not floats or (contraction and not any(d in FLOAT_DTYPES for d in reads)):
        # integer / boolean work (int64 index arithmetic, an integer product the spec has no int8
        # path for): no spec lists it; the fastest vector peak bounds it
        vector = hw.peak_flop_per_s.unit("vector")
        key = max(vector, key=vector.get)
        return NodeUnit("vector", key, float(vector[key]), flops)
    candidates = []
    for d in floats:
        key = canonical_dtype(d) or d
        if (p := hw.unit_peak("vector", key)) is not None:
            candidates.append((float(p), key))
    if not candidates:
        keys = ", ".join(canonical_dtype(d) or d for d in floats)
        raise UnitError(f"{hw.name}: no vector peak FLOP/s for dtype {keys} (node {node.name!r}); "
                        f"this spec's vector peaks: {', '.join(hw.peak_flop_per_s.unit('vector'))}")
    peak, key = max(candidates)
    return NodeUnit("vector", key, peak, flops)


def _single_peak_unit(node: Any, hw: Any, contraction: bool, reads: list[str], written: list[str],
                      flops: int) -> NodeUnit:
    """A stand-in spec with only ``peak_for(dtype)``: each unit at its node's dtype's peak."""
    if contraction:
        dtype = _widest([d for d in reads if d in FLOAT_DTYPES] or reads or written)
        return NodeUnit("matrix", dtype, float(hw.peak_for(dtype)), flops)
    floats = [d for d in dict.fromkeys(reads + written) if d in FLOAT_DTYPES] or reads or written
    peak, dtype = max((float(hw.peak_for(d)), d) for d in floats)
    return NodeUnit("vector", dtype, peak, flops)


def _read_tensors(node: Any) -> list[str]:
    """The node's operands' tensors, without the output it reads back (``init: keep``)."""
    out = node.write.tensor if node.write else None
    return [op.tensor for op in node.reads.values() if op.tensor != out] or [op.tensor for op in node.reads.values()]


def _widest(dtypes: list[str]) -> str:
    """The operand dtype a contraction computes in: the widest (a bf16 x fp8 product runs as bf16)."""
    return max(dtypes, key=lambda d: BYTES.get(d, 0)) if dtypes else "float32"
