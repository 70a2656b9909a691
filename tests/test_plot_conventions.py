"""Plots and byte counts (issue 17, item 9): one byte formatter everywhere, the ski-slope legend off
the lines, graph labels inside the picture."""
from __future__ import annotations

import pytest

from ir_programs import attention
from solar_assets.bounds.cache_aware.skislope import GIB, KIB, MIB, SkiSlope, SkiSlopeRow
from solar_assets.graph import build_einsum_graph
from solar_assets.report import format_bytes


@pytest.mark.parametrize("n, text", [
    (0, "0 B"),
    (999, "999 B"),
    (1000, "0.977 KiB"),  # 1000 / 1024: from 1000 of a unit the next one
    (1536, "1.5 KiB"),
    (64 * KIB, "64 KiB"),
    (14_009_857_664, "13 GiB"),  # 14009857664 / 2**30 = 13.05: the count the issue saw three ways
    (2_264_924_160, "2.11 GiB"),  # 2.10938 GiB
    (3 * MIB // 2, "1.5 MiB"),
    (2**40, "1 TiB"),
])
def test_format_bytes_binary_units(n, text):
    assert format_bytes(n) == text



def _png(path) -> bool:
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_ski_slope_legend_beside_the_axes(tmp_path, saved_figures):
    fused, unfused = 40 * MIB, 900 * MIB
    caps = [64 * KIB * 4**i for i in range(8)]  # 64 KiB .. 1 GiB
    rows = tuple(SkiSlopeRow(c, max(fused, unfused // (i + 1)), unfused, fused, unfused, 2, True, 0.1)
                 for i, c in enumerate(caps))
    path = SkiSlope("toy", rows).write_png(tmp_path / "ski.png", marks={"H100_SXM": 50 * MIB})
    assert _png(path)
    (fig,) = saved_figures
    (ax,) = fig.axes
    renderer = fig.canvas.get_renderer()
    legend, axes_box = ax.get_legend().get_window_extent(renderer), ax.get_window_extent(renderer)
    assert legend.x0 >= axes_box.x1  # beside the axes: it cannot cover the fused line
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "fused (∞ buffer): 40 MiB" in labels and "unfused (∞ buffer): 900 MiB" in labels
    ticks = [t.get_text() for t in ax.yaxis.get_majorticklabels() if t.get_text()]
    assert ticks and all(t.endswith(("B", "KiB", "MiB", "GiB", "TiB")) for t in ticks)
    assert caps[-1] == GIB


def test_graph_png_labels_unclipped_and_bytes_formatted(tmp_path, saved_figures):
    graph = build_einsum_graph(attention(2, 4, 64, 32))
    path = graph.draw_png(tmp_path / "attention.png")
    assert _png(path)
    (fig,) = saved_figures
    (ax,) = fig.axes
    assert format_bytes(graph.bytes_unfused) in ax.get_title()
    texts = [t for t in ax.texts]
    assert texts and not any(t.get_clip_on() for t in texts)
    renderer = fig.canvas.get_renderer()
    box = ax.get_window_extent(renderer)
    for t in texts:  # every node and edge label inside the axes
        ext = t.get_window_extent(renderer)
        assert box.x0 <= ext.x0 and ext.x1 <= box.x1 and box.y0 <= ext.y0 and ext.y1 <= box.y1, t.get_text()
