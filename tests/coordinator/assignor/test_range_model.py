"""The server-side range assignor against a literal port of Kafka's loops (Hypothesis, bounded).

``kafka_range`` below is RangeAssignor.assignHomogeneousGroup / assignHeterogeneousGroup at
1eb7644 written out member by member and topic by topic (``TopicMetadata.maybeComputeQuota``,
``addPartitionsToAssignment`` with its ``nextRange`` and ``extraPartitions--``), each member's map a
literal bucket-array ``java.util.HashMap`` (``JavaHashMapSim``) pre-sized as Kafka does. groupsim's
assignor computes the same thing with per-subscription tables and numpy; both reads of its result
(the whole result at once, and member by member) must give the model's maps, entry order and
partition order included.

The groups draw what the grouping of members by subscription must get right: members sharing one
subscription object, equal subscriptions in separate objects (frozensets and ``dict`` key views),
equal sets iterated in different orders, subscriptions that share their first topic but not the
rest, empty subscriptions, topic ids whose hash codes collide (same bucket: insertion order
decides), static members, topics of 0 partitions and groups larger than any topic's partitions.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coordinator.assignor import (
    GroupSpecImpl,
    MemberSubscriptionAndAssignmentImpl,
    SubscriptionType,
)
from coordinator.assignor.range import RangeAssignor
from coordinator.assignor.sets import RangeSet, uuid_hashcode
from coordinator.java import java_string_key, spread
from coordinator.kafka_uuid import Uuid, topic_id_for

from .helpers import SETTINGS, describer
from .test_properties import JavaHashMapSim

# Uuid(a, b) and Uuid(b, a) have the same hashCode ((msb ^ lsb) folded): same bucket.
TOPICS = [
    topic_id_for("m0"),
    topic_id_for("m1"),
    topic_id_for("m2"),
    Uuid(3, 9),
    Uuid(9, 3),
    Uuid(5, 17),
    Uuid(17, 5),
    topic_id_for("m3"),
]

Entries = list[tuple[Uuid, list[int]]]


def kafka_range(spec: GroupSpecImpl, counts: Mapping[Uuid, int]) -> dict[str, Entries]:
    """RangeAssignor.assign, literally (the model the assignor is checked against)."""

    def sort_key(m: str) -> tuple[int, bytes]:
        instance = spec.member_subscription(m).instance_id
        return (0, java_string_key(instance)) if instance is not None else (1, java_string_key(m))

    member_ids = sorted(spec.member_ids(), key=sort_key)  # List.sort: stable, like sorted
    homogeneous = spec.subscription_type() is SubscriptionType.HOMOGENEOUS
    # TopicMetadata: [numPartitions, numMembers, minQuota, extraPartitions, nextRange]
    topics: dict[Uuid, list[int]] = {}
    if homogeneous:
        for t in spec.member_subscription(member_ids[0]).subscribed_topic_ids:
            topics[t] = [counts[t], len(member_ids), -1, -1, 0]
    else:
        for m in member_ids:
            for t in spec.member_subscription(m).subscribed_topic_ids:
                topics.setdefault(t, [counts[t], 0, -1, -1, 0])[1] += 1
    result: dict[str, Entries] = {}
    for m in member_ids:
        subscribed = (
            list(topics) if homogeneous else list(spec.member_subscription(m).subscribed_topic_ids)
        )
        sim = JavaHashMapSim(int(len(subscribed) / 0.75 + 1))
        ranges = {}
        for t in subscribed:
            meta = topics[t]
            if meta[2] == -1:  # maybeComputeQuota
                meta[2], meta[3] = divmod(meta[0], meta[1])
            start, quota = meta[4], meta[2]
            if meta[3] > 0:
                quota += 1
                meta[3] -= 1
            end = min(start + quota, meta[0])
            meta[4] = end
            if start < end:
                sim.put(t, spread(uuid_hashcode(t)))
                ranges[t] = list(range(start, end))
        result[m] = [(t, ranges[t]) for t in sim.order()]
    return result


@st.composite
def range_groups(draw, homogeneous: bool) -> tuple[GroupSpecImpl, dict[Uuid, int]]:
    counts = {t: draw(st.integers(0, 30)) for t in TOPICS}
    pool = draw(
        st.lists(
            st.lists(st.sampled_from(TOPICS), unique=True, max_size=len(TOPICS)),
            min_size=1,
            max_size=1 if homogeneous else 4,
        )
    )
    shared = [dict.fromkeys(p).keys() for p in pool]
    n_members = draw(st.integers(1, 40))
    members = {}
    for i in range(n_members):
        which = draw(st.integers(0, len(pool) - 1))
        topics = pool[which]
        form = draw(st.sampled_from(["shared", "keys", "frozenset", "permuted"]))
        if form == "shared":
            subscribed = shared[which]
        elif form == "keys":
            subscribed = dict.fromkeys(topics).keys()
        elif form == "frozenset":
            subscribed = frozenset(topics)
        else:
            subscribed = dict.fromkeys(draw(st.permutations(topics))).keys()
        instance = draw(st.sampled_from([None, None, f"i{i % 7}", f"j{n_members - i}"]))
        members[f"m{draw(st.integers(0, 99))}-{i}"] = MemberSubscriptionAndAssignmentImpl(
            None, instance, subscribed
        )
    kind = SubscriptionType.HOMOGENEOUS if homogeneous else SubscriptionType.HETEROGENEOUS
    return GroupSpecImpl(members, subscription_type=kind), counts


def _reads(spec: GroupSpecImpl, counts: Mapping[Uuid, int]) -> tuple[dict, dict]:
    whole = RangeAssignor().assign(spec, describer(counts)).members
    one_by_one = RangeAssignor().assign(spec, describer(counts)).members
    by_member = {m: one_by_one[m] for m in reversed(list(spec.member_ids()))}
    for sets in (whole.values(), by_member.values()):
        for assignment in sets:
            assert all(isinstance(ps, RangeSet) for ps in assignment.partitions.values())

    def entries(members: Mapping) -> dict[str, Entries]:
        return {m: [(t, list(ps)) for t, ps in a.partitions.items()] for m, a in members.items()}

    return entries(whole), entries(by_member)


@pytest.mark.parametrize("homogeneous", [False, True], ids=["heterogeneous", "homogeneous"])
@SETTINGS
@given(data=st.data())
def test_range_is_kafkas(homogeneous, data):
    spec, counts = data.draw(range_groups(homogeneous=homogeneous))
    expected = kafka_range(spec, counts)
    whole, by_member = _reads(spec, counts)
    assert whole == expected
    assert by_member == expected
