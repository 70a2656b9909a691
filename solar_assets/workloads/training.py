"""What ``--train`` makes of a workload: one training step instead of one forward pass.

The step is the file's forward, a scalar loss, the backward to every trainable parameter (and,
for a file without one, to its floating-point inputs: a parameter-free operator is a layer of
somebody's network, and its backward is its input gradient), and an optimizer update of the
parameters with the optimizer's state as tensors of the parameters' shapes. Everything a step
computes is traced from what the framework itself runs (autograd's joint graph, torch.optim's
own update): nothing here models a backward formula. ``TrainSpec`` is framework-free: it is
part of ``RunConfig`` and of every workload's key (``WorkloadSource.train``); the PyTorch step
is ``workloads.torch_training``, the JAX one ``workloads.jax_training``.
"""
from __future__ import annotations

from dataclasses import dataclass

from solar_assets.errors import SolarError

OPTIMIZERS = ("adamw", "sgd", "none")
LOSSES = ("auto", "sum", "mean")

ADAMW_HYPERPARAMETERS = {"lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 1e-2}
"""``torch.optim.AdamW``'s defaults (and optax.adamw's but for its weight decay, given here)."""
SGD_HYPERPARAMETERS = {"lr": 1e-2, "momentum": 0.9, "dampening": 0.0, "weight_decay": 0.0, "nesterov": False}
"""SGD with heavy-ball momentum, as ImageNet-style recipes train (torch's default momentum is 0,
which would make the step stateless and bound a recipe nobody runs)."""
STEPS_TAKEN = 10
"""The optimizer state is that of a run ``STEPS_TAKEN`` steps in: AdamW's bias corrections are
those of step 11 (constants of the update, as a fused optimizer kernel takes them), and the
moments are seeded, non-zero tensors, so validation exercises every term of the update."""
STATE_SEED = 2
"""The state tensors are drawn after the model (seed 0) and the inputs (seed 1)."""


@dataclass(frozen=True)
class TrainSpec:
    """The training step a run bounds: its optimizer and its loss."""

    optimizer: str = "adamw"
    """"adamw" (first and second moments per parameter, fp32 master weights for bf16/fp16
    parameters), "sgd" (a momentum buffer per parameter) or "none" (forward and backward only)."""
    loss: str = "auto"
    """"auto": the file's ``loss(outputs)`` where it defines one, else "sum"; "sum": the sum of
    every floating-point output element, in float32 (or wider); "mean": the sum of each output's mean."""

    def __post_init__(self) -> None:
        if self.optimizer not in OPTIMIZERS:
            raise SolarError(f"--optimizer takes one of {', '.join(OPTIMIZERS)}, got {self.optimizer!r}")
        if self.loss not in LOSSES:
            raise SolarError(f"--loss takes one of {', '.join(LOSSES)}, got {self.loss!r}")

    @property
    def label(self) -> str:
        """How a training row names itself after the file's stem: ``train`` for the default step,
        ``train:sgd``, ``train:none,mean`` otherwise (``small_cnn[train:sgd]``)."""
        parts = [p for p, default in ((self.optimizer, "adamw"), (self.loss, "auto")) if p != default]
        return "train" + (":" + ",".join(parts) if parts else "")

    def to_text(self) -> str:
        """``adamw,auto``: the form ``from_text`` reads (an environment variable, a cache key)."""
        return f"{self.optimizer},{self.loss}"

    @classmethod
    def from_text(cls, text: str) -> TrainSpec:
        optimizer, _, loss = text.strip().partition(",")
        return cls(optimizer=optimizer or "adamw", loss=loss or "auto")


@dataclass(frozen=True)
class UpdateLayout:
    """Where a step's optimizer update finds its operands and puts its results: the parameters'
    and states' bindings, the step's returns that hold the parameters' gradients, and the returns
    that hold each updated parameter or state (by name). Validation recomputes the update from the
    IR's own gradients with it (``golden.update_reference``): the gradients are checked against
    autograd, the update against the optimizer applied to exactly those gradients. Stored with the
    golden outputs as JSON."""

    optimizer: str
    params: tuple[str, ...]
    dtypes: tuple[str, ...]  # the parameters' dtypes ("float32", "bfloat16" …)
    param_bindings: tuple[str, ...]
    grad_outputs: tuple[int, ...]  # index among the step's returns, one per parameter
    states: tuple[str, ...]  # ``exp_avg__fc1__weight`` …
    state_bindings: tuple[str, ...]
    outputs: dict[int, str]  # index among the step's returns -> the parameter or state it holds updated

    def to_json(self) -> str:
        import json

        return json.dumps({**self.__dict__, "outputs": {str(k): v for k, v in self.outputs.items()}})

    @classmethod
    def from_json(cls, text: str) -> UpdateLayout:
        import json

        data = json.loads(text)
        data["outputs"] = {int(k): v for k, v in data["outputs"].items()}
        return cls(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in data.items()})


def train_name(stem: str, spec: TrainSpec | None) -> str:
    """A workload's name in rows and tables: the stem, and for a training step ``stem[train…]``."""
    return stem if spec is None else f"{stem}[{spec.label}]"


class NotDifferentiable(SolarError):
    """A workload with no training step: no floating-point output to take a loss of, or nothing
    (no trainable parameter, no floating-point input) to differentiate it by."""


class NotTrainable(NotDifferentiable):
    """A workload whose own training step the framework refuses as written (eager autograd raises
    on it the same way): no step to bound, reported in one line like a non-differentiable one."""
