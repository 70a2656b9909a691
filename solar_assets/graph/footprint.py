"""Operand footprints: how many distinct in-range elements an affine access touches.

An access ``T[a_0, ..., a_{d-1}]`` inside a loop box touches the set
``{(a_0(x), ..., a_{d-1}(x)) : x in box}`` intersected with the tensor's index range (reads
of a padded tensor outside its range read the pad value, not memory). Its size is what the
DRAM traffic of the operand is made of, so it is computed exactly wherever that is cheap,
and otherwise bounded from BELOW: a speed-of-light bound may undercount bytes, never overcount.

Subscript dims are grouped into components that share loop variables; the touched set is
the Cartesian product of the components' sets, so the counts multiply.

* constant subscript: 1 element (0 when out of range);
* one dim, one variable (``p*c + k``): an arithmetic progression, counted in closed form;
* one dim, several variables (a sliding window ``p*s + r - 1``, a flattened index
  ``i*K + k``): the exact set of values, as a bitmap over the value interval (Minkowski sums by
  doubling shifts) or by sorting the enumerated sums, while either is small; beyond that a
  structural count, exact for nested patterns (a coefficient that is a multiple of the current
  step inside the current span gives the sliding window's ``min((P-1)s + Q, P*Q)``; one beyond
  the current span gives disjoint copies, a mixed-radix flattening) and a lower bound otherwise;
* several dims driven by one variable (a diagonal ``X[i, i]``, padded ``X[i, i - 1]``): the
  values of the variable that keep every dim in range, in closed form;
* several dims sharing several variables (a band ``X[i, i + j]``): when every subscript stays
  in range the dims are linearised row-major into one index (in-range tuples map one-to-one onto
  it) and counted as one dim; with padding they are enumerated jointly while the variables' box
  has at most ``ENUMERATION_LIMIT`` points. Beyond that the count is a lower bound: the best of
  a sub-box on which every subscript is in range, a centred sub-box enumerated, and single
  lines through the box (what part of the box touches is a subset of what all of it touches).

``Footprint.exact`` says whether the count is exact or such a lower bound.

An access with an indirect subscript (``X[I[n, k], c]``) depends on data, not only on the loop
box: how many rows it touches depends on the index values, which the analysis (shapes only, at
the file's full size) does not know. Its footprint is therefore the fewest elements *any* index
values could touch: the projection of the touched set onto the access's affine dims (the access
with every indirect subscript held at one value: one row of ``X[·, c]``, the ``c`` it reads).
That is a true lower bound whatever the indices (the touched set projects onto those affine
values, so it has at least as many elements), and exact when every lookup hits one row; an
embedding of 8192 tokens drawn from 100 ids reads 100 rows, a permutation every row, so the figure
is marked inexact (``Footprint.exact`` False). ``indirect_footprint_upper`` is the other end,
min(tensor size, Π extents of the variables the access depends on): what distinct indices read,
the most any indices can. Indirect accesses are never enumerated.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from solar_assets.graph.union_find import group_sharing
from solar_assets.ir.expr import Access, Affine, Dim, Indirect, ParsedKernel, row_major

ENUMERATION_LIMIT = 1 << 24
"""Most loop points enumerated with numpy for one component (int64 temporaries of this size)."""
BITMAP_LIMIT = 1 << 25
"""Widest value interval (or tensor, for unions) handled as a boolean bitmap."""
SUB_BOX_POINTS = 1 << 20
"""Points of the centred sub-box enumerated for a lower bound when a padded component is too big."""
_CHUNK_POINTS = 1 << 20


@dataclass(frozen=True)
class Footprint:
    """A count of distinct in-range elements; ``exact`` False means a proven lower bound."""

    elements: int
    exact: bool = True


def access_footprint(access: Access, extents: Mapping[str, int], shape: tuple[int, ...]) -> int:
    """Distinct in-range elements of a tensor of ``shape`` touched by ``access`` over the loop box."""
    return footprint_of(access, extents, shape).elements


def indirect_footprint(access: Access, extents: Mapping[str, int], shape: tuple[int, ...]) -> Footprint:
    """An access with an indirect subscript: the fewest elements any index values touch (the
    projection onto its affine dims, see the module docstring); exact only where that equals
    ``indirect_footprint_upper`` (every index value then reads the same elements or no choice is left)."""
    if any(e == 0 for e in extents.values()) or any(s == 0 for s in shape):
        return Footprint(0)
    upper = indirect_footprint_upper(access, extents, shape).elements
    held = hold_indirect(access)
    low = footprint_of(held, extents, shape)
    elements = min(low.elements, upper)
    return Footprint(elements, low.exact and elements == upper)


def indirect_footprint_upper(access: Access, extents: Mapping[str, int], shape: tuple[int, ...]) -> Footprint:
    """The most elements an access with an indirect subscript can touch: min(tensor size, number of
    distinct loop points it depends on); reached when the indices it reads are distinct."""
    if any(e == 0 for e in extents.values()) or any(s == 0 for s in shape):
        return Footprint(0)
    vars_ = {v for a in access.index for v in a.vars}
    return Footprint(min(math.prod(shape), math.prod(extents[v] for v in vars_)))


def hold_indirect(access: Access) -> Access:
    """``access`` with every indirect subscript replaced by the constant 0 (one value, in range for
    any non-empty dim): what it touches is a projection of what the real access touches."""
    if not access.is_indirect:
        return access
    return Access(access.tensor, tuple(Affine((), 0) if isinstance(a, Indirect) else a for a in access.index))


def footprint_of(access: Access, extents: Mapping[str, int], shape: tuple[int, ...]) -> Footprint:
    """Like ``access_footprint``, also saying whether the count is exact or a lower bound."""
    if access.is_indirect:
        return indirect_footprint(access, extents, shape)
    comps = _components(access, extents, shape)
    if comps is None:
        return Footprint(0)
    total, exact = 1, True
    for comp in comps:
        fp = comp.count()
        total *= fp.elements
        exact = exact and fp.exact
        if total == 0:
            return Footprint(0, exact)
    return Footprint(total, exact)


def domain_footprint(access: Access, pk: ParsedKernel, shape: tuple[int, ...]) -> Footprint:
    """The footprint of ``access`` over the points where kernel ``pk``'s ``where`` condition holds.

    Exact when the access's subscripts are distinct loop variables, each plus an in-range
    constant (``K[b, j, e]``: its elements are the distinct values of those variables over the
    domain, ``domain.projection_size``); an access that uses no constrained variable touches what
    it touches over the box (when any point runs). Any other access is bounded from below by what
    it touches with the constrained variables held at one point of the domain (``exact`` False)."""
    from solar_assets.ir.domain import constrained_vars, feasible_point, projection_size

    extents = pk.extents
    if pk.iterations == 0:  # the condition's point count, computed once per parsed kernel
        return Footprint(0)
    constrained = set(constrained_vars(pk.where, extents))
    used = {v for a in access.index for v in a.vars}
    if access.is_indirect or not used & constrained:
        return footprint_of(access, extents, shape)
    seen: list[str] = []
    for a, size in zip(access.index, shape):
        live = [(v, c) for v, c in a.coefs if extents[v] > 1]
        lo, hi = a.range(extents)
        if lo < 0 or hi >= size or len(live) > 1 or (live and live[0][1] != 1) or \
                (live and live[0][0] in seen):
            break
        seen += [v for v, _ in live]
    else:
        return Footprint(projection_size(pk.where, extents, seen))
    point = feasible_point(pk.where, extents)
    held = Access(access.tensor, tuple(a.bind({v: point[v] for v in a.vars if v in point}) for a in access.index))
    return Footprint(footprint_of(held, extents, shape).elements, False)


def touched_elements(access: Access, extents: Mapping[str, int], shape: tuple[int, ...],
                     limit: int = BITMAP_LIMIT) -> np.ndarray | None:
    """Row-major linear indices of the in-range elements ``access`` touches (unique, unsorted).

    None when the set has more than ``limit`` elements or a component is too big to enumerate.
    A reshape keeps row-major order, so indices taken through different views of one storage
    are comparable. None as well for an indirect access (its elements depend on data).
    """
    if access.is_indirect:
        return None
    comps = _components(access, extents, shape)
    if comps is None:
        return np.zeros(0, dtype=np.int64)
    offsets = np.zeros(1, dtype=np.int64)
    for comp in comps:
        vals = comp.offsets()
        if vals is None or offsets.size * vals.size > limit:
            return None
        offsets = (offsets[:, None] + vals[None, :]).ravel()
    return offsets


def union_footprint(accesses: Sequence[tuple[Access, Mapping[str, int], tuple[int, ...]]]) -> Footprint:
    """Distinct elements touched by several accesses of one storage (each with its box and view shape).

    Identical accesses count once. Otherwise the union is computed exactly over a bitmap of the
    storage while it has at most ``BITMAP_LIMIT`` elements and every access can be enumerated;
    failing that the largest single footprint is returned as a lower bound (a sum, even capped at
    the tensor size, could overcount the overlap).
    """
    unique: dict[tuple, tuple[Access, Mapping[str, int], tuple[int, ...]]] = {}
    for acc, ext, shape in accesses:
        used = sorted({v for a in acc.index for v in a.vars})
        box_empty = any(e == 0 for e in ext.values())
        key = (acc.index, tuple((v, ext[v]) for v in used), tuple(shape), box_empty)
        unique.setdefault(key, (acc, ext, tuple(shape)))
    items = list(unique.values())
    if not items:
        return Footprint(0)
    fps = [footprint_of(*item) for item in items]
    if len(items) == 1:
        return fps[0]
    numel = math.prod(items[0][2])
    if any(math.prod(shape) != numel for _, _, shape in items):
        raise ValueError("union_footprint: the accesses are views of storages of different sizes")
    if any(fp.exact and fp.elements == numel for fp in fps):
        return Footprint(numel)
    if numel <= BITMAP_LIMIT:
        marks = np.zeros(numel, dtype=bool)
        for item in items:
            idx = touched_elements(*item)
            if idx is None:
                break
            marks[idx] = True
        else:
            return Footprint(int(np.count_nonzero(marks)), all(fp.exact for fp in fps))
    return Footprint(max(fp.elements for fp in fps), False)


# ---------------------------------------------------------------------------------------------
# components


@dataclass(frozen=True)
class _Component:
    dims: tuple[Dim, ...]  # live terms only (variables of extent > 1)
    strides: tuple[int, ...]  # each dim's row-major stride in the whole tensor
    extents: tuple[tuple[str, int], ...]  # the component's variables and their extents

    def count(self) -> Footprint:
        if len(self.dims) == 1:
            d = self.dims[0]
            return _count_1d(_coef_terms(d, self.extents), d.const, d.size)
        return _count_multi(self)

    def offsets(self) -> np.ndarray | None:
        if len(self.dims) == 1:
            d = self.dims[0]
            vals = _values_1d(_coef_terms(d, self.extents), d.const, d.size)
            return None if vals is None else vals * self.strides[0]
        return _offsets_multi(self)


def _coef_terms(d: Dim, extents: tuple[tuple[str, int], ...]) -> list[tuple[int, int]]:
    ext = dict(extents)
    return [(c, ext[v]) for v, c in d.coefs]


def _components(access: Access, extents: Mapping[str, int], shape: tuple[int, ...]) -> list[_Component] | None:
    """Group the subscripts into independent components; None when nothing is touched."""
    if len(access.index) != len(shape):
        raise ValueError(f"{access} has {len(access.index)} subscripts for a tensor of rank {len(shape)}")
    if any(e == 0 for e in extents.values()) or any(s == 0 for s in shape):
        return None  # an empty loop box (or an empty tensor) touches nothing
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    dims = [Dim.of(aff, size, extents) for aff, size in zip(access.index, shape)]
    groups = group_sharing(dims, lambda d: d.vars)
    comps = []
    for members in groups:
        cdims = tuple(dims[i] for i in members)
        vars_ = sorted({v for d in cdims for v in d.vars})
        comps.append(_Component(cdims, tuple(strides[i] for i in members), tuple((v, extents[v]) for v in vars_)))
    return comps


# ---------------------------------------------------------------------------------------------
# one dim: values of const + sum(c_i * t_i), t_i in [0, n_i), inside [0, size)


def _normalize(terms: Sequence[tuple[int, int]], const: int) -> tuple[list[tuple[int, int]], int]:
    """Positive coefficients (t -> n-1-t), equal coefficients merged, sorted ascending."""
    merged: dict[int, int] = {}
    for c, n in terms:
        if c == 0 or n <= 1:
            continue
        if c < 0:
            const += c * (n - 1)
            c = -c
        merged[c] = merged.get(c, 1) + n - 1  # c*{0..a-1} + c*{0..b-1} = c*{0..a+b-2}
    return sorted(merged.items()), const


def _ap_range(c: int, n: int, const: int, size: int) -> tuple[int, int]:
    """Indices t in [0, n) with 0 <= const + c*t < size, as [t_lo, t_hi] (c > 0)."""
    t_lo = max(0, -(const // c))
    t_hi = min(n - 1, (size - 1 - const) // c)
    return t_lo, t_hi


def _count_1d(terms: Sequence[tuple[int, int]], const: int, size: int) -> Footprint:
    terms, const = _normalize(terms, const)
    hi = const + sum(c * (n - 1) for c, n in terms)
    if hi < 0 or const > size - 1:
        return Footprint(0)
    if not terms:
        return Footprint(1)
    if len(terms) == 1:
        t_lo, t_hi = _ap_range(terms[0][0], terms[0][1], const, size)
        return Footprint(max(0, t_hi - t_lo + 1))
    vals = _values_normalized(terms, const, size)
    if vals is not None:
        return Footprint(int(vals.size))
    return _structural_count(terms, const, size)


def _values_1d(terms: Sequence[tuple[int, int]], const: int, size: int) -> np.ndarray | None:
    terms, const = _normalize(terms, const)
    hi = const + sum(c * (n - 1) for c, n in terms)
    if hi < 0 or const > size - 1:
        return np.zeros(0, dtype=np.int64)
    if not terms:
        return np.array([const], dtype=np.int64)
    return _values_normalized(terms, const, size)


def _values_normalized(terms: list[tuple[int, int]], const: int, size: int) -> np.ndarray | None:
    """The sorted in-range values, or None when neither a bitmap nor an enumeration is small."""
    if len(terms) == 1:
        c, n = terms[0]
        t_lo, t_hi = _ap_range(c, n, const, size)
        if t_hi - t_lo + 1 > BITMAP_LIMIT:
            return None
        return const + c * np.arange(max(t_lo, 0), max(t_hi + 1, t_lo), dtype=np.int64)
    top = min(size - 1, const + sum(c * (n - 1) for c, n in terms))
    width = top - const + 1  # coefficients are positive: a partial sum above top never comes back
    points = math.prod(n for _, n in terms)
    if points <= min(width, ENUMERATION_LIMIT):
        vals = _enumerate_sums(terms, const, top)
    elif width <= BITMAP_LIMIT:
        vals = _bitmap_sums(terms, const, width)
    elif points <= ENUMERATION_LIMIT:
        vals = _enumerate_sums(terms, const, top)
    else:
        return None
    return vals[vals >= 0]


def _unique(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values (numpy 2.4's hash-based ``np.unique`` is slow on strided ints)."""
    values = np.sort(values, axis=None)
    if values.size < 2:
        return values
    keep = np.empty(values.size, dtype=bool)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def _enumerate_sums(terms: list[tuple[int, int]], const: int, top: int) -> np.ndarray:
    vals = np.array([const], dtype=np.int64)
    for c, n in terms:
        vals = _unique((vals[:, None] + c * np.arange(n, dtype=np.int64)[None, :]).ravel())
        vals = vals[vals <= top]
    return vals


def _bitmap_sums(terms: list[tuple[int, int]], const: int, width: int) -> np.ndarray:
    """Minkowski sum of {const} and each c*{0..n-1}, truncated to [const, const + width)."""
    have = np.zeros(width, dtype=bool)
    have[0] = True
    for c, n in terms:
        k = 1  # invariant: have = previous + c*{0..k-1}
        while k < n:
            step = min(k, n - k)  # have ∪ (have + step*c) = previous + c*{0..k+step-1}
            shift = step * c
            if shift < width:
                np.logical_or(have[shift:], have[:-shift].copy(), out=have[shift:])
            k += step
    return const + np.flatnonzero(have).astype(np.int64)


def distinct_sums(terms: Sequence[tuple[int, int]]) -> tuple[int, bool]:
    """Distinct values of ``Σ c·t, t < n`` over ``(c, n)`` terms, and whether the count is exact
    (``nested_sums``; a lower bound otherwise). The cache-aware mapping counts tiles with it."""
    if any(n <= 0 for _, n in terms):
        return 0, True
    terms, _ = _normalize(terms, 0)
    if not terms:
        return 1, True
    _, count, _, _, exact = nested_sums(terms)
    return count, exact


def nested_sums(terms: Sequence[tuple[int, int]]) -> tuple[int, int, int, int, bool]:
    """The structure of ``{Σ c·t, t < n}`` for positive, merged, ascending ``(c, n)`` terms
    (``_normalize``): ``(g, count, span, step, exact)``, the values being ``g·x`` for ``count``
    distinct x in ``[0, span]``, a progression of ``step`` (0: not one). Exact for nested patterns.

    Over the coefficients divided by their gcd g, the set so far is {0..span} sampled on a structure
    with ``count`` distinct values. A next coefficient c either extends a progression of step d
    (d | c, c <= span + d: overlapping windows, the sliding window's (P-1)s + Q) or lies beyond
    span (disjoint copies, count*n: a mixed-radix flattening or windows with gaps, P*Q). Any other
    variable is held at t = 0: a subset of the true set, so the count is a lower bound.
    """
    g = 0
    for c, _ in terms:
        g = math.gcd(g, c)
    units = [(c // g, n) for c, n in terms]
    (c0, n0), rest = units[0], units[1:]
    count, span, step, exact = n0, c0 * (n0 - 1), c0, True  # step 0: not a progression
    for c, n in rest:
        if step and c % step == 0 and c <= span + step:
            span += c * (n - 1)
            count = span // step + 1
        elif c > span:
            count *= n
            span += c * (n - 1)
            step = 0
        else:
            exact = False
    return g, count, span, step, exact


def _structural_count(terms: list[tuple[int, int]], const: int, size: int) -> Footprint:
    """Count for value sets too wide to enumerate (``nested_sums``), clipped to ``[0, size)``."""
    g, count, span, step, exact = nested_sums(terms)
    # values are const + g*x, x in the structure, 0 <= x <= span
    if step:
        t_lo, t_hi = _ap_range(g * step, count, const, size)
        return Footprint(max(0, t_hi - t_lo + 1), exact)
    x_lo = max(0, -(const // g))  # lattice points of [0, span] that land in range
    x_hi = min(span, (size - 1 - const) // g)
    outside = (span + 1) - max(0, x_hi - x_lo + 1)
    if outside == 0:
        return Footprint(count, exact)
    return Footprint(max(0, count - outside), False)


# ---------------------------------------------------------------------------------------------
# several dims sharing variables


def _linearized(comp: _Component) -> tuple[list[tuple[int, int]], int, int, list[int]]:
    """The component's dims as one row-major index: (terms, const, size, local strides)."""
    sizes = [d.size for d in comp.dims]
    local = [math.prod(sizes[i + 1:]) for i in range(len(sizes))]
    lin = row_major(comp.dims)
    ext = dict(comp.extents)
    return [(c, ext[v]) for v, c in lin.coefs], lin.const, lin.size, local


def _line_range(comp: _Component, var: str, fixed: Mapping[str, int]) -> tuple[int, int]:
    """Values t of ``var`` (the others at ``fixed``) whose tuple is in range in every dim.

    ``var`` has a nonzero coefficient in some dim, so distinct t give distinct tuples.
    """
    n = dict(comp.extents)[var]
    lo, hi = 0, n - 1
    for d in comp.dims:
        coefs = dict(d.coefs)
        const = d.const + sum(c * fixed[u] for u, c in d.coefs if u != var)
        c = coefs.get(var, 0)
        if c == 0:
            if not 0 <= const < d.size:
                return 0, -1
        elif c > 0:
            t_lo, t_hi = _ap_range(c, n, const, d.size)
            lo, hi = max(lo, t_lo), min(hi, t_hi)
        else:  # t' = n-1-t has coefficient -c
            t_lo, t_hi = _ap_range(-c, n, const + c * (n - 1), d.size)
            lo, hi = max(lo, n - 1 - t_hi), min(hi, n - 1 - t_lo)
    return lo, hi


def _count_multi(comp: _Component) -> Footprint:
    ext = dict(comp.extents)
    if len(ext) == 1:  # one variable drives every dim (a diagonal): count its in-range values
        lo, hi = _line_range(comp, next(iter(ext)), {})
        return Footprint(max(0, hi - lo + 1))
    if all(d.in_range(ext) for d in comp.dims):
        terms, const, size, _ = _linearized(comp)
        fp = _count_1d(terms, const, size)
        if fp.exact:
            return fp
        # every tuple is in range, so each dim's distinct values are at most the tuple count
        per_dim = [_count_1d(_coef_terms(d, comp.extents), d.const, d.size).elements for d in comp.dims]
        return Footprint(max([fp.elements, *per_dim]), False)
    vals, exact = _enumerate_joint(comp)
    if exact:
        return Footprint(int(vals.size))
    centre = {v: (n - 1) // 2 for v, n in comp.extents}
    candidates = [int(vals.size), *(hi - lo + 1 for lo, hi in (_line_range(comp, v, centre) for v in ext))]
    inner = _in_range_sub_box(comp)
    if inner is not None:
        candidates.append(_count_multi(inner).elements)
    return Footprint(max(candidates), False)


def _in_range_sub_box(comp: _Component) -> _Component | None:
    """The component over a sub-box of its loop box on which every subscript stays in range.

    Each out-of-range side of a dim is fixed by trimming the variable that loses the smallest
    share of its range. What a sub-box touches is a subset of what the box touches.
    """
    box = {v: [0, n - 1] for v, n in comp.extents}
    for _ in range(4 * len(comp.dims) * len(box) + 4):
        fault = None
        for d in comp.dims:
            lo = hi = d.const
            for v, c in d.coefs:
                a, b = c * box[v][0], c * box[v][1]
                lo, hi = lo + min(a, b), hi + max(a, b)
            if lo < 0:
                fault = (d, -lo, 1)
                break
            if hi > d.size - 1:
                fault = (d, hi - d.size + 1, -1)
                break
        if fault is None:
            dims = tuple(Dim(tuple((v, c) for v, c in d.coefs if box[v][1] > box[v][0]),
                             d.const + sum(c * box[v][0] for v, c in d.coefs), d.size)
                         for d in comp.dims)
            kept = tuple((v, b - a + 1) for v, (a, b) in box.items() if b > a)
            return _Component(dims, comp.strides, kept)
        d, deficit, direction = fault  # raise the dim's minimum (1) or lower its maximum (-1)
        options = []
        for v, c in d.coefs:
            trim = -(-deficit // abs(c))
            width = box[v][1] - box[v][0] + 1
            if trim < width:
                options.append((trim / width, v, trim, (c > 0) == (direction > 0)))
        if not options:
            return None
        _, v, trim, from_below = min(options)
        if from_below:
            box[v][0] += trim
        else:
            box[v][1] -= trim
    return None


def _offsets_multi(comp: _Component) -> np.ndarray | None:
    ext = dict(comp.extents)
    if len(ext) == 1:
        var = next(iter(ext))
        lo, hi = _line_range(comp, var, {})
        if hi - lo + 1 > BITMAP_LIMIT:
            return None
        t = np.arange(lo, max(lo, hi + 1), dtype=np.int64)
        return sum(((d.const + dict(d.coefs)[var] * t) * s for d, s in zip(comp.dims, comp.strides)),
                   np.zeros_like(t))
    if all(d.in_range(ext) for d in comp.dims):
        terms, const, size, local = _linearized(comp)
        lin = _values_1d(terms, const, size)
        if lin is None:
            return None
        out = np.zeros_like(lin)
        for d, s, stride in zip(comp.dims, local, comp.strides):
            out += ((lin // s) % d.size) * stride
        return out
    if math.prod(n for _, n in comp.extents) > ENUMERATION_LIMIT:
        return None
    vals, _ = _enumerate_joint(comp)
    return vals


def _enumerate_joint(comp: _Component) -> tuple[np.ndarray, bool]:
    """Unique in-range offsets over the component's box, or over a centred sub-box (a lower bound)."""
    names = [v for v, _ in comp.extents]
    ranges = [(0, n) for _, n in comp.extents]
    exact = math.prod(n for _, n in comp.extents) <= ENUMERATION_LIMIT
    if not exact:
        ranges = _centred_sub_box([n for _, n in comp.extents], SUB_BOX_POINTS)
    first_lo, first_hi = ranges[0]
    inner = math.prod(hi - lo for lo, hi in ranges[1:])
    chunk = max(1, _CHUNK_POINTS // max(1, inner))
    pieces = []
    for start in range(first_lo, first_hi, chunk):
        box = [(start, min(first_hi, start + chunk)), *ranges[1:]]
        grids = np.meshgrid(*[np.arange(lo, hi, dtype=np.int64) for lo, hi in box], indexing="ij", sparse=True)
        var_grid = dict(zip(names, grids))
        offset = np.zeros(1, dtype=np.int64)
        keep = np.ones(1, dtype=bool)
        for d, stride in zip(comp.dims, comp.strides):
            idx = d.const + sum((c * var_grid[v] for v, c in d.coefs), np.zeros(1, dtype=np.int64))
            keep = keep & (idx >= 0) & (idx < d.size)
            offset = offset + idx * stride
        offset, keep = np.broadcast_arrays(offset, keep)
        pieces.append(_unique(offset[keep]))
    vals = _unique(np.concatenate(pieces)) if pieces else np.zeros(0, dtype=np.int64)
    return vals, exact


def _centred_sub_box(extents: list[int], limit: int) -> list[tuple[int, int]]:
    """The largest-ish box centred in the loop box with at most ``limit`` points."""
    sizes = list(extents)
    while math.prod(sizes) > limit:
        i = max(range(len(sizes)), key=sizes.__getitem__)
        sizes[i] = max(1, sizes[i] // 2)
    return [((n - s) // 2, (n - s) // 2 + s) for n, s in zip(extents, sizes)]
