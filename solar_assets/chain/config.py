"""The options of one run, in one object: which translator, which framework, which fp32-math
policy, how much a validation may cost.

``RunConfig`` is built in ONE place, ``RunConfig.from_env``: explicit values (``solar`` flags,
``solar.analyze`` arguments) win, then the environment ``solar`` exports for the processes it
starts (Dagster runs, worker processes: ``to_env``), then the defaults. The stages take it as
an argument and read no environment themselves; the Dagster resource (``SolarConfig``) carries
it as fields.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from solar_assets.golden.capture import CAPTURE_BYTES_ENV, DEFAULT_CAPTURE_BYTES
from solar_assets.sizing import ValidationBudget
from solar_assets.workloads.training import TrainSpec

TRANSLATOR_ENV = "SOLAR_TRANSLATOR"  # solar --translator
FRAMEWORK_ENV = "SOLAR_FRAMEWORK"  # solar --framework
FP32_MATH_ENV = "SOLAR_FP32_MATH"  # solar analyze --fp32-math
TRAIN_ENV = "SOLAR_TRAIN"  # solar analyze --train --optimizer O --loss L: "O,L" (TrainSpec.to_text)
NODEWISE_BYTES_ENV = CAPTURE_BYTES_ENV  # the node-wise capture budget (golden.capture)
DEFAULT_NODEWISE_BYTES = DEFAULT_CAPTURE_BYTES


@dataclass(frozen=True)
class RunConfig:
    """How a run analyses each workload (the same for every workload of the run)."""

    translator: str = "tracer"
    """"tracer", "agent" or "auto" (``solar_assets.agent.modes``)."""
    framework: str | None = None
    """"torch" or "jax"; None: detected from the file's imports."""
    fp32_math: str = "auto"
    """fp32 matmul policy of the bounds (``solar_assets.bounds.units``): auto, ieee, tf32 …"""
    validation_budget: ValidationBudget = field(default_factory=ValidationBudget)
    """The most a validation may cost at one size; over it the validation size is scaled down."""
    nodewise_bytes: int = DEFAULT_NODEWISE_BYTES
    """The node-wise validation's capture budget (one forward pass at the file's own size)."""
    train: TrainSpec | None = None
    """Bound one training step (forward, loss, backward, optimizer update) instead of one forward
    pass (``workloads.training``); part of every workload's key through ``WorkloadSource.train``."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, *, translator: str | None = None,
                 framework: str | None = None, fp32_math: str | None = None,
                 validation_budget: ValidationBudget | None = None, nodewise_bytes: int | None = None,
                 train: TrainSpec | None = None) -> RunConfig:
        """The run's options: each explicit argument that is not None, else its variable in ``env``
        (default ``os.environ``), else the default."""
        env = os.environ if env is None else env

        def var(name: str) -> str | None:
            return (env.get(name) or "").strip() or None

        budget_text = var(NODEWISE_BYTES_ENV)
        train_text = var(TRAIN_ENV)
        return cls(
            translator=translator or var(TRANSLATOR_ENV) or "tracer",
            framework=framework or var(FRAMEWORK_ENV),
            fp32_math=fp32_math or var(FP32_MATH_ENV) or "auto",
            validation_budget=validation_budget or ValidationBudget(),
            nodewise_bytes=nodewise_bytes if nodewise_bytes is not None else
            int(float(budget_text)) if budget_text else DEFAULT_NODEWISE_BYTES,
            train=train or (TrainSpec.from_text(train_text) if train_text else None),
        )

    def with_options(self, **changes: object) -> RunConfig:
        """A copy with ``changes`` applied, None values ignored."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})  # type: ignore[arg-type]

    def to_env(self) -> dict[str, str]:
        """The variables that give this config again in a process ``solar`` starts (``from_env``);
        the validation budget is not among them (it travels as an argument)."""
        out = {TRANSLATOR_ENV: self.translator, FP32_MATH_ENV: self.fp32_math,
               NODEWISE_BYTES_ENV: str(self.nodewise_bytes)}
        if self.framework:
            out[FRAMEWORK_ENV] = self.framework
        if self.train is not None:
            out[TRAIN_ENV] = self.train.to_text()
        return out
