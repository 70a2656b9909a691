"""Restricted kernel → Python source for numba: one perfect loop nest per kernel.

The source is canonical: loop variables become ``i0, i1, …`` (kernel order) with extents
``n0, n1, …``, the written tensor ``out`` and the distinct read tensors ``in0, in1, …`` (order
of first read), so kernels that differ only in names or sizes share one compiled function.
Extents are arguments, not literals: with literal trip counts LLVM fully unrolls small nests
and a 64³ batched matmul took 55 s to compile (0.3 s with arguments).

Loop order (see DESIGN.md, "What is known about tracing and validation cost"): the kernel's
order is kept, except that for an accumulating kernel the loop with the most contiguous
accesses goes innermost. If that is a reduction loop, the output loops go outside and the
reduction accumulates in a float64 local (``form == "local"``); if it is an output loop
(a GEMM's ``n``), the reduction loops sit just outside it and accumulate in the output
array (``form == "direct"``). A kernel that reads the tensor it writes (or a view of it)
runs literally: kernel order, every update through memory.

IR extension: the variables of enclosing ``Repeat`` steps become trailing scalar arguments
``r0, r1, …`` (the executor passes the current iteration). An indirect subscript ``I[n] + 1``
reads the index tensor into a local, checks it against the indexed dim's extent and raises
``IndexError`` when it is out of range (no wrap-around; numba itself checks no bounds).
"""
from __future__ import annotations

import ast
import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from ir_schemas import Program, TensorDecl
from solar_assets.errors import SolarError
from solar_assets.ir import Access, Affine, Indirect, ParsedKernel
from solar_assets.ir.expr import BINARY_OPS, COMPARE_OPS, CONSTANT_NAMES
from solar_assets.ir.interpreter import ExprInterpreter
from solar_assets.ir.scalar_functions import FUNCTIONS as SCALAR_TABLE
from solar_assets.ir.scalar_functions import uses_special

Kind = Literal["f", "i", "b"]
Form = Literal["assign", "local", "direct"]

# The written region of an accumulating kernel with init 'identity' starts here.
IDENTITY: dict[Kind, dict[str, str]] = {
    "f": {"+=": "0.0", "*=": "1.0", "max=": "-math.inf", "min=": "math.inf"},
    "i": {"+=": "0", "*=": "1", "max=": "(-9223372036854775807 - 1)", "min=": "9223372036854775807"},
    "b": {"+=": "False", "*=": "True", "max=": "False", "min=": "True"},
}
_TRUE_FALSE: dict[Kind, tuple[str, str]] = {"f": ("1.0", "0.0"), "i": ("1", "0"), "b": ("True", "False")}
# The IR's vocabulary (``ir.expr``: operators, constants, scalar functions) as Python source.
_CONSTANTS = {name: f"math.{name}" for name in CONSTANT_NAMES}
_BINARY = BINARY_OPS
_COMPARE = COMPARE_OPS
# Functions with a source template (``ir.scalar_functions``); the others (``numba`` None) are
# written by ``_Emitter.call``. Together: every name of SCALAR_FUNCTIONS.
_TEMPLATES = {f.name: f.numba for f in SCALAR_TABLE.values() if f.numba is not None}
IMPLEMENTED = frozenset(_TEMPLATES) | {"relu", "max", "min", "fmod", "select"}
"""The scalar functions the code generator implements (a test checks: exactly SCALAR_FUNCTIONS)."""
_SIMPLE = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_.]*|-?[0-9.e+-]+|\(-9223372036854775807 - 1\))$")

# IEEE semantics (inf / NaN instead of Python exceptions; no 'nnan' / 'ninf' fast-math), but
# reassociation and FMA, which let LLVM vectorise a float64 reduction: 4-5x on a dot product.
DECORATOR = '@numba.njit(cache=True, error_model="numpy", fastmath={"contract", "reassoc"}, nogil=True)'


def source_digest(source: str | bytes) -> str:
    """The content hash naming a generated kernel module: ``solar_kernel_<digest>.py`` holds
    exactly the source with this hash (the kernel cache checks it before every import)."""
    return hashlib.sha256(source.encode() if isinstance(source, str) else source).hexdigest()[:24]


class CodegenError(SolarError):
    """A kernel the code generator cannot turn into a loop nest; names the kernel."""


def dtype_kind(dtype: str) -> Kind:
    """'f' for float dtypes, 'b' for bool, 'i' for every integer dtype."""
    if dtype.startswith(("float", "bfloat")):
        return "f"
    return "b" if dtype == "bool" else "i"


def _number(value: float | int | bool) -> str:
    if isinstance(value, bool) or isinstance(value, int):
        return repr(value)
    if math.isnan(value):
        return "math.nan"
    if math.isinf(value):
        return "math.inf" if value > 0 else "(-math.inf)"
    return repr(float(value))


class Offsets:
    """The constant terms of a kernel's subscripts, as arguments ``o0, o1, …``: kernels that differ
    only in them (``x[t, i, j]`` for each step t of an unrolled loop, a concatenation's
    ``out[i + 840, j]``) share one compiled function. On KernelBench levels 1–4 the 1,254 kernel
    sources were 538 with them as arguments; each compile is 0.1–0.3 s."""

    def __init__(self) -> None:
        self.values: list[int] = []
        self._names: dict[int, str] = {}

    def name(self, value: int) -> str:
        if value not in self._names:
            self._names[value] = f"o{len(self.values)}"
            self.values.append(value)
        return self._names[value]


class Literals:
    """The finite float constants of a kernel's expressions, as arguments ``f0, f1, …``: kernels
    that differ only in them (``x + 1e-05`` and ``x + 0.001``, a clamp's bounds, a scale) share
    one compiled function. The argument is a float64, as the literal was, so the arithmetic is the
    same (LLVM no longer folds ``x * 1.0``: the result is the same value). Each occurrence is its
    own argument, a negated one included (``-1.0``): equal values in one kernel do not make its
    source differ from a kernel with distinct ones."""

    def __init__(self) -> None:
        self.values: list[float] = []

    def name(self, value: float) -> str:
        self.values.append(float(value))
        return f"f{len(self.values) - 1}"


def _index_source(a: Affine, names: Mapping[str, str], offsets: Offsets | None = None) -> str:
    """``i2 * 2 + i5 - 1`` for an affine subscript (``i2 * 2 + i5 + o0`` with ``offsets``)."""
    parts: list[str] = []
    for v, c in a.coefs:
        term = names[v] if abs(c) == 1 else f"{names[v]} * {abs(c)}"
        if not parts:
            parts.append(f"-{term}" if c < 0 else term)
        else:
            parts.append(f"- {term}" if c < 0 else f"+ {term}")
    if offsets is not None and (a.const or not parts):  # a constant subscript, 0 included (``X[0, i]``)
        const = offsets.name(a.const)
        return " ".join([*parts, f"+ {const}"]) if parts else const
    if not parts:
        return str(a.const)
    if a.const:
        parts.append(f"- {-a.const}" if a.const < 0 else f"+ {a.const}")
    return " ".join(parts)


def _access_source(param: str, index: tuple[Affine, ...], names: Mapping[str, str],
                   offsets: Offsets | None = None) -> str:
    """An affine access (no indirect subscripts: those go through ``_Emitter.access``)."""
    if not index:
        return f"{param}[()]"
    return f"{param}[{', '.join(_index_source(a, names, offsets) for a in index)}]"


def _out_vars(pk: ParsedKernel) -> list[str]:
    """Loop variables that appear in the output subscript, in kernel order."""
    used = {v for a in pk.out.index for v in a.vars}
    return [lp.var for lp in pk.kernel.loops if lp.var in used]


def is_injective(acc: Access, extents: Mapping[str, int], vars_: list[str]) -> bool:
    """Sufficient test that distinct values of ``vars_`` address distinct elements of ``acc``:
    every variable that takes more than one value is alone in some subscript."""
    alone = {a.coefs[0][0] for a in acc.index if len(a.coefs) == 1}
    return all(v in alone for v in vars_ if extents[v] > 1)


def _contiguity(var: str, accesses: list[Access]) -> int:
    """+2 per access whose last dim steps by ±1 with ``var`` (and no other dim moves), +1 for a
    small stride in the last dim, -2 per access ``var`` strides through an outer dim."""
    score = 0
    for acc in accesses:
        dims = [d for d, a in enumerate(acc.index) if a.coef(var)]
        if not dims:
            continue
        if dims == [len(acc.index) - 1]:
            score += 2 if abs(acc.index[-1].coef(var)) == 1 else 1
        else:
            score -= 2
    return score


def loop_order(pk: ParsedKernel, literal: bool = False) -> tuple[list[str], Form]:
    """The loop order the generated code uses, outermost first, and how it accumulates."""
    k = pk.kernel
    loops = [lp.var for lp in k.loops]
    if k.update == "=":
        return loops, "assign"
    if literal:
        return loops, "direct"
    ext = pk.extents
    out_vars = set(_out_vars(pk))
    reductions = [v for v in loops if v not in out_vars and ext[v] != 1]
    keep = [v for v in loops if v not in reductions]
    if not reductions:
        return keep, "local"
    accesses = list(dict.fromkeys([pk.out, *pk.reads]))
    candidates = [v for v in loops if ext[v] > 1] or loops
    inner = max(
        candidates,
        key=lambda v: (_contiguity(v, accesses), v == loops[-1], v in reductions, loops.index(v)),
    )
    if inner in reductions:
        return keep + [r for r in reductions if r != inner] + [inner], "local"
    return [v for v in keep if v != inner] + reductions + [inner], "direct"


@dataclass(frozen=True)
class KernelPlan:
    """What the executor needs to run one kernel through numba."""

    source: str
    digest: str  # content hash of source: the module's name and cache key
    params: tuple[str, ...]  # IR tensor names bound to (out, in0, in1, …)
    order: tuple[str, ...]  # IR loop variables, outermost first
    form: Form
    extents: tuple[int, ...]  # trip counts in the kernel's loop order: the arguments n0, n1, …
    free: tuple[str, ...] = ()  # repeat variables, passed after the extents as r0, r1, …
    offsets: tuple[int, ...] = ()  # subscripts' constant terms, passed as o0, o1, … (``Offsets``)
    literals: tuple[float, ...] = ()  # the expressions' float constants, passed last as f0, f1, … (``Literals``)

    @property
    def accumulates_in_memory(self) -> bool:
        """True when partial results live in the output array (so float32 storage would
        accumulate in float32: the executor hands such a kernel a float64 buffer)."""
        return self.form == "direct"


class _Emitter(ExprInterpreter[str]):
    """The code generator's meaning of an expression: numba-friendly Python source, with
    repeated operands hoisted into locals (``temps``)."""

    def __init__(self, pk: ParsedKernel, tensors: Mapping[str, TensorDecl], kind: Kind,
                 names: Mapping[str, str], params: Mapping[str, str], prefix: str = "t",
                 offsets: Offsets | None = None, literals: Literals | None = None):
        super().__init__({v: i for i, v in enumerate([*(lp.var for lp in pk.kernel.loops), *pk.free])},
                         f"kernel {pk.kernel.name!r}")
        self.pk, self.tensors, self.kind, self.names, self.params = pk, tensors, kind, names, params
        self.temps: list[str] = []
        self.prefix = prefix
        self.offsets = offsets
        self.literals = literals

    def fresh(self, text: str) -> str:
        name = f"{self.prefix}{len(self.temps)}"
        self.temps.append(f"{name} = {text}")
        return name

    def subscript(self, a: Affine | Indirect, param: str, d: int) -> str:
        """The text of one subscript; an indirect one becomes a checked local."""
        if not isinstance(a, Indirect):
            return _index_source(a, self.names, self.offsets)
        idx = _access_source(self.params[a.index.tensor], a.index.index, self.names, self.offsets)  # type: ignore[arg-type]
        off = _index_source(a.offset, self.names, self.offsets)
        text = f"{idx}" if off == "0" else f"{idx} + {off}"
        x = self.fresh(text)
        where = f"indirect subscript {d} of {'the output' if param == 'out' else 'a read'}"
        self.temps.append(f"if {x} < 0 or {x} >= {param}.shape[{d}]: raise IndexError({where!r} + ' out of range')")
        return x

    def access(self, acc: Access, param: str) -> str:
        if not acc.index:
            return f"{param}[()]"
        return f"{param}[{', '.join(self.subscript(a, param, d) for d, a in enumerate(acc.index))}]"

    def atom(self, node: ast.expr) -> str:
        text = self.value(node)
        return text if _SIMPLE.match(text) else self.fresh(text)

    def as_atom(self, text: str) -> str:
        return text if _SIMPLE.match(text) else self.fresh(text)

    def cond(self, node: ast.expr) -> str:
        """A boolean-valued expression (for select, and, or, not)."""
        if isinstance(node, ast.Compare):
            parts = [self.value(node.left)]
            for op, right in zip(node.ops, node.comparators):
                parts += [_COMPARE[type(op)], self.value(right)]
            return "(" + " ".join(parts) + ")"
        if isinstance(node, ast.BoolOp):
            joiner = " and " if isinstance(node.op, ast.And) else " or "
            return "(" + joiner.join(self.cond(v) for v in node.values) + ")"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return f"(not {self.cond(node.operand)})"
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            return repr(node.value)
        return f"({self.value(node)} != 0)"

    def value(self, node: ast.expr) -> str:
        return self.run(node)

    def constant(self, value: object) -> str:
        if isinstance(value, bool):
            true, false = _TRUE_FALSE[self.kind]
            return true if value else false
        if self.literals is not None and type(value) is float and math.isfinite(value):
            return self.literals.name(value)
        return _number(value)  # type: ignore[arg-type]

    def name(self, name: str) -> str:
        return self.names[name] if name in self.names else _CONSTANTS[name]

    def _as_kind(self, node: ast.expr) -> str:
        """A boolean-valued expression as a value of the kernel's kind."""
        true, false = _TRUE_FALSE[self.kind]
        return f"({true} if {self.cond(node)} else {false})"

    def unary(self, op: ast.unaryop, operand: ast.expr, node: ast.UnaryOp) -> str:
        if isinstance(op, ast.USub) and self.literals is not None and isinstance(operand, ast.Constant) \
                and type(operand.value) is float and math.isfinite(operand.value):
            return self.literals.name(-operand.value)
        if isinstance(op, ast.USub):
            return f"(-{self.run(operand)})"
        if isinstance(op, ast.UAdd):
            return self.run(operand)
        return self._as_kind(node)

    def binary(self, op: ast.operator, left: ast.expr, right: ast.expr, node: ast.BinOp) -> str:
        return f"({self.run(left)} {_BINARY[type(op)]} {self.run(right)})"

    def compare(self, left, ops, comparators, node: ast.Compare) -> str:
        return self._as_kind(node)

    def boolop(self, op: ast.boolop, values, node: ast.BoolOp) -> str:
        return self._as_kind(node)

    def unsupported(self, node: ast.expr) -> str:
        raise CodegenError(f"kernel {self.pk.kernel.name!r}: cannot generate code for {ast.unparse(node)!r}")

    def call(self, name: str, args: Sequence[ast.expr], node: ast.Call | None = None) -> str:
        if name in _TEMPLATES:
            return _TEMPLATES[name].format(*(self.value(a) for a in args))
        if name == "relu":
            x = self.atom(args[0])
            return f"({x} if ({x} > 0 or {x} != {x}) else 0.0)"
        if name in ("max", "min"):  # NaN-propagating, like torch.maximum / torch.minimum
            a, b = self.atom(args[0]), self.atom(args[1])
            return f"({a} if ({a} {'>' if name == 'max' else '<'} {b} or {a} != {a}) else {b})"
        if name == "fmod":  # C fmod: the sign of the dividend, like torch.fmod (in float64: numba's
            # integer np.fmod mixes signed and unsigned operands)
            text = f"np.fmod(float({self.value(args[0])}), float({self.value(args[1])}))"
            return f"int({text})" if self.kind == "i" else text
        if name == "pow":
            return f"({self.value(args[0])} ** {self.value(args[1])})"
        if name == "select":
            return f"({self.value(args[1])} if {self.cond(args[0])} else {self.value(args[2])})"
        raise CodegenError(f"kernel {self.pk.kernel.name!r}: no code for scalar function {name!r}")

    def read(self, acc: Access, node: ast.Subscript) -> str:
        tensor = acc.tensor
        index = acc.index
        decl = self.tensors[tensor]
        text = self.access(acc, self.params[tensor])
        read_kind = dtype_kind(decl.dtype)
        if read_kind == "b" and self.kind != "b":
            true, false = _TRUE_FALSE[self.kind]
            text = f"({true} if {text} else {false})"
        elif read_kind == "f" and self.kind == "f":
            text = f"float({text})"  # float32 storage, float64 arithmetic
        if decl.pad_value is None:
            return text
        checks = []
        for d, (a, size) in enumerate(zip(index, decl.shape)):
            if isinstance(a, Indirect):
                continue  # checked (and an error) when out of range
            e = _index_source(a, self.names, self.offsets)
            bound = f"{self.params[tensor]}.shape[{d}]"
            if any(v in self.pk.free for v in a.vars):  # a repeat variable: check both sides
                checks.append(f"0 <= {e} < {bound}")
                continue
            lo, hi = a.range(self.pk.extents)
            if lo < 0 and hi >= size:
                checks.append(f"0 <= {e} < {bound}")
            elif lo < 0:
                checks.append(f"{e} >= 0")
            elif hi >= size:
                checks.append(f"{e} < {bound}")
        if not checks:
            return text
        return f"({text} if {' and '.join(checks)} else {_number(decl.pad_value)})"


class _Rename(ast.NodeTransformer):
    def __init__(self, names: Mapping[str, str]):
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.copy_location(ast.Name(self.names.get(node.id, node.id), node.ctx), node)


_SUBSCRIPT = re.compile(r"\[([^\[\]]*)\]")
_INT = re.compile(r"(?<![\w.])\d+(?![\w.])")
_FLOAT = re.compile(r"(?<![\w.])-?(\d+\.\d*(e[-+]?\d+)?|\d+e[-+]?\d+)(?![\w.])")
"""A float literal in a statement's text: the comment names ``f`` where the body has ``f0, f1, …``."""


def _without_subscript_constants(text: str) -> str:
    """``x[c, i0 + c]`` for ``x[191, i0 - 1]``: the comment must not name the offsets, or kernels
    that differ only in them would not share a source (the body has them as ``o0, o1, …``)."""
    marked = text
    while True:  # innermost subscripts first (an indirect one holds another)
        new = _SUBSCRIPT.sub(lambda m: "\0" + _INT.sub("c", m.group(1)) + "\1", marked)
        if new == marked:
            return marked.replace("\0", "[").replace("\1", "]")
        marked = new


def _canonical_statement(pk: ParsedKernel, names: Mapping[str, str], params: Mapping[str, str],
                         offsets: Offsets | None = None, literals: Literals | None = None) -> str:
    rename = _Rename({**names, **params})

    def text(source: str) -> str:
        unparsed = ast.unparse(rename.visit(ast.parse(source.strip(), mode="eval").body))
        if literals is not None and literals.values:
            unparsed = _FLOAT.sub("f", unparsed)
        return _without_subscript_constants(unparsed) if offsets is not None and offsets.values else unparsed

    out, expr = text(pk.kernel.out), text(pk.kernel.expr)
    loops = ", ".join(f"{names[lp.var]}<n{n}" for n, lp in enumerate(pk.kernel.loops)) or "()"
    init = "  (init keep)" if pk.kernel.init == "keep" and pk.kernel.update != "=" else ""
    cond = ""
    if pk.kernel.where is not None:
        cond = " where " + text(pk.kernel.where)
    return f"for {loops}{cond}: {out} {pk.kernel.update} {expr}{init}"


def _combine(update: str, target: str, value: str, em: _Emitter) -> list[str]:
    """Statements for ``target update value``."""
    if update in ("+=", "*="):
        return [f"{target} {update} {value}"]
    v = em.as_atom(value)
    cur = target if _SIMPLE.match(target) else em.fresh(target)
    op = ">" if update == "max=" else "<"
    return [f"{target} = {v} if ({v} {op} {cur} or {v} != {v}) else {cur}"]


def plan_kernel(pk: ParsedKernel, tensors: Mapping[str, TensorDecl] | Program, *,
                literal: bool = False) -> KernelPlan:
    """Generate the numba source for one checked kernel.

    ``tensors`` gives dtypes, shapes and pad values; ``literal`` keeps the kernel's loop order
    and updates memory directly (for a kernel that reads the tensor it writes).
    """
    if isinstance(tensors, Program):
        tensors = tensors.tensor_map()
    k = pk.kernel
    ext = pk.extents
    names = {lp.var: f"i{n}" for n, lp in enumerate(k.loops)}
    names.update({v: f"r{n}" for n, v in enumerate(pk.free)})
    sizes = {lp.var: f"n{n}" for n, lp in enumerate(k.loops)}
    reads = [a.tensor for a in pk.reads if a.tensor != pk.out.tensor]
    params = {pk.out.tensor: "out", **{t: f"in{n}" for n, t in enumerate(dict.fromkeys(reads))}}
    kind = dtype_kind(tensors[pk.out.tensor].dtype)
    order, form = loop_order(pk, literal)
    offsets, literals = Offsets(), Literals()
    em = _Emitter(pk, tensors, kind, names, params, offsets=offsets, literals=literals)
    value = em.value(pk.expr)
    cond = None if pk.where_expr is None else \
        _Emitter(pk, tensors, kind, names, params, prefix="w", offsets=offsets, literals=literals).cond(pk.where_expr)
    out_em = _Emitter(pk, tensors, kind, names, params, prefix="u", offsets=offsets)  # locals of an indirect output
    out_ref = out_em.access(pk.out, "out")
    out_vars = _out_vars(pk)
    identity = IDENTITY[kind].get(k.update)
    needs_init_nest = k.update != "=" and k.init == "identity" and (
        form == "direct" or not is_injective(pk.out, ext, out_vars))

    body: list[str] = []

    def nest(vars_: list[str], depth: int) -> int:
        for v in vars_:
            body.append("    " * depth + f"for {names[v]} in range({sizes[v]}):")
            depth += 1
        return depth

    def emit(depth: int, lines: list[str]) -> None:
        body.extend("    " * depth + line for line in lines)

    def guarded(depth: int, lines: list[str]) -> None:
        """The statement's lines, under the kernel's ``where`` condition when it has one."""
        if cond is None:
            emit(depth, lines)
        else:
            emit(depth, [f"if {cond}:"])
            emit(depth + 1, lines)

    if needs_init_nest:
        d = nest([v for v in order if v in out_vars], 1)
        emit(d, [*out_em.temps, f"{out_ref} = {identity}"])
    if form == "assign":
        d = nest(order, 1)
        guarded(d, [*em.temps, *out_em.temps, f"{out_ref} = {value}"])
    elif form == "direct":
        d = nest(order, 1)
        update = _combine(k.update, out_ref, value, em)
        guarded(d, [*out_em.temps, *em.temps, *update])
    else:  # local: output loops outside, reductions inside accumulating into `acc`
        reductions = [v for v in order if v not in out_vars and ext[v] != 1]
        outer = order[: len(order) - len(reductions)]
        d = nest(outer, 1)
        if k.init == "identity" and not needs_init_nest:
            start = identity
        else:
            start = f"float({out_ref})" if kind == "f" else out_ref
        emit(d, [*out_em.temps, f"acc = {start}"])
        d2 = nest(reductions, d)
        update = _combine(k.update, "acc", value, em)
        guarded(d2, [*em.temps, *update])
        emit(d, [f"{out_ref} = acc"])

    header = [
        "# Generated by solar_assets.execute.codegen from one Affine Loop IR kernel; do not edit.",
        f"# {_canonical_statement(pk, names, params, offsets, literals)}",
        f"# loop order {', '.join(names[v] for v in order)}; form {form}",
    ]
    for t, p in params.items():
        if tensors[t].pad_value is not None:
            header.append(f"# {p}: reads outside its shape give {tensors[t].pad_value!r}")
    signature = ", ".join([*params.values(), *sizes.values(), *(names[v] for v in pk.free),
                           *(f"o{n}" for n in range(len(offsets.values))),
                           *(f"f{n}" for n in range(len(literals.values)))])
    source = "\n".join([
        *header,
        "import math",
        "",
        "import numba",
        "import numpy as np",
        *(["", "from solar_assets.execute import special_scalars as _sf"] if uses_special("\n".join(body)) else []),
        "",
        "",
        DECORATOR,
        f"def kernel({signature}):",
        *body,
        "",
    ])
    digest = source_digest(source)
    return KernelPlan(source, digest, tuple(params), tuple(order), form, tuple(lp.extent for lp in k.loops),
                      tuple(pk.free), tuple(offsets.values), tuple(literals.values))


def kernel_source(pk: ParsedKernel, tensors: Mapping[str, TensorDecl] | Program, *,
                  literal: bool = False) -> str:
    """The Python source generated for one kernel (for tests and debugging)."""
    return plan_kernel(pk, tensors, literal=literal).source
