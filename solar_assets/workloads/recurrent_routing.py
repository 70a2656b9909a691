"""Where ``nn.LSTM`` / ``nn.GRU`` / ``nn.RNN`` send their computation while a model is traced.

The modules call ``torch._VF.lstm`` / ``gru`` / ``rnn_tanh`` / ``rnn_relu`` through the name
``torch.nn.modules.rnn._VF``; rebinding that name for the duration of a trace routes the input
(not packed) overloads elsewhere, whatever the file's own code: to the whole ``solar::`` ops for a
forward export (``translate.torch_lowering.recurrent``), to the decomposition with its loop a
``scan`` for a training step (``workloads.recurrent_scan``). The golden run calls the modules as
written."""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

CELLS = ("lstm", "gru", "rnn_tanh", "rnn_relu")

Route = Callable[..., Any]
"""``route(name, real, x, hx, params, *rest)``: the op's result (``real`` is ``torch._VF``'s own)."""


class _RoutedVF:
    """``torch._VF`` as ``torch.nn.modules.rnn`` sees it, the input overloads of ``CELLS`` sent to
    ``route``; a packed sequence and everything else are ``torch._VF``'s own."""

    def __init__(self, vf: object, route: Route):
        self._vf, self._route = vf, route

    def __getattr__(self, name: str) -> object:
        real = getattr(self._vf, name)
        if name not in CELLS:
            return real

        def call(x, hx, *rest):  # noqa: ANN001, ANN202 - torch._VF's calling conventions
            if isinstance(rest[1], (list, tuple)):  # packed: (data, batch_sizes, hx, params, ...)
                return real(x, hx, *rest)
            return self._route(name, real, x, hx, *rest)

        return call


@contextlib.contextmanager
def routed_recurrent_ops(route: Route) -> Iterator[None]:
    """While active, the recurrent modules' ops go through ``route`` (module docstring)."""
    import torch.nn.modules.rnn as rnn

    saved = rnn._VF
    rnn._VF = _RoutedVF(saved, route)
    try:
        yield
    finally:
        rnn._VF = saved
