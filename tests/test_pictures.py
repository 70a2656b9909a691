"""The cheap per-partition pictures (issue 16): the roofline's plain-text decade labels, its
640×480 palette PNG with the roof, the key and the axis labels a reader needs, and the einsum
graph's edges ending at the squares' borders."""
from __future__ import annotations

import struct

import pytest

from ir_programs import attention
from solar_assets.graph import build_einsum_graph
from solar_assets.report.roofline_plot import log_ticks, plot_roofline, power_label


@pytest.mark.parametrize("value, text", [(1.0, "10⁰"), (0.01, "10⁻²"), (1000.0, "10³"), (2e-1, "2×10⁻¹"),
                                         (5e12, "5×10¹²")])
def test_power_labels_are_plain_text_superscripts(value, text):
    assert power_label(value) == text


def test_log_ticks_are_the_decades_inside_else_one_two_five():
    assert log_ticks(0.03, 4000.0) == [0.1, 1.0, 10.0, 100.0, 1000.0]
    assert log_ticks(1e-9, 1e9) == [10.0 ** k for k in range(-9, 10, 3)]  # 19 decades: every 3rd, 7 labels
    assert log_ticks(15.0, 160.0) == [20.0, 50.0, 100.0]  # one decade inside: 1, 2, 5 × 10ᵏ



def _png_header(path) -> tuple[int, int, int]:
    """(width, height, colour type) from the IHDR chunk."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height, data[25]


def test_per_pair_roofline_is_640_by_480_with_its_roof_key_and_units(tmp_path, saved_figures):
    from test_ui_metadata import _op, _row  # the hand-made memory-bound MLP row and its ops

    row = _row()
    ops = [_op(1, "fc1", "addmm", 16384, 11520, 3.6e-9, 0.75), _op(2, "", "cat", 0, 4096, 1e-9, 0.25)]
    png = plot_roofline([row], tmp_path / "r.png", per_op=ops)
    assert _png_header(png) == (640, 480, 3)  # colour type 3: a palette
    (fig,) = saved_figures
    (ax,) = fig.axes
    texts = [t.get_text() for t in ax.texts]
    # the roof: 67 TFLOP/s, 3.35 TB/s, so the ridge at 67 / 3.35 = 20 FLOP/byte
    assert "roof float32: 67 TFLOP/s, 3.35 TB/s" in texts
    assert any(line.get_xdata()[1] == pytest.approx(20.0) for line in ax.lines if len(line.get_xdata()) == 3)
    assert "w" in texts and "(hollow: unfused)" in texts
    assert "(triangles: 1 framework op at unfused time; 1 without FLOPs not shown)" in texts
    assert "fc1 addmm 75%" in texts
    assert ax.get_xlabel() == "arithmetic intensity (FLOP/byte)" and ax.get_ylabel() == "attained at SOL (TFLOP/s)"
    lo, hi = ax.get_xlim()
    assert [t for t in texts if t.startswith("10")] and all(power_label(x) in texts for x in log_ticks(lo, hi))
    renderer = fig.canvas.get_renderer()
    figure_box = fig.bbox
    for t in ax.texts:  # nothing outside the picture
        ext = t.get_window_extent(renderer)
        assert figure_box.x0 <= ext.x0 and ext.x1 <= figure_box.x1 and figure_box.y0 <= ext.y0, t.get_text()


def test_graph_edges_end_at_the_squares_and_the_picture_fits_its_content(tmp_path, saved_figures):
    import networkx as nx

    graph = build_einsum_graph(attention(2, 4, 64, 32))  # a chain of 6 layers; 7 edges, 2 of them skip a layer
    graph.draw_png(tmp_path / "g.png")
    (fig,) = saved_figures
    (ax,) = fig.axes
    shafts = ax.collections[0].get_segments()
    depth = {n: d for d, layer in enumerate(nx.topological_generations(graph.nx)) for n in layer}
    side = 1800 ** 0.5 / 72  # inches (the axes' data units): a node's square
    # straight down, from one square's bottom edge to an 8 pt arrowhead on the next's top edge; layers 1 in apart
    expected = sorted(depth[b] - depth[a] - side - 8 / 72 for a, b in graph.nx.edges)
    assert all(x0 == pytest.approx(x1) for (x0, _), (x1, _) in shafts)
    assert sorted(y0 - y1 for (_, y0), (_, y1) in shafts) == pytest.approx(expected)
    width, _, colour = _png_header(tmp_path / "g.png")
    assert colour == 3 and width < 400  # one column: as wide as its labels and title, not a 6.5 in page


def test_the_roofline_draws_one_roof_per_unit_and_dtype_with_the_specs_own_peak(tmp_path, saved_figures):
    """A bf16 block whose matmuls run on the tensor cores and whose GELU runs in fp32: a roof for
    each unit and dtype the work ran at, each labelled with the spec's figure (H100 SXM: bf16
    matrix 989.5 TFLOP/s, fp32 vector 67 TFLOP/s), not one blended effective peak."""
    from test_ui_metadata import _row

    row = _row().model_copy(update={"peaks_fused": (
        "matrix 1.526e-07 s (bf16 9.895e+14 FLOP/s); vector.bf16 6.939e-09 s (bf16 1.34e+14 FLOP/s); "
        "vector.fp32 5.877e-09 s (fp32 6.7e+13 FLOP/s)"), "peak_flop_per_s": 4.29e14})
    plot_roofline([row], tmp_path / "r.png")
    (fig,) = saved_figures
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "roof matrix bf16: 989.5 TFLOP/s, 3.35 TB/s" in texts
    assert "roof vector bf16: 134 TFLOP/s, 3.35 TB/s" in texts and "roof vector fp32: 67 TFLOP/s, 3.35 TB/s" in texts
    assert not any("429" in t for t in texts)  # the effective peak is no roof
