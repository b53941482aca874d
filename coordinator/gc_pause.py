"""Pause CPython's cyclic garbage collector around a bulk build of acyclic objects.

Building a large result (every member's assignment, a target assignment's specs and views)
allocates many containers that hold no reference cycles. The collector runs on the allocation
count, so during such a build it would run many times, some passes walking the older heap, and
find nothing. Paused, it does not run; the objects stay tracked, and the first pass after the
build examines them. A caller's own pause is left alone.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic collector for the block; enable it after, even on an error, unless
    it was already off when the block began."""
    was_enabled = gc.isenabled()
    if was_enabled:
        gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
