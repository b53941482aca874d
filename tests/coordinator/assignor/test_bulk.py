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
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coordinator.assignor import (
    GroupSpecImpl,
    MemberSubscriptionAndAssignmentImpl,
    uniform_heterogeneous,
    uniform_homogeneous,
)
from coordinator.assignor.bulk import build_fresh_maps, fresh_map_capacity, uuid_spread_hashes
from coordinator.assignor.range import RangeAssignor
from coordinator.assignor.sets import DeferredTopicMap, IntHashSet, OrderedPartitions
from coordinator.assignor.spec import MemberAssignmentImpl, member_assignments
from coordinator.assignor.uniform import UniformAssignor
from coordinator.kafka_uuid import Uuid, topic_id_for

from .helpers import describer, inverted
from .test_properties import JavaHashMapSim, groups


@pytest.fixture(autouse=True, scope="module")
def _bulk_for_every_batch():
    """The builders take the per-member path for batches below SMALL_BATCH members; these
    groups are small, so the bulk path is forced here (both paths give the same maps)."""
    saved = uniform_homogeneous.SMALL_BATCH, uniform_heterogeneous.SMALL_BATCH
    uniform_homogeneous.SMALL_BATCH = uniform_heterogeneous.SMALL_BATCH = 0
    yield
    uniform_homogeneous.SMALL_BATCH, uniform_heterogeneous.SMALL_BATCH = saved


SETTINGS = settings(
    max_examples=int(os.environ.get("GROUPSIM_HYPOTHESIS_EXAMPLES", "40")), deadline=None
)
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
