"""A PyTorch workload's training step as one ``nn.Module`` (``--train``; ``workloads.training``).

``TrainStep(*inputs)`` returns ``(loss, *gradients, *updated parameters, *updated optimizer
state)``: the file's model in training mode, its loss, ``torch.autograd.grad`` to every trainable
parameter (or, without one, to the floating-point inputs), and torch.optim's own update
(``torch.optim.adamw.adamw`` / ``torch.optim.sgd.sgd``, single-tensor code path) applied to copies,
so the module's values never change and every run of it gives the same outputs. The optimizer
state is the module's buffers (``exp_avg__fc1__weight`` …), seeded, and fp32 master weights
(``master__…``) stand in for bf16 / fp16 parameters, which the update then rounds back.

Eagerly, that is the golden run (and its float64 reference: the recorded narrow dtypes are cast
to explicitly, so the reference rounds where the step rounds). For ``torch.export``, which
cannot trace ``torch.autograd.grad``, ``trace_joint`` first records the whole step with
``torch.fx.experimental.proxy_tensor.make_fx`` — the tracer AOTAutograd builds its joint
forward-backward graphs with — over the module's own (fake) tensors; ``forward`` then replays
that graph, so the export sees ATen ops over the step's parameters, buffers and inputs.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Sequence

import torch

from solar_assets.workloads.training import (
    ADAMW_HYPERPARAMETERS, SGD_HYPERPARAMETERS, STATE_SEED, STEPS_TAKEN, NotDifferentiable, NotTrainable, TrainSpec,
    UpdateLayout,
)

NARROW_FLOATS = (torch.bfloat16, torch.float16)


PHASE_KEY = "solar_phase"
"""The key of a traced node's ``meta["custom"]`` that names its phase (``ir_schemas.Origin.phase``)."""


def phase(name: str) -> Any:
    """Ops traced inside carry ``name`` ("forward", "backward", "optimizer") in their node's
    ``meta["custom"]`` (``torch.fx.traceback.annotate``); outside a trace it only sets a dict entry."""
    import torch.fx.traceback as fx_traceback

    return fx_traceback.annotate({PHASE_KEY: name})


def _state_name(kind: str, param: str) -> str:
    return f"{kind}__{param.replace('.', '__')}"


class TrainStep(torch.nn.Module):
    """One training step of ``model`` (module docstring)."""

    def __init__(self, model: torch.nn.Module, spec: TrainSpec, inputs: Sequence[Any], path: str,
                 loss: Callable[[Any], Any] | None = None) -> None:
        super().__init__()
        self.model = model.train()
        self.spec, self.path = spec, path
        self._loss_fn = loss if spec.loss == "auto" else None
        named = [(n, p) for n, p in model.named_parameters() if p.requires_grad and p.is_floating_point()]
        self.param_names = [n for n, _ in named]
        self.param_dtypes = [p.dtype for _, p in named]
        floats = [i for i, x in enumerate(inputs) if isinstance(x, torch.Tensor) and x.is_floating_point()]
        marked = [i for i in floats if inputs[i].requires_grad]
        self.grad_inputs = marked if named else floats
        if not named and not self.grad_inputs:
            raise NotDifferentiable(f"{path}: not differentiable: no trainable floating-point parameter "
                                    "and no floating-point input to take a gradient by")
        self.state_names: list[str] = []
        torch.manual_seed(STATE_SEED)
        for name, p in named:
            for kind, value in self._initial_state(p):
                self.register_buffer(_state_name(kind, name), value)
                self.state_names.append(_state_name(kind, name))
        self._joint: Any = None

    @property
    def buffer_names(self) -> list[str]:
        """The model's buffers as of now: the tracer and the golden run make a plain tensor attribute
        (a recurrent cell's ``self.hidden``) a buffer after the step is built (``attributes_to_buffers``),
        and the step must bind it like any other, or a write into it is a write into a constant."""
        return [n for n, _ in self.model.named_buffers()]

    # ------------------------------------------------------------------ the optimizer's state
    def _initial_state(self, p: torch.Tensor) -> list[tuple[str, torch.Tensor]]:
        """Seeded state of a run ``STEPS_TAKEN`` steps in; the master copy first where there is one."""
        opt = self.spec.optimizer
        if opt == "none":
            return []
        wide = torch.promote_types(p.dtype, torch.float32)
        state = [("master", p.detach().to(wide).clone())] if p.dtype in NARROW_FLOATS else []
        if opt == "adamw":
            state.append(("exp_avg", 1e-3 * torch.randn(p.shape, dtype=wide)))
            state.append(("exp_avg_sq", (1e-3 * (0.5 + torch.rand(p.shape, dtype=wide))) ** 2))
        else:
            state.append(("momentum", 1e-2 * torch.randn(p.shape, dtype=wide)))
        return state

    def checked_only_outputs(self) -> tuple[int, ...]:
        """Positions of the returned values that are checked but not results: with an optimizer,
        the parameters' gradients, which the update consumes where they are made (the fused bound
        keeps them on chip); the inputs' gradients are results (a layer's backward hands them on)."""
        if self.spec.optimizer == "none":
            return ()
        return tuple(range(1, 1 + len(self.param_names)))

    # ------------------------------------------------------------------ the step
    def forward(self, *inputs: Any) -> tuple[torch.Tensor, ...]:
        params = [self.model.get_parameter(n) for n in self.param_names]
        buffers = [self.model.get_buffer(n) for n in self.buffer_names]
        states = [self.get_buffer(n) for n in self.state_names]
        if self._joint is not None:  # the traced step (``trace_joint``), for torch.export: replayed node by
            import torch.fx.traceback as fx_traceback  # node, so each exported node keeps its phase and line

            with fx_traceback.preserve_node_meta():
                return tuple(torch.fx.Interpreter(self._joint).run(*params, *buffers, *states, *inputs))
        return self.step(params, buffers, states, list(inputs))

    def step(self, params: list[torch.Tensor], buffers: list[torch.Tensor], states: list[torch.Tensor],
             inputs: list[Any]) -> tuple[torch.Tensor, ...]:
        """Forward, loss, backward and update over the given tensors (the module's own, or the
        tracer's stand-ins for them)."""
        with torch.enable_grad():
            leaves = [p.detach().requires_grad_(True) for p in params]
            xs = [x.detach().requires_grad_(True) if i in self.grad_inputs else x for i, x in enumerate(inputs)]
            bound = {**dict(zip(self.param_names, leaves)), **dict(zip(self.buffer_names, buffers))}
            with phase("forward"):
                outputs = torch.func.functional_call(self.model, bound, tuple(xs))
                loss = self.loss(outputs)
            wrt = leaves + [xs[i] for i in self.grad_inputs]
            with phase("backward"):
                grads = self._grad(loss, wrt)
                grads = tuple(g if g is not None else torch.zeros_like(w) for g, w in zip(grads, wrt))
        with phase("optimizer"):
            _leave_module_scope()  # the last backward node's module does not reach the update
            updated = self.update([p.detach() for p in params], list(grads[:len(params)]), states)
        return (loss, *grads, *updated)

    def _grad(self, loss: torch.Tensor, wrt: list[torch.Tensor]) -> tuple[torch.Tensor | None, ...]:
        """Autograd's gradients; a file whose own step autograd refuses (an in-place write to a
        value its backward saved: ShuffleNet's ``out += shortcut(x)`` over a ReLU's output) has no
        training step as written, which is the file's property, not a translation failure."""
        try:
            return torch.autograd.grad(loss, wrt, allow_unused=True)
        except RuntimeError as e:
            if "modified by an inplace operation" not in str(e):
                raise
            reason = str(e).split("Hint:")[0].strip()
            raise NotTrainable(f"{self.path}: not trainable as written: autograd refuses the file's own "
                               f"backward ({reason})") from None

    def loss(self, outputs: Any) -> torch.Tensor:
        if self._loss_fn is not None:
            value = self._loss_fn(outputs)
            if not isinstance(value, torch.Tensor) or value.numel() != 1 or not value.is_floating_point():
                raise NotDifferentiable(f"{self.path}: loss(outputs) must return a one-element floating-point "
                                        f"tensor, got {type(value).__name__}")
            return value.reshape(())
        flat = [o for o in torch.utils._pytree.tree_leaves(outputs)
                if isinstance(o, torch.Tensor) and o.is_floating_point() and o.requires_grad]
        if not flat:
            raise NotDifferentiable(f"{self.path}: not differentiable: no floating-point output depends on "
                                    "a parameter or input")
        wide = [o.to(torch.promote_types(o.dtype, torch.float32)) for o in flat]
        terms = [w.mean() if self.spec.loss == "mean" else w.sum() for w in wide]
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        return total

    def update(self, params: list[torch.Tensor], grads: list[torch.Tensor],
               states: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """torch.optim's single-tensor update on copies: the updated parameters, then every updated
        state tensor in ``state_names`` order."""
        return optimizer_update(self.spec.optimizer, self.param_dtypes, self.state_names, self.param_names,
                                params, grads, states)

    def update_layout(self) -> UpdateLayout | None:
        """Where the update's operands and results sit among the step's bindings and returns, so
        that validation can recompute the update from the IR's own gradients
        (``golden.update_reference``); None without an optimizer."""
        if self.spec.optimizer == "none":
            return None
        n_p, n_in = len(self.param_names), len(self.grad_inputs)
        first_update = 1 + n_p + n_in
        outputs = {first_update + i: name for i, name in enumerate(self.param_names)}
        outputs.update({first_update + n_p + i: name for i, name in enumerate(self.state_names)})
        return UpdateLayout(
            optimizer=self.spec.optimizer,
            params=tuple(self.param_names),
            dtypes=tuple(str(d).removeprefix("torch.") for d in self.param_dtypes),
            param_bindings=tuple(f"param:model.{n}" for n in self.param_names),
            grad_outputs=tuple(range(1, 1 + n_p)),
            states=tuple(self.state_names),
            state_bindings=tuple(f"buffer:{n}" for n in self.state_names),
            outputs=outputs,
        )


def optimizer_update(optimizer: str, param_dtypes: Sequence[torch.dtype], state_names: Sequence[str],
                     param_names: Sequence[str], params: Sequence[torch.Tensor], grads: Sequence[torch.Tensor],
                     states: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    """torch.optim's single-tensor ``optimizer`` update of ``params`` by ``grads`` on copies: the
    updated parameters, then every updated state tensor in ``state_names`` order (a narrow
    parameter is updated through its master copy, then rounded back)."""
    if optimizer == "none":
        return []
    per_param: list[dict[str, torch.Tensor]] = [{} for _ in param_names]
    index = {n: i for i, n in enumerate(param_names)}
    for name, value in zip(state_names, states):
        kind, _, param = name.partition("__")
        per_param[index[param.replace("__", ".")]][kind] = value
    work = [s["master"].clone() if "master" in s else p.clone() for p, s in zip(params, per_param)]
    wgrads = [g.to(w.dtype) for g, w in zip(grads, work)]
    if optimizer == "adamw":
        from torch.optim.adamw import adamw

        m = [s["exp_avg"].clone() for s in per_param]
        v = [s["exp_avg_sq"].clone() for s in per_param]
        steps = [torch.tensor(float(STEPS_TAKEN)) for _ in work]
        h = ADAMW_HYPERPARAMETERS
        adamw(work, wgrads, m, v, [], steps, foreach=False, amsgrad=False, beta1=h["beta1"], beta2=h["beta2"],
              lr=h["lr"], weight_decay=h["weight_decay"], eps=h["eps"], maximize=False)
        new_state = {"exp_avg": m, "exp_avg_sq": v}
    else:
        from torch.optim.sgd import sgd

        buf = [s["momentum"].clone() for s in per_param]
        h = SGD_HYPERPARAMETERS
        sgd(work, wgrads, buf, foreach=False, weight_decay=h["weight_decay"], momentum=h["momentum"],
            lr=h["lr"], dampening=h["dampening"], nesterov=h["nesterov"], maximize=False)
        new_state = {"momentum": buf}
    new_params = [w.to(dtype) if dtype in NARROW_FLOATS else w for w, dtype in zip(work, param_dtypes)]
    new_state["master"] = [w for w, s in zip(work, per_param) if "master" in s]
    out: list[torch.Tensor] = []
    counters = {k: 0 for k in new_state}
    for name in state_names:
        kind = name.partition("__")[0]
        out.append(new_state[kind][counters[kind]])
        counters[kind] += 1
    return new_params + out


@contextlib.contextmanager
def module_scopes(model: torch.nn.Module) -> Iterator[None]:
    """While tracing, each submodule call sets the traced nodes' ``nn_module_stack`` (path → (path,
    class), outermost first, as torch.export writes it), which ``functional_call`` under ``make_fx``
    records nothing of; the hooks are removed afterwards."""
    import torch.fx.traceback as fx_traceback

    stack: list[tuple[str, tuple[str, str]]] = []
    names = {id(m): n for n, m in model.named_modules()}
    backward_hooks: list[Any] = []
    scoped: set[Any] = set()  # autograd nodes given their module already (the innermost one)

    before: list[set[Any]] = []  # per open module: the autograd nodes its inputs came from (made outside it)

    def enter(module: torch.nn.Module, args: Any) -> None:
        before.append({t.grad_fn for t in torch.utils._pytree.tree_leaves(args)
                       if isinstance(t, torch.Tensor) and t.grad_fn is not None})
        path = names.get(id(module), "")
        stack.append((path, (path, f"{type(module).__module__}.{type(module).__qualname__}")))
        fx_traceback.current_meta["nn_module_stack"] = dict(stack)

    def leave(module: torch.nn.Module, args: Any, out: Any) -> None:
        scope_backward(out, dict(stack), before.pop() if before else set())  # its ops' backward: in its scope too
        if stack:
            stack.pop()
        if stack:
            fx_traceback.current_meta["nn_module_stack"] = dict(stack)
        else:
            fx_traceback.current_meta.pop("nn_module_stack", None)

    def scope_backward(out: Any, scope: dict, outside: set[Any]) -> None:
        todo = [t.grad_fn for t in torch.utils._pytree.tree_leaves(out)
                if isinstance(t, torch.Tensor) and t.grad_fn is not None]
        seen: set[Any] = set()
        while todo:  # every node between the module's inputs and its outputs; inner modules' keep their scope
            node = todo.pop()
            if node is None or node in seen or node in outside:
                continue
            seen.add(node)
            if node not in scoped:
                scoped.add(node)
                backward_hooks.append(node.register_prehook(_set_scope(scope)))
            todo += [n for n, _ in node.next_functions if n is not None]

    handles = [h for m in model.modules() for h in (m.register_forward_pre_hook(enter),
                                                      m.register_forward_hook(leave, always_call=True))]
    try:
        yield
    finally:
        for h in handles + backward_hooks:
            h.remove()
        fx_traceback.current_meta.pop("nn_module_stack", None)


def _leave_module_scope() -> None:
    import torch.fx.traceback as fx_traceback

    fx_traceback.current_meta.pop("nn_module_stack", None)


def _set_scope(scope: dict) -> Callable[[Any], None]:
    def prehook(grad_outputs: Any) -> None:
        import torch.fx.traceback as fx_traceback

        fx_traceback.current_meta["nn_module_stack"] = scope
    return prehook


def _writes_a_view(node: Any) -> bool:
    """An in-place op whose target is not a graph input: a view, or a value made in the step (an
    LSTM cell's ``split`` gates updated in place), which the replay's export refuses to write."""
    schema = getattr(node.target, "_schema", None)
    if node.op != "call_function" or schema is None or not schema.arguments or not node.args:
        return False
    first = schema.arguments[0].alias_info
    return bool(first is not None and first.is_write and getattr(node.args[0], "op", "") != "placeholder")


def trace_joint(step: TrainStep, inputs: Sequence[Any], decompositions: dict[Any, Any]) -> None:
    """Record the whole step as one ATen graph (forward, autograd's backward, torch.optim's update),
    which ``step.forward`` replays from then on (module docstring). ``inputs`` and the step's
    tensors may be fake (the usual case: nothing is computed) or real."""
    from torch.fx.experimental.proxy_tensor import make_fx

    n_p, n_b, n_s = len(step.param_names), len(step.buffer_names), len(step.state_names)

    def joint(*flat: Any) -> tuple[torch.Tensor, ...]:
        params, buffers = list(flat[:n_p]), list(flat[n_p:n_p + n_b])
        states, xs = list(flat[n_p + n_b:n_p + n_b + n_s]), list(flat[n_p + n_b + n_s:])
        return step.step(params, buffers, states, xs)

    params = [step.model.get_parameter(n).detach() for n in step.param_names]
    buffers = [step.model.get_buffer(n) for n in step.buffer_names]
    states = [step.get_buffer(n) for n in step.state_names]
    import torch.fx.traceback as fx_traceback

    from torch.nn.attention import SDPBackend, sdpa_kernel

    from solar_assets.workloads.recurrent_scan import scanned_recurrent_ops, unalias_scan_outputs

    # on fake tensors, traced in their own fake mode: a tensor the forward makes (``torch.randn`` for an
    # initial state) is then one of them, as a ``scan``'s autograd requires of its operands
    mode = "fake" if torch._guards.detect_fake_mode([*params, *buffers, *states, *inputs]) is not None else "real"

    with fx_traceback.preserve_node_meta(), module_scopes(step.model), scanned_recurrent_ops(), \
            torch.backends.mkldnn.flags(enabled=False), sdpa_kernel(SDPBackend.MATH):
        # phases and module paths reach the nodes; attention as its decomposition, which autograd
        # differentiates op by op (no CPU flash-attention backward kernel), an RNN as its decomposition
        # with the time loop a ``scan`` (``workloads.recurrent_scan``)
        graph = make_fx(joint, tracing_mode=mode, decomposition_table=decompositions,
                        record_stack_traces=True)(*params, *buffers, *states, *inputs)
        unalias_scan_outputs(graph)  # what functionalisation (here or in the export) requires of a scan
        if any(_writes_a_view(n) for n in graph.graph.nodes):  # functionalised (node by node, keeping each
            graph = make_fx(torch.func.functionalize(torch.fx.Interpreter(graph).run),  # node's metadata): the
                            tracing_mode=mode)(*params, *buffers, *states, *inputs)  # export refuses such writes
    object.__setattr__(step, "_joint", graph)  # not a submodule: the export's state is the step's own


def wrap_training_step(model: torch.nn.Module, spec: TrainSpec, inputs: Sequence[Any], module: Any,
                       path: str) -> TrainStep:
    """The file's model as its training step; the file's ``loss(outputs)`` is the loss where it
    defines one and ``spec.loss`` is "auto"."""
    loss = getattr(module, "loss", None)
    return TrainStep(model, spec, inputs, path, loss if callable(loss) else None)
