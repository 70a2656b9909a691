"""workers.heap: a worker's start-up objects frozen out of the collector's walks."""
from __future__ import annotations

import gc
import weakref

from solar_assets.workers.heap import freeze_start_up, release_freed_memory


class _Node:
    def __init__(self) -> None:
        self.other = self


def test_freeze_start_up_exempts_live_objects_and_still_collects_later_garbage():
    kept = [_Node() for _ in range(1000)]
    try:
        frozen = freeze_start_up()
        # a frozen object that dies leaves the permanent generation, so the count only falls after
        # the freeze (a full suite run saw two temporaries go between the two looks)
        assert frozen >= 1000
        assert 0 < gc.get_freeze_count() <= frozen
        tracked = {id(o) for o in gc.get_objects()}
        assert not any(id(o) in tracked for o in kept)  # a full collection no longer walks them
        gc.disable()  # no automatic collection between the two looks
        try:
            garbage = _Node()  # made after the freeze: a cycle the collector still frees
            alive = weakref.ref(garbage)
            del garbage
            assert alive() is not None  # a cycle: only the collector frees it
            release_freed_memory()
            assert alive() is None
        finally:
            gc.enable()
        assert 0 < gc.get_freeze_count() <= frozen  # collecting froze nothing new
    finally:
        gc.unfreeze()
    assert gc.get_freeze_count() == 0
    assert any(id(o) == id(kept[0]) for o in gc.get_objects())
