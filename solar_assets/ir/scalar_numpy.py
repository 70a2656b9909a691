"""Float64 array forms of the IR's scalar functions that NumPy has under no single name, with the
IR's NaN rules (``max``/``min`` and ``relu`` propagate NaN, as torch.maximum and torch.relu do)."""
from __future__ import annotations

import numpy as np


def nan_max(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where((a > b) | np.isnan(a), a, b)


def nan_min(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where((a < b) | np.isnan(a), a, b)


def relu(x: np.ndarray) -> np.ndarray:
    return np.where((x > 0) | np.isnan(x), x, 0.0)


def rsqrt(x: np.ndarray) -> np.ndarray:
    return 1.0 / np.sqrt(x)


def reciprocal(x: np.ndarray) -> np.ndarray:
    return 1.0 / x


def select(cond: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(cond != 0, a, b)


def nextafter32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.nextafter(np.asarray(a, np.float32), np.asarray(b, np.float32)).astype(np.float64)
