"""Engineering units as every stage prints them: counts (SI), bytes (binary), seconds.

At the bottom of the package (it imports nothing of solar), so the graph, the bounds, the
measurement and the report all read one ``13.0 GiB`` and none imports another for it.
"""
from __future__ import annotations

_PREFIXES = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def format_count(x: float, unit: str = "") -> str:
    """Decimal SI prefix, 3 significant digits: ``1.07 G`` (MACs, FLOP/s, bytes/s); a value that
    rounds to 1000 takes the next prefix (``1 G``, never ``1e+03 M``)."""
    for (scale, prefix), bigger in zip(_PREFIXES, (None, *_PREFIXES)):
        if abs(x) >= scale:
            text = f"{x / scale:.3g}"
            if bigger is not None and abs(float(text)) >= 1000:
                return f"{x / bigger[0]:.3g} {bigger[1]}{unit}".rstrip()
            return f"{text} {prefix}{unit}".rstrip()
    text = f"{x:.3g}"
    if abs(float(text)) >= 1000:
        return f"{x / 1e3:.3g} k{unit}".rstrip()
    return f"{text} {unit}".rstrip()


def format_bytes(n: float) -> str:
    """Binary prefixes, as memory sizes are read: ``12 MiB``; from 1000 of a unit the next one
    (``0.98 GiB``), so a cell never reads ``1.02e+03 MiB``."""
    for scale, prefix in ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if abs(n) >= scale or (prefix != "TiB" and abs(n) >= 1000 * scale / 1024):
            return f"{n / scale:.3g} {prefix}"
    return f"{n:.0f} B"


def format_seconds(t: float) -> str:
    """``32.1 µs``, ``4.2 ms``, ``1.5 s``, ``936 ps``; a value that rounds to 1000 takes the next
    unit (``1 ms``, never ``1e+03 µs``)."""
    units = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"), (1e-12, "ps"))
    for (scale, unit), bigger in zip(units, (None, *units)):
        if abs(t) >= scale or unit == "ps":
            text = f"{t / scale:.3g}"
            if bigger is not None and abs(float(text)) >= 1000:
                return f"{t / bigger[0]:.3g} {bigger[1]}"
            return f"{text} {unit}" if t else "0 s"
    return "0 s"  # pragma: no cover
