"""Kafka's CurrentAssignmentBuilderTest (group-coordinator, modern/consumer, at 1eb7644), ported
to :func:`coordinator.current_assignment.compute_current_assignment`.

Every test of the Java class is here; each names its original. Kafka's random topic ids are
fixed ids here (the builder's result does not depend on them).
"""

from __future__ import annotations

import pytest

from coordinator.consumer_group import ConsumerGroupMember, MemberState
from coordinator.current_assignment import compute_current_assignment
from coordinator.errors import ApiError, Errors
from coordinator.kafka_uuid import topic_id_for

T1 = topic_id_for("topic1")
T2 = topic_id_for("topic2")


def assignment(t1: tuple[int, ...], t2: tuple[int, ...]) -> dict:
    return {t: frozenset(ps) for t, ps in ((T1, t1), (T2, t2)) if ps}


def member(state, epoch, previous, assigned, revoking=((), ())) -> ConsumerGroupMember:
    return ConsumerGroupMember(
        "member",
        member_epoch=epoch,
        previous_member_epoch=previous,
        state=state,
        assigned_partitions=assignment(*assigned),
        partitions_pending_revocation=assignment(*revoking),
    )


def build(m, target_epoch, target, epoch_of, owned=None):
    return compute_current_assignment(m, target_epoch, assignment(*target), epoch_of, owned)


S, UNREV, UNREL = (
    MemberState.STABLE,
    MemberState.UNREVOKED_PARTITIONS,
    MemberState.UNRELEASED_PARTITIONS,
)


def test_stable_to_stable():
    """CurrentAssignmentBuilderTest.testStableToStable"""
    m = member(S, 10, 10, ((1, 2, 3), (4, 5, 6)))
    got = build(m, 11, ((1, 2, 3), (4, 5, 6)), lambda t, p: 10)
    assert got == member(S, 11, 10, ((1, 2, 3), (4, 5, 6)))


def test_stable_to_stable_with_new_partitions():
    """CurrentAssignmentBuilderTest.testStableToStableWithNewPartitions"""
    m = member(S, 10, 10, ((1, 2, 3), (4, 5, 6)))
    got = build(m, 11, ((1, 2, 3, 4), (4, 5, 6, 7)), lambda t, p: -1)
    assert got == member(S, 11, 10, ((1, 2, 3, 4), (4, 5, 6, 7)))


def test_stable_to_unrevoked_partitions():
    """CurrentAssignmentBuilderTest.testStableToUnrevokedPartitions"""
    m = member(S, 10, 10, ((1, 2, 3), (4, 5, 6)))
    got = build(m, 11, ((2, 3, 4), (5, 6, 7)), lambda t, p: -1)
    assert got == member(UNREV, 10, 10, ((2, 3), (5, 6)), ((1,), (4,)))


def test_stable_to_unreleased_partitions():
    """CurrentAssignmentBuilderTest.testStableToUnreleasedPartitions"""
    m = member(S, 10, 10, ((1, 2, 3), (4, 5, 6)))
    got = build(m, 11, ((1, 2, 3, 4), (4, 5, 6, 7)), lambda t, p: 10)
    assert got == member(UNREL, 11, 10, ((1, 2, 3), (4, 5, 6)))


def test_stable_to_unreleased_partitions_with_owned_partitions_not_having_revoked_partitions():
    """CurrentAssignmentBuilderTest.testStableToUnreleasedPartitionsWithOwnedPartitionsNotHavingRevokedPartitions"""
    m = member(S, 10, 10, ((1, 2, 3), (4, 5, 6)))
    got = build(m, 11, ((1, 2, 3), (4, 5, 7)), lambda t, p: 10 if t == T2 else -1, owned=[])
    assert got == member(UNREL, 11, 10, ((1, 2, 3), (4, 5)))


def test_unrevoked_partitions_to_stable():
    """CurrentAssignmentBuilderTest.testUnrevokedPartitionsToStable"""
    m = member(UNREV, 10, 10, ((2, 3), (5, 6)), ((1,), (4,)))
    owned = [(T1, (2, 3)), (T2, (5, 6))]
    got = build(m, 11, ((2, 3), (5, 6)), lambda t, p: -1, owned)
    assert got == member(S, 11, 10, ((2, 3), (5, 6)))


def test_remains_in_unrevoked_partitions():
    """CurrentAssignmentBuilderTest.testRemainsInUnrevokedPartitions"""
    m = member(UNREV, 10, 10, ((2, 3), (5, 6)), ((1,), (4,)))
    target = ((3,), (6,))
    assert build(m, 12, target, lambda t, p: -1, None) == m
    assert build(m, 12, target, lambda t, p: -1, [(T1, (1, 2, 3)), (T2, (5, 6))]) == m
    assert build(m, 12, target, lambda t, p: -1, [(T1, (2, 3)), (T2, (4, 5, 6))]) == m


def test_unrevoked_partitions_to_unrevoked_partitions():
    """CurrentAssignmentBuilderTest.testUnrevokedPartitionsToUnrevokedPartitions"""
    m = member(UNREV, 10, 10, ((2, 3), (5, 6)), ((1,), (4,)))
    got = build(m, 12, ((3,), (6,)), lambda t, p: -1, [(T1, (2, 3)), (T2, (5, 6))])
    assert got == member(UNREV, 11, 10, ((3,), (6,)), ((2,), (5,)))


def test_unrevoked_partitions_to_unreleased_partitions():
    """CurrentAssignmentBuilderTest.testUnrevokedPartitionsToUnreleasedPartitions"""
    m = member(UNREV, 11, 10, ((2, 3), (5, 6)))
    got = build(m, 11, ((2, 3, 4), (5, 6, 7)), lambda t, p: 10, [(T1, (2, 3)), (T2, (5, 6))])
    assert got == member(UNREL, 11, 11, ((2, 3), (5, 6)))


def test_unreleased_partitions_to_stable():
    """CurrentAssignmentBuilderTest.testUnreleasedPartitionsToStable"""
    m = member(UNREL, 11, 11, ((2, 3), (5, 6)))
    got = build(m, 12, ((2, 3), (5, 6)), lambda t, p: 10)
    assert got == member(S, 12, 11, ((2, 3), (5, 6)))


def test_unreleased_partitions_to_stable_with_new_partitions():
    """CurrentAssignmentBuilderTest.testUnreleasedPartitionsToStableWithNewPartitions"""
    m = member(UNREL, 11, 11, ((2, 3), (5, 6)))
    got = build(m, 11, ((2, 3, 4), (5, 6, 7)), lambda t, p: -1)
    assert got == member(S, 11, 11, ((2, 3, 4), (5, 6, 7)))


def test_unreleased_partitions_to_unreleased_partitions():
    """CurrentAssignmentBuilderTest.testUnreleasedPartitionsToUnreleasedPartitions"""
    m = member(UNREL, 11, 11, ((2, 3), (5, 6)))
    assert build(m, 11, ((2, 3, 4), (5, 6, 7)), lambda t, p: 10) == m


def test_unreleased_partitions_to_unrevoked_partitions():
    """CurrentAssignmentBuilderTest.testUnreleasedPartitionsToUnrevokedPartitions"""
    m = member(UNREL, 11, 11, ((2, 3), (5, 6)))
    got = build(m, 12, ((3,), (6,)), lambda t, p: 10)
    assert got == member(UNREV, 11, 11, ((3,), (6,)), ((2,), (5,)))


def test_unknown_state():
    """CurrentAssignmentBuilderTest.testUnknownState"""
    m = member(MemberState.UNKNOWN, 11, 11, ((3,), (6,)), ((2,), (5,)))
    with pytest.raises(ApiError) as fenced:
        build(m, 12, ((3,), (6,)), lambda t, p: 10)
    assert fenced.value.error == Errors.FENCED_MEMBER_EPOCH
    got = build(m, 12, ((3,), (6,)), lambda t, p: 11, owned=[])
    assert got == member(S, 12, 11, ((3,), (6,)))
