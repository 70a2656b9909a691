"""Execute an Affine Loop IR program: kernels through numba (or einsum), views in NumPy.

A ``Repeat`` runs its body ``extent`` times in Python, passing the iteration to every body
kernel (a scalar argument of the compiled nest, or folded into the einsum views); a ``TopK``
runs in NumPy (a stable sort: ties keep the lower index first, NaN counts as the largest), a
``Linalg`` in NumPy / SciPy (``ir.linalg``); a
``Cond`` reads its index tensor and runs only the selected branch (clamped like ``lax.switch``).
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ir_schemas import Cond, Kernel, Linalg, Program, Repeat, Reshape, TensorDecl, TopK
from solar_assets.errors import SolarError
from solar_assets.execute.cache import load_kernel
from solar_assets.execute.codegen import dtype_kind, plan_kernel
from solar_assets.execute.einsum_path import plan_einsum, run_einsum
from solar_assets.execute.flatten import flat_kernel
from solar_assets.ir.dtypes import NARROW_FLOAT_DTYPES, numpy_dtype, round_to
from solar_assets.ir import Affine, ParsedKernel, check_program, format_kernel, format_step, parse_kernel
from solar_assets.ir.linalg import run as run_linalg
from solar_assets.ir.updates import updated_target


class ExecutionError(SolarError):
    """A program that passed the checker but cannot run (missing binding, wrong shape, …)."""


@dataclass(frozen=True)
class StepRecord:
    """How one step ran: for timings and for tests of the compile cache."""

    name: str
    path: Literal["numba", "einsum", "reshape", "empty", "topk", "linalg"]
    seconds: float
    kernel_from: str = ""  # numba only: memory | compiled | disk (numba's on-disk cache)


class ProgramInterpreter:
    """Walk a checked Program in order; subclasses decide what each step means."""

    def __init__(self, program: Program, source: str = "<program>"):
        self.program = program
        self.source = source
        self.parsed = check_program(program, source)

    def run(self, env: dict[str, Any]) -> dict[str, Any]:
        self.run_steps(self.program.steps, self.parsed, env, {})
        return env

    def run_steps(self, steps: tuple, parsed: list[ParsedKernel | None], env: dict[str, Any],
                  free: dict[str, int]) -> None:
        """Run ``steps`` in order; ``free`` holds the current iteration of each enclosing repeat."""
        for i, (step, pk) in enumerate(zip(steps, parsed)):
            try:
                if isinstance(step, Reshape):
                    self.reshape(step, env)
                elif isinstance(step, TopK):
                    self.topk(step, env)
                elif isinstance(step, Linalg):
                    self.linalg(step, env)
                elif isinstance(step, Repeat):
                    self.repeat(step, env, free)
                elif isinstance(step, Cond):
                    self.cond(step, env, free)
                else:
                    assert pk is not None
                    self.kernel(step, pk, env, free)
            except SolarError:
                raise
            except Exception as e:
                text = format_kernel(step) if isinstance(step, Kernel) else format_step(step, "")[0]
                at = "".join(f" at {v}={t}" for v, t in free.items())
                raise ExecutionError(
                    f"{self.source}: while executing step {i} {step.name!r}{at}: {text}\n  {type(e).__name__}: {e}"
                ) from e

    def repeat(self, step: Repeat, env: dict[str, Any], free: dict[str, int]) -> None:
        names = (*free, step.var)
        parsed = [parse_kernel(s, names) if isinstance(s, Kernel) else None for s in step.steps]
        for t in range(step.extent):
            self.run_steps(step.steps, parsed, env, {**free, step.var: t})

    def cond(self, step: Cond, env: dict[str, Any], free: dict[str, int]) -> None:
        """Run only the branch the index selects (clamped into range, like ``lax.switch``)."""
        b = max(0, min(self.branch_index(step, env), len(step.branches) - 1))
        branch = step.branches[b]
        parsed = [parse_kernel(s, tuple(free)) if isinstance(s, Kernel) else None for s in branch]
        self.run_steps(branch, parsed, env, free)

    def branch_index(self, step: Cond, env: dict[str, Any]) -> int:
        """The run-time value of ``step.index``."""
        return int(np.asarray(env[step.index]).reshape(()))

    def reshape(self, step: Reshape, env: dict[str, Any]) -> None:
        raise NotImplementedError

    def topk(self, step: TopK, env: dict[str, Any]) -> None:
        raise NotImplementedError

    def linalg(self, step: Linalg, env: dict[str, Any]) -> None:
        raise NotImplementedError

    def kernel(self, step: Kernel, pk: ParsedKernel, env: dict[str, Any], free: dict[str, int]) -> None:
        raise NotImplementedError


class Executor(ProgramInterpreter):
    """Runs kernels on NumPy arrays: float tensors in ``dtype``, integers as int64, bools as bool."""

    def __init__(self, program: Program, dtype: Any = np.float64, *, einsum: bool = True,
                 source: str = "<program>"):
        super().__init__(program, source)
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.float64, np.float32):
            raise ValueError(f"execute dtype must be float64 or float32, not {self.dtype}")
        self.einsum = einsum
        self.tensors = program.tensor_map()
        self.records: list[StepRecord] = []

    def storage_dtype(self, t: TensorDecl) -> np.dtype:
        kind = dtype_kind(t.dtype)
        return self.dtype if kind == "f" else np.dtype(np.int64 if kind == "i" else np.bool_)

    def bind(self, bindings: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        env: dict[str, np.ndarray] = {}
        for t in self.program.tensors:
            target = updated_target(t)
            if target is not None and target in bindings:  # the updated tensor's values before the call
                env[t.name] = np.array(bindings[target], dtype=self.storage_dtype(t), order="C", copy=True)
                continue
            if t.role not in ("input", "weight"):
                continue
            if t.binding not in bindings:
                known = ", ".join(sorted(bindings)[:12]) or "none"
                raise ExecutionError(
                    f"{self.source}: {t.role} {t.name!r} is bound to {t.binding!r}, which the bindings "
                    f"lack (they have: {known})"
                )
            value = np.asarray(bindings[t.binding])
            if tuple(value.shape) != tuple(t.shape):
                raise ExecutionError(
                    f"{self.source}: {t.role} {t.name!r} ({t.binding}) is declared {tuple(t.shape)} "
                    f"but the binding has shape {tuple(value.shape)}"
                )
            # a copy: kernels may write through a reshape of an input's memory
            env[t.name] = np.array(value, dtype=self.storage_dtype(t), order="C", copy=True)
        return env

    def reshape(self, step: Reshape, env: dict[str, Any]) -> None:
        start = time.perf_counter()
        env[step.out] = np.reshape(env[step.src], self.tensors[step.out].shape)
        self.records.append(StepRecord(step.name, "reshape", time.perf_counter() - start))

    def topk(self, step: TopK, env: dict[str, Any]) -> None:
        start = time.perf_counter()
        values, indices = topk_arrays(env[step.src], step.axis, step.k, step.largest)
        self._array(step.values, env)[...] = values
        self._array(step.indices, env)[...] = indices
        self.records.append(StepRecord(step.name, "topk", time.perf_counter() - start))

    def linalg(self, step: Linalg, env: dict[str, Any]) -> None:
        start = time.perf_counter()
        try:
            results = run_linalg(step.routine, [env[n] for n in step.args], step.options())
        except (np.linalg.LinAlgError, ValueError) as e:
            raise ExecutionError(f"{self.source}: linalg {step.name!r} ({step.routine}) failed: {e}") from e
        for name, value in zip(step.outs, results):
            if tuple(np.shape(value)) != tuple(self.tensors[name].shape):  # a selection on other values
                raise ExecutionError(f"{self.source}: linalg {step.name!r} ({step.routine}) gives {name} of shape "
                                     f"{tuple(np.shape(value))} on these values; the IR has "
                                     f"{tuple(self.tensors[name].shape)}, from the values it was traced on")
            self._array(name, env)[...] = value
        self.records.append(StepRecord(step.name, "linalg", time.perf_counter() - start))

    def _array(self, name: str, env: dict[str, Any]) -> np.ndarray:
        if name not in env:  # first write: allocate (zeros, so nothing reads garbage)
            t = self.tensors[name]
            env[name] = np.zeros(t.shape, dtype=self.storage_dtype(t))
        return env[name]

    def kernel(self, step: Kernel, pk: ParsedKernel, env: dict[str, Any], free: dict[str, int] | None = None) -> None:
        start = time.perf_counter()
        free = free or {}
        out = self._array(pk.out.tensor, env)
        reads = {a.tensor: env[a.tensor] for a in pk.reads if a.tensor != pk.out.tensor}
        aliased = pk.out.tensor in {a.tensor for a in pk.reads} or any(
            np.may_share_memory(out, arr) for arr in reads.values())
        if pk.box_iterations == 0 and not self._empty_nest_writes(pk, free):
            self.records.append(StepRecord(step.name, "empty", time.perf_counter() - start))
            return
        if self.einsum and not aliased:
            plan = plan_einsum(pk, self.tensors)
            if plan is not None:
                run_einsum(plan, pk, out, reads, free)
                self._round_conversion(pk, out, free)
                self.records.append(StepRecord(step.name, "einsum", time.perf_counter() - start))
                return
        flat = None if aliased else flat_kernel(pk, self.tensors)
        if flat is not None and all(a.flags.c_contiguous for a in (out, *reads.values()) if a.ndim):
            plan = plan_kernel(*flat)  # one loop over the flat views (``flatten``): they write into ``out``
            target, reads = out.reshape(-1), {t: a.reshape(-1) if a.ndim else a for t, a in reads.items()}
            widened = False
        else:
            plan = plan_kernel(pk, self.tensors, literal=aliased)
            target = out
            widened = plan.accumulates_in_memory and out.dtype == np.float32 and not aliased
            if widened:
                target = out.astype(np.float64)  # accumulate in float64, store float32
        fn, origin = load_kernel(plan)
        args = [target, *(reads[t] for t in plan.params[1:]), *plan.extents, *(free[v] for v in plan.free),
                *plan.offsets, *plan.literals]
        n_signatures = len(fn.signatures)
        fn(*args)
        if len(fn.signatures) > n_signatures:
            origin = "disk" if sum(fn.stats.cache_hits.values()) else "compiled"
        if widened:
            out[...] = target
        self._round_conversion(pk, out, free)
        self.records.append(StepRecord(step.name, "numba", time.perf_counter() - start, origin))

    def _round_conversion(self, pk: ParsedKernel, out: np.ndarray, free: dict[str, int]) -> None:
        """Round what a *conversion* kernel wrote to its narrow float dtype (bf16, fp16, fp8).

        A kernel converts into its output's dtype D when it reads no float tensor of dtype D (a
        cast ``Y_bf16[i] = X_f32[i]``, a reduction with a requested dtype, a value built from
        integers or constants): that is where the framework's program stores a value in D, so a
        run in float64 must keep only what D keeps, or fp8 quantisation would vanish. A kernel
        computing in D from D values (a bf16 matmul) is not rounded: float storage stays at the
        executor's precision, as the float64 golden reference does (``golden.reference64``)."""
        dtype = self.tensors[pk.out.tensor].dtype
        if dtype not in NARROW_FLOAT_DTYPES:
            return
        if any(self.tensors[a.tensor].dtype == dtype for a in pk.reads):
            return
        mask = _written_mask(pk, out.shape, free)
        if mask is None:
            out[...] = round_to(out, dtype)
        else:
            out[mask] = round_to(out[mask], dtype)

    def _empty_nest_writes(self, pk: ParsedKernel, free: dict[str, int]) -> bool:
        """A nest with no iterations still resets its written region when it reduces over an
        empty loop with init 'identity' (a sum over nothing is 0); check that region's bounds,
        which the checker skips for empty nests."""
        k = pk.kernel
        ext = {**pk.extents, **{v: 1 for v in free}}
        out_vars = {v for a in pk.out.index for v in a.vars if v not in free}
        if k.update == "=" or k.init != "identity" or any(ext[v] == 0 for v in out_vars):
            return False
        shape = self.tensors[pk.out.tensor].shape
        for d, (a, size) in enumerate(zip(pk.out.index, shape)):
            lo, hi = a.range(ext)
            lo, hi = lo + sum(c * free[v] for v, c in a.coefs if v in free), hi + sum(c * free[v] for v, c in a.coefs if v in free)
            if lo < 0 or hi >= size:
                raise ExecutionError(
                    f"{self.source}: kernel {k.name!r} reduces over an empty loop, and its output "
                    f"subscript {d} ranges over [{lo}, {hi}] outside extent {size}\n  in: {format_kernel(k)}"
                )
        return True

    def outputs(self, env: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        """The program's outputs; float32 runs are cast to the declared dtypes, float64 runs keep
        float64 (the strong check) and cast only integer outputs."""
        result = []
        for name in self.program.outputs:
            t = self.tensors[name]
            arr = env[name]
            if dtype_kind(t.dtype) != "f" or self.dtype == np.float32:
                arr = arr.astype(numpy_dtype(t.dtype), copy=False)
            result.append(arr)
        return result


def _written_mask(pk: ParsedKernel, shape: tuple[int, ...], free: dict[str, int]) -> np.ndarray | None:
    """Where the kernel wrote in its output, as a boolean mask; None when it wrote all of it.
    An indirect (scatter) subscript is taken as writing everywhere it may (the whole tensor)."""
    index = pk.out.index
    if any(not isinstance(a, Affine) for a in index):
        return None
    ext = pk.extents
    plain = [a.coefs[0][0] for a in index if len(a.coefs) == 1 and a.coefs[0][1] == 1 and a.const == 0]
    whole = len(plain) == len(index) == len(set(plain)) and all(
        v in ext and ext[v] == size for v, size in zip(plain, shape))
    if whole:
        return None
    names = sorted({v for a in index for v in a.vars if v not in free})
    grids = np.meshgrid(*(np.arange(ext[v]) for v in names), indexing="ij") if names else []
    env = dict(zip(names, grids))
    coords = []
    for a in index:
        value = np.full(grids[0].shape if grids else (), a.const, dtype=np.int64)
        for v, c in a.coefs:
            value = value + c * (free[v] if v in free else env[v])
        coords.append(value.reshape(-1))
    mask = np.zeros(shape, dtype=bool)
    mask[tuple(coords)] = True
    return mask


def topk_arrays(src: np.ndarray, axis: int, k: int, largest: bool) -> tuple[np.ndarray, np.ndarray]:
    """Values and int64 indices of the ``k`` largest (smallest) entries along ``axis``, sorted;
    ties keep the lower index first and NaN counts as the largest value (as in torch)."""
    key = src
    if src.dtype.kind == "f":
        key = np.where(np.isnan(src), np.inf, src)
    if largest:
        key = -key.astype(np.float64) if key.dtype.kind in "fb" else -key.astype(np.int64)
    order = np.argsort(key, axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(src, idx, axis=axis), idx.astype(np.int64)


def execute_program(program: Program, bindings: Mapping[str, np.ndarray], dtype: Any = np.float64, *,
                    einsum: bool = True, source: str = "<program>") -> list[np.ndarray]:
    """Run ``program`` on ``bindings`` (keyed by the tensors' binding strings) and return its
    outputs in ``program.outputs`` order.

    ``dtype`` (float64 or float32) is the storage of every float tensor. Numba kernels compute
    and accumulate in float64 either way; the einsum fast path (sums of products) runs BLAS in
    the storage dtype. ``einsum=False`` runs every kernel through numba (the literal check).
    """
    executor = Executor(program, dtype, einsum=einsum, source=source)
    env = executor.run(executor.bind(bindings))
    return executor.outputs(env)
