"""The optimizer's update of a training step, recomputed from the IR's own gradients.

A step's updated parameters depend on its gradients through the optimizer, and AdamW's
``m / (√v + ε)`` is steep where a gradient is small against its tensor: a gradient element that
cancels (Mamba2's, summed from terms near 10¹⁴) comes out ~0.05 apart in two float64 runs that
add in different orders — far inside the gradient's own tolerance — and the updated parameter
5·10⁻⁴ apart, far outside the parameter's. Checking the update against autograd's end-to-end
result would then fail a correct IR. So the check is split where the computation splits: the
gradients against autograd's (``validate.compare``, as any output), and the optimizer's results
against torch.optim's update applied, in float64 and with the step's own roundings
(``golden.reference64``), to exactly the gradients the IR returned. An IR whose update reads
anything but the gradients it returns, or computes the update wrongly, fails the second check.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from solar_assets.workloads.training import UpdateLayout


def update_reference64(layout: UpdateLayout, bindings: Mapping[str, np.ndarray],
                       returned: Mapping[int, np.ndarray]) -> dict[int, np.ndarray]:
    """The updated parameters and states of ``layout`` from the parameters and states in
    ``bindings`` and the gradients among ``returned`` (by return index), in float64, keyed by
    return index; {} when a gradient or an operand is missing (the plain check stands)."""
    import torch

    from solar_assets.golden.reference64 import run_float64
    from solar_assets.workloads.torch_training import optimizer_update

    needed = [*layout.param_bindings, *layout.state_bindings]
    if any(b not in bindings for b in needed) or any(i not in returned for i in layout.grad_outputs):
        return {}

    def tensor(a: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(np.array(a, dtype=np.float64))

    params = [tensor(bindings[b]) for b in layout.param_bindings]
    states = [tensor(bindings[b]) for b in layout.state_bindings]
    grads = [tensor(returned[i]) for i in layout.grad_outputs]
    dtypes = [getattr(torch, d) for d in layout.dtypes]
    results = run_float64(lambda p, g, s: optimizer_update(layout.optimizer, dtypes, layout.states, layout.params,
                                                           p, g, s), [params, grads, states])
    by_name = dict(zip([*layout.params, *layout.states], results))
    return {i: by_name[name].detach().numpy() for i, name in layout.outputs.items() if name in by_name}
