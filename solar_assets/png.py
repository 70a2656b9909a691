"""One matplotlib figure to a PNG file, cheaply: the pictures of every Dagster partition
(the per-pair roofline, the einsum graph) are drawn on the Dagster path's critical path.

At the bottom of the package (it imports nothing of solar), so the graph and the report share it.
Matplotlib and Pillow are imported when a picture is written, never when this module is.
"""
from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def write_png(fig: Figure, path: str | Path) -> Path:
    """Draw ``fig`` (``savefig``'s raw RGBA pixels: one draw, no encoding) and write it as a
    256-colour palette PNG at zlib level 1. The figures are opaque (white background, a few
    flat colours and their anti-aliased edges), so neither the alpha channel nor 24-bit colour
    says anything a reader sees: quantising (Pillow's fast octree) and encoding one byte a pixel
    take half the time of ``savefig``'s RGBA PNG, for a file of half the size. No
    ``bbox_inches="tight"`` second draw either: callers size their figures."""
    from PIL import Image

    pixels = io.BytesIO()
    fig.savefig(pixels, format="raw")
    width, height = fig.canvas.get_width_height(physical=True)  # whole pixels, as the Agg renderer has them
    image = Image.frombuffer("RGBA", (width, height), pixels.getbuffer(), "raw", "RGBA", 0, 1).convert("RGB")
    path = Path(path)
    image.quantize(256, method=Image.Quantize.FASTOCTREE).save(path, format="png", compress_level=1)
    return path
