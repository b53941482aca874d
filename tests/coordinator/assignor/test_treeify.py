"""Tree bins and early resizes in the assignors' collections (coordinator.assignor.treeify): the
two collections of Kafka's JMH grid whose order a bucket-and-list model got wrong, checked against
the orders the JVM recorded for them (tools/hashmap-vectors/cases.txt), on each path that builds
such a collection; and the detectors' fallback against the exact model on random histories."""

from __future__ import annotations

import random
from unittest import mock

import numpy as np

from coordinator.assignor import (
    GroupSpecImpl,
    MemberSubscriptionAndAssignmentImpl,
    SubscriptionType,
    bulk,
    uniform_heterogeneous,
    uniform_homogeneous,
)
from coordinator.assignor.bulk import build_fresh_maps, uuid_spread_hashes
from coordinator.assignor.ordering import int_order, uuid_order
from coordinator.assignor.sets import DeferredTopicMap, IntHashSet, TopicMap, uuid_hashcode
from coordinator.assignor.treeify import grouped_inserts_may_treeify, inserts_may_treeify
from coordinator.assignor.uniform_heterogeneous import build_heterogeneous
from coordinator.assignor.uniform_homogeneous import build_homogeneous
from coordinator.java import spread
from coordinator.java_hashmap import int_hashmap, uuid_hashmap
from coordinator.kafka_uuid import Uuid
from tests.coordinator.hashmap_vectors import key_of, sequence

from .helpers import describer

SET_CASE = "case-uniform-homo-incremental-m1000-r50-t10-set"
MAP_CASE = "case-uniform-homo-incremental-m100-r50-t1000-map"


def _recorded(name: str) -> tuple[list, list, list]:
    """(keys, the step's key indices, the JVM's final order as keys)."""
    _, kind, _, texts, steps = sequence(name)
    keys = [key_of(kind, t) for t in texts]
    return keys, [i for _, i, _ in steps], [keys[i] for i in steps[-1][2]]


def test_a_joining_members_partition_set_gets_a_tree_bin() -> None:
    """newMember's HashSet<Integer>(16) of 50 revoked partitions, 19 of them 127 mod 128: Java
    resizes early at 32 buckets and makes bucket 127 of 128 a tree (root 1023 first)."""
    keys, steps, java = _recorded(SET_CASE)
    added = [keys[i] for i in steps]
    assert int_order(added, 128) != java  # the bucket-and-list order is not Java's
    built = IntHashSet(16)
    for p in added:
        built.add(p)
    assert list(built) == java
    # through the map the assignor returns (DeferredTopicMap replays its steps)
    topic = Uuid(1, 2)
    deferred = DeferredTopicMap({})
    for p in added:
        deferred.add(topic, 16, [range(p, p + 1)], 1)
    assert list(deferred[topic]) == java
    unbuilt = DeferredTopicMap({})  # the set-only replay partition_sets() uses
    for p in added:
        unbuilt.add(topic, 16, [range(p, p + 1)], 1)
    assert list(unbuilt._replay_sets()[topic]) == java


def test_a_joining_members_topic_map_resizes_early() -> None:
    """newMember's HashMap<Uuid, Set<Integer>> (new HashMap<>(0), one computeIfAbsent per
    partition) of 47 topics: 8 topics meet in one bucket of the 32-table, which doubles early."""
    keys, steps, java = _recorded(MAP_CASE)
    deferred = DeferredTopicMap({})
    for p, i in enumerate(steps):
        deferred.add(keys[i], 16, [range(p, p + 1)], 1)
    assert list(deferred) == java
    # the same steps through the batch builder: one member with these entries, a few others
    entries: list[list[int]] = []  # (topic, calls) runs of consecutive calls
    for i in steps:
        if entries and entries[-1][0] == i:
            entries[-1][1] += 1
        else:
            entries.append([i, 1])
    assert len({i for i, _ in entries}) == len(entries)
    others = 40
    members = np.array([0] * len(entries) + list(range(1, others + 1)), dtype=np.int64)
    topics = np.array([i for i, _ in entries] + [0] * others, dtype=np.int64)
    counts = np.array([c for _, c in entries] + [3] * others, dtype=np.int64)
    partitions = np.arange(int(counts.sum()), dtype=np.int64)
    maps = build_fresh_maps(
        members,
        topics,
        np.full(len(members), 16, dtype=np.int64),
        counts,
        partitions,
        others + 1,
        keys,
        uuid_spread_hashes(keys),
    )
    assert list(maps[0]) == java
    assert list(maps[0]) == list(deferred)
    assert [list(s) for s in maps[0].values()] == [list(s) for s in deferred.values()]
    assert all(list(m) == [keys[0]] for m in maps[1:])


def test_the_batch_builder_orders_a_colliding_set_as_java() -> None:
    """A batch entry whose partitions are not consecutive and collide: the JVM's order."""
    keys, steps, java = _recorded(SET_CASE)
    added = [keys[i] for i in steps]
    topic = Uuid(5, 6)
    others = 40
    counts = np.array([len(added)] + [2] * others, dtype=np.int64)
    partitions = np.array(added + list(range(2 * others)), dtype=np.int64)
    maps = build_fresh_maps(
        np.arange(others + 1, dtype=np.int64),
        np.zeros(others + 1, dtype=np.int64),
        np.full(others + 1, 16, dtype=np.int64),
        counts,
        partitions,
        others + 1,
        [topic],
        uuid_spread_hashes([topic]),
    )
    assert list(maps[0][topic]) == java
    assert [list(m[topic]) for m in maps[1:]] == [[2 * i, 2 * i + 1] for i in range(others)]


def test_detectors_fire_on_collisions_only() -> None:
    assert not inserts_may_treeify(list(range(10_000)), 16)  # consecutive: one per bucket
    # 7 keys in one bucket never change the order; 8 may (computeIfAbsent's threshold)
    assert not inserts_may_treeify([p * 64 for p in range(7)] + list(range(1, 40)), 16)
    assert inserts_may_treeify([p * 64 for p in range(8)], 16)
    sizes = np.array([20, 20, 3], dtype=np.int64)
    hashes = np.concatenate([np.arange(20), np.arange(20) * 256, np.arange(3) * 256])
    risky = grouped_inserts_may_treeify(sizes, hashes, np.full(3, 16, dtype=np.int64))
    assert risky.tolist() == [False, True, False]


def test_sets_with_removals_follow_the_model() -> None:
    """IntHashSet with adds and removes of colliding partitions: the exact model's order."""
    rng = random.Random(7)
    pool = [5 + 64 * k for k in range(40)] + list(range(30))
    for _ in range(30):
        built = IntHashSet(16)
        model = int_hashmap(16)
        present: list[int] = []
        for _ in range(rng.randrange(20, 120)):
            absent = [p for p in pool if p not in present]
            if present and (rng.random() < 0.3 or not absent):
                p = present.pop(rng.randrange(len(present)))
                built.remove(p)
                model.remove(p)
            else:
                p = rng.choice(absent)
                present.append(p)
                built.add(p)
                model.put(p)
        assert list(built) == model.keys()


def test_topic_maps_with_removals_follow_the_model() -> None:
    """TopicMap with puts, computeIfAbsent calls and removals of colliding topic ids."""
    rng = random.Random(11)
    pool = [Uuid(rng.getrandbits(63), 0x1F + (k << 12)) for k in range(40)]
    for _ in range(30):
        built = TopicMap.deep_copy({})
        model = uuid_hashmap(0)
        for _ in range(rng.randrange(20, 120)):
            topic = rng.choice(pool)
            roll = rng.random()
            if roll < 0.2 and topic in built:
                built.remove(topic)
                model.remove(topic)
            elif roll < 0.5:
                built.put(topic, IntHashSet())
                model.put(topic)
            else:
                built.compute_if_absent(topic, 16)
                model.compute_if_absent(topic)
        assert list(built) == model.keys()


def test_uuid_order_of_colliding_topic_ids_is_the_models() -> None:
    """ordering.uuid_order (a HashSet/HashMap of topic ids filled by put) with 12 ids of one
    hash among 40: the exact model's order, which the bucket-and-list order is not."""
    rng = random.Random(3)
    ids = [Uuid(rng.getrandbits(63), rng.getrandbits(63)) for _ in range(28)]
    # msb ^ lsb = 0x0000_0007_0000_0000 gives hashCode 7 (and 7 after spreading)
    ids += [Uuid(m, m ^ (7 << 32)) for m in rng.sample(range(1 << 40), 12)]
    model = uuid_hashmap()
    for t in ids:
        model.put(t)
    assert model.events["treeify"] or model.events["early_resize"]
    assert uuid_order(ids) == model.keys()
    mask = model.capacity - 1
    by_bucket = sorted(ids, key=lambda t: (spread(uuid_hashcode(t)) & mask, ids.index(t)))
    assert by_bucket != model.keys()  # the bucket-and-list order is not Java's here


def _colliding_topics(count: int) -> list[Uuid]:
    """Topic ids whose Uuid.hashCode is 7 + (k % 64) * 1024 (below 2**16: its own spread hash):
    one bucket for every table up to 1024 buckets."""
    rng = random.Random(count)
    topics = []
    for k in range(count):
        high = rng.getrandbits(31)
        msb = rng.getrandbits(62)
        topics.append(Uuid(msb, msb ^ ((high << 32) | (high ^ (7 + ((k % 64) << 10))))))
    assert len({spread(uuid_hashcode(t)) & 1023 for t in topics}) == 1
    return topics


def _first_assignment(builder, members: dict, counts: dict):  # type: ignore[no-untyped-def]
    kind = (
        SubscriptionType.HOMOGENEOUS
        if len({frozenset(s) for s in members.values()}) == 1
        else SubscriptionType.HETEROGENEOUS
    )
    spec = GroupSpecImpl(
        {
            m: MemberSubscriptionAndAssignmentImpl(None, None, frozenset(s), {})
            for m, s in members.items()
        },
        subscription_type=kind,
    )
    result = builder(spec, describer(counts)).members
    return {m: [(t, list(ps)) for t, ps in a.partitions.items()] for m, a in result.items()}


def test_batched_fresh_maps_with_colliding_topics_match_the_exact_path() -> None:
    """A first assignment whose members each get 10 topics of one bucket: the batch builders
    (build_fresh_maps, the heterogeneous builder's batch) send them to the exact path, and the
    result is the per-member step-replaying path's (every member through it)."""
    topics = _colliding_topics(400)
    counts = {t: 1 for t in topics}
    homogeneous = {f"m{i:02d}": topics for i in range(40)}
    heterogeneous = {f"m{i:02d}": topics[: 390 + i % 10] for i in range(40)}
    for builder, module, members in (
        (build_homogeneous, uniform_homogeneous, homogeneous),
        (build_heterogeneous, uniform_heterogeneous, heterogeneous),
    ):
        fired: list[int] = []
        real = bulk.grouped_inserts_may_treeify

        def spy(*args, real=real, fired=fired):
            risky = real(*args)
            fired.append(int(risky.sum()))
            return risky

        with mock.patch.object(bulk, "grouped_inserts_may_treeify", spy):
            batched = _first_assignment(builder, members, counts)
        assert sum(fired) > 0, module.__name__
        with mock.patch.object(module, "SMALL_BATCH", 10**9):
            one_by_one = _first_assignment(builder, members, counts)
        assert batched == one_by_one, module.__name__


def test_the_grouped_detector_is_the_scalar_one() -> None:
    """grouped_inserts_may_treeify (numpy, many collections) answers as inserts_may_treeify does
    for each collection, over random sizes, hash spacings and first tables."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        sizes = rng.integers(1, 40, 30)
        hashes = rng.integers(0, 64, int(sizes.sum())) * rng.choice([1, 16, 64, 1024])
        tables = rng.choice([1, 16, 32], 30)
        got = grouped_inserts_may_treeify(sizes, hashes, tables)
        starts = np.cumsum(sizes) - sizes
        want = [
            inserts_may_treeify(hashes[a : a + n].tolist(), int(t))
            for a, n, t in zip(starts, sizes, tables, strict=True)
        ]
        assert got.tolist() == want
