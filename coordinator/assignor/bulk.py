"""Many members' new maps built at once, in Java's iteration order, with numpy.

The uniform builders give most members a map that starts empty (Kafka's
``deepCopyAssignment(emptyMap)``, a ``new HashMap<>(0)``) and receives ``computeIfAbsent(topic,
k -> new HashSet<>(c)).add(p)`` calls, one per partition, a topic's partitions one after the other
(UniformHomogeneousAssignmentBuilder.assignRemainingPartitions, UniformHeterogeneousAssignmentBuilder
.addPartitionToTargetAssignment). For those maps Java's order has a closed form
(:mod:`coordinator.java` rules, as :class:`~coordinator.assignor.sets.TopicMap` replays them):

* a set of ``n`` partitions made with ``c`` buckets ends with ``c`` doubled until
  ``n <= 0.75 c``; it iterates by bucket ``spread(p) & (c - 1)``, insertion order within a bucket;
* the map's table starts at 1 bucket and ``computeIfAbsent`` doubles it *before* linking a new
  key when the size already exceeds the threshold (``(int) (0.75 c)``), so ``K`` keys end in
  :func:`fresh_map_capacity` buckets (one more doubling if a call follows the last new key); a
  new key goes to the *head* of its bucket, so within a bucket the later key comes first.

:func:`build_fresh_maps` sorts every set and every map of a batch with a few numpy passes and
makes the Python objects with C-level ``map`` calls: :class:`OrderedPartitions` sets in
:class:`AssignmentMap` maps, each in that order. Members whose steps do not fit (a base map, a
removal, the same topic twice) stay on the step-replaying path of
:class:`~coordinator.assignor.sets.DeferredTopicMap`; both give the same maps.
"""

from __future__ import annotations

import array
import functools
import itertools
import operator
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from types import MappingProxyType

import numpy as np

from coordinator.assignor.sets import AssignmentMap, OrderedPartitions, uuid_hashcode
from coordinator.assignor.treeify import (
    TREE_RISK,
    arithmetic_sets_may_treeify,
    grouped_inserts_may_treeify,
)
from coordinator.java_hashmap import int_set_order, uuid_hashmap
from coordinator.kafka_uuid import Uuid

#: Below this many members a batch costs more in fixed numpy calls than the per-member path.
SMALL_BATCH = 32


@functools.lru_cache(maxsize=4096)
def fresh_map_capacity(keys: int, trailing_call: bool) -> int:
    """Buckets of ``new HashMap<>(0)`` after ``keys`` new keys through ``computeIfAbsent``
    (``trailing_call``: one more call after the last new key, which may double it again)."""
    cap = 1
    for size in range(1, keys):  # the call that links key size + 1 sees `size` entries
        if size > (cap * 3) >> 2:
            cap <<= 1
    if trailing_call and keys > (cap * 3) >> 2:
        cap <<= 1
    return cap


def fresh_map_capacities(keys: np.ndarray, trailing_call: np.ndarray) -> np.ndarray:
    """:func:`fresh_map_capacity` of each member (``keys[i]``, ``trailing_call[i]``), from a
    table of the few distinct key counts rather than a call per member."""
    largest = int(keys.max()) if len(keys) else 0
    table = np.array(
        [[fresh_map_capacity(k, False), fresh_map_capacity(k, True)] for k in range(largest + 1)],
        dtype=np.int64,
    )
    return table[keys, trailing_call.astype(np.int64)]


#: Partition numbers as shared int objects (``_INT_OBJECTS[p] is p``'s one object), so that a
#: batch's sets hold references to them rather than new ints: CPython caches only -5..256, and
#: a first assignment of 100,000 partitions would otherwise make (and later free) as many ints.
_INT_OBJECTS = np.arange(0, dtype=np.int64).astype(object)
#: Partitions at or above this are made as new ints (a table that size is 8 MB of pointers).
_INT_OBJECTS_LIMIT = 1 << 20


def partition_objects(partitions: np.ndarray) -> np.ndarray:
    """``partitions`` as an object array of Python ints, sharing one int object per value
    (``.tolist()`` of the result makes no new ints) while the values are below a limit."""
    global _INT_OBJECTS
    if not len(partitions):
        return partitions.astype(object)
    high = int(partitions.max())
    if high >= _INT_OBJECTS_LIMIT or int(partitions.min()) < 0:
        return partitions.astype(object)
    if high >= len(_INT_OBJECTS):
        size = max(1024, len(_INT_OBJECTS))
        while size <= high:
            size <<= 1
        grown = np.empty(size, dtype=object)
        grown[: len(_INT_OBJECTS)] = _INT_OBJECTS
        grown[len(_INT_OBJECTS) :] = list(range(len(_INT_OBJECTS), size))
        _INT_OBJECTS = grown
    return _INT_OBJECTS[partitions]


def group_subscriptions(
    subscriptions: Sequence[Sequence[Uuid] | AbstractSet[Uuid]],
) -> tuple[np.ndarray, list[int], list[np.ndarray]]:
    """Members with the same subscription (the same topics in the same order), found without a
    Python loop per member and without hashing a ``Uuid``: (each member's group, each group's
    first member, each group's members ascending). Groups are numbered in the order of their
    first member.

    A member's candidate group is the first member with the same first topic object; it joins
    that group when their topics compare equal as lists (element by element, identical objects
    first). The others, if any, are grouped by the ids of their topics."""
    count = len(subscriptions)
    if not count:
        return np.zeros(0, dtype=np.int64), [], []
    by_first: dict[int, int] = {}
    firsts = list(
        map(
            by_first.setdefault,
            map(id, map(next, map(iter, subscriptions), itertools.repeat(None))),
            range(count),
        )
    )
    # lists, not tuples: list() of a set view reads it without PyIter_Next and presizes, and
    # each list is freed right after its comparison
    candidates = {f: list(subscriptions[f]) for f in by_first.values()}
    same = list(map(operator.eq, map(list, subscriptions), map(candidates.__getitem__, firsts)))
    if not all(same):
        by_key: dict[tuple[int, ...], int] = {}
        for i in itertools.compress(range(count), map(operator.not_, same)):
            firsts[i] = by_key.setdefault(tuple(map(id, subscriptions[i])), i)
    if len(candidates) == 1 and all(same):
        return np.zeros(count, dtype=np.int64), [0], [np.arange(count, dtype=np.int64)]
    # array.array reads the ints in C; np.array(list) would inspect each one
    codes = np.frombuffer(array.array("q", firsts), dtype=np.int64)
    group_firsts, member_group = np.unique(codes, return_inverse=True)
    by_group = np.argsort(member_group, kind="stable")
    cuts = np.cumsum(np.bincount(member_group, minlength=len(group_firsts)))[:-1]
    return member_group, group_firsts.tolist(), np.split(by_group, cuts)


def empty_maps(targets: Sequence[Mapping[Uuid, object]], changed: Sequence[bool]) -> np.ndarray:
    """Which of ``targets`` are empty maps, as a bool array; a changed one (a
    :class:`~coordinator.assignor.sets.DeferredTopicMap` still taking steps) counts as not
    empty without being asked its size, which would replay its steps too early."""
    probe = list(targets)
    for i in itertools.compress(range(len(probe)), changed):
        probe[i] = _NOT_EMPTY
    return np.fromiter(map(operator.not_, probe), dtype=bool, count=len(probe))


_NOT_EMPTY: Mapping[Uuid, object] = MappingProxyType({Uuid(0, 1): None})


def _spread(values: np.ndarray) -> np.ndarray:
    """``HashMap.hash`` of non-negative ints below 2**31 (``Integer.hashCode`` is the value)."""
    return values ^ (values >> 16)


def build_fresh_maps(
    members: np.ndarray,
    topics: np.ndarray,
    set_capacities: np.ndarray,
    counts: np.ndarray,
    partitions: np.ndarray,
    member_count: int,
    topic_ids: Sequence[Uuid],
    topic_hashes: np.ndarray,
    steps: np.ndarray | None = None,
) -> list[AssignmentMap]:
    """The maps of ``member_count`` members from their steps ("entries"): entry ``e`` is member
    ``members[e]``'s ``counts[e]`` calls ``computeIfAbsent(topic_ids[topics[e]], new
    HashSet<>(set_capacities[e] buckets)).add(p)``, the partitions ``p`` being the next
    ``counts[e]`` values of ``partitions``. Entries are grouped by member (ascending), each
    member's in call order, and no member has a topic twice. ``topic_hashes[t]`` is
    ``spread(topic_ids[t].hashCode())``. A member without entries gets an empty map.
    ``steps``, when given, says that entry ``e``'s partitions are ``first + k * steps[e]``
    (the tree-bin check then reads no partition list, :mod:`coordinator.assignor.treeify`)."""
    entries = len(members)
    bounds = np.zeros(entries + 1, dtype=np.int64)
    np.cumsum(counts, out=bounds[1:])
    # Each set's final table and its bucket order (a stable sort: insertion order in a bucket).
    caps = set_capacities.astype(np.int64)
    while True:
        grow = counts * 4 > caps * 3
        if not grow.any():
            break
        caps[grow] <<= 1
    risky = _risky_members(
        members, topics, set_capacities, counts, partitions, member_count, topic_hashes, steps
    )
    inserted = partitions
    if len(partitions):
        entry_of = np.repeat(np.arange(entries, dtype=np.int64), counts)
        buckets = _spread(partitions) & (caps - 1)[entry_of]
        inside = entry_of[1:] == entry_of[:-1]
        if (np.diff(buckets)[inside] < 0).any():
            order = np.argsort((entry_of << 32) | buckets, kind="stable")
            partitions = partitions[order]
    largest = int(counts.max()) if entries else 0
    smallest = int(counts.min()) if entries else 0
    objects = partition_objects(partitions)
    if largest == 1:
        sets = list(map(OrderedPartitions, zip(objects.tolist())))  # one each: no slicing
    elif largest == smallest:  # the same size each (a first assignment's usual case)
        sets = list(map(OrderedPartitions, objects.reshape(entries, largest).tolist()))
    else:
        flat = objects.tolist()
        starts = bounds[:-1].tolist()
        stops = bounds[1:].tolist()
        sets = list(map(OrderedPartitions, map(flat.__getitem__, map(slice, starts, stops))))

    # Each map's final table and its order: bucket ascending, later key first within one.
    member_bounds = np.searchsorted(members, np.arange(member_count + 1, dtype=np.int64))
    keys_per_member = np.diff(member_bounds)
    last = member_bounds[1:] - 1
    has_keys = keys_per_member > 0
    trailing = np.zeros(member_count, dtype=bool)
    trailing[has_keys] = counts[last[has_keys]] > 1
    topic_list = topics.tolist()
    if entries and int(keys_per_member.max()) > 1:
        map_caps = fresh_map_capacities(keys_per_member, trailing)
        rank = np.arange(entries, dtype=np.int64) - np.repeat(member_bounds[:-1], keys_per_member)
        bucket = topic_hashes[topics] & (map_caps - 1)[members]
        # (member, bucket, later key first) as one int64 key; members are already grouped
        key = (members << 42) | (bucket << 21) | ((1 << 21) - 1 - rank)
        order = np.argsort(key, kind="stable")
        sets = list(map(sets.__getitem__, order.tolist()))
        topic_list = list(map(topic_list.__getitem__, order.tolist()))
    if entries == member_count and bool(
        (keys_per_member == 1).all()
    ):  # one topic each: copy a one-key template (no Uuid hashing)
        templates = [dict.fromkeys((t,)) for t in topic_ids]
        maps: list[AssignmentMap] = list(
            map(AssignmentMap.fromkeys, map(templates.__getitem__, topic_list), sets)  # type: ignore[arg-type]
        )
    else:
        keys = list(map(topic_ids.__getitem__, topic_list))
        first = member_bounds[:-1].tolist()
        end = member_bounds[1:].tolist()
        slices = list(map(slice, first, end))
        maps = list(
            map(
                AssignmentMap,
                map(
                    zip,
                    map(keys.__getitem__, slices),
                    map(sets.__getitem__, slices),
                ),
            )
        )
    for member in risky:
        entry_range = range(int(member_bounds[member]), int(member_bounds[member + 1]))
        maps[member] = _exact_fresh_map(
            [
                (
                    topic_ids[int(topics[e])],
                    int(set_capacities[e]),
                    int(counts[e]),
                    inserted[int(bounds[e]) : int(bounds[e + 1])].tolist(),
                )
                for e in entry_range
            ]
        )
    return maps


def _risky_members(
    members: np.ndarray,
    topics: np.ndarray,
    set_capacities: np.ndarray,
    counts: np.ndarray,
    partitions: np.ndarray,
    member_count: int,
    topic_hashes: np.ndarray,
    steps: np.ndarray | None,
) -> list[int]:
    """The members of a :func:`build_fresh_maps` batch whose map or one of whose sets may get
    a tree bin (:mod:`coordinator.assignor.treeify`): a set needs 8 partitions spread over more
    than 7 times its first table (a run of consecutive partitions never does), a map 8 topics."""
    risky = np.zeros(member_count, dtype=bool)
    big = counts >= TREE_RISK
    if steps is not None and big.any():
        starts = np.cumsum(counts) - counts
        firsts = partitions[np.minimum(starts, max(len(partitions) - 1, 0))]
        risky_sets = arithmetic_sets_may_treeify(counts, firsts, steps, set_capacities)
        risky[members[risky_sets]] = True
    elif big.any():
        # a set within 7 x its first table's buckets has at most 7 in a bucket at any size
        filled = counts > 0
        starts = (np.cumsum(counts) - counts)[filled]
        low = np.minimum.reduceat(partitions, starts)
        high = np.maximum.reduceat(partitions, starts)
        wide = (high - low >= 7 * set_capacities[filled]) | (low < 0) | (high >= 1 << 16)
        candidates = np.zeros(len(counts), dtype=bool)
        candidates[filled] = wide
        candidates &= big
        if candidates.any():
            sizes = np.where(candidates, counts, 0)
            hashes = _spread(partitions[np.repeat(candidates, counts)])
            risky_sets = grouped_inserts_may_treeify(sizes, hashes, set_capacities)
            risky[members[risky_sets]] = True
    keys_per_member = np.bincount(members, minlength=member_count)
    if len(keys_per_member) and int(keys_per_member.max()) >= TREE_RISK:
        # deepCopyAssignment(emptyMap): new HashMap<>(0), a table of one bucket
        risky |= grouped_inserts_may_treeify(
            keys_per_member, topic_hashes[topics], np.ones(member_count, dtype=np.int64)
        )
    return np.flatnonzero(risky).tolist() if risky.any() else []


def risky_rows(
    position: np.ndarray,
    entry_hashes: np.ndarray,
    firsts: np.ndarray,
    steps: np.ndarray,
    counts: np.ndarray,
    set_capacities: np.ndarray,
    member_count: int,
) -> list[int]:
    """The members (rows) of a batch of fresh maps that may get a tree bin, when entry ``e``
    (grouped by member ``position[e]``, in call order) is ``counts[e]`` computeIfAbsent/add
    calls for a topic of spread hash ``entry_hashes[e]`` adding ``firsts[e] + k * steps[e]``
    to a ``new HashSet<>(set_capacities[e])`` (the heterogeneous builder's batch)."""
    risky = np.zeros(member_count, dtype=bool)
    sets = arithmetic_sets_may_treeify(counts, firsts, steps, set_capacities)
    if sets.any():
        risky[position[sets]] = True
    keys_per_member = np.bincount(position, minlength=member_count)
    if len(keys_per_member) and int(keys_per_member.max()) >= TREE_RISK:
        risky |= grouped_inserts_may_treeify(
            keys_per_member, entry_hashes, np.ones(member_count, dtype=np.int64)
        )
    return np.flatnonzero(risky).tolist() if risky.any() else []


def _exact_fresh_map(steps: list[tuple[Uuid, int, int, list[int]]]) -> AssignmentMap:
    """A fresh map from its steps (topic, set capacity, calls, partitions added) through the
    exact model: ``calls`` computeIfAbsent calls on a ``new HashMap<>(0)``, each adding one
    partition to a ``new HashSet<>(capacity)``."""
    model = uuid_hashmap(0)
    sets: dict[Uuid, OrderedPartitions] = {}
    for topic_id, capacity, calls, added in steps:
        model.compute_if_absent(topic_id)
        for _ in range(calls - 1):
            model.touch()
        sets[topic_id] = OrderedPartitions(int_set_order(added, capacity))
    return AssignmentMap((t, sets[t]) for t in model)


def uuid_spread_hashes(topic_ids: Sequence[Uuid]) -> np.ndarray:
    """``spread(Uuid.hashCode())`` of each topic id, as an int64 array."""
    values = np.fromiter(map(uuid_hashcode, topic_ids), dtype=np.int64, count=len(topic_ids))
    return _spread(values)
