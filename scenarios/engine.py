"""A discrete-event engine on a virtual clock, in integer milliseconds.

Nothing here waits on real time: ``step()`` jumps the clock straight to the next event. Events
sit in one binary heap as plain ints ``time_ms << 40 | seq`` (their keys), and what each one does
in a dict beside it, ``key -> (fn, arg)`` (``fn`` None marks a timer, whose ``arg`` is its
``(owner, key)`` slot); ``seq`` is a global insertion counter, so two events due at the same
millisecond always run in the order they were scheduled. That tie-break is the whole of the
engine's determinism: no priority classes, no hashing. One int per heap entry is the cheap way to
keep that order: the heap compares two ints where it compared two tuples item by item (the
heap's comparisons were about a twentieth of a rolling restart's instructions).

Timers are owned by a node and named by a key, as the sans-I/O effects want (Kafka's
CoordinatorTimer semantics): setting a key again replaces the earlier timer and cancelling removes
it. Both are O(1): the heap keeps the stale entry, and a per-(owner, key) token (the live entry's
key) says which entry is still live (lazy deletion), so a heartbeat timer re-armed a million times
costs no heap surgery.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable
from typing import Any, overload

TimerHandler = Callable[[str, Hashable], None]
"""Called as ``handler(owner, key)`` when a live timer falls due (``engine.now`` is its time)."""


#: Bits of a heap key below the time: the insertion counter (over a trillion events per run).
_SEQ_BITS = 40
_SEQ_MASK = (1 << _SEQ_BITS) - 1
#: A key above every event's (``run()`` without ``until``).
_NO_STOP = 1 << 200


class Engine:
    """The clock, the event heap and the per-node timers."""

    __slots__ = ("_entries", "_heap", "_seq", "_timer_handler", "_timers", "events_run", "now")

    def __init__(self, timer_handler: TimerHandler | None = None, start_ms: int = 0) -> None:
        self.now: int = start_ms
        self.events_run: int = 0
        # the keys (time_ms << _SEQ_BITS | seq) of the pending events, stale timers included
        self._heap: list[int] = []
        # key -> (fn, arg) of every heap entry; a timer's fn is None and its arg its slot
        self._entries: dict[int, tuple[Callable[[Any], None] | None, Any]] = {}
        self._seq: int = 0
        # (owner, key) -> the heap key of that timer's live entry
        self._timers: dict[tuple[str, Hashable], int] = {}
        self._timer_handler = timer_handler

    # --- scheduling -------------------------------------------------------------------------

    def schedule(self, at_ms: int, fn: Callable[[Any], None], arg: Any = None) -> None:
        """Run ``fn(arg)`` at ``at_ms`` (clamped to now: the past cannot be scheduled)."""
        seq = self._seq = self._seq + 1
        now = self.now
        key = (at_ms if at_ms > now else now) << _SEQ_BITS | seq
        self._entries[key] = (fn, arg)
        heapq.heappush(self._heap, key)

    def set_timer(self, owner: str, key: Hashable, deadline_ms: int) -> None:
        """Arm (or re-arm, replacing) timer ``key`` of ``owner``."""
        seq = self._seq = self._seq + 1
        slot = (owner, key)
        now = self.now
        entry = (deadline_ms if deadline_ms > now else now) << _SEQ_BITS | seq
        # the entry's own key is its token: a replaced or cancelled timer's entry stays until
        # its time comes, and is dropped then (its slot names a newer key, or none)
        self._timers[slot] = entry
        self._entries[entry] = (None, slot)
        heapq.heappush(self._heap, entry)

    def cancel_timer(self, owner: str, key: Hashable) -> None:
        """Disarm a timer; unknown keys are a no-op (as in the effects contract)."""
        self._timers.pop((owner, key), None)

    def cancel_owner_timers(self, owner: str) -> None:
        """Disarm every timer of ``owner`` (a crashed node forgets its timers)."""
        for slot in [slot for slot in self._timers if slot[0] == owner]:
            del self._timers[slot]

    def has_timer(self, owner: str, key: Hashable) -> bool:
        return (owner, key) in self._timers

    def timer_keys(self, owner: str) -> list[Hashable]:
        """The live timer keys of ``owner``, in the order they were armed."""
        return [key for (o, key), _ in sorted(self._timers.items(), key=_by_seq) if o == owner]

    def timer_deadline(self, owner: str, key: Hashable) -> int | None:
        """When the live timer ``key`` of ``owner`` falls due (None: not armed)."""
        entry = self._timers.get((owner, key))
        return None if entry is None else entry >> _SEQ_BITS

    def pending(self, owner: str) -> dict[Hashable, int]:
        """The live timers of ``owner``: key -> deadline, in the order they were armed (a re-armed
        key takes a new place). For tests and reports, not the hot path."""
        return {
            key: entry >> _SEQ_BITS
            for (o, key), entry in sorted(self._timers.items(), key=_by_seq)
            if o == owner
        }

    # --- running ----------------------------------------------------------------------------

    def _drop_stale(self) -> None:
        heap = self._heap
        entries = self._entries
        timers = self._timers
        while heap:
            key = heap[0]
            fn, arg = entries[key]
            if fn is not None or timers.get(arg) == key:
                return
            heapq.heappop(heap)  # a cancelled or replaced timer
            del entries[key]

    def peek(self) -> int | None:
        """The time of the next live event, or None when nothing is scheduled."""
        self._drop_stale()
        return self._heap[0] >> _SEQ_BITS if self._heap else None

    def step(self) -> bool:
        """Run the next live event; False when there is none."""
        self._drop_stale()
        if not self._heap:
            return False
        key = heapq.heappop(self._heap)
        fn, arg = self._entries.pop(key)
        self.now = key >> _SEQ_BITS
        self.events_run += 1
        if fn is None:
            # forget the timer before running the handler, which may re-arm the same key
            del self._timers[arg]
            if self._timer_handler is not None:
                self._timer_handler(*arg)
        else:
            fn(arg)
        return True

    @overload
    def run(
        self,
        until: int | None = None,
        max_events: int | None = None,
        *,
        after_event: Callable[[], object] | None = None,
    ) -> int: ...

    @overload
    def run(
        self,
        until: Callable[[], bool],
        max_events: None = None,
        *,
        deadline: int | None = None,
        after_event: Callable[[], object] | None = None,
    ) -> bool: ...

    def run(
        self,
        until: int | Callable[[], bool] | None = None,
        max_events: int | None = None,
        *,
        deadline: int | None = None,
        after_event: Callable[[], object] | None = None,
    ) -> int | bool:
        """Run the clock, as SimPy's ``Environment.run(until=...)``: to a time or to a condition.

        ``until`` a time (ms): run the events due at or before it (all of them when None) and
        return how many ran; the clock then reads ``until`` even if the last event came earlier,
        so ``run(until=t)`` always means "let the time up to t pass".

        ``until`` a predicate: run instant by instant until ``predicate()`` holds, and return
        whether it did. It is asked before the first event and whenever the clock is about to
        move on (every event due at the current instant has run, so a condition is never judged
        half-way through one instant). At ``deadline`` (ms) the run stops, the clock reads the
        deadline, and the predicate is asked once more.

        ``after_event`` is called after every event (the simulation's invariant checks).
        """
        if callable(until):
            return self._run_until(until, deadline, after_event)
        if after_event is not None:
            return self._run_each(until, max_events, after_event)
        heap = self._heap
        entries = self._entries
        timers = self._timers
        handler = self._timer_handler
        pop = heapq.heappop
        ran = 0
        limit = max_events if max_events is not None else -1
        # one int comparison an event: every key due at or before ``until`` is below this
        stop = (until << _SEQ_BITS | _SEQ_MASK) if until is not None else _NO_STOP
        while heap and ran != limit:
            key = heap[0]
            if key > stop:
                break
            pop(heap)
            fn, arg = entries.pop(key)
            if fn is None:  # a timer: live only if its token is still the current one
                if timers.get(arg) != key:
                    continue
                del timers[arg]  # before its handler, which may re-arm it
                self.now = key >> _SEQ_BITS
                ran += 1
                if handler is not None:
                    handler(*arg)
                continue
            self.now = key >> _SEQ_BITS
            ran += 1
            fn(arg)
        self.events_run += ran
        if until is not None and ran != limit and until > self.now:
            self.now = until
        return ran

    def _run_each(
        self, until: int | None, max_events: int | None, after_event: Callable[[], object]
    ) -> int:
        """``run(until=time)`` with ``after_event()`` after every event (one step at a time)."""
        ran = 0
        while max_events is None or ran < max_events:
            nxt = self.peek()
            if nxt is None or (until is not None and nxt > until):
                break
            self.step()
            after_event()
            ran += 1
        if until is not None and (max_events is None or ran < max_events) and until > self.now:
            self.now = until
        return ran

    def _run_until(
        self,
        predicate: Callable[[], bool],
        deadline: int | None,
        after_event: Callable[[], object] | None,
    ) -> bool:
        while True:
            nxt = self.peek()
            if (nxt is None or nxt > self.now) and predicate():
                return True
            if nxt is None or (deadline is not None and nxt > deadline):
                if deadline is not None and deadline > self.now:
                    self.now = deadline
                return predicate()
            # everything due at that instant, in one go
            if after_event is None:
                self.run(until=nxt)
            else:
                self._run_each(nxt, None, after_event)

    def __len__(self) -> int:
        """Heap entries, stale timers included (an upper bound on pending events)."""
        return len(self._heap)


def _by_seq(item: tuple[tuple[str, Hashable], int]) -> int:
    return item[1] & _SEQ_MASK
