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


@pytest.fixture(autouse=True)
def _absl_writes_to_the_real_stderr():
    """absl (imported with JAX / Flax) keeps the ``sys.stderr`` of the test that imported it, which
    is pytest's capture file. Every in-process Dagster run applies the instance's logging config
    with ``logging.config.dictConfig``, which closes every handler; absl closes its stream unless
    it is ``sys.stderr`` at that moment, so pytest's capture file was closed under a later test
    (``ValueError: I/O operation on closed file``, then "lost sys.stderr"). Outside pytest the
    stream is the process's stderr and absl leaves it open; here it is pointed at that too."""
    yield
    import sys

    absl_logging = sys.modules.get("absl.logging")
    handler = getattr(absl_logging, "get_absl_handler", lambda: None)() if absl_logging else None
    python_handler = getattr(handler, "python_handler", None)
    if python_handler is not None and python_handler.stream is not sys.__stderr__:
        python_handler.stream = sys.__stderr__
