"""PyTorch's own operator database (OpInfo ``op_db``) written out as KernelBench-style workload files.

Each op with a float32 CPU sample becomes one file (the first of its samples with non-empty inputs
and a non-empty result that is not all NaN: the database's edge cases validate nothing): a ``Model`` whose ``forward`` calls the op by
its public name (``torch.add``, ``torch.nn.functional.conv2d``, ``x.addmm_(...)``) on the sample's
tensors, and a ``get_inputs()`` that rebuilds those tensors from literal values, so the file runs
without the test suite and the inputs keep the domain the op's authors chose (positive values for
``log``, valid indices for ``gather``). Importing ``op_db`` needs ``expecttest`` and ``hypothesis``
(the ``test`` extra).
"""
from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

LITERAL_LIMIT = 16384
"""Elements above which a sample tensor is drawn at random in its own value range rather than spelled out."""


@dataclass(frozen=True)
class OpFile:
    """One generated workload file, or why an op got none."""

    op: str  # OpInfo name with its variant: "max.reduction_with_dim"
    path: Path | None
    skipped: str | None = None


class Unwritable(Exception):
    """A sample holds something a workload file cannot spell (a generator, a function, a sparse tensor)."""


def _public_names() -> dict[int, str]:
    """id(callable) → the dotted public name users call it by, searched in torch's documented namespaces."""
    import torch
    import torch.nn.functional as F  # noqa: N812 - the spelling users write

    spaces = [("torch", torch), ("torch.nn.functional", F), ("torch.linalg", torch.linalg),
              ("torch.special", torch.special), ("torch.fft", torch.fft), ("torch.masked", torch.masked),
              ("torch.signal.windows", torch.signal.windows), ("torch.nn.functional", torch._C._nn)]
    names: dict[int, str] = {}
    for prefix, space in reversed(spaces):  # earlier namespaces win: torch.special.erf over torch._C
        if prefix == "torch.nn.functional" and space is not F:
            continue
        for attr in dir(space):
            if attr.startswith("_"):
                continue
            try:
                obj = getattr(space, attr)
            except Exception:  # noqa: BLE001 - a lazily failing attribute is simply not a name
                continue
            if callable(obj):
                names[id(obj)] = f"{prefix}.{attr}"
    return names


def _float_literal(v: float) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(v)


def _scalar_literal(v: Any) -> str:
    if isinstance(v, bool):
        return repr(v)
    if isinstance(v, int):
        return repr(v)
    if isinstance(v, float):
        return _float_literal(v)
    if isinstance(v, complex):
        return f"complex({_float_literal(v.real)}, {_float_literal(v.imag)})"
    raise Unwritable(f"scalar of type {type(v).__name__}")


class _Writer:
    """Turns a sample's arguments into source text, collecting its tensors as the workload's inputs."""

    def __init__(self) -> None:
        self.tensors: list[str] = []  # get_inputs() expressions, one per input

    def tensor(self, t: Any) -> str:
        import torch

        if t.layout != torch.strided or t.is_quantized or t.is_meta:
            raise Unwritable(f"a {t.layout} tensor")
        dtype = str(t.dtype)
        shape = tuple(t.shape)
        if t.numel() <= LITERAL_LIMIT:
            values = t.detach().reshape(-1).tolist()
            body = ", ".join(_scalar_literal(v) for v in values)
            expr = f"torch.tensor([{body}], dtype={dtype}).reshape({shape!r})"
        elif t.dtype == torch.bool:
            frac = float(t.float().mean())
            expr = f"(torch.rand({shape!r}) < {frac!r})"
        elif t.dtype.is_floating_point or t.dtype.is_complex:
            lo, hi = (float(t.real.min()), float(t.real.max())) if t.numel() else (0.0, 1.0)
            expr = f"torch.empty({shape!r}, dtype={dtype}).uniform_({_float_literal(lo)}, {_float_literal(hi)})"
        else:
            lo, hi = int(t.min()), int(t.max())
            expr = f"torch.randint({lo}, {hi + 1}, {shape!r}, dtype={dtype})"
        self.tensors.append(expr)
        return f"t{len(self.tensors) - 1}"

    def value(self, v: Any) -> str:
        import torch

        if isinstance(v, torch.Tensor):
            return self.tensor(v)
        if v is None or v is Ellipsis:
            return repr(v)
        if isinstance(v, (bool, int, float, complex)):
            return _scalar_literal(v)
        if isinstance(v, str):
            return repr(v)
        if isinstance(v, torch.dtype):
            return str(v)
        if isinstance(v, torch.memory_format):
            return str(v)
        if isinstance(v, torch.device):
            return f"torch.device({str(v)!r})"
        if isinstance(v, torch.Size):
            return f"torch.Size({list(v)!r})"
        if isinstance(v, slice):
            return f"slice({self.value(v.start)}, {self.value(v.stop)}, {self.value(v.step)})"
        if isinstance(v, tuple):
            inner = ", ".join(self.value(x) for x in v)
            return f"({inner},)" if len(v) == 1 else f"({inner})"
        if isinstance(v, list):
            return "[" + ", ".join(self.value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{k!r}: {self.value(x)}" for k, x in v.items()) + "}"
        raise Unwritable(f"an argument of type {type(v).__name__}")


PROPERTIES = ("T", "H", "mT", "mH")
"""Ops that are Tensor properties, not calls."""


def _public_callable(op: Any, names: dict[int, str]) -> tuple[str, bool] | None:
    """(the spelling, whether it is a method) of the op: its callable found in torch's namespaces,
    else its named Tensor method, else the function its name is the path of under torch."""
    import torch

    if id(op.op) in names:
        return names[id(op.op)], False
    if op.name in PROPERTIES:
        return op.name, True
    method = getattr(op.method_variant, "__name__", "") if op.method_variant is not None else ""
    if method.isidentifier():  # the database's wrapper lambdas keep the method's argument order
        return method, True
    target: Any = torch  # the op's name as a path under torch: "nn.functional.dropout"
    for part in op.name.split("."):
        target = getattr(target, part, None) if part.isidentifier() else None
    if callable(target) and id(target) in names:
        return names[id(target)], False
    return None


def _call(op: Any, names: dict[int, str], writer: _Writer, sample: Any) -> str:
    """The forward's return expression: the op by its public name on the sample."""
    found = _public_callable(op, names)
    if found is None:
        raise Unwritable(f"no public name for {getattr(op.op, '__qualname__', op.op)!r}")
    name, is_method = found
    first = writer.value(sample.input)
    args = [writer.value(a) for a in sample.args]
    kwargs = [f"{k}={writer.value(v)}" for k, v in sample.kwargs.items()]
    if is_method and name in PROPERTIES:
        return f"{first}.{name}"
    if is_method:
        return f"{first}.{name}({', '.join([*args, *kwargs])})"
    return f"{name}({', '.join([first, *args, *kwargs])})"


def file_stem(op: Any) -> str:
    label = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
    return "torch_" + re.sub(r"[^0-9A-Za-z]+", "_", label).strip("_")


def op_label(op: Any) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def workload_source(op: Any, sample: Any, names: dict[int, str]) -> str:
    """The text of one op's workload file (raises ``Unwritable``)."""
    writer = _Writer()
    expr = _call(op, names, writer, sample)
    params = ", ".join(f"t{i}" for i in range(len(writer.tensors)))
    inputs = "".join(f"\n        {t}," for t in writer.tensors)
    return (
        f'"""PyTorch OpInfo `{op_label(op)}` on its first float32 CPU sample, called by its public name."""\n'
        "import torch\n"
        "import torch.nn as nn\n"
        "from math import inf, nan  # noqa: F401 - literal values of the sample\n\n\n"
        "class Model(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n\n"
        f"    def forward(self{', ' if params else ''}{params}):\n"
        f"        return {expr}\n\n\n"
        "def get_inputs():\n"
        f"    return [{inputs}\n    ]\n\n\n"
        "def get_init_inputs():\n"
        "    return []\n"
    )


def _differs(op: Any, sample: Any, path: Path) -> str | None:
    """Why the written file does not compute what the database's op computes on the sample (its
    public spelling takes other arguments than the database's wrapper), or None. A random op is
    held to the shapes and dtypes of its results."""
    import importlib.util

    import torch

    try:
        spec = importlib.util.spec_from_file_location(f"solar_op_surface_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        model, inputs = module.Model(*module.get_init_inputs()), module.get_inputs()
        with torch.no_grad():
            got = _tensors(model(*inputs))
            want = _tensors(op(sample.input, *sample.args, **sample.kwargs))
            again = _tensors(op(sample.input, *sample.args, **sample.kwargs))
            torch.manual_seed(12345)
            reseeded = _tensors(model(*inputs))
    except Exception as exc:  # noqa: BLE001 - a file that does not run is no workload
        return f"the written call fails ({type(exc).__name__})"
    if [(t.shape, t.dtype) for t in got] != [(t.shape, t.dtype) for t in want]:
        return "the public spelling returns other shapes or dtypes than the database's op"
    def same(a: Any, b: Any) -> bool:
        if a.is_complex():
            a, b = torch.view_as_real(a.to(torch.complex128)), torch.view_as_real(b.to(torch.complex128))
        if a.is_floating_point():
            return bool(torch.allclose(a.double(), b.double(), equal_nan=True))
        return bool(torch.equal(a, b))

    if not all(same(a, b) for a, b in zip(want, again)) or not all(same(a, b) for a, b in zip(got, reseeded)):
        return None  # a random op (the database's wrapper may seed it): shapes and dtypes are what can agree
    if not all(same(a, b) for a, b in zip(got, want)):
        return "the public spelling computes other values than the database's op"
    return None


SAMPLES_TRIED = 8
"""Samples looked at per op for one whose inputs and result are worth comparing."""


def _tensors(value: Any) -> list[Any]:
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def _quality(op: Any, sample: Any) -> int:
    """0: validates nothing (an empty input or result, an all-NaN result, the op rejects it);
    1: a result that is one value repeated (a window of length 1); 2: worth comparing."""
    import torch

    inputs = _tensors([sample.input, list(sample.args), dict(sample.kwargs)])
    if any(t.numel() == 0 for t in inputs):
        return 0
    try:
        with torch.no_grad():
            result = _tensors(op(sample.input, *sample.args, **sample.kwargs))
    except Exception:  # noqa: BLE001 - a sample the op rejects is no sample
        return 0
    if not result or any(t.numel() == 0 for t in result):
        return 0
    floats = [t for t in result if t.dtype.is_floating_point]
    if not all(bool(torch.isfinite(t).any()) for t in floats):
        return 0
    constant = all(t.numel() > 0 and bool((t.reshape(-1) == t.reshape(-1)[0]).all()) for t in result)
    return 1 if constant and sum(t.numel() for t in result) > 0 else 2


def first_meaningful_sample(op: Any) -> Any | None:
    """The first of the op's first float32 CPU samples (seed 0) worth comparing (``_quality`` 2),
    else the first that validates anything (``_quality`` 1), else None."""
    import itertools

    import torch

    torch.manual_seed(0)
    fallback = None
    for sample in itertools.islice(op.sample_inputs("cpu", torch.float32, requires_grad=False), SAMPLES_TRIED):
        quality = _quality(op, sample)
        if quality == 2:
            return sample
        if quality == 1 and fallback is None:
            fallback = sample
    return fallback


def write_torch_files(directory: Path, only: set[str] | None = None) -> list[OpFile]:
    """One workload file per OpInfo entry with a float32 CPU sample, under ``directory``. Written by
    a child interpreter: importing PyTorch's test internals freezes ``torch.backends`` flags
    (``disable_global_flags``) in the process that imports them."""
    import json
    import subprocess
    import sys

    command = [sys.executable, "-m", "solar_assets.coverage.op_surface.torch_ops", str(directory),
               json.dumps(sorted(only) if only is not None else None)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"writing the OpInfo workload files failed: {tail}")
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    return [OpFile(r["op"], Path(r["path"]) if r["path"] else None, r["skipped"]) for r in rows]


def _write_torch_files_here(directory: Path, only: set[str] | None = None) -> list[OpFile]:
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    directory.mkdir(parents=True, exist_ok=True)
    names = _public_names()
    written: list[OpFile] = []
    seen: set[str] = set()
    for op in op_db:
        label = op_label(op)
        if only is not None and label not in only and op.name not in only:
            continue
        if torch.float32 not in op.supported_dtypes("cpu"):
            written.append(OpFile(label, None, "no float32 on CPU"))
            continue
        try:
            sample = first_meaningful_sample(op)
        except Exception as exc:  # noqa: BLE001 - the database's own sampler failed: no file, the reason kept
            written.append(OpFile(label, None, f"sample_inputs raised {type(exc).__name__}"))
            continue
        if sample is None:
            written.append(OpFile(label, None, "no float32 CPU sample with a non-empty, finite result"))
            continue
        try:
            source = workload_source(op, sample, names)
        except Unwritable as exc:
            written.append(OpFile(label, None, str(exc)))
            continue
        stem = file_stem(op)
        while stem in seen:
            stem += "_"
        seen.add(stem)
        path = directory / f"{stem}.py"
        path.write_text(source)
        why = _differs(op, sample, path)
        if why:
            path.unlink()
            written.append(OpFile(label, None, why))
            continue
        written.append(OpFile(label, path))
    log.info("%d OpInfo files under %s", sum(f.path is not None for f in written), directory)
    return written


if __name__ == "__main__":  # the child of ``write_torch_files``: the files, then one JSON line of rows
    import json
    import sys
    import warnings

    warnings.simplefilter("ignore")
    names = json.loads(sys.argv[2]) if len(sys.argv) > 2 else None
    made = _write_torch_files_here(Path(sys.argv[1]), set(names) if names is not None else None)
    print(json.dumps([{"op": f.op, "path": str(f.path) if f.path else None, "skipped": f.skipped} for f in made]))
