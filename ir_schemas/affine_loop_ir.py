"""The Affine Loop IR: a small, explicit, executable description of a workload.

A program declares its tensors and runs a list of steps. A step is either a restricted
kernel (a perfect loop nest with static trip counts and one assignment whose subscripts
are affine in the loop variables) or a composition op for what a perfect nest cannot say.
Index and value expressions are written in Python syntax so that a person or a language
model can read and write them; ``solar_assets.ir`` parses, checks and prints them.

Additive extensions (``ir_version`` stays "1"):

* **indirect subscripts**: a subscript of ``out`` or of a read in ``expr`` may be a read of an
  integer tensor with affine subscripts, optionally plus an affine offset: ``X[I[n, k], c]``
  (gather), ``Y[I[n], c] += S[n, c]`` (scatter-add, ``init="keep"`` after a copy kernel),
  ``E[T[b, s] + 1, d]``. The index value must lie in the tensor's extent (an error at execution,
  never a wrap-around: lowerings normalise negative indices first). Nested indirection
  (``X[I[J[n]]]``) is not allowed, nor a coefficient on the index read.
* ``Repeat``: a static repeat of a list of steps (an RNN over time, a scan with a static trip
  count); kernels in its body may use its ``var`` in affine subscripts as a free variable.
* ``TopK``: the one non-affine selection step (values and int64 indices, sorted like
  ``torch.topk``), executed in NumPy.
* ``Linalg``: a dense linear-algebra routine by name (Cholesky, LU, QR, solves, eigh, SVD …),
  costed by its LAPACK operation count, executed in NumPy / SciPy.
* ``origin`` (optional, on every step): the framework op call the step was lowered from
  (``Origin``: fx node name or JAX equation path, op, module path), set by the tracers so costs
  can be grouped per framework op (``solar_assets.graph.op_groups``); agent-written IR may omit it.
* ``where`` (optional, on a kernel): an affine condition on the loop variables; only the
  iterations where it holds run and are costed (a causal mask is ``j <= i``: S(S+1)/2 products).
* ``view`` (optional, on a kernel): the kernel's output is an alias of what it reads (eager
  PyTorch returns a view: ``x.t()``, ``x[:, ::2]``, ``x.expand(...)``); it moves no bytes.
* ``Cond``: a value-dependent branch (``lax.cond`` / ``lax.switch`` with a data-dependent
  predicate): the index is read at run time and only that branch runs; every branch writes
  the same ``outs``. Analyses look at every branch and keep a cheaper one (see
  ``solar_assets.graph.einsum_graph``), so bounds stay lower bounds.
"""
from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt

IR_VERSION = "1"

DType = Literal["float64", "float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "int64", "int32", "int16",
                "int8", "uint8", "bool"]
"""Tensor dtypes, spelled as torch / NumPy / JAX print them; widths and rounding in ``solar_assets.ir.dtypes``."""
Role = Literal["input", "weight", "output", "intermediate"]
Update = Literal["=", "+=", "max=", "min=", "*="]
IDENT = r"^[A-Za-z_][A-Za-z0-9_]*$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TensorDecl(_Strict):
    """A named dense tensor; ``binding`` says where the values of inputs and weights come from."""

    name: str = Field(pattern=IDENT)
    shape: tuple[NonNegativeInt, ...] = Field(description="Static extents, outermost first (row-major).")
    dtype: DType
    role: Role
    binding: str | None = Field(
        default=None,
        description="For inputs 'input:<position>', for weights 'param:<qualified name>' or "
        "'buffer:<qualified name>'; for an output that is an input's or buffer's storage after the "
        "workload updated it in place, 'updates:<that binding>' (the output holds the tensor's values "
        "before any step writes it); absent for other outputs and intermediates.",
    )
    pad_value: float | None = Field(
        default=None,
        description="Value read at out-of-range subscripts (e.g. 0 for a zero-padded conv "
        "input, -inf for max pooling). Absent: an out-of-range read is an error.",
    )


class Origin(_Strict):
    """The framework op call a step was lowered from, so costs can be grouped per op (what eager
    runs as one kernel). Tracers set it on every step they emit; an agent-written IR may omit it."""

    node: str = Field(description="Unique per framework op call: the torch.fx node name "
                      "('convolution_1'), or for JAX 'eqn<i>' with the index path through nested "
                      "jaxprs ('eqn3.1.0').")
    op: str = Field(description="The op: 'aten.convolution.default', 'dot_general', ...")
    module: str = Field(default="", description="Where in the model: the innermost nn_module_stack "
                        "path ('encoder.layers.3.norm1'), or the JAX name stack; '' when unknown.")
    scope: tuple[tuple[str, str], ...] = Field(
        default=(), description="The modules the call ran inside, outermost first, as (path, class name): "
        "torch's nn_module_stack ((\"\", \"Model\"), (\"features.1\", \"ReLU\")); for JAX the name stack's "
        "prefixes with class ''. Empty when unknown.")
    source: str = Field(default="", description="The user's line that made the call ('model.py:42'); '' when unknown.")
    call: str = Field(default="", description="The call the user made, before the tracer's decompositions: "
                      "torch's pre-decomposition export node ('linear_1', of which 'addmm' and 'permute' are "
                      "parts), for JAX the top-level equation ('eqn3' of 'eqn3.1.0'); '' when unknown (then "
                      "the call is the node). What a profile of the user's own run is joined on.")
    call_op: str = Field(default="", description="The call's op ('aten.linear.default'); '' when unknown.")
    phase: str = Field(default="", description="Of a training step (solar analyze --train): 'forward', "
                       "'backward' or 'optimizer', as the tracer recorded the op; '' for one forward pass.")


class Loop(_Strict):
    """One loop of a perfect nest: ``for var in range(extent)``."""

    var: str = Field(pattern=IDENT)
    extent: NonNegativeInt


class Kernel(_Strict):
    """A restricted kernel: ``for loops: out update expr``.

    ``out`` is ``T[i0, ...]`` with affine subscripts; ``expr`` is arithmetic over tensor
    reads with affine subscripts, loop variables, numeric constants and the scalar functions
    of ``solar_assets.ir.SCALAR_FUNCTIONS``. With an accumulating update and ``init`` equal
    to ``identity``, the written region starts at the identity of the update (0 for ``+=``,
    -inf for ``max=``, +inf for ``min=``, 1 for ``*=``); with ``keep`` it accumulates into
    the values already there.
    """

    kind: Literal["kernel"] = "kernel"
    name: str = Field(pattern=IDENT)
    origin: Origin | None = Field(default=None, description="The framework op this step was lowered from.")
    loops: tuple[Loop, ...]
    out: str = Field(description="Output access, e.g. 'Y[n, k]'.")
    update: Update
    expr: str = Field(description="Value expression, e.g. 'X[n, c] * W[c, k]'.")
    init: Literal["identity", "keep"] = "identity"
    where: str | None = Field(
        default=None,
        description="An affine condition on the loop variables: comparisons (<, <=, >, >=, ==) of affine "
        "forms joined by 'and', e.g. 'j <= i' (a causal mask) or 'i - 128 < j and j <= i' (a window). "
        "The statement runs only at the iterations where it holds; the others do nothing (an '=' kernel "
        "leaves those elements as they were, zero in a fresh tensor). Costs count only those iterations.")
    view: bool = Field(
        default=False,
        description="The kernel makes 'out' a view of the one tensor it reads (the framework returns an alias: "
        "a transpose, a strided slice, an expand); update '=' and a plain read. It executes as a copy, so "
        "outputs can be compared, but moves no bytes: costs read through it to its source.")


class Reshape(_Strict):
    """``out`` is ``src`` seen with another shape (same elements, row-major): no data moves."""

    kind: Literal["reshape"] = "reshape"
    name: str = Field(pattern=IDENT)
    origin: Origin | None = Field(default=None, description="The framework op this step was lowered from.")
    src: str = Field(pattern=IDENT)
    out: str = Field(pattern=IDENT)


class TopK(_Strict):
    """``values, indices = topk(src, k, axis, largest)``: the ``k`` largest (or smallest) entries
    along ``axis``, sorted (ties keep the lower index first), like ``torch.topk(sorted=True)``.

    ``values`` has ``src``'s dtype and shape with ``axis`` cut to ``k``; ``indices`` the same
    shape in int64. ``k`` equal to the axis extent is a full sort. No FLOPs; its traffic is
    reading ``src`` and writing both results.
    """

    kind: Literal["topk"] = "topk"
    name: str = Field(pattern=IDENT)
    origin: Origin | None = Field(default=None, description="The framework op this step was lowered from.")
    src: str = Field(pattern=IDENT)
    axis: NonNegativeInt
    k: NonNegativeInt
    largest: bool = True
    values: str = Field(pattern=IDENT)
    indices: str = Field(pattern=IDENT)


LinalgRoutine = Literal["cholesky", "cholesky_solve", "cholesky_inverse", "triangular_solve", "lu_factor", "lu_jax", "lu",
                        "lu_solve", "solve", "inv", "det", "slogdet", "qr", "eigh", "eigvalsh", "svd", "svdvals",
                        "pinv", "lu_unpack", "geqrf", "householder_product", "ormqr", "ldl_factor", "ldl_solve",
                        "matrix_exp", "tridiagonal_solve", "fft_r2c", "fft_c2c", "fft_c2r", "eig",
                        "nonzero", "masked_select", "unique", "unique_consecutive", "masked_scatter"]
"""The library routines a ``Linalg`` step can name (``solar_assets.ir.linalg``): dense linear
algebra, FFTs, and the data-shaped selections whose result length the sample's values decide."""
LINALG_OPTIONS = ("upper", "left", "unitriangular", "adjoint", "mode", "full_matrices", "hermitian", "rtol", "dims",
                  "normalization", "forward", "onesided", "last_dim_size", "left_vectors", "right_vectors", "count",
                  "return_inverse", "return_counts")


class Linalg(_Strict):
    """``outs = routine(args)``: a library routine: a dense linear-algebra routine on the last two
    dims of its operands (the leading dims a batch: a factorisation, solve, inverse, determinant or
    decomposition, which no perfect loop nest can say: pivoting, iteration to convergence), or a
    fast Fourier transform over ``dims`` (a complex tensor as two real planes, real then imaginary:
    ``fft_r2c`` real → two planes, ``fft_c2c`` two → two, ``fft_c2r`` two → real), or a selection
    whose result length depends on the values (``nonzero``, ``masked_select``, ``unique``,
    ``unique_consecutive``; ``masked_scatter`` consumes a data-dependent number of its source):
    the length the sample's values gave is ``count``, and the report says so.

    Result shapes follow the routine (``solar_assets.ir.linalg``); the flags after ``outs`` are
    the routines' options (each routine reads the ones it has).
    Its traffic is its operands and results once; its FLOPs are the routine's standard LAPACK
    count, labelled as such (none for a selection: comparisons and data movement). Executed in
    NumPy / SciPy.
    """

    kind: Literal["linalg"] = "linalg"
    name: str = Field(pattern=IDENT)
    origin: Origin | None = Field(default=None, description="The framework op this step was lowered from.")
    routine: LinalgRoutine
    args: tuple[str, ...] = Field(description="Operand tensors, in the routine's order.")
    outs: tuple[str, ...] = Field(description="Result tensors, in the routine's order.")
    upper: bool = Field(default=False, description="Triangular factor / operand is upper (else lower).")
    left: bool = Field(default=True, description="Solve A X = B (else X A = B).")
    unitriangular: bool = Field(default=False, description="The triangular operand has a unit diagonal.")
    adjoint: bool = Field(default=False, description="lu_solve: solve with the transpose.")
    mode: Literal["reduced", "complete"] = Field(default="reduced", description="qr: thin or full Q.")
    full_matrices: bool = Field(default=False, description="svd: full U and Vh (else thin).")
    hermitian: bool = Field(default=False, description="pinv: the operand is symmetric.")
    rtol: float | None = Field(default=None, description="pinv: relative cutoff of singular values "
                               "(None: max(m, n) · machine epsilon).")
    dims: tuple[int, ...] = Field(default=(), description="fft_*: the transformed dims (non-negative).")
    normalization: Literal[0, 1, 2] = Field(default=0, description="fft_*: the result scaled by 1, "
                                            "1/sqrt(n) or 1/n (n the transformed points).")
    forward: bool = Field(default=True, description="fft_c2c: the forward transform (exp(-2πi…)), else the inverse.")
    onesided: bool = Field(default=True, description="fft_r2c: only the non-redundant half of the last dim.")
    last_dim_size: int = Field(default=0, description="fft_c2r: the real result's size along the last dim.")
    left_vectors: bool = Field(default=False, description="eig: the left eigenvectors too.")
    right_vectors: bool = Field(default=True, description="eig: the right eigenvectors too.")
    count: int = Field(default=0, ge=0, description="nonzero, masked_select, unique*: the result's length, "
                       "as the sample's values decided it (the IR's shapes are static).")
    return_inverse: bool = Field(default=False, description="unique*: the index of each element's value too.")
    return_counts: bool = Field(default=False, description="unique*: each value's count too.")

    def options(self) -> dict[str, bool | float | str | None]:
        """The flags as a dict, for ``solar_assets.ir.linalg``."""
        return {k: getattr(self, k) for k in LINALG_OPTIONS}


class Repeat(_Strict):
    """``for var in range(extent): steps`` with a static trip count, run in order.

    Body kernels may use ``var`` in their affine subscripts (not one of their loops), e.g. an
    RNN step reads ``X[t, b, i]`` and writes ``H[t, b, j]``; a tensor written in one iteration
    and read in the next carries state. Step names are unique across the whole program.
    """

    kind: Literal["repeat"] = "repeat"
    name: str = Field(pattern=IDENT)
    origin: Origin | None = Field(default=None, description="The framework op this step was lowered from.")
    var: str = Field(pattern=IDENT)
    extent: NonNegativeInt
    steps: tuple["Step", ...]


class Cond(_Strict):
    """``switch(index, branches)``: run ``branches[clamp(index, 0, len(branches) - 1)]`` only.

    ``index`` is a rank-0 integer (or bool) tensor written before the step; its value is known
    only at run time (a static choice would simply be the taken branch's steps). Every branch
    writes every tensor of ``outs`` (its results, read after the step). Body kernels may use
    the variables of enclosing repeats. Step names are unique across the whole program.
    """

    kind: Literal["cond"] = "cond"
    name: str = Field(pattern=IDENT)
    origin: Origin | None = Field(default=None, description="The framework op this step was lowered from.")
    index: str = Field(pattern=IDENT)
    branches: tuple[tuple["Step", ...], ...] = Field(min_length=1)
    outs: tuple[str, ...] = ()


Step = Annotated[Union[Kernel, Reshape, TopK, Linalg, Repeat, Cond], Field(discriminator="kind")]
Repeat.model_rebuild()
Cond.model_rebuild()


_TENSOR_MAP = "_tensor_map"  # Program.tensor_map's cache, in the instance's __dict__
PROGRAM_DIGEST = "_digest"  # solar_assets.ir.digest's cache, in the instance's __dict__
_NOT_PICKLED = (_TENSOR_MAP, PROGRAM_DIGEST)


class Program(_Strict):
    """A whole workload in Affine Loop IR."""

    ir_version: Literal["1"] = IR_VERSION
    name: str
    tensors: tuple[TensorDecl, ...]
    inputs: tuple[str, ...] = Field(description="Graph inputs in the workload's argument order.")
    outputs: tuple[str, ...] = Field(description="Graph outputs in the workload's return order.")
    steps: tuple[Step, ...]
    checked_only: tuple[str, ...] = Field(
        default=(), description="Outputs validated against the framework's values that are not results of the "
        "computation: a training step's gradients, which its optimizer update consumes (they need not leave the "
        "chip, so no bound charges their traffic). A subset of outputs.")

    @property
    def result_outputs(self) -> tuple[str, ...]:
        """The outputs the computation delivers (``outputs`` less ``checked_only``): what the bounds
        charge as written."""
        return tuple(o for o in self.outputs if o not in self.checked_only)

    def walk_steps(self) -> list[tuple[Kernel | Reshape | TopK | Linalg | Repeat | Cond, tuple[Repeat, ...]]]:
        """Every step in execution order (a repeat before its body, listed once; a cond before
        all its branches, in branch order), each with the repeats enclosing it, outermost first."""
        out: list = []

        def walk(steps: tuple, enclosing: tuple[Repeat, ...]) -> None:
            for st in steps:
                out.append((st, enclosing))
                if isinstance(st, Repeat):
                    walk(st.steps, enclosing + (st,))
                elif isinstance(st, Cond):
                    for branch in st.branches:
                        walk(branch, enclosing)

        walk(self.steps, ())
        return out

    def tensor(self, name: str) -> TensorDecl:
        for t in self.tensors:
            if t.name == name:
                return t
        raise KeyError(name)

    def tensor_map(self) -> dict[str, TensorDecl]:
        """``name -> TensorDecl``, built once per ``tensors`` tuple and shared: not to be modified.
        The stages ask for it per kernel and per access (32,000 times for a BigBird program of
        20,000 tensors: 8 s when built each time). Kept beside the fields, left out of pickles;
        a ``model_copy`` with other tensors has another tuple, so it builds its own."""
        cached = self.__dict__.get(_TENSOR_MAP)
        if cached is None or cached[0] is not self.tensors:
            cached = (self.tensors, {t.name: t for t in self.tensors})
            self.__dict__[_TENSOR_MAP] = cached
        return cached[1]

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        if any(k in state["__dict__"] for k in _NOT_PICKLED):
            state = {**state, "__dict__": {k: v for k, v in state["__dict__"].items() if k not in _NOT_PICKLED}}
        return state
