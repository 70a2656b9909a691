"""Connected components by union-find: the one implementation the graph and the bounds share.

Footprints count the independent subscript components of an access apart (``group_sharing``
over the loop variables each subscript uses); the cache-aware segments ask whether a run of
einsums is connected by its dataflow edges (``connected``).
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")


class DisjointSets:
    """Union-find over ``0 .. n-1`` with path halving."""

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        parent = self.parent
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(self, a: int, b: int) -> None:
        self.parent[self.find(a)] = self.find(b)

    def groups(self) -> list[list[int]]:
        """The sets, each in increasing order, listed by their smallest member."""
        groups: dict[int, list[int]] = {}
        for i in range(len(self.parent)):
            groups.setdefault(self.find(i), []).append(i)
        return list(groups.values())


def group_sharing(items: Sequence[T], keys: Callable[[T], Iterable[Hashable]]) -> list[list[int]]:
    """Indices of ``items`` grouped into connected components: two items are connected when they
    share a key. Independent subscript dimensions of an access are counted apart."""
    sets = DisjointSets(len(items))
    owner: dict[Hashable, int] = {}
    for i, item in enumerate(items):
        for key in keys(item):
            if key in owner:
                sets.union(i, owner[key])
            else:
                owner[key] = i
    return sets.groups()


def connected(n: int, edges: Iterable[tuple[int, int]]) -> bool:
    """Whether the edges ``(a, b)`` connect all of ``0 .. n-1`` (True for n <= 1)."""
    sets = DisjointSets(n)
    for a, b in edges:
        sets.union(a, b)
    return len({sets.find(i) for i in range(n)}) <= 1
