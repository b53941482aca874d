"""The bulk paths of the server-side assignors against their generic step-replaying paths.

* ``OrderedPartitions`` behaves as a ``Set<Integer>`` (content equality, set algebra,
  unhashable) while iterating in the order it was built with.
* ``build_fresh_maps`` gives the same maps, in the same iteration order, as replaying the same
  ``computeIfAbsent``/``add`` steps through ``DeferredTopicMap`` (the Java collection model that
  test_properties checks against a literal HashMap simulation).
* A uniform or range result read whole (``items()``: the bulk path) equals, member by member and in
  iteration order, the same result read one member at a time (the per-member path), over random
  groups with previous assignments (Hypothesis, bounded).
* ``IntHashSet``: a partition added back by ``add_run`` after its removal is present again (it
  was lost before), at the end of its bucket.
* ``DeferredTopicMap.partition_sets`` equals the built map read as frozensets (order included);
  ``LazyMembers.partition_maps`` hands over the maps the members hold; a homogeneous round over
  maps without a summary equals one over maps with one; ``subscription_of`` is kept by content.
"""

from __future__ import annotations

from collections.abc import ValuesView

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coordinator.assignor import (
    GroupSpecImpl,
    MemberSubscriptionAndAssignmentImpl,
    uniform_heterogeneous,
    uniform_homogeneous,
)
from coordinator.assignor.bulk import (
    build_fresh_maps,
    fresh_map_capacities,
    fresh_map_capacity,
    group_subscriptions,
    partition_objects,
    uuid_spread_hashes,
)
from coordinator.assignor.ordering import uuid_order
from coordinator.assignor.range import RangeAssignor
from coordinator.assignor.sets import DeferredTopicMap, IntHashSet, OrderedPartitions
from coordinator.assignor.spec import MemberAssignmentImpl, member_assignments
from coordinator.assignor.uniform import UniformAssignor
from coordinator.java import copy_capacity
from coordinator.kafka_uuid import Uuid, topic_id_for

from .helpers import SETTINGS, describer, inverted
from .test_properties import JavaHashMapSim, groups


@pytest.fixture(autouse=True, scope="module")
def _bulk_for_every_batch():
    """The builders take the per-member path for batches below SMALL_BATCH members; these
    groups are small, so the bulk path is forced here (both paths give the same maps)."""
    saved = uniform_homogeneous.SMALL_BATCH, uniform_heterogeneous.SMALL_BATCH
    uniform_homogeneous.SMALL_BATCH = uniform_heterogeneous.SMALL_BATCH = 0
    yield
    uniform_homogeneous.SMALL_BATCH, uniform_heterogeneous.SMALL_BATCH = saved


TOPIC_IDS = [topic_id_for(f"bulk{i}") for i in range(12)]


def test_ordered_partitions_is_a_set_in_its_own_order():
    s = OrderedPartitions([18, 3, 5])
    assert list(s) == [18, 3, 5]
    assert s == {3, 5, 18} and {3, 5, 18} == s and s == frozenset({18, 5, 3})
    assert s == OrderedPartitions([3, 5, 18]) and s != OrderedPartitions([3, 5])
    assert s != {3, 5} and s != [18, 3, 5] and (s != {18, 3, 5}) is False
    assert s <= {2, 3, 5, 18} and s < {2, 3, 5, 18} and not s < {3, 5, 18}
    assert s - {3} == {5, 18} and s & {5, 7} == {5} and s | {1} == {1, 3, 5, 18}
    assert 5 in s and 4 not in s and len(s) == 3
    assert s.runs() == [range(18, 19), range(3, 4), range(5, 6)]
    try:
        hash(s)
    except TypeError:
        pass
    else:  # pragma: no cover - would be a regression
        raise AssertionError("OrderedPartitions must be unhashable, like the other sets")


def test_member_assignments_are_member_assignment_impls():
    maps = [{TOPIC_IDS[0]: OrderedPartitions([1])}, {}]
    built = member_assignments(maps)
    assert built == [MemberAssignmentImpl(m) for m in maps]
    assert all(
        type(b) is MemberAssignmentImpl and b.partitions is m
        for b, m in zip(built, maps, strict=True)
    )


def test_fresh_map_capacity_follows_compute_if_absent():
    for keys in range(1, 40):
        for trailing in (False, True):
            sim = JavaHashMapSim(0)
            for k in range(keys):
                sim.compute_if_absent(k, k)
            if trailing:
                sim.compute_if_absent(0, 0)
            assert fresh_map_capacity(keys, trailing) == len(sim.table or [])


def test_fresh_map_capacities_are_fresh_map_capacity_per_member():
    keys = np.array([0, 1, 2, 3, 7, 13, 1, 40], dtype=np.int64)
    trailing = np.array([False, True, False, True, True, False, False, True])
    assert fresh_map_capacities(keys, trailing).tolist() == [
        fresh_map_capacity(k, t) for k, t in zip(keys.tolist(), trailing.tolist(), strict=True)
    ]


def test_partition_objects_share_one_int_per_value():
    partitions = np.array([300, 5000, 300, 0, 70000], dtype=np.int64)
    first = partition_objects(partitions).tolist()
    second = partition_objects(partitions[::-1].copy()).tolist()
    assert first == [300, 5000, 300, 0, 70000]
    assert all(type(p) is int for p in first)
    assert first[0] is first[2] is second[2]  # the same object for the same value
    assert first[1] is second[3] and first[4] is second[0]
    huge = partition_objects(np.array([1 << 40, 7], dtype=np.int64)).tolist()
    assert huge == [1 << 40, 7]  # above the shared table: made as new ints


entry_lists = st.lists(
    st.lists(
        st.tuples(
            st.integers(0, len(TOPIC_IDS) - 1),
            st.sampled_from([1, 2, 16, 64]),
            st.lists(st.integers(0, 70000), min_size=1, max_size=25, unique=True),
            st.booleans(),
        ),
        max_size=8,
        unique_by=lambda e: e[0],
    ),
    min_size=1,
    max_size=6,
)


@SETTINGS
@given(entry_lists)
def test_build_fresh_maps_equals_the_replayed_steps(members):
    columns: list[list[int]] = [[], [], [], [], []]
    expected = []
    for m, entries in enumerate(members):
        replayed = DeferredTopicMap({})
        for t, capacity, partitions, ascending in entries:
            ps = sorted(partitions) if ascending else partitions
            for p in ps:  # one computeIfAbsent(...).add(p) call per partition
                replayed.add(TOPIC_IDS[t], capacity, [range(p, p + 1)], 1)
            for column, value in zip(columns, (m, t, capacity, len(ps)), strict=False):
                column.append(value)
            columns[4].extend(ps)
        expected.append(replayed)
    arrays = [np.array(c, dtype=np.int64) for c in columns]
    got = build_fresh_maps(
        arrays[0],
        arrays[1],
        arrays[2],
        arrays[3],
        arrays[4],
        len(members),
        TOPIC_IDS,
        uuid_spread_hashes(TOPIC_IDS),
    )
    for ours, theirs in zip(got, expected, strict=True):
        assert [(t, list(ps)) for t, ps in ours.items()] == [
            (t, list(ps)) for t, ps in theirs.items()
        ]


def _ordered(members) -> list:
    return [(m, [(t, list(ps)) for t, ps in a.partitions.items()]) for m, a in members]


def _both_reads(spec, counts, assignor=UniformAssignor):
    whole = assignor().assign(spec, describer(counts)).members
    one_by_one = assignor().assign(spec, describer(counts)).members
    by_member = [(m, one_by_one[m]) for m in reversed(list(one_by_one))][::-1]
    return _ordered(whole.items()), _ordered(by_member)


def _second_round(spec, result_members):
    members = {
        m: MemberSubscriptionAndAssignmentImpl(
            None, None, spec.member_subscription(m).subscribed_topic_ids, a.partitions
        )
        for m, a in result_members.items()
    }
    return GroupSpecImpl(members, spec.subscription_type(), inverted(members))


@SETTINGS
@given(groups(homogeneous=True))
def test_homogeneous_bulk_read_equals_per_member_read(group):
    spec, counts = group
    whole, by_member = _both_reads(spec, counts)
    assert whole == by_member
    again = _second_round(spec, UniformAssignor().assign(spec, describer(counts)).members)
    whole, by_member = _both_reads(again, counts)
    assert whole == by_member


@SETTINGS
@given(groups(homogeneous=False))
def test_heterogeneous_bulk_read_equals_per_member_read(group):
    spec, counts = group
    whole, by_member = _both_reads(spec, counts)
    assert whole == by_member


@SETTINGS
@given(groups(homogeneous=True), groups(homogeneous=False))
def test_range_bulk_read_equals_per_member_read(homogeneous, heterogeneous):
    for spec, counts in (homogeneous, heterogeneous):
        whole, by_member = _both_reads(spec, counts, RangeAssignor)
        assert whole == by_member


def test_a_partition_added_back_after_its_removal_is_present():
    s = IntHashSet(8)
    s.add_runs([range(3, 10, 2)])
    s.remove(9)
    s.add_run(range(9, 10))
    assert list(s) == [9, 3, 5, 7] and 9 in s and len(s) == 4


@SETTINGS
@given(groups(homogeneous=False), st.booleans())
def test_heterogeneous_revoke_matches_topic_ids_by_value(group, gone):
    """The revoke phase finds topics by object identity first: a previous assignment holding
    equal Uuid objects of its own (as after a record round trip) gives the same result, in the
    same order; one that also holds a topic nobody subscribes to any more gives the same
    partitions (its maps are deep copies then, whose order may differ, as in Kafka)."""
    spec, counts = group
    extra = {topic_id_for("gone"): frozenset({0})} if gone else {}
    copies = {
        m: MemberSubscriptionAndAssignmentImpl(
            None,
            None,
            spec.member_subscription(m).subscribed_topic_ids,
            {
                **{
                    Uuid(t.most_significant_bits, t.least_significant_bits): ps
                    for t, ps in spec.member_assignment(m).partitions.items()
                },
                **extra,
            },
        )
        for m in spec.member_ids()
    }
    copied = GroupSpecImpl(copies, spec.subscription_type(), spec.inverted_member_assignment)
    ours = _ordered(UniformAssignor().assign(copied, describer(counts)).members.items())
    theirs = _ordered(UniformAssignor().assign(spec, describer(counts)).members.items())
    if gone:
        ours = [(m, sorted((t, sorted(ps)) for t, ps in a)) for m, a in ours]
        theirs = [(m, sorted((t, sorted(ps)) for t, ps in a)) for m, a in theirs]
    assert ours == theirs


deferred_steps = st.lists(
    st.tuples(
        st.integers(0, 3),  # 0 add, 1 put_new, 2 remove_topic, 3 remove_partition
        st.integers(0, 3),  # topic
        st.lists(st.integers(0, 40), min_size=1, max_size=6, unique=True),
        st.sampled_from([1, 2, 16]),
    ),
    max_size=8,
)
deferred_bases = st.dictionaries(
    st.integers(0, 3), st.lists(st.integers(0, 40), max_size=6, unique=True), max_size=3
)


@SETTINGS
@given(deferred_bases, deferred_steps)
def test_partition_sets_equal_the_built_map_read_as_frozensets(base, steps):
    """``DeferredTopicMap.partition_sets`` (the sets replayed without the map when one topic is
    left) gives what reading the built map gives: same topics in the same order, each
    frozenset filled in its set's Java order (so it iterates the same way)."""

    def made() -> DeferredTopicMap:
        deferred = DeferredTopicMap({TOPIC_IDS[t]: OrderedPartitions(ps) for t, ps in base.items()})
        present = {t: set(ps) for t, ps in base.items()}
        for kind, t, partitions, capacity in steps:
            topic = TOPIC_IDS[t]
            if kind == 0:
                fresh = [p for p in partitions if p not in present.get(t, ())]
                if fresh:
                    deferred.add(topic, capacity, [range(p, p + 1) for p in fresh], len(fresh))
                    present.setdefault(t, set()).update(fresh)
            elif kind == 1:
                deferred.put_new(topic, capacity, [range(p, p + 1) for p in partitions])
                present[t] = set(partitions)
            elif kind == 2:
                deferred.remove_topic(topic)
                present.pop(t, None)
            elif present.get(t):
                gone = min(present[t])
                deferred.remove_partition(topic, gone)
                present[t].discard(gone)
                if not present[t]:
                    del present[t]
        return deferred

    ours = made().partition_sets()
    theirs = {t: frozenset(ps) for t, ps in made().items() if ps}
    assert [(t, list(ps)) for t, ps in ours.items()] == [(t, list(ps)) for t, ps in theirs.items()]


@SETTINGS
@given(groups(homogeneous=True), st.booleans())
def test_partition_maps_are_the_maps_the_members_read(group, one_first):
    """``LazyMembers.partition_maps`` hands over every member's map in member order, the very
    objects the assignments read later hold (a changed member's recorded steps are not
    recorded twice), whether or not a member was read before."""
    spec, counts = group
    again = _second_round(spec, UniformAssignor().assign(spec, describer(counts)).members)
    for round_spec in (spec, again):
        members = UniformAssignor().assign(round_spec, describer(counts)).members
        expected = _ordered(UniformAssignor().assign(round_spec, describer(counts)).members.items())
        ids = list(members)
        if one_first and ids:
            members[ids[-1]].partitions.items()
        maps = members.partition_maps()  # type: ignore[attr-defined]
        assert list(members.member_ids()) == ids  # type: ignore[attr-defined]
        assert all(a.partitions is m for a, m in zip(members.values(), maps, strict=True))
        assert _ordered(members.items()) == expected


@SETTINGS
@given(groups(homogeneous=False), st.sampled_from(["values", "items", "one"]))
def test_values_items_and_lookups_give_the_same_objects(group, first_read):
    """``values()`` (a list, no dict made), ``items()`` and ``members[id]`` hand out the same
    assignment objects in member order, whichever is read first."""
    spec, counts = group
    members = UniformAssignor().assign(spec, describer(counts)).members
    ids = list(members)
    if first_read == "one" and ids:
        picked = members[ids[0]]
    values = members.values()
    assert isinstance(values, ValuesView)
    assert len(values) == len(ids)
    if first_read == "items":
        assert [m for m, _ in members.items()] == ids
    assert all(members[m] is a for m, a in zip(ids, values, strict=True))
    assert all(a is b for (_, a), b in zip(members.items(), values, strict=True))
    if first_read == "one" and ids:
        assert values[0] is picked  # type: ignore[index]


@SETTINGS
@given(groups(homogeneous=True))
def test_maps_without_a_summary_are_walked(group):
    """A previous map that carries no summary (a heterogeneous result's, or a plain dict) is
    walked as the Java builder walks every map: the same assignment, in the same order, as
    from the same partitions held in maps that carry one."""
    spec, counts = group
    first = UniformAssignor().assign(spec, describer(counts)).members
    with_summary = _second_round(spec, first)
    plain = GroupSpecImpl(
        {
            m: MemberSubscriptionAndAssignmentImpl(
                None, None, s.subscribed_topic_ids, dict(s.partitions.items())
            )
            for m, s in with_summary.members.items()
        },
        with_summary.subscription_type(),
        with_summary.inverted_member_assignment,
    )
    assert _ordered(
        UniformAssignor().assign(with_summary, describer(counts)).members.items()
    ) == _ordered(UniformAssignor().assign(plain, describer(counts)).members.items())


def test_a_subscription_is_kept_while_its_content_is_the_same():
    """``subscription_of`` computes a subscription's topic order once: the same ids object, or
    an equal one, gets the kept result; an ids object whose content changed gets a new one."""
    ids = dict.fromkeys(TOPIC_IDS[:3])
    view = ids.keys()
    first = uniform_homogeneous.subscription_of(view)
    assert uniform_homogeneous.subscription_of(view) is first
    assert uniform_homogeneous.subscription_of(dict.fromkeys(TOPIC_IDS[:3]).keys()) is first
    ids[TOPIC_IDS[5]] = None  # the same view object, another content
    changed = uniform_homogeneous.subscription_of(view)
    assert changed.ids == [*TOPIC_IDS[:3], TOPIC_IDS[5]]
    assert changed.subscribed == frozenset(changed.ids)
    assert changed.order == uuid_order(changed.ids, copy_capacity(4))


_POOL = [topic_id_for(f"t{i}") for i in range(5)]
#: a subscription: topics from the pool by index; a negative index is an equal copy of that
#: topic (another object), so that grouping by object ids and by value differ
subscription_rows = st.lists(
    st.lists(st.integers(-5, 4), max_size=4, unique_by=lambda i: i if i >= 0 else -1 - i),
    min_size=1,
    max_size=12,
)


def _copy(topic_id: Uuid) -> Uuid:
    return Uuid(topic_id.most_significant_bits, topic_id.least_significant_bits)


@SETTINGS
@given(subscription_rows, st.sampled_from([tuple, list, "keys"]))
def test_group_subscriptions_groups_equal_sequences(rows, kind):
    """Every member's group holds its own sequence of topics (by value, in order), groups are
    numbered by their first member, and members with the very same topic objects in the same
    order share a group: the one-comparison path and the one-by-one path agree with that."""
    topics = [[_POOL[i] if i >= 0 else _copy(_POOL[-1 - i]) for i in r] for r in rows]
    subscriptions = [
        dict.fromkeys(t).keys() if kind == "keys" else kind(t)  # type: ignore[operator]
        for t in topics
    ]
    member_group, firsts, members = group_subscriptions(subscriptions)
    assert firsts == sorted(firsts)
    for g, (first, positions) in enumerate(zip(firsts, members, strict=True)):
        assert positions.tolist() == sorted(positions.tolist())
        assert positions[0] == first
        for i in positions.tolist():
            assert member_group[i] == g
            assert list(subscriptions[i]) == list(subscriptions[first])
    by_objects: dict[tuple[int, ...], int] = {}
    for i, t in enumerate(topics):
        assert member_group[i] == member_group[by_objects.setdefault(tuple(map(id, t)), i)]
