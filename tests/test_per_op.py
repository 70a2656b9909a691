"""The per-op breakdown on a KernelBench-style conv → relu → linear model, against hand-computed
MACs and bytes and torch's own FlopCounterMode."""
from __future__ import annotations

from pathlib import Path

import pytest

from solar_assets import pipeline
from solar_assets.graph import build_einsum_graph
from solar_assets.report.per_op import PerOpTable, format_per_op, per_op_rows, write_per_op_csv

CONV_RELU_LINEAR = '''\
import torch
import torch.nn as nn

batch_size = 2
in_channels = 3
out_channels = 4
height = 8
width = 8
kernel_size = 3
hidden = 5


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, hidden):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.fc = nn.Linear(out_channels * (height - kernel_size + 1) * (width - kernel_size + 1), hidden)

    def forward(self, x):
        y = torch.relu(self.conv(x))
        return self.fc(y.flatten(1))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, hidden]
'''
B, C, K, H, W, R, HID = 2, 3, 4, 8, 8, 3, 5
P = Q = H - R + 1  # 6: valid conv
FEATURES = K * P * Q  # 144


@pytest.fixture(scope="module")
def workload(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("per_op") / "conv_relu_linear.py"
    path.write_text(CONV_RELU_LINEAR)
    return path


@pytest.fixture(scope="module")
def graph_and_bounds(workload):
    src = pipeline.read_source(workload)
    graph = build_einsum_graph(pipeline.translate_source(src, None).program)
    hw = pipeline.load_spec("H100_SXM")
    return graph, pipeline.bound_graph(src, graph, hw), hw


@pytest.fixture(scope="module")
def rows(graph_and_bounds):
    graph, bounds, _ = graph_and_bounds
    return {r.node: r for r in per_op_rows("conv_relu_linear", graph, bounds)}


def test_one_row_per_framework_op_with_module_paths(rows):
    assert set(rows) == {"convolution", "relu", "addmm"}  # the flatten is a view: no row
    assert (rows["convolution"].module, rows["convolution"].op) == ("conv", "aten.convolution.default")
    assert (rows["addmm"].module, rows["addmm"].op) == ("fc", "aten.addmm.default")
    assert rows["relu"].module == ""  # torch.relu in Model.forward itself: no submodule


def test_macs_and_bytes_by_hand(rows):
    f32 = 4
    x, w, b, y = B * C * H * W, K * C * R * R, K, B * K * P * Q
    assert rows["convolution"].macs == y * C * R * R
    assert rows["convolution"].bytes == f32 * (x + w + b + y)  # one eager kernel: inputs once, output once
    assert rows["relu"].macs == 0 and rows["relu"].flops == y
    assert rows["relu"].bytes == f32 * 2 * y
    assert rows["addmm"].macs == B * FEATURES * HID
    assert rows["addmm"].bytes == f32 * (B * FEATURES + HID * FEATURES + HID + B * HID)


def test_flops_agree_with_flop_counter_mode(workload, rows):
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from solar_assets.workloads import load_torch_workload

    w = load_torch_workload(pipeline.read_source(workload))
    with FlopCounterMode(display=False) as counter:
        w.model(*w.inputs)
    counts = {str(op): n for op, n in counter.get_flop_counts()["Global"].items()}
    aten = torch.ops.aten
    # FlopCounterMode counts 2 per MAC of convolutions and matmuls (no bias, no elementwise ops)
    assert counts[str(aten.convolution)] == 2 * rows["convolution"].macs
    assert counts[str(aten.addmm)] == 2 * rows["addmm"].macs


def test_time_share_and_limiter(rows, graph_and_bounds):
    _, bounds, hw = graph_and_bounds
    beta = hw.dram_bytes_per_s
    tf32, f32 = hw.unit_peak("matrix", "tf32"), hw.unit_peak("vector", "fp32")
    conv, mm = rows["convolution"], rows["addmm"]
    # PyTorch's defaults: cuDNN convolutions in TF32 on the tensor cores, the rest of the conv op (its
    # bias) on the fp32 vector pipes, concurrently; an fp32 matmul in IEEE fp32, on the same vector pipes
    # as its bias (their times add); relu on the vector pipes
    assert conv.compute_s == pytest.approx(max(2 * conv.macs / tf32, (conv.flops - 2 * conv.macs) / f32))
    assert mm.compute_s == pytest.approx(mm.flops / f32)
    assert rows["relu"].compute_s == pytest.approx(rows["relu"].flops / f32)
    for r in rows.values():
        assert r.memory_s == pytest.approx(r.bytes / beta)
        assert r.time_s == max(r.compute_s, r.memory_s)
        assert r.limiter == ("compute" if r.compute_s > r.memory_s else "memory")
    total = sum(r.time_s for r in rows.values())
    assert sum(r.share for r in rows.values()) == pytest.approx(1.0)
    assert rows["addmm"].share == pytest.approx(rows["addmm"].time_s / total)
    ranked = sorted(rows.values(), key=lambda r: r.rank)
    assert [r.rank for r in ranked] == [1, 2, 3] and ranked[0].time_s >= ranked[1].time_s >= ranked[2].time_s


def test_table_text_csv_and_frame(rows, tmp_path):
    table = PerOpTable(sorted(rows.values(), key=lambda r: r.rank))
    text = format_per_op(table.rows, top=2)
    assert "conv_relu_linear on H100_SXM: 3 ops, top 2" in text
    assert len([line for line in text.splitlines() if line[:1].isdigit()]) == 2
    assert max(len(line) for line in text.splitlines()) <= 120
    frame = table.to_pandas()
    assert list(frame["node"]) == [r.node for r in table] and frame["macs"].sum() == sum(r.macs for r in table)
    import pandas as pd

    back = pd.read_csv(write_per_op_csv(table.rows, tmp_path / "per_op.csv"))
    assert list(back["bytes"]) == [r.bytes for r in table]
