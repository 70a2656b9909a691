"""A training step's optimizer results are checked against the optimizer applied to the IR's own
gradients (``golden.update_reference``), the gradients against autograd's: the reference is
torch.optim's optimizer class stepping a model (an independent code path from the functional
update the step traces), and every mutant planted in the update is still rejected."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from solar_assets.workloads.training import ADAMW_HYPERPARAMETERS, SGD_HYPERPARAMETERS, STEPS_TAKEN, TrainSpec, \
    UpdateLayout

TRAINING = Path(__file__).resolve().parents[1] / "data" / "training"
MLP = TRAINING / "mlp_classifier.py"
CNN = TRAINING / "small_cnn_classifier.py"


def _step(path: Path, spec: TrainSpec):
    from solar_assets.golden import make_golden
    from solar_assets.translate.torch_tracer import trace_torch
    from solar_assets.workloads import read_workload_source

    src = read_workload_source(path, train=spec)
    return trace_torch(src).program, make_golden(src)


@pytest.fixture(scope="module")
def mlp_step():
    return _step(MLP, TrainSpec())


def _stepped_by_torch_optim(layout: UpdateLayout, golden, grads: list[np.ndarray], optimizer: str):
    """float64 parameters with ``grads`` as their ``.grad``, stepped once by torch.optim's class with
    the golden run's seeded state: (updated parameters, {state kind: per-parameter tensors})."""
    params = [torch.nn.Parameter(torch.from_numpy(golden.params[b].astype(np.float64)))
              for b in layout.param_bindings]
    for p, g in zip(params, grads):
        p.grad = torch.from_numpy(g)

    def state(kind: str, i: int) -> torch.Tensor:
        return torch.from_numpy(golden.params[f"buffer:{kind}__{layout.params[i].replace('.', '__')}"].astype(np.float64))

    if optimizer == "adamw":
        h = ADAMW_HYPERPARAMETERS
        opt = torch.optim.AdamW(params, lr=h["lr"], betas=(h["beta1"], h["beta2"]), eps=h["eps"],
                                weight_decay=h["weight_decay"])
        for i, p in enumerate(params):
            opt.state[p] = {"step": torch.tensor(float(STEPS_TAKEN), dtype=torch.float64),
                            "exp_avg": state("exp_avg", i).clone(), "exp_avg_sq": state("exp_avg_sq", i).clone()}
        kinds = {"exp_avg": "exp_avg", "exp_avg_sq": "exp_avg_sq"}
    else:
        h = SGD_HYPERPARAMETERS
        opt = torch.optim.SGD(params, lr=h["lr"], momentum=h["momentum"])
        for i, p in enumerate(params):
            opt.state[p] = {"momentum_buffer": state("momentum", i).clone()}
        kinds = {"momentum": "momentum_buffer"}
    opt.step()
    return params, {kind: [opt.state[p][key] for p in params] for kind, key in kinds.items()}


@pytest.mark.parametrize("path,optimizer", [(MLP, "adamw"), (CNN, "sgd")], ids=["mlp-adamw", "cnn-sgd"])
def test_the_reference_is_torch_optim_stepping_on_the_given_gradients(path, optimizer):
    """Gradients that are not autograd's (random ones): the reference update is what torch.optim's
    optimizer makes of exactly those."""
    from solar_assets.golden.update_reference import update_reference64

    _, golden = _step(path, TrainSpec(optimizer=optimizer))
    layout = UpdateLayout.from_json(golden.update_layout)
    assert layout.optimizer == optimizer
    rng = np.random.default_rng(7)
    grads = [rng.standard_normal(golden.params[b].shape) for b in layout.param_bindings]
    got = update_reference64(layout, golden.bindings(np.float64), dict(zip(layout.grad_outputs, grads)))
    params, states = _stepped_by_torch_optim(layout, golden, grads, optimizer)
    assert sorted(got) == sorted(layout.outputs) and len(got) == len(params) * (1 + len(states))
    for index, name in layout.outputs.items():
        if name in layout.params:
            want = params[layout.params.index(name)]
        else:
            kind, _, param = name.partition("__")
            want = states[kind][layout.params.index(param.replace("__", "."))]
        np.testing.assert_allclose(got[index], want.detach().numpy(), rtol=1e-12, atol=1e-15)


def test_the_step_validates_with_the_update_checked_on_its_own_gradients(mlp_step):
    from solar_assets.validate.compare import validate_program

    program, golden = mlp_step
    result = validate_program(program, golden, traced=True)
    assert result.ok, result.failures
    layout = UpdateLayout.from_json(golden.update_layout)
    assert any("optimizer's update of the IR's own gradients" in n for n in result.notes)
    assert any(f"{len(layout.outputs)} optimizer results" in n for n in result.notes)
    grad_names = {program.outputs[i] for i in layout.grad_outputs}  # no in-place updates in the MLP
    checked64 = {c.name for c in result.checks if c.reference == "outputs64"}
    assert grad_names <= checked64  # the gradients themselves against autograd's float64 run


@pytest.mark.slow
def test_a_wrong_update_is_still_rejected(mlp_step):
    """Every constant, dropped-term and doubled-term mutant planted in the optimizer's kernels that
    the end-to-end check (the update against autograd's float64 step) rejects, the conditioned check
    rejects too: it follows the IR's gradients, not its update. (The survivors of both are torch.optim's
    own dead scalars, such as a step count's ``full - 1`` no result reads.)"""
    import dataclasses

    from solar_assets.validate.compare import validate_program
    from solar_assets.validate.mutants import mutants

    program, golden = mlp_step
    end_to_end = dataclasses.replace(golden, update_layout="")
    optimizer_kernels = {st.name for st, _ in program.walk_steps()
                         if st.kind == "kernel" and st.origin is not None and st.origin.phase == "optimizer"}
    assert optimizer_kernels
    planted = [m for m in mutants(program, kinds=("constant", "drop_term", "dup_term"), per_kernel=1)
               if m.step in optimizer_kernels]
    rejected = [m for m in planted if not validate_program(m.program, end_to_end, traced=True).ok]
    assert len(rejected) >= 10
    survivors = [f"{m.step}: {m.description}" for m in rejected if validate_program(m.program, golden, traced=True).ok]
    assert not survivors, survivors
