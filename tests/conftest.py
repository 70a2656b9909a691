"""Fixtures shared by several test files."""
from __future__ import annotations

import matplotlib.figure
import pytest


@pytest.fixture
def saved_figures(monkeypatch):
    """Each figure passed to savefig, to inspect what was drawn."""
    figures = []
    real = matplotlib.figure.Figure.savefig

    def spy(self, *args, **kwargs):
        figures.append(self)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", spy)
    return figures
