"""Partition sets that iterate in Java's order, cheaply.

Kafka's assignors return ``Set<Integer>`` values whose iteration order feeds the next rebalance
(the target-assignment record lists them in that order and the next round walks them). Kinds:

* :class:`OrderedPartitions` is a read-only set whose Java order was computed when it was built
  (in bulk, :mod:`coordinator.assignor.bulk`): a tuple underneath, so making and reading it run
  in C. :class:`RangeSet`, Kafka's ``assignor.RangeSet`` (``[start, stop)``, ascending as Kafka's
  iterates), is one.
* :class:`IntHashSet` is a ``java.util.HashSet<Integer>`` as the uniform assignor builds it: it
  records its capacity and insertion order (as runs of consecutive partitions) and computes Java's
  iteration order only when someone iterates. Order = bucket ``spread(p) & (capacity - 1)``
  ascending, insertion order within a bucket (resizes keep it); a table doubles after an insertion
  that takes the size above 0.75 x capacity; removals never shrink it.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import ItemsView, Iterable, Iterator, Mapping, ValuesView
from collections.abc import Set as AbstractSet

from coordinator.assignor.treeify import (
    TREE_RISK,
    history_may_treeify,
    inserts_may_treeify,
    int_spread_hashes,
    replay,
)
from coordinator.java import copy_capacity, spread, table_size_for
from coordinator.java_hashmap import int_hashmap, uuid_hashmap
from coordinator.kafka_uuid import Uuid


@functools.lru_cache(maxsize=1 << 16)
def uuid_hashcode(topic_id: Uuid) -> int:
    """``Uuid.hashCode`` as an unsigned 32-bit value: ``(int)(xor >> 32) ^ (int) xor`` with
    ``xor = msb ^ lsb`` (only its bits matter for bucketing)."""
    xor = (topic_id.most_significant_bits ^ topic_id.least_significant_bits) & ((1 << 64) - 1)
    return ((xor >> 32) ^ xor) & 0xFFFFFFFF


@functools.lru_cache(maxsize=1 << 16)
def uuid_spread(topic_id: Uuid) -> int:
    """``HashMap.hash`` of a ``Uuid`` key: ``spread(Uuid.hashCode)``."""
    return spread(uuid_hashcode(topic_id))


@functools.lru_cache(maxsize=1 << 12)
def frozenset_table(count: int) -> int:
    """The slots of a CPython frozenset made from an iterator of ``count`` distinct values
    (``set_add_entry``: from 8 slots, resized to the first power of two above 4 x the size
    once the table is 3/5 full, 2 x above 50,000): it depends on the count alone."""
    slots = 8
    while True:
        used = -(-(slots - 1) * 3 // 5)  # the size at which this table is resized
        if used > count:
            return slots
        wanted = used * 2 if used > 50000 else used * 4
        slots = 8
        while slots <= wanted:
            slots <<= 1


def frozen_partitions(
    values: Iterable[int], count: int, low: int, high: int
) -> frozenset[int] | None:
    """``frozenset(values)`` (``count`` distinct partitions from ``low`` to ``high``) when it
    iterates the same whatever the values' order, else None: an int is its own hash, so
    values spanning fewer than the table's slots each sit in their own home slot, and the
    table's size depends on the count alone (:func:`frozenset_table`). Making it from a set
    in another order than Java's then changes nothing observable."""
    if low >= 0 and high - low < frozenset_table(count):
        return frozenset(iter(values))
    return None


def bucket_may_fill(hashes: list[int], table: int) -> bool:
    """Whether :data:`TREE_RISK` of these spread hashes meet in a bucket of a ``table``-bucket
    table. When they do not, no bucket of that table or a larger one (each a part of one of
    its buckets) ever holds that many of those keys, so the exact tree-bin checks
    (:mod:`coordinator.assignor.treeify`) cannot find one: a cheap bound before them."""
    if len(hashes) < TREE_RISK:
        return False
    buckets = sorted(map((max(table, 1) - 1).__and__, hashes))
    return any(map(operator.eq, buckets, buckets[TREE_RISK - 1 :]))


class IntHashSet(AbstractSet[int]):
    """A ``HashSet<Integer>`` whose iteration order is Java's (see the module docstring).

    Contents are kept as insertion-ordered runs ``range(a, b)`` (an element's insertion rank is
    its position in their concatenation); a removal marks the element in ``_removed``. The
    assignors mutate it while building and treat it as read-only once returned.
    """

    __slots__ = (
        "_history",
        "_initial",
        "_items",
        "_order",
        "_removed",
        "_runs",
        "_set",
        "_size",
        "capacity",
    )

    def __init__(self, capacity: int = 16) -> None:
        self.capacity = capacity
        self._initial = capacity
        #: every add and remove in order, kept from the first removal on (for the exact model)
        self._history: list[tuple[bool, int]] | None = None
        self._runs: list[range] = []
        self._removed: set[int] | None = None
        self._size = 0
        self._order: list[range] | None = None
        self._items: list[int] | None = None
        self._set: frozenset[int] | None = None

    @classmethod
    def filled(cls, capacity: int, run: range) -> IntHashSet:
        """``new HashSet<>(capacity)`` then ``add`` of each partition of ``run`` (ascending,
        step 1, non-negative, below 2**16), its Java order computed at once: ``n`` consecutive
        values in ``>= n`` buckets have distinct buckets ``p & mask``, so the order is the run
        rotated to start at the value whose bucket is 0 (plain ascending when none wraps)."""
        result = cls(capacity)
        size = len(run)
        result._runs = [run]
        result._size = size
        if size > 0.75 * capacity:
            result._grow()
        cap = result.capacity
        start, stop = run.start, run.stop
        wrap = start + cap - (start & (cap - 1))  # first value of the run in bucket 0
        if wrap >= stop:
            result._items = list(run)
        else:
            result._items = [*range(wrap, stop), *range(start, wrap)]
        return result

    @classmethod
    def copy_of(cls, source: AbstractSet[int]) -> IntHashSet:
        """``new HashSet<>(source)``: inserted in ``source``'s iteration order."""
        copy = cls(copy_capacity(len(source)))
        copy.add_runs(java_runs(source))
        return copy

    def _grow(self) -> None:
        cap = self.capacity
        while self._size > 0.75 * cap:
            cap <<= 1
        self.capacity = cap

    def add_run(self, run: range) -> None:
        """Add ``run`` (partitions known to be absent, ascending, any step), in its order."""
        if not run:
            return
        if self._removed and not self._removed.isdisjoint(run):
            # Re-inserted after a removal: it goes to the end of its bucket like a new element.
            self._compact()
        runs = self._runs
        if runs and run.step == 1 and runs[-1].step == 1 and runs[-1].stop == run.start:
            runs[-1] = range(runs[-1].start, run.stop)
        else:
            runs.append(run)
        self._size += len(run)
        if self._size > 0.75 * self.capacity:
            self._grow()
        if self._history is not None:
            self._history.extend(zip(itertools.repeat(True), run))
        self._order = self._items = self._set = None

    def add_runs(self, runs: Iterable[range]) -> None:
        for run in runs:
            self.add_run(run)

    def add(self, partition: int) -> None:
        """``HashSet.add`` of a partition known to be absent."""
        self.add_run(range(partition, partition + 1))

    def remove(self, partition: int) -> None:
        """``HashSet.remove`` of a present partition."""
        if self._history is None:
            self._compact()
            self._history = [(True, p) for r in self._runs for p in r]
        self._history.append((False, partition))
        if self._removed is None:
            self._removed = set()
        self._removed.add(partition)
        self._size -= 1
        self._order = self._items = self._set = None

    def _compact(self) -> None:
        """Drop removed elements from the runs (the others keep their relative ranks)."""
        removed = self._removed
        if not removed:
            self._removed = None
            return
        self._runs = _to_runs(p for r in self._runs for p in r if p not in removed)
        self._removed = None

    def __len__(self) -> int:
        return self._size

    def runs(self) -> list[range]:
        """Java's iteration order, as ascending runs."""
        if self._order is None:
            self._order = _to_runs(self.ordered())
        return self._order

    def ordered(self) -> list[int]:
        """Java's iteration order: bucket ``spread(p) & (capacity - 1)`` ascending, insertion
        order within a bucket (a stable sort by bucket; plain ascending order when every
        element is below the capacity, one per bucket)."""
        items = self._items
        if items is None:
            self._compact()
            runs = self._runs
            items = list(runs[0]) if len(runs) == 1 else list(itertools.chain.from_iterable(runs))
            if items:
                low, high = min(items), max(items)
                mask = self.capacity - 1
                if low >= 0 and high <= mask and high < 1 << 16:
                    items.sort()
                elif low >= 0 and high < 1 << 16:
                    items.sort(key=mask.__and__)  # below 2**16, spread(p) == p
                else:
                    items.sort(key=lambda p: spread(p) & mask)
                # values within 7 x the first table (and no removal before): at most 7 per
                # bucket at any size
                if len(items) >= TREE_RISK and (
                    self._history is not None
                    or high - low >= 7 * self._initial
                    or low < 0
                    or high >= 1 << 16
                ):
                    items = self._tree_checked(items)
            self._items = items
        return items

    def _tree_checked(self, ordered: list[int]) -> list[int]:
        """``ordered``, or the exact model's order when a bucket may have become a tree bin
        (:mod:`coordinator.assignor.treeify`)."""
        history = self._history
        if history is None:
            inserted = [p for r in self._runs for p in r]
            if not inserts_may_treeify(int_spread_hashes(inserted), self._initial):
                return ordered
            model = int_hashmap(self._initial)
            for p in inserted:
                model.put(p)
        else:
            hashes = [(added, spread(p)) for added, p in history]
            if not history_may_treeify(hashes, self._initial):
                return ordered
            model = int_hashmap(self._initial)
            for added, p in history:
                if added:
                    model.put(p)
                else:
                    model.remove(p)
        self.capacity = model.capacity
        return model.keys()

    def frozen(self) -> frozenset[int]:
        """``frozenset(self)``, without Java's order when the order changes nothing
        (:func:`frozen_partitions`)."""
        if self._items is None and self._size:
            self._compact()
            runs = self._runs
            items = runs[0] if len(runs) == 1 else list(itertools.chain.from_iterable(runs))
            frozen = frozen_partitions(items, self._size, min(items), max(items))
            if frozen is not None:
                return frozen
        return frozenset(self)

    def __iter__(self) -> Iterator[int]:
        items = self._items
        return iter(items if items is not None else self.ordered())

    def __contains__(self, value: object) -> bool:
        if self._set is None:
            self._compact()
            self._set = frozenset(p for r in self._runs for p in r)
        return value in self._set

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"IntHashSet({list(self)})"


class OrderedPartitions(tuple[int, ...], AbstractSet[int]):
    """A read-only ``Set<Integer>`` whose iteration order was fixed when it was built (the order
    of the Java ``HashSet`` a builder computed in bulk, see :mod:`coordinator.assignor.bulk`).

    A tuple underneath, so that making one (``OrderedPartitions(iterable)``, also through ``map``)
    and iterating it run in C: the coordinator reads every partition of every result. Equality
    and comparisons are a set's (Java's ``equals``: content, not order); ``in`` scans the tuple.
    """

    __slots__ = ()

    __eq__ = AbstractSet.__eq__
    __le__ = AbstractSet.__le__  # type: ignore[assignment]
    __lt__ = AbstractSet.__lt__  # type: ignore[assignment]
    __ge__ = AbstractSet.__ge__  # type: ignore[assignment]
    __gt__ = AbstractSet.__gt__  # type: ignore[assignment]
    __and__ = AbstractSet.__and__
    __or__ = AbstractSet.__or__
    __sub__ = AbstractSet.__sub__
    __xor__ = AbstractSet.__xor__
    __hash__ = None  # type: ignore[assignment]

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    @classmethod
    def _from_iterable(cls, it: Iterable[int]) -> frozenset[int]:  # type: ignore[override]
        return frozenset(it)

    def runs(self) -> list[range]:
        """The iteration order as runs of consecutive partitions."""
        return _to_runs(self)

    def __repr__(self) -> str:
        return f"OrderedPartitions({list(self)})"


class RangeSet(OrderedPartitions):
    """Kafka's RangeSet: the partitions ``[start, stop)``, ascending. Its elements are held (an
    :class:`OrderedPartitions`), so reading it runs in C; ``in`` compares with the bounds."""

    def __new__(cls, start: int, stop: int) -> RangeSet:
        self = tuple.__new__(cls, range(start, stop))
        if stop <= start:
            self._bounds = (start, stop)  # an empty set keeps its bounds for repr
        return self

    _bounds: tuple[int, int]

    @property
    def start(self) -> int:
        return self[0] if self else self._bounds[0]

    @property
    def stop(self) -> int:
        return self[-1] + 1 if self else self._bounds[1]

    def __contains__(self, value: object) -> bool:
        return isinstance(value, int) and bool(self) and self[0] <= value <= self[-1]

    def runs(self) -> list[range]:
        return [range(self[0], self[-1] + 1)] if self else []

    def __repr__(self) -> str:
        return f"RangeSet(from={self.start} (inclusive), to={self.stop} (exclusive))"


class AssignmentMap(dict[Uuid, AbstractSet[int]]):
    """A member's ``topic id -> partitions`` map built in bulk, in Java's iteration order (a
    dict: reads are C). ``summary`` as :attr:`DeferredTopicMap.summary`, when the builder set
    it; treated as read-only once returned."""

    __slots__ = ("summary",)

    summary: tuple[int, frozenset[Uuid]]


class BatchMap(AssignmentMap):
    """An :class:`AssignmentMap` made as row ``row`` of a batch whose arrays (``batch``)
    describe its content: the builder that made it reads those next round instead of the map
    (a type of its own, so that telling such maps apart costs no attribute lookup that fails)."""

    __slots__ = ("batch", "row")

    batch: object
    row: int


def _to_runs(items: Iterable[int]) -> list[range]:
    runs: list[range] = []
    start = stop = None
    for p in items:
        if stop is not None and p == stop:
            stop += 1
            continue
        if start is not None and stop is not None:
            runs.append(range(start, stop))
        start, stop = p, p + 1
    if start is not None and stop is not None:
        runs.append(range(start, stop))
    return runs


def _frozen_copy(source: AbstractSet[int]) -> frozenset[int]:
    """``frozenset(IntHashSet.copy_of(source))`` of a non-empty set: straight from the set
    when the order does not show (:func:`frozen_partitions`), else :func:`_copied_frozenset`."""
    count = len(source)
    if count == 1:
        return frozenset(iter(source))
    low, high = min(source), max(source)
    if low >= 0 and high - low < frozenset_table(count):
        return frozenset(iter(source))
    return _copied_frozenset(source)


def _copied_frozenset(source: AbstractSet[int]) -> frozenset[int]:
    """``frozenset(IntHashSet.copy_of(source))`` of a non-empty set, without the copy: the
    copy's Java order is ``source``'s order sorted (stably) by bucket, for partitions below
    2**16 whose buckets cannot fill up to a tree bin (as :meth:`IntHashSet.ordered` decides);
    other sets are copied."""
    count = len(source)
    low, high = min(source), max(source)
    frozen = frozen_partitions(source, count, low, high)
    if frozen is not None:
        return frozen
    capacity = copy_capacity(count)
    if low < 0 or high >= 1 << 16 or (len(source) >= TREE_RISK and high - low >= 7 * capacity):
        return frozenset(IntHashSet.copy_of(source))
    if high < capacity:
        return frozenset(sorted(source))
    return frozenset(sorted(source, key=(capacity - 1).__and__))


def java_runs(partitions: AbstractSet[int]) -> list[range]:
    """The set's iteration order as runs of consecutive partitions."""
    runs = getattr(partitions, "runs", None)
    if runs is not None:
        result: list[range] = runs()
        return result
    return _to_runs(partitions)


class TopicMap(Mapping[Uuid, AbstractSet[int]]):
    """A ``HashMap<Uuid, Set<Integer>>`` as the uniform assignor builds it (a deep copy then
    ``computeIfAbsent``/``remove``), iterating in Java's order.

    Java's rules kept here: ``new HashMap<>(n)`` allocates ``tableSizeFor(n)`` buckets at the
    first insertion; ``put`` links a new key at the *tail* of its bucket and then doubles the
    table if the size exceeds 0.75 x capacity; ``computeIfAbsent`` first doubles the table if the
    size *already* exceeds it, then links a new key at the *head* of its bucket. Order = bucket
    ``spread(Uuid.hashCode) & (capacity - 1)``, then position in the bucket's list.
    """

    __slots__ = ("_cap", "_initial", "_log", "_next", "_order", "_seq", "_sets", "summary")

    def __init__(self, initial_capacity: int = 16) -> None:
        #: as :attr:`DeferredTopicMap.summary`, for a map a builder returns directly
        self.summary: tuple[int, frozenset[Uuid]] | None = None
        self._initial = initial_capacity
        self._cap = 0  # no table yet
        self._sets: dict[Uuid, IntHashSet] = {}
        self._seq: dict[Uuid, int] = {}
        self._next = 1
        self._order: dict[Uuid, IntHashSet] | None = None
        #: the steps that change the table ("p"ut, "c"omputeIfAbsent of a new key, "t" one of
        #: a present key, "r"emove), for the exact model when a bucket may become a tree bin
        self._log: list[tuple[str, Uuid | None]] = []

    @classmethod
    def deep_copy(cls, source: Mapping[Uuid, AbstractSet[int]]) -> TopicMap:
        """AssignorHelpers.deepCopyAssignment: ``new HashMap<>(size)``, each set copied."""
        copy = cls(table_size_for(len(source)))
        for topic_id, partitions in source.items():
            copy.put(topic_id, IntHashSet.copy_of(partitions))
        return copy

    @classmethod
    def single(cls, topic_id: Uuid, partitions: IntHashSet, calls: int) -> TopicMap:
        """``deepCopyAssignment(empty)`` (``new HashMap<>(0)``: one bucket) then ``calls``
        ``computeIfAbsent(topic_id, ...)`` calls (the first puts ``partitions``): the table
        is made at 1 bucket and a second call finds it over its threshold and doubles it."""
        built = cls(1)
        built._cap = 2 if calls > 1 else 1
        built._sets = {topic_id: partitions}
        built._seq = {topic_id: -1}
        built._next = 2
        built._order = built._sets
        built._log = [("c", topic_id), ("t", None)] if calls > 1 else [("c", topic_id)]
        return built

    def _threshold_exceeded(self) -> bool:
        return len(self._sets) > (self._cap * 3) >> 2

    def put(self, topic_id: Uuid, partitions: IntHashSet) -> None:
        if topic_id not in self._sets:
            if self._cap == 0:
                self._cap = self._initial
            self._seq[topic_id] = self._next
            self._next += 1
            self._order = None
            self._sets[topic_id] = partitions
            self._log.append(("p", topic_id))
            if self._threshold_exceeded():
                self._cap <<= 1
        else:
            self._sets[topic_id] = partitions
            self._order = None

    def touch(self) -> None:
        """A ``computeIfAbsent`` call whose key is present: its resize check."""
        self._log.append(("t", None))
        self._resize_check()

    def _resize_check(self) -> None:
        """The resize check a ``computeIfAbsent`` call makes before looking its key up."""
        if self._cap == 0:
            self._cap = self._initial
        elif self._threshold_exceeded():
            self._cap <<= 1

    def compute_if_absent(self, topic_id: Uuid, capacity: int) -> IntHashSet:
        """``computeIfAbsent(topicId, k -> new HashSet<>(...))`` with a set of ``capacity``."""
        self._resize_check()
        partitions = self._sets.get(topic_id)
        if partitions is not None:
            self._log.append(("t", None))
        else:
            self._log.append(("c", topic_id))
            partitions = self._sets[topic_id] = IntHashSet(capacity)
            self._seq[topic_id] = -self._next
            self._next += 1
            self._order = None
        return partitions

    def remove(self, topic_id: Uuid) -> None:
        if self._sets.pop(topic_id, None) is not None:
            del self._seq[topic_id]
            self._order = None
            self._log.append(("r", topic_id))

    def set_of(self, topic_id: Uuid) -> IntHashSet | None:
        return self._sets.get(topic_id)

    def __getitem__(self, topic_id: Uuid) -> AbstractSet[int]:
        return self._sets[topic_id]

    def __contains__(self, topic_id: object) -> bool:
        return topic_id in self._sets

    def __len__(self) -> int:
        return len(self._sets)

    def _ordered(self) -> dict[Uuid, IntHashSet]:
        """The entries in Java's order (cached until the next change)."""
        if self._order is None:
            seq = self._seq
            if len(seq) <= 1:
                order = list(seq)
            else:
                mask = self._cap - 1
                order = sorted(seq, key=lambda t: (spread(uuid_hashcode(t)) & mask, seq[t]))
                if len(seq) >= TREE_RISK:
                    order = self._tree_checked(order)
            sets = self._sets
            self._order = {t: sets[t] for t in order}
        return self._order

    def _tree_checked(self, order: list[Uuid]) -> list[Uuid]:
        """``order``, or the exact model's order when a bucket may have become a tree bin
        (:mod:`coordinator.assignor.treeify`)."""
        checked, capacity = _tree_checked_keys(order, self._log, self._initial)
        if capacity is not None:
            self._cap = capacity
        return checked

    def __iter__(self) -> Iterator[Uuid]:
        return iter(self._ordered())

    def items(self) -> ItemsView[Uuid, AbstractSet[int]]:
        return self._ordered().items()

    def values(self) -> ValuesView[AbstractSet[int]]:
        return self._ordered().values()

    def __repr__(self) -> str:
        return f"TopicMap({ {str(t): list(s) for t, s in self.items()} })"


def _tree_checked_keys(
    order: list[Uuid], log: list[tuple[str, Uuid | None]], initial: int
) -> tuple[list[Uuid], int | None]:
    """A :class:`TopicMap`'s key ``order`` after the table steps ``log`` from ``initial``
    buckets, or the exact model's order (and its capacity) when a bucket may have become a tree
    bin (:mod:`coordinator.assignor.treeify`)."""
    if not bucket_may_fill([uuid_spread(t) for kind, t in log if kind in "pc"], initial):
        return order, None
    if any(kind == "r" for kind, _ in log):
        history = [(kind != "r", uuid_spread(t)) for kind, t in log if t is not None]
        risky = history_may_treeify(history, initial)
    else:
        inserted = [uuid_spread(t) for kind, t in log if t is not None]
        risky = inserts_may_treeify(inserted, initial)
    if not risky:
        return order, None
    model = uuid_hashmap(initial)
    result = replay(model, log)
    return result, model.capacity


class DeferredTopicMap(Mapping[Uuid, AbstractSet[int]]):
    """A member's new assignment as the assignor's steps on it: ``deepCopyAssignment(base)``
    followed by recorded ``computeIfAbsent(...).add``, ``remove`` and ``put`` calls, replayed into
    a :class:`TopicMap` on first read. The assignors never read the maps they build, so the
    per-member work while assigning is one list append per step."""

    __slots__ = ("_base", "_map", "_ops", "summary")

    def __init__(self, base: Mapping[Uuid, AbstractSet[int]]) -> None:
        self._base = base
        self._ops: list[tuple] = []
        self._map: TopicMap | None = None
        #: ``(partition count, topics)`` once the builder knows both: ``topics`` is a set holding
        #: every topic of the map (maybe more). The homogeneous builder reads it next round to
        #: leave a member that keeps everything without walking its map; None = unknown.
        self.summary: tuple[int, frozenset[Uuid]] | None = None

    def add(self, topic_id: Uuid, capacity: int, runs: list[range], calls: int) -> None:
        """``calls`` computeIfAbsent(topic, new HashSet<>(capacity)).add(p) calls adding ``runs``."""
        self._ops.append((0, topic_id, capacity, runs, calls))

    def put_new(self, topic_id: Uuid, capacity: int, runs: list[range]) -> None:
        """``put(topic, set)`` of a new set of ``capacity`` buckets holding ``runs``."""
        self._ops.append((1, topic_id, capacity, runs, 0))

    def remove_topic(self, topic_id: Uuid) -> None:
        self._ops.append((2, topic_id, 0, None, 0))

    def remove_partition(self, topic_id: Uuid, partition: int) -> None:
        """removePartitionFromTargetAssignment: drop it, and the topic once empty."""
        self._ops.append((3, topic_id, partition, None, 0))

    def _built(self) -> TopicMap:
        if self._map is None:
            ops = self._ops
            if len(ops) == 1 and ops[0][0] == 0 and len(ops[0][3]) == 1 and not self._base:
                # The common case of a first assignment: one stretch of one topic added to an
                # empty map. Same map and order as the replay below, without the steps.
                _, topic_id, capacity, (run,), calls = ops[0]
                if run.step == 1 and run.start >= 0 and run.stop <= 1 << 16:
                    self._map = TopicMap.single(topic_id, IntHashSet.filled(capacity, run), calls)
                    self._ops = []
                    return self._map
            built = TopicMap.deep_copy(self._base)
            for kind, topic_id, arg, runs, calls in self._ops:
                if kind == 0:
                    target = built.compute_if_absent(topic_id, arg)
                    if calls > 1:
                        built.touch()
                    target.add_runs(runs)
                elif kind == 1:
                    fresh = IntHashSet(arg)
                    fresh.add_runs(runs)
                    built.put(topic_id, fresh)
                elif kind == 2:
                    built.remove(topic_id)
                else:
                    existing = built.set_of(topic_id)
                    if existing is not None:
                        existing.remove(arg)
                        if not existing:
                            built.remove(topic_id)
            self._map = built
            self._ops = []
        return self._map

    def partition_sets(self) -> dict[Uuid, frozenset[int]]:
        """``{topic id: frozenset}`` of the map's non-empty sets, in its iteration order, each
        frozenset filled in its set's Java order (what the old ``{t: frozenset(ps) for t, ps in
        map.items() if ps}`` gives, down to the frozensets' own iteration order). Unless the
        map was built, the steps are replayed without the map's table (:meth:`_replay`)."""
        if self._map is None:
            if len(self._ops) == 1:
                one = self._replay_one()
                if one is not None:
                    return one
            return self._replay()
        return {t: frozenset(ps) for t, ps in self._map.items() if ps}

    def _replay_one(self) -> dict[Uuid, frozenset[int]] | None:
        """:meth:`_replay` of the usual single step on a base topic (``put`` of a new set,
        ``remove`` of the topic, or of one partition), when the result's frozensets do not
        depend on any set's Java order (:func:`frozen_partitions`) and no bucket may become a
        tree bin; else None. The keys keep the copy's table: a step that replaces or removes
        a key leaves the capacity and the other keys' sequence alone."""
        kind, topic_id, arg, runs, _ = self._ops[0]
        if kind == 0:
            return None
        base = self._base
        source = base.get(topic_id)
        if not source:  # absent, or empty (not among the frozensets: no place to keep)
            return None
        changed: frozenset[int] | None = None  # the topic's new set (None: the topic goes)
        if kind == 1:
            items = runs[0] if len(runs) == 1 else list(itertools.chain.from_iterable(runs))
            if not items:
                return None
            changed = frozen_partitions(items, len(items), min(items), max(items))
            if changed is None or len(changed) != len(items):
                return None
        elif kind == 3:
            if arg not in source:
                return None
            remaining = set(source)
            remaining.discard(arg)
            if remaining:
                changed = frozen_partitions(
                    remaining, len(remaining), min(remaining), max(remaining)
                )
                if changed is None:
                    return None
        keys = list(base)
        values = list(base.values())
        indexes: Iterable[int] = range(len(keys))
        if len(keys) > 1:
            initial = cap = table_size_for(len(keys))
            while len(keys) > (cap * 3) >> 2:
                cap <<= 1
            hashes = list(map(uuid_spread, keys))
            if bucket_may_fill(hashes, initial):
                return None
            indexes = sorted(indexes, key=list(map((cap - 1).__and__, hashes)).__getitem__)
        result: dict[Uuid, frozenset[int]] = {}
        for i in indexes:
            partitions = values[i]
            if partitions:
                result[keys[i]] = _frozen_copy(partitions)
        if changed is None:
            result.pop(topic_id, None)
        else:
            result[topic_id] = changed  # in the topic's place (a present key keeps it)
        return result

    def _replay(self) -> dict[Uuid, frozenset[int]]:
        """:meth:`partition_sets` without :meth:`_built`'s :class:`TopicMap`: the deep copy and
        the steps are followed as two insertion-ordered dicts (the keys ``put`` links at a
        bucket's tail, then the keys ``computeIfAbsent`` links at its head, latest first in
        Java's lists) and a table capacity (``TopicMap``'s rules, resize checks included), and
        only the sets the steps change are copied (``IntHashSet``). The keys are then sorted by
        bucket, stable over that sequence, with the tree-bin check on ``TopicMap``'s step log
        when :func:`bucket_may_fill` says a bucket might hold :data:`TREE_RISK` keys. A base
        set left alone becomes a frozenset straight from the base (:func:`frozen_partitions`,
        else :func:`_copied_frozenset`)."""
        base = self._base
        tails: dict[Uuid, AbstractSet[int]] = (
            dict(base) if isinstance(base, dict) else dict(base.items())
        )
        heads: dict[Uuid, AbstractSet[int]] = {}
        base_keys = list(tails)
        initial = table_size_for(len(base_keys))
        size = len(base_keys)
        cap = 0
        if size:
            cap = initial
            while size > (cap * 3) >> 2:
                cap <<= 1
        copied: dict[int, IntHashSet] = {}  # the sets the steps made, by id (else: base sets)
        log: list[tuple[str, Uuid | None]] = []
        removed: list[Uuid] = []
        for kind, topic_id, arg, runs, calls in self._ops:
            if kind == 0 or kind == 3:
                where = tails
                target = tails.get(topic_id)
                if target is None:
                    where = heads
                    target = heads.get(topic_id)
                if kind == 0:  # computeIfAbsent(topic, new HashSet<>(arg)).add(...)
                    if cap == 0:
                        cap = initial
                    elif size > (cap * 3) >> 2:
                        cap <<= 1
                    if target is None:
                        target = heads[topic_id] = IntHashSet(arg)
                        copied[id(target)] = target
                        size += 1
                        log.append(("c", topic_id))
                    else:
                        log.append(("t", None))
                    if calls > 1:
                        log.append(("t", None))
                        if size > (cap * 3) >> 2:
                            cap <<= 1
                elif target is None:  # removing a partition of an absent topic
                    continue
                made = copied.get(id(target))
                if made is None:  # a base set: the deep copy's copy of it
                    made = where[topic_id] = IntHashSet.copy_of(target)
                    copied[id(made)] = made
                if kind == 0:
                    made.add_runs(runs)
                else:  # remove a partition, and the topic once empty
                    made.remove(arg)
                    if not made:
                        del where[topic_id]
                        size -= 1
                        removed.append(topic_id)
                        log.append(("r", topic_id))
            elif kind == 1:  # put(topic, new set)
                fresh = IntHashSet(arg)
                fresh.add_runs(runs)
                copied[id(fresh)] = fresh
                if topic_id in tails:
                    tails[topic_id] = fresh
                elif topic_id in heads:
                    heads[topic_id] = fresh
                else:
                    if cap == 0:
                        cap = initial
                    tails[topic_id] = fresh
                    size += 1
                    log.append(("p", topic_id))
                    if size > (cap * 3) >> 2:
                        cap <<= 1
            elif tails.pop(topic_id, None) is not None or heads.pop(topic_id, None) is not None:
                size -= 1  # remove(topic)
                removed.append(topic_id)
                log.append(("r", topic_id))
        keys = list(tails)
        values = list(tails.values())
        if heads:
            keys[:0] = reversed(heads)
            values[:0] = reversed(heads.values())
        indexes: Iterable[int] = range(len(keys))
        if len(keys) > 1:
            hashes = list(map(uuid_spread, keys))
            indexes = sorted(indexes, key=list(map((cap - 1).__and__, hashes)).__getitem__)
            if len(keys) + len(removed) >= TREE_RISK and bucket_may_fill(
                hashes + list(map(uuid_spread, removed)), initial
            ):
                steps: list[tuple[str, Uuid | None]] = [("p", t) for t in base_keys]
                steps += log
                order, _ = _tree_checked_keys([keys[i] for i in indexes], steps, initial)
                position = dict(zip(keys, range(len(keys)), strict=True))
                indexes = list(map(position.__getitem__, order))
        result: dict[Uuid, frozenset[int]] = {}
        for i in indexes:
            partitions = values[i]
            if not partitions:
                continue
            made = copied.get(id(partitions))
            if made is not None:
                result[keys[i]] = made.frozen()
                continue
            result[keys[i]] = _frozen_copy(partitions)
        return result

    def _replay_sets(self) -> dict[Uuid, IntHashSet]:
        """The sets :meth:`_built` ends with (same capacities, same insertion order, so the
        same Java order), without the map: a base set is copied (the deep copy's ``new
        HashSet<>(set)``) only if it survives the steps, or when a step changes it."""
        base = self._base
        pending = dict(base.items())  # base sets not copied yet
        sets: dict[Uuid, IntHashSet] = {}
        for kind, topic_id, arg, runs, _ in self._ops:
            if kind == 0:  # computeIfAbsent(topic, new HashSet<>(arg)).add(...)
                target = sets.get(topic_id)
                if target is None:
                    source = pending.pop(topic_id, None)
                    target = IntHashSet(arg) if source is None else IntHashSet.copy_of(source)
                    sets[topic_id] = target
                target.add_runs(runs)
            elif kind == 1:  # put(topic, new set)
                pending.pop(topic_id, None)
                fresh = sets[topic_id] = IntHashSet(arg)
                fresh.add_runs(runs)
            elif kind == 2:  # remove(topic)
                pending.pop(topic_id, None)
                sets.pop(topic_id, None)
            else:  # remove a partition, and the topic once empty
                existing = sets.get(topic_id)
                if existing is None and topic_id in pending:
                    existing = sets[topic_id] = IntHashSet.copy_of(pending.pop(topic_id))
                if existing is not None:
                    existing.remove(arg)
                    if not existing:
                        del sets[topic_id]
        for topic_id, source in pending.items():
            sets[topic_id] = IntHashSet.copy_of(source)
        return sets

    def __getitem__(self, topic_id: Uuid) -> AbstractSet[int]:
        return self._built()[topic_id]

    def __iter__(self) -> Iterator[Uuid]:
        return iter(self._built())

    def items(self) -> ItemsView[Uuid, AbstractSet[int]]:
        return self._built().items()

    def values(self) -> ValuesView[AbstractSet[int]]:
        return self._built().values()

    def __len__(self) -> int:
        return len(self._built())

    def __contains__(self, topic_id: object) -> bool:
        return topic_id in self._built()

    def __repr__(self) -> str:
        return repr(self._built())
