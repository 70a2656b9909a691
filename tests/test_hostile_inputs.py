"""Hostile and careless inputs (issue 13), one test per class fixed on branch integ: corrupt cache
entries, planted kernel modules, agent replies too large or too deep, workloads larger than the
part's DRAM, spec files too large to parse. Each test failed against the code before its fix
(run with PYTHONPATH pointing at the older checkout)."""
from __future__ import annotations

import json
import logging
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from langchain_core.messages import AIMessage

from ir_schemas import Kernel, Loop, Program, TensorDecl
from test_agent import TINY_IR, fake, ir_reply, with_expr
from workload_texts import TINY_LINEAR_RELU, TINY_LINEAR_RELU_MACS
from solar_assets import pipeline
from solar_assets.execute import cache as kernel_cache
from solar_assets.execute import execute_program
from solar_assets.execute.codegen import plan_kernel
from solar_assets.hardware import HardwareError, load_hardware
from solar_assets.hardware.spec import hardware_dir
from solar_assets.ir import parse_kernel
from solar_assets.agent import use_chat_model


@pytest.fixture(autouse=True)
def no_configured_model(monkeypatch):
    monkeypatch.delenv("SOLAR_LLM", raising=False)
    monkeypatch.delenv("SOLAR_TRANSLATOR", raising=False)


def write_workload(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / "workloads" / f"{name}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def warnings_naming(caplog, path: Path) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and str(path) in r.getMessage()]


# ---------------------------------------------------------------------------- 3. corrupt cache entries
def test_truncated_cache_entries_are_recomputed_and_a_warning_names_each_file(tmp_path, caplog):
    """Before: the truncated IR entry failed the workload with JSONDecodeError on every later run."""
    path = write_workload(tmp_path, "tiny_mlp", TINY_LINEAR_RELU)
    cache = tmp_path / "cache"
    first = pipeline.analyze_workload(path, ["H100_SXM"], cache_dir=cache, cache_aware=False)
    assert first.ok, first.error
    # the stage entries (the reads manifest, which decides their keys, has its own test below)
    entries = sorted(p for p in cache.rglob("*") if p.is_file() and not p.name.endswith(".sha256")
                     and p.parent.name != "reads")
    assert {p.parent.name for p in entries} >= {"ir", "golden", "size", "verdict"}
    for p in entries:  # a crash or a full disk in the middle of each write
        p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])

    with caplog.at_level(logging.WARNING):
        second = pipeline.analyze_workload(path, ["H100_SXM"], cache_dir=cache, cache_aware=False)
    assert second.ok, second.error
    assert second.rows[0].macs == TINY_LINEAR_RELU_MACS  # 8 x 32 x 16, by definition of the Linear
    assert second.rows[0].model_dump() == first.rows[0].model_dump()
    for p in entries:
        assert warnings_naming(caplog, p), f"no warning names {p}"
    # the recomputed entries are whole again: a third run reads them without a word
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        third = pipeline.analyze_workload(path, ["H100_SXM"], cache_dir=cache, cache_aware=False)
    assert third.ok and not [r for r in caplog.records if r.levelno >= logging.WARNING and "cache" in r.getMessage()]


def test_a_truncated_reads_manifest_is_named_and_the_source_recomputed(tmp_path, caplog):
    """The manifest of what a file reads decides its keys: a truncated one is named, and the
    source misses (its entries were keyed by what the manifest said) until a load records it again."""
    path = write_workload(tmp_path, "tiny_mlp", TINY_LINEAR_RELU)
    cache = tmp_path / "cache"
    first = pipeline.analyze_workload(path, ["H100_SXM"], cache_dir=cache, cache_aware=False)
    [manifest] = (cache / "reads").glob("*.json")
    manifest.write_bytes(manifest.read_bytes()[:5])
    with caplog.at_level(logging.WARNING):
        second = pipeline.analyze_workload(path, ["H100_SXM"], cache_dir=cache, cache_aware=False)
    assert second.ok and second.rows[0].model_dump() == first.rows[0].model_dump()
    assert warnings_naming(caplog, manifest)
    assert manifest.is_file()  # written again by the load


# ---------------------------------------------------------------------------- 5. kernel cache
def reduction_program(scale: float) -> Program:
    """Y[i] = sum_j X[i, j]**3 * scale: a reduction, so it runs as a numba kernel (not einsum)."""
    return Program(
        name="planted", inputs=("X",), outputs=("Y",),
        tensors=(TensorDecl(name="X", shape=(5, 3), dtype="float64", role="input", binding="input:0"),
                 TensorDecl(name="Y", shape=(5,), dtype="float64", role="output")),
        steps=(Kernel(name="cubes", loops=(Loop(var="i", extent=5), Loop(var="j", extent=3)),
                      out="Y[i]", update="+=", expr=f"X[i, j] ** 3 * {scale}"),))


def planted_module(marker: Path) -> str:
    """What another user would put under the kernel's predictable name."""
    return (f"open({str(marker)!r}, 'w').write('planted code ran')\n\n"
            "def kernel(*args):\n    pass\n")


def run_reduction(program: Program, scale: float) -> None:
    x = np.arange(15, dtype=np.float64).reshape(5, 3) / 7
    (y,) = execute_program(program, {"input:0": x}, np.float64)
    np.testing.assert_allclose(y, (x ** 3).sum(axis=1) * scale, rtol=1e-12)


def test_a_planted_kernel_module_is_never_run_and_is_rewritten(tmp_path, monkeypatch, caplog):
    """Before: any file named solar_kernel_<digest>.py was imported as it was."""
    monkeypatch.setenv("SOLAR_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(kernel_cache, "_COMPILED", {})
    scale = 0.6180339887
    p = reduction_program(scale)
    plan = plan_kernel(parse_kernel(p.steps[0]), p)
    target = kernel_cache.cache_dir() / f"solar_kernel_{plan.digest}.py"
    target.parent.mkdir(parents=True)
    marker = tmp_path / "marker"
    target.write_text(planted_module(marker))

    with caplog.at_level(logging.WARNING):
        run_reduction(p, scale)
    assert not marker.exists()
    assert target.read_text() == plan.source
    assert warnings_naming(caplog, target)


@pytest.mark.parametrize("unsafe", ["writable by others", "owned by another user", "a symlink"])
def test_a_fallback_kernel_dir_that_is_not_private_is_never_imported_from(tmp_path, monkeypatch, caplog, unsafe):
    """SOLAR_HOME cannot be written, so kernels would go to $TMPDIR/solar_numba_<uid>. Before: that
    directory was used whoever owned it, and a planted module in it was imported."""
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("")
    monkeypatch.setenv("SOLAR_HOME", str(blocker / "home"))  # mkdir under a file fails, even as root
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    monkeypatch.setattr(kernel_cache, "_COMPILED", {})
    monkeypatch.setattr(kernel_cache, "_WARNED", set(), raising=False)
    scale = {"writable by others": 1.25, "owned by another user": 1.375, "a symlink": 1.4375}[unsafe]
    p = reduction_program(scale)
    plan = plan_kernel(parse_kernel(p.steps[0]), p)
    fallback = tmp_path / "tmp" / f"solar_numba_{os.getuid()}"  # $TMPDIR/solar_numba_<uid>
    elsewhere = tmp_path / "attacker"
    elsewhere.mkdir(parents=True)
    fallback.parent.mkdir(parents=True)
    if unsafe == "a symlink":
        fallback.symlink_to(elsewhere, target_is_directory=True)
    else:
        fallback.mkdir()
        if unsafe == "writable by others":
            fallback.chmod(0o777)
        else:
            if os.getuid() != 0:
                pytest.skip("handing a directory to another user needs root")
            os.chown(fallback, 65534, 65534)
    marker = tmp_path / "marker"
    (elsewhere / f"solar_kernel_{plan.digest}.py").write_text(planted_module(marker))
    if unsafe != "a symlink":
        (fallback / f"solar_kernel_{plan.digest}.py").write_text(planted_module(marker))

    with caplog.at_level(logging.WARNING):
        run_reduction(p, scale)  # compiled in memory: the right answer, no disk cache
    assert not marker.exists()
    assert warnings_naming(caplog, fallback)


def test_the_fallback_kernel_dir_is_created_private(tmp_path, monkeypatch):
    """Before: it was created with the umask's mode (0755 here), readable by everyone."""
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("")
    monkeypatch.setenv("SOLAR_HOME", str(blocker / "home"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(kernel_cache, "_COMPILED", {})
    scale = 1.03125
    p = reduction_program(scale)
    plan = plan_kernel(parse_kernel(p.steps[0]), p)
    run_reduction(p, scale)
    fallback = tmp_path / f"solar_numba_{os.getuid()}"
    assert fallback.stat().st_mode & 0o777 == 0o700 and fallback.stat().st_uid == os.getuid()
    assert (fallback / f"solar_kernel_{plan.digest}.py").read_text() == plan.source


# ---------------------------------------------------------------------------- 9. agent replies
DEPTH = 200_000
DEEP_REPLIES = {
    # "- - - ... y": Python's parser ran out of stack with an empty MemoryError, ending the loop
    "unary chain": lambda: ir_reply(with_expr(TINY_IR, "relu", "-" * DEPTH + "y[m, n]")),
    # "y + 0.0 + 0.0 + ...": RecursionError during AST construction
    "operator chain": lambda: ir_reply(with_expr(TINY_IR, "relu", "y[m, n]" + " + 0.0" * DEPTH)),
    # JSON nested 200,000 deep: RecursionError in json.loads
    "json nesting": lambda: AIMessage(content='{"name": ' + "[" * DEPTH + "]" * DEPTH + "}"),
    # a correct program padded past the size limit: accepted as it was
    "oversized": lambda: AIMessage(content=json.dumps(TINY_IR) + " " * 600_000),
}


@pytest.mark.parametrize("case", list(DEEP_REPLIES))
def test_a_reply_too_deep_or_too_large_is_rejected_and_the_loop_goes_on(tmp_path, case):
    path = write_workload(tmp_path, "tiny_mlp", TINY_LINEAR_RELU)
    model = fake(DEEP_REPLIES[case](), ir_reply(TINY_IR))
    with use_chat_model(model, "fake:tiny"):
        t = pipeline.translate_source(pipeline.read_source(path), tmp_path / "cache", translator="agent")
    assert t.attempts == 2 and [a.accepted for a in t.attempt_log] == [False, True]
    (diagnostic,) = t.attempt_log[0].diagnostics
    assert "limit" in diagnostic and len(diagnostic) < 1000
    assert diagnostic in model.calls[1][-1].content  # the second prompt says what was wrong


# ---------------------------------------------------------------------------- 10a. DRAM capacity
BIG_LINEAR = '''\
import torch
import torch.nn as nn

batch_size = 1048576
in_features = 8192
out_features = 8192


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(self.fc(x))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
'''


def test_a_workload_larger_than_the_parts_dram_is_flagged(tmp_path):
    """2^20 x 2^13 float32 input, the same output and the Linear's intermediate (32 GiB each) plus
    its weight (256 MiB) and bias (32 KiB) need 96.25 GiB; an H100 SXM has 80 GiB. Traced on fake
    tensors: nothing of that size is allocated. Before: no word about it."""
    from solar_assets.graph import build_einsum_graph
    from solar_assets.report.capacity import dram_capacity_note

    path = write_workload(tmp_path, "big_linear", BIG_LINEAR)
    program = pipeline.translate_source(pipeline.read_source(path)).program
    needed = 3 * 2**20 * 2**13 * 4 + 2**13 * 2**13 * 4 + 2**13 * 4
    assert needed / 2**30 == pytest.approx(96.25, abs=1e-4)
    note = dram_capacity_note(build_einsum_graph(program), load_hardware("H100_SXM"))
    assert note == f"exceeds DRAM capacity of H100_SXM ({needed / 2**30:.3g} GiB > 80 GiB)"
    assert dram_capacity_note(build_einsum_graph(program), load_hardware("B200")) == ""  # 180 GiB


def test_the_report_row_of_a_workload_over_capacity_says_so_and_keeps_its_bounds(tmp_path):
    """The tiny Linear + ReLU (x 8x32, W 16x32, b 16, its intermediate 8x16 and output 8x16, float32:
    4 x (256 + 512 + 16 + 128 + 128) = 4160 B) on an H100 spec whose DRAM is cut to 4 KiB."""
    spec = yaml.safe_load((hardware_dir() / "H100_SXM.yaml").read_text())
    spec.update(name="H100_4KiB", dram_capacity_bytes=4096)
    hw_dir = tmp_path / "hardware"
    hw_dir.mkdir()
    (hw_dir / "H100_4KiB.yaml").write_text(yaml.safe_dump(spec))
    path = write_workload(tmp_path, "tiny_mlp", TINY_LINEAR_RELU)
    result = pipeline.analyze_workload(path, ["H100_4KiB"], hardware_dir=hw_dir, cache_aware=False)
    assert result.ok, result.error
    (row,) = result.rows
    assert row.notes == "exceeds DRAM capacity of H100_4KiB (4.06 KiB > 4 KiB)"
    assert 4 * (8 * 32 + 16 * 32 + 16 + 8 * 16 + 8 * 16) == 4160 and 4160 / 1024 == 4.0625
    assert row.macs == TINY_LINEAR_RELU_MACS and row.sol_fused_s > 0  # still bounded


# ---------------------------------------------------------------------------- 10b. spec size
def test_a_spec_file_over_the_size_limit_is_refused_before_parsing(tmp_path):
    """A valid spec padded with 2 MiB of comment lines. Before: parsed (a 40 MB one took minutes)."""
    text = (hardware_dir() / "H100_SXM.yaml").read_text()
    path = tmp_path / "H100_SXM.yaml"
    path.write_text(text + ("# padding padding padding padding padding padding padding padding\n" * 32768))
    assert path.stat().st_size > 2 * 2**20
    start = time.perf_counter()
    with pytest.raises(HardwareError) as caught:
        load_hardware(path)
    assert time.perf_counter() - start < 1.0
    message = str(caught.value)
    assert message.startswith(str(path)) and "1 MiB" in message and "\n" not in message


def test_an_edited_or_unsigned_cache_entry_is_not_used(tmp_path, caplog):
    """An entry whose bytes still parse but are not what was written (edited by hand, or left by a
    writer without its digest) is discarded like a torn one: the reader gets a miss."""
    from solar_assets import cache_store

    entry = tmp_path / "ir" / "w-0123.json"
    assert cache_store.store_json(entry, {"macs": 4096})
    assert cache_store.load_json(entry) == {"macs": 4096}
    entry.write_text(json.dumps({"macs": 1}))  # valid JSON, wrong figure
    with caplog.at_level(logging.WARNING):
        assert cache_store.load_json(entry) is None
    assert warnings_naming(caplog, entry) and not entry.exists()
    entry.write_text(json.dumps({"macs": 4096}))  # no digest beside it
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        assert cache_store.load_json(entry) is None
    assert any("no digest" in m for m in warnings_naming(caplog, entry))
