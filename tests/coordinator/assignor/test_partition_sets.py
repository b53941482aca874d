"""The target-assignment builder's conversion of an assignor's maps to frozensets.

* ``DeferredTopicMap.partition_sets`` (its steps replayed without the map's table) gives what
  reading the built ``TopicMap`` gives, topic order and each frozenset's own iteration order
  included, with tree-bin-prone topic ids and partition sets, bases of several set types and
  shared set objects;
* :func:`frozenset_table` is CPython's table size, and a frozenset that
  :func:`frozen_partitions` makes iterates as one made in any other order;
* the builder's delta check (``_holds``) agrees with comparing the converted maps.
"""

from __future__ import annotations

import sys
from collections.abc import Set as AbstractSet

from hypothesis import given
from hypothesis import strategies as st

from coordinator.assignor.sets import (
    DeferredTopicMap,
    IntHashSet,
    OrderedPartitions,
    frozen_partitions,
    frozenset_table,
)
from coordinator.kafka_uuid import Uuid, topic_id_for
from coordinator.target_assignment import _as_sets, _holds

from .helpers import SETTINGS

#: ordinary ids, and ids whose hash codes (``msb ^ lsb`` folded, here ``lsb``) meet in bucket 5
#: of every table up to 64 buckets: enough of those in one map makes a tree bin
TOPICS = [topic_id_for(f"sets{i}") for i in range(8)] + [Uuid(0, 64 * k + 5) for k in range(12)]

partitions = st.one_of(
    st.integers(0, 40),  # below the capacities: ascending Java order
    st.integers(0, 600),  # spread over buckets, some meeting
    st.sampled_from([3 + 128 * k for k in range(12)]),  # one bucket of tables up to 128
    st.integers(65530, 70000),  # above 2**16: spread(p) differs from p
)
partition_lists = st.lists(partitions, max_size=14, unique=True)
set_kinds = st.sampled_from(["ordered", "frozen", "int"])

bases = st.lists(
    st.tuples(st.integers(0, len(TOPICS) - 1), partition_lists, set_kinds, st.booleans()),
    max_size=12,
    unique_by=lambda row: row[0],
)
step = st.tuples(
    st.integers(0, 3),  # 0 add, 1 put_new, 2 remove_topic, 3 remove_partition
    st.integers(0, len(TOPICS) - 1),
    partition_lists,
    st.sampled_from([1, 2, 16, 64]),
    st.integers(1, 3),  # computeIfAbsent calls
)
steps = st.lists(
    st.tuples(
        st.integers(0, 3),  # 0 add, 1 put_new, 2 remove_topic, 3 remove_partition
        st.integers(0, len(TOPICS) - 1),
        partition_lists,
        st.sampled_from([1, 2, 16, 64]),
        st.integers(1, 3),  # computeIfAbsent calls
    ),
    max_size=20,
)


def _set_of(kind: str, values: list[int]) -> AbstractSet[int]:
    if kind == "ordered":
        return OrderedPartitions(values)
    if kind == "frozen":
        return frozenset(values)
    made = IntHashSet(16)
    for p in values:
        made.add(p)
    return made


def _deferred(base_rows: list, step_rows: list) -> DeferredTopicMap:
    """A DeferredTopicMap over a base of the given sets (``shared``: the previous row's set
    object again, as bulk builders share one-partition sets) and the given steps, each valid
    for the content so far (adds of absent partitions, removals of present ones)."""
    base: dict[Uuid, AbstractSet[int]] = {}
    present: dict[int, set[int]] = {}
    previous: tuple[AbstractSet[int], list[int]] | None = None
    for t, values, kind, shared in base_rows:
        if shared and previous is not None:
            made, values = previous
        else:
            made = _set_of(kind, values)
        base[TOPICS[t]] = made
        present[t] = set(values)
        previous = (made, values)
    deferred = DeferredTopicMap(base)
    for kind, t, values, capacity, calls in step_rows:
        topic = TOPICS[t]
        if kind == 0:
            fresh = [p for p in values if p not in present.get(t, ())]
            if fresh:
                deferred.add(topic, capacity, [range(p, p + 1) for p in fresh], calls)
                present.setdefault(t, set()).update(fresh)
        elif kind == 1:
            deferred.put_new(topic, capacity, [range(p, p + 1) for p in values])
            present[t] = set(values)
        elif kind == 2:
            deferred.remove_topic(topic)
            present.pop(t, None)
        elif present.get(t):
            gone = sorted(present[t])[len(values) % len(present[t])]
            deferred.remove_partition(topic, gone)
            present[t].discard(gone)
            if not present[t]:
                del present[t]
    return deferred


@SETTINGS
@given(bases, steps)
def test_partition_sets_are_the_built_map_read_as_frozensets(base_rows, step_rows):
    """Same topics in the same order, each frozenset iterating the same way, whether the steps
    are replayed without the table or the map is built (tree bins included)."""
    ours = _deferred(base_rows, step_rows).partition_sets()
    built = _deferred(base_rows, step_rows)
    theirs = {t: frozenset(ps) for t, ps in built.items() if ps}
    assert [(t, list(ps)) for t, ps in ours.items()] == [(t, list(ps)) for t, ps in theirs.items()]
    # once built, the map itself is read
    assert [(t, list(ps)) for t, ps in built.partition_sets().items()] == [
        (t, list(ps)) for t, ps in theirs.items()
    ]


@SETTINGS
@given(bases, step)
def test_a_single_step_is_replayed_as_the_map_reads(base_rows, one_step):
    """The usual case, one step on a base topic (``_replay_one``, or the full replay when it
    declines), gives what the built map gives."""
    kind, t, values, capacity, calls = one_step
    if base_rows:  # mostly a step on a base topic, as the assignors record them
        t = base_rows[t % len(base_rows)][0] if t % 4 else t
    if calls == 1:  # partitions close together: frozensets whose order cannot show
        values = sorted({p % 48 for p in values})
    one_step = (kind, t, values, capacity, calls)
    ours = _deferred(base_rows, [one_step]).partition_sets()
    built = _deferred(base_rows, [one_step])
    assert [(t, list(ps)) for t, ps in ours.items()] == [
        (t, list(frozenset(ps))) for t, ps in built.items() if ps
    ]


def test_a_tree_bin_of_topics_is_replayed_as_the_map_orders_it():
    """Twelve topics in one bucket, added by computeIfAbsent to an empty map (a joining
    member's map): the replay falls back to the exact model's order, as the built map."""
    deferred = DeferredTopicMap({})
    built = DeferredTopicMap({})
    for p, topic in enumerate(TOPICS[8:]):
        for made in (deferred, built):
            made.add(topic, 16, [range(p, p + 1)], 1)
    order = [t for t, _ in built.items()]
    # not the list order (each computeIfAbsent links at the head: latest first): a tree's
    assert order != TOPICS[8:][::-1]
    assert list(deferred.partition_sets()) == order


def test_frozenset_table_is_cpythons():
    """The slots ``sys.getsizeof`` shows for frozensets filled from an iterator."""
    empty = sys.getsizeof(frozenset())
    for count in [*range(0, 1500), 50_000, 50_001, 60_000, 200_000]:
        extra = sys.getsizeof(frozenset(iter(range(count)))) - empty
        assert (8 if extra == 0 else extra // 16) == frozenset_table(count), count


@SETTINGS
@given(st.lists(partitions, min_size=1, max_size=60, unique=True), st.randoms())
def test_frozen_partitions_iterate_as_any_order_would(values, rnd):
    """When :func:`frozen_partitions` makes the frozenset, shuffled inputs give frozensets
    that iterate the same way; when it declines, the values are spread wider than the
    table."""
    made = frozen_partitions(values, len(values), min(values), max(values))
    if made is None:
        assert max(values) - min(values) >= frozenset_table(len(values))
        return
    assert made == frozenset(values)
    for _ in range(5):
        shuffled = list(values)
        rnd.shuffle(shuffled)
        assert list(frozenset(shuffled)) == list(made)


def test_frozen_partitions_declines_when_order_shows():
    """Two values a table apart take each other's slot: the order they come in shows."""
    assert list(frozenset([9, 1])) != list(frozenset([1, 9]))
    assert frozen_partitions([9, 1], 2, 1, 9) is None
    assert frozen_partitions([40, 41, 47], 3, 40, 47) == frozenset({40, 41, 47})


@SETTINGS
@given(
    st.dictionaries(
        st.integers(0, len(TOPICS) - 1),
        st.tuples(st.lists(st.integers(0, 30), max_size=6, unique=True), set_kinds),
        max_size=6,
    ),
    st.dictionaries(
        st.integers(0, len(TOPICS) - 1),
        st.lists(st.integers(0, 30), min_size=1, max_size=6, unique=True),
        max_size=6,
    ),
    st.booleans(),
)
def test_holds_is_the_converted_maps_compared(old_rows, new_rows, copy_old):
    """``_holds(old, new)`` is ``_as_sets(old) == new`` (empty sets left out), for old maps of
    each set type, and for a new map equal to the old one."""
    old = {TOPICS[t]: _set_of(kind, values) for t, (values, kind) in old_rows.items()}
    if copy_old:
        new = dict(reversed([(t, frozenset(ps)) for t, ps in old.items() if ps]))
    else:
        new = {TOPICS[t]: frozenset(values) for t, values in new_rows.items()}
    assert _holds(old, new) == (_as_sets(old) == new)
