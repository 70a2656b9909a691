"""In-place updates as eager PyTorch runs them: only the written elements move.

``torch.export`` makes every in-place update functional. ``self.cache[:, pos] = k`` becomes
``where(arange(S).view(1, -1, 1, 1) == pos, expand(k), cache)``: a new value of the *whole*
cache, marked as a ``BUFFER_MUTATION`` output. Lowered as written, that charges a read and a
write of every cache element, where eager's ``copy_`` into the slice moves one position; at a
long context the "bound" would be beaten by orders of magnitude.

When the updated value is such a ``where`` — one branch the tensor being updated, read where
it stands, and the condition a known function of the indices (``index_predicate``: comparisons
of ``arange``s, reshaped, expanded and shifted, joined by ``&``) — it is lowered as one kernel
that writes the other branch only where the condition holds (a ``where`` domain), into the
output that updates the tensor in place (``solar_assets.ir.updates``): the elements outside the
condition keep the tensor's values without any step touching them. The ``arange``/compare chain
that built the condition is then dead and not lowered.

A condition built from data (a mask tensor, ``index_put`` with tensor indices) is not
recognised and the update is lowered as the functional whole-tensor value: validated, but its
bytes count the whole tensor (``docs/interfaces.md``).
"""
from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

ARANGE = ("arange",)
RESHAPES = ("view", "reshape", "_unsafe_view", "unsqueeze", "squeeze", "expand", "alias", "clone")
COMPARISONS = {"eq": "==", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "ne": "!="}
NEGATED = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
CONJUNCTIONS = ("logical_and", "bitwise_and", "__and__")


@dataclass(frozen=True)
class IndexForm:
    """An integer tensor that is an affine function of its own indices: ``const + Σ coef·i_d``,
    with ``coefs`` per dim of ``shape`` (a dim whose coefficient is 0 may have any size)."""

    shape: tuple[int, ...]
    coefs: tuple[int, ...]
    const: int

    def broadcast(self, rank: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Shape and coefficients right-aligned to ``rank`` dims (numpy broadcasting)."""
        pad = rank - len(self.shape)
        return (1,) * pad + self.shape, (0,) * pad + self.coefs

    def text(self, loop_vars: list[str]) -> str:
        _, coefs = self.broadcast(len(loop_vars))
        pairs = sorted(((c, v) for c, v in zip(coefs, loop_vars) if c), key=lambda p: p[0] < 0)
        if not pairs:
            return str(self.const)
        text = ""
        for c, v in pairs:  # positive terms first: ``i3 - i2``, not ``-1*i2 + i3``
            term = v if abs(c) == 1 else f"{abs(c)}*{v}"
            text += (f" - {term}" if text else f"-{term}") if c < 0 else (f" + {term}" if text else term)
        return text + (f" + {self.const}" if self.const > 0 else f" - {-self.const}" if self.const else "")


def packet_name(node: Any) -> str:
    """An fx node's op by its overload packet's name (``where`` for ``aten.where.self``)."""
    target = getattr(node, "target", None)
    return getattr(getattr(target, "overloadpacket", None), "__name__", getattr(target, "__name__", ""))


def _shape(node: Any) -> tuple[int, ...] | None:
    val = node.meta.get("val") if hasattr(node, "meta") else None
    try:
        return tuple(int(s) for s in val.shape)
    except (AttributeError, TypeError):
        return None


def index_form(node: Any) -> IndexForm | None:
    """``node``'s value as an ``IndexForm``, or None when it is not one (it reads data, or an op
    this does not follow)."""
    import torch.fx

    if isinstance(node, bool):
        return None
    if isinstance(node, int):
        return IndexForm((), (), node)
    if not isinstance(node, torch.fx.Node) or node.op != "call_function":
        return None
    name, args, shape = packet_name(node), node.args, _shape(node)
    if shape is None:
        return None
    if name == "arange":
        nums = [a for a in args if isinstance(a, int)]
        start, step = (0, 1) if len(nums) == 1 else (nums[0], nums[2] if len(nums) > 2 else 1)
        if node.kwargs.get("dtype") is not None and node.kwargs["dtype"].is_floating_point:
            return None
        return IndexForm(shape, (step,), start)
    if name in RESHAPES:
        src = index_form(args[0])
        return None if src is None else _reshaped(src, shape, expand=name == "expand")
    if name == "permute":
        src = index_form(args[0])
        if src is None:
            return None
        dims = [d % len(src.shape) for d in args[1]]
        return IndexForm(shape, tuple(src.coefs[d] for d in dims), src.const)
    if name in ("add", "sub", "mul"):
        a, b = index_form(args[0]), index_form(args[1])
        alpha = node.kwargs.get("alpha", 1)
        if a is None or b is None or not isinstance(alpha, int):
            return None
        rank = len(shape)
        (_, ca), (_, cb) = a.broadcast(rank), b.broadcast(rank)
        if name == "mul":
            if any(cb) and any(ca):
                return None  # a product of two indices is not affine
            scale, form = (b.const, ca) if not any(cb) else (a.const, cb)
            const = a.const * b.const
            return IndexForm(shape, tuple(scale * c for c in form), const)
        sign = alpha if name == "add" else -alpha
        return IndexForm(shape, tuple(x + sign * y for x, y in zip(ca, cb)), a.const + sign * b.const)
    return None


def _reshaped(src: IndexForm, shape: tuple[int, ...], expand: bool) -> IndexForm | None:
    """``src`` viewed as ``shape`` where only unit dims come or go (and, for ``expand``, unit dims
    widen): the varying dims keep their order and sizes."""
    if expand:
        pad = len(shape) - len(src.shape)
        if pad < 0:
            return None
        full_shape, coefs = (1,) * pad + src.shape, (0,) * pad + src.coefs
        if any(c and a != b for a, b, c in zip(full_shape, shape, coefs)):
            return None
        return IndexForm(shape, coefs, src.const)
    varying = [(n, c) for n, c in zip(src.shape, src.coefs) if n != 1]
    targets = [d for d, n in enumerate(shape) if n != 1]
    if [n for n, _ in varying] != [shape[d] for d in targets]:
        return None
    coefs = [0] * len(shape)
    for d, (_, c) in zip(targets, varying):
        coefs[d] = c
    return IndexForm(shape, tuple(coefs), src.const)


def index_predicate(node: Any, rank: int) -> list[tuple[str, str, str]] | None:
    """A boolean ``node`` as a conjunction of affine comparisons over the ``rank`` indices it is
    broadcast to: ``[(left, op, right)]`` with ``i0 … i{rank-1}`` for the indices; None if it is
    not one."""
    name = packet_name(node)
    loop_vars = [f"i{d}" for d in range(rank)]
    if name in COMPARISONS:
        a, b = index_form(node.args[0]), index_form(node.args[1])
        if a is None or b is None:
            return _compared_choice(node.args[0], COMPARISONS[name], node.args[1], rank)
        return [(a.text(loop_vars), COMPARISONS[name], b.text(loop_vars))]
    if name == "_to_copy" and str(node.kwargs.get("dtype")) == "torch.bool":  # ``tril(ones(T, T)).bool()``
        return _compared_choice(node.args[0], "!=", 0, rank)
    if name in CONJUNCTIONS or node.target is operator.and_:
        always = [_constant(a) not in (None, 0.0) for a in node.args[:2]]  # ``triu`` ands with full(True)
        if any(always):
            return index_predicate(node.args[1] if always[0] else node.args[0], rank)
        parts = [index_predicate(a, rank) for a in node.args[:2]]
        return None if any(p is None for p in parts) else parts[0] + parts[1]
    if name in ("logical_not", "bitwise_not"):
        inner = index_predicate(node.args[0], rank)
        if inner is None or len(inner) != 1:
            return None
        left, op, right = inner[0]
        return [(left, NEGATED[op], right)]
    return None


def _constant(x: Any) -> float | None:
    """A number, or a node that is one (``scalar_tensor(0)``, ``full(shape, 1)``)."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x)
    name = packet_name(x)
    if name == "scalar_tensor" and isinstance(x.args[0], (int, float)):
        return float(x.args[0])
    if name == "full" and isinstance(x.args[1], (int, float)):
        return float(x.args[1])
    return None


def _compared_choice(choice: Any, op: str, other: Any, rank: int) -> list[tuple[str, str, str]] | None:
    """``where(P, a, b) op c`` with constants a, b, c (how ``tril(ones(T, T)) == 0`` exports): P, or
    not P, whichever the comparison keeps; None when it keeps both or neither branch."""
    import operator as ops

    if packet_name(choice) != "where" or len(choice.args) != 3:
        return None
    a, b, c = _constant(choice.args[1]), _constant(choice.args[2]), _constant(other)
    if None in (a, b, c):
        return None
    compare = {"==": ops.eq, "!=": ops.ne, "<": ops.lt, "<=": ops.le, ">": ops.gt, ">=": ops.ge}[op]
    when_p, when_not = compare(a, c), compare(b, c)
    if when_p == when_not:
        return None
    inner = index_predicate(choice.args[0], rank)
    if inner is None or when_p:
        return inner
    if len(inner) != 1:
        return None
    left, cmp, right = inner[0]
    return [(left, NEGATED[cmp], right)]


def condition_text(clauses: list[tuple[str, str, str]]) -> str | None:
    """The ``where`` text of a conjunction, or None when a clause is ``!=`` (not convex)."""
    if any(op == "!=" for _, op, _ in clauses):
        return None
    return " and ".join(f"{l} {op} {r}" for l, op, r in clauses)


@dataclass(frozen=True)
class SliceUpdate:
    """A recognised in-place update: write ``value`` where ``condition`` holds, into ``target``'s storage."""

    node: str  # the fx ``where`` node whose value is the updated tensor
    value: Any  # the fx node (or scalar) written where the condition holds
    condition: str  # a ``where`` text over ``i0 … i{rank-1}``
    predicate_nodes: frozenset[str]  # the fx nodes that built the condition (not lowered)


def slice_update(node: Any, target_placeholder: str) -> SliceUpdate | None:
    """``node`` as a ``SliceUpdate`` of the placeholder named ``target_placeholder``, or None."""
    import torch.fx

    if packet_name(node) != "where" or len(node.args) != 3:
        return None
    cond, a, b = node.args
    shape = _shape(node)
    if not isinstance(cond, torch.fx.Node) or shape is None:
        return None

    def is_target(x: Any) -> bool:
        return isinstance(x, torch.fx.Node) and x.name == target_placeholder and _shape(x) == shape

    clauses = index_predicate(cond, len(shape))
    if clauses is None:
        return None
    if is_target(b):
        value = a
    elif is_target(a) and len(clauses) == 1:
        left, op, right = clauses[0]
        value, clauses = b, [(left, NEGATED[op], right)]
    else:
        return None
    text = condition_text(clauses)
    if text is None:
        return None
    return SliceUpdate(node.name, value, text, frozenset(exclusive_feeders(cond, node)))


def exclusive_feeders(start: Any, consumer: Any) -> set[str]:
    """``start`` and the nodes that feed only it (transitively), up to placeholders: what building
    ``consumer``'s condition needed and nothing else uses."""
    import torch.fx

    candidates: dict[str, Any] = {}
    stack = [start]
    while stack:
        n = stack.pop()
        if isinstance(n, torch.fx.Node) and n.op == "call_function" and n.name not in candidates:
            candidates[n.name] = n
            stack.extend(n.all_input_nodes)
    chain = set(candidates)
    changed = True
    while changed:  # drop any node some use outside the chain (or the consumer) still needs
        changed = False
        for name in list(chain):
            if name != start.name and any(u.name not in chain for u in candidates[name].users):
                chain.discard(name)
                changed = True
    if any(u.name != consumer.name for u in start.users):
        return set()
    return chain
