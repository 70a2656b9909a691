"""A JAX / Flax workload's training step as a ``JaxWorkload`` (``--train``; ``workloads.training``).

``fn(params, *inputs)`` of the step returns ``(loss, *gradients, *updated parameters, *updated
optimizer state)``: ``jax.value_and_grad`` of the loss of the file's function to every trainable
parameter (``param:*``; without one, to the floating-point inputs), and optax's own update
(``optax.adamw`` / ``optax.sgd`` with momentum) under ``jax.named_scope("solar_optimizer")``.
The optimizer state is part of the step's parameters, as buffers (``buffer:exp_avg__Dense_0__kernel``
…), seeded; its step count is ``STEPS_TAKEN``, a constant of the update. bf16 / fp16 parameters
are updated through fp32 master copies (``buffer:master__…``) and rounded back.

The tracer sees one jaxpr: autograd's forward equations under ``jvp(…)``, its backward under
``transpose(jvp(…))``, the update under ``solar_optimizer`` — which is how each IR step's phase
is told (``translate.jax_lowering.walk.eqn_phase``).
"""
from __future__ import annotations

from typing import Any

from solar_assets.workloads.training import (
    ADAMW_HYPERPARAMETERS, SGD_HYPERPARAMETERS, STATE_SEED, STEPS_TAKEN, NotDifferentiable, TrainSpec,
)

OPTIMIZER_SCOPE = "solar_optimizer"


def _state_name(kind: str, binding: str) -> str:
    return f"buffer:{kind}__{binding.removeprefix('param:').replace('.', '__')}"


def training_workload(w: Any, spec: TrainSpec, abstract: bool) -> Any:
    """``w`` (a ``JaxWorkload``) as its training step (module docstring)."""
    import dataclasses

    import jax
    import jax.numpy as jnp

    narrow = (jnp.bfloat16, jnp.float16)
    trainable = [n for n, v in w.params.items() if n.startswith("param:") and jnp.issubdtype(v.dtype, jnp.floating)]
    floats = [i for i, x in enumerate(w.inputs) if jnp.issubdtype(x.dtype, jnp.floating)]
    grad_inputs = [] if trainable else floats
    if not trainable and not grad_inputs:
        raise NotDifferentiable(f"{w.source.path}: not differentiable: no trainable floating-point parameter and no "
                                "floating-point input to take a gradient by")
    module_loss = getattr(w.module, "loss", None)
    loss_fn = module_loss if spec.loss == "auto" and callable(module_loss) else None
    wide = {n: jnp.promote_types(w.params[n].dtype, jnp.float32) for n in trainable}
    state_kinds = {"adamw": ("exp_avg", "exp_avg_sq"), "sgd": ("momentum",), "none": ()}[spec.optimizer]
    states: dict[str, Any] = {}
    key = jax.random.key(STATE_SEED)
    for n in trainable:
        shape = w.params[n].shape
        kinds = (("master",) if w.params[n].dtype in narrow and spec.optimizer != "none" else ()) + state_kinds
        for kind in kinds:
            key, sub = jax.random.split(key)
            name = _state_name(kind, n)
            if abstract:
                states[name] = jax.ShapeDtypeStruct(shape, wide[n])
            elif kind == "master":
                states[name] = w.params[n].astype(wide[n])
            elif kind == "exp_avg_sq":
                states[name] = (1e-3 * (0.5 + jax.random.uniform(sub, shape, wide[n]))) ** 2
            else:
                states[name] = (1e-3 if kind == "exp_avg" else 1e-2) * jax.random.normal(sub, shape, wide[n])
    tx = _optimizer(spec)

    def loss_of(outputs: Any) -> Any:
        if loss_fn is not None:
            value = jnp.asarray(loss_fn(outputs))
            if value.size != 1 or not jnp.issubdtype(value.dtype, jnp.floating):
                raise NotDifferentiable(f"{w.source.path}: loss(outputs) must return a one-element floating-point "
                                        f"array, got {value.dtype}{list(value.shape)}")
            return value.reshape(())
        leaves = [o for o in jax.tree_util.tree_leaves(outputs) if jnp.issubdtype(jnp.asarray(o).dtype, jnp.floating)]
        if not leaves:
            raise NotDifferentiable(f"{w.source.path}: not differentiable: no floating-point output")
        terms = [(o.astype(jnp.promote_types(o.dtype, jnp.float32))) for o in leaves]
        terms = [t.mean() if spec.loss == "mean" else t.sum() for t in terms]
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        return total

    def step(params: dict[str, Any], *inputs: Any) -> tuple[Any, ...]:
        fixed = {n: v for n, v in params.items() if n in w.params and n not in trainable}

        def objective(p: dict[str, Any], xs: list[Any]) -> Any:
            args = list(inputs)
            for i, x in zip(grad_inputs, xs):
                args[i] = x
            return loss_of(w.fn({**fixed, **p}, *args))

        p = {n: params[n] for n in trainable}
        loss, (gp, gx) = jax.value_and_grad(objective, argnums=(0, 1))(p, [inputs[i] for i in grad_inputs])
        grads = [gp[n] for n in trainable] + list(gx)
        if tx is None:
            return (loss, *grads)
        with jax.named_scope(OPTIMIZER_SCOPE):
            masters = {n: params[_state_name("master", n)] if _state_name("master", n) in params else p[n]
                       for n in trainable}
            g = {n: gp[n].astype(masters[n].dtype) for n in trainable}
            updated, new_state = _update(tx, spec, masters, g, params, trainable)
            new_params = [updated[n].astype(w.params[n].dtype) if w.params[n].dtype in narrow else updated[n]
                          for n in trainable]  # rounded back only where a master copy stood in
        return (loss, *grads, *new_params, *[new_state[s] for s in states])

    return dataclasses.replace(w, fn=step, params={**w.params, **states}, checked_only=tuple(
        range(1, 1 + len(trainable))) if tx is not None else ())


def _optimizer(spec: TrainSpec) -> Any:
    import optax

    if spec.optimizer == "adamw":
        h = ADAMW_HYPERPARAMETERS
        return optax.adamw(h["lr"], b1=h["beta1"], b2=h["beta2"], eps=h["eps"], weight_decay=h["weight_decay"])
    if spec.optimizer == "sgd":
        h = SGD_HYPERPARAMETERS
        return optax.sgd(h["lr"], momentum=h["momentum"], nesterov=h["nesterov"])
    return None


def _update(tx: Any, spec: TrainSpec, masters: dict[str, Any], grads: dict[str, Any], params: dict[str, Any],
            trainable: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """optax's update of ``masters`` from the seeded state in ``params``: the updated values and
    every state tensor by its binding."""
    import jax.numpy as jnp
    import optax

    state = tx.init(masters)
    if spec.optimizer == "adamw":
        mu = {n: params[_state_name("exp_avg", n)] for n in trainable}
        nu = {n: params[_state_name("exp_avg_sq", n)] for n in trainable}
        state = (state[0]._replace(count=jnp.asarray(STEPS_TAKEN, jnp.int32), mu=mu, nu=nu), *state[1:])
    else:
        trace = {n: params[_state_name("momentum", n)] for n in trainable}
        state = (state[0]._replace(trace=trace), *state[1:])
    updates, new = tx.update(grads, state, masters)
    updated = optax.apply_updates(masters, updates)
    out = {_state_name("master", n): updated[n] for n in trainable}
    if spec.optimizer == "adamw":
        out.update({_state_name("exp_avg", n): new[0].mu[n] for n in trainable})
        out.update({_state_name("exp_avg_sq", n): new[0].nu[n] for n in trainable})
    else:
        out.update({_state_name("momentum", n): new[0].trace[n] for n in trainable})
    return updated, out
