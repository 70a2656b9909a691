"""Tracing at full size costs shapes only, and a second analysis of an unchanged file hits the caches."""
from __future__ import annotations

import textwrap
import time
from pathlib import Path

import pytest

from solar_assets import pipeline
from solar_assets.translate import trace_torch
from solar_assets.translate.torch_tracer import REAL_TENSOR_NOTE
from solar_assets.workloads import load_torch_workload, read_workload_source

BIG_GEMM = """\
import torch
import torch.nn as nn

M = 16384
N = 16384
K = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(K, N))

    def forward(self, a):
        return a @ self.w


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return []
"""

# __init__ reads a number out of a tensor: impossible on fake tensors, so the tracer loads it for real.
NEEDS_VALUES = """\
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.width = int(torch.randint(6, 7, (1,)))  # always 6, but only a real tensor says so
        self.fc = nn.Linear(4, self.width)

    def forward(self, x):
        return torch.relu(self.fc(x))


def get_inputs():
    return [torch.randn(3, 4)]


def get_init_inputs():
    return []
"""

SMALL = """\
import torch
import torch.nn as nn

BATCH = 8


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 12)

    def forward(self, x):
        return torch.softmax(self.fc(x), dim=-1)


def get_inputs():
    return [torch.randn(BATCH, 16)]


def get_init_inputs():
    return []
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    return path


def _peak_rss_reset() -> int | None:
    """Reset the kernel's peak-RSS mark (Linux); the current RSS in KiB, or None if unsupported."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return _status_kib("VmRSS")
    except OSError:
        return None


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise LookupError(field)


def test_fake_load_allocates_no_data(tmp_path):
    import torch
    from torch._subclasses.fake_tensor import FakeTensor

    w = load_torch_workload(read_workload_source(_write(tmp_path, "gemm_16k", BIG_GEMM)), fake=True)
    assert w.fake
    (x,), weight = w.inputs, w.model.w
    assert isinstance(x, FakeTensor) and isinstance(weight, FakeTensor)
    assert tuple(x.shape) == (16384, 16384) and weight.dtype == torch.float32


def test_full_size_trace_of_a_16k_gemm_is_fast_and_small(tmp_path):
    path = _write(tmp_path, "gemm_16k", BIG_GEMM)
    trace_torch(read_workload_source(_write(tmp_path, "warm_up", SMALL)))  # torch.export's one-time set-up
    base = _peak_rss_reset()
    start = time.perf_counter()
    translation = trace_torch(read_workload_source(path))
    seconds = time.perf_counter() - start
    program = translation.program
    assert REAL_TENSOR_NOTE not in translation.diagnostics  # traced on fake tensors
    assert program.tensor(program.outputs[0]).shape == (16384, 16384)
    from solar_assets.graph import build_einsum_graph

    assert build_einsum_graph(program).macs == 16384**3
    # real tensors: two 1 GiB operands drawn with randn (seconds) and a 1 GiB output
    assert seconds < 20, f"a shapes-only trace took {seconds:.1f} s"
    if base is not None:
        grown_mib = (_status_kib("VmHWM") - base) / 1024
        assert grown_mib < 400, f"tracing grew the peak RSS by {grown_mib:.0f} MiB (one operand is 1024 MiB)"


def test_a_file_that_needs_values_is_traced_for_real(tmp_path):
    translation = trace_torch(read_workload_source(_write(tmp_path, "needs_values", NEEDS_VALUES)))
    assert REAL_TENSOR_NOTE in translation.diagnostics
    assert translation.program.tensor(translation.program.outputs[0]).shape == (3, 6)


def test_second_analysis_hits_the_caches(tmp_path, monkeypatch):
    path = _write(tmp_path, "small", SMALL)
    cache = tmp_path / "cache"
    first = pipeline.analyze_workload(path, cache_dir=cache)
    assert first.ok, first.error
    assert list((cache / "verdict").glob("small-*.json"))  # the accepted verdict is stored

    def must_not_run(*args, **kwargs):
        raise AssertionError("a cached stage ran again")

    import solar_assets.golden
    import solar_assets.translate
    import solar_assets.validate

    monkeypatch.setattr(solar_assets.translate, "trace_torch", must_not_run)
    monkeypatch.setattr(solar_assets.validate, "validate_program", must_not_run)
    monkeypatch.setattr(solar_assets.golden, "make_golden", must_not_run)
    second = pipeline.analyze_workload(path, cache_dir=cache)
    assert second.ok, second.error
    assert second.rows[0].macs == first.rows[0].macs and second.rows[0].max_abs_error == first.rows[0].max_abs_error
    assert second.validated_size == "full"


def test_a_failed_verdict_is_not_cached(tmp_path, monkeypatch):
    from solar_assets.validate.compare import ValidationResult
    from solar_assets.validate.verdict_cache import load_verdict, save_verdict

    failed = ValidationResult(ok=False, checks=[], max_abs_error=1.0, max_rel_error=1.0, seconds=0.1)
    save_verdict(tmp_path / "v.json", failed)
    assert not (tmp_path / "v.json").exists() and load_verdict(tmp_path / "v.json") is None


@pytest.mark.parametrize("garbage", ["", "{", '{"ok": true}'])
def test_a_torn_verdict_file_is_ignored(tmp_path, garbage):
    from solar_assets.validate.verdict_cache import load_verdict

    (tmp_path / "v.json").write_text(garbage)
    assert load_verdict(tmp_path / "v.json") is None
