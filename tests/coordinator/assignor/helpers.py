"""Building blocks for the server-side assignor ports (Kafka's AssignmentTestUtil, in Python)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from hypothesis import settings

from coordinator.assignor import (
    GroupAssignment,
    GroupSpecImpl,
    MemberSubscriptionAndAssignmentImpl,
    SubscribedTopicDescriberImpl,
    SubscriptionType,
    TopicMetadata,
)
from coordinator.assignor.ordering import assignment_from_record
from coordinator.kafka_uuid import Uuid, topic_id_for

#: the property tests' bound (GROUPSIM_HYPOTHESIS_EXAMPLES raises it for a long run)
SETTINGS = settings(
    max_examples=int(os.environ.get("GROUPSIM_HYPOTHESIS_EXAMPLES", "40")), deadline=None
)

HOMOGENEOUS = SubscriptionType.HOMOGENEOUS
HETEROGENEOUS = SubscriptionType.HETEROGENEOUS

# Kafka's tests draw Uuid.randomUuid(); fixed ids here (each test's outcome is order-free).
TOPIC1, TOPIC2, TOPIC3 = (topic_id_for(f"topic{i}") for i in (1, 2, 3))
NAMES = {TOPIC1: "topic1", TOPIC2: "topic2", TOPIC3: "topic3"}

Plain = dict[Uuid, frozenset[int]]


def mk_assignment(*entries: tuple[Uuid, Iterable[int]]) -> Mapping[Uuid, frozenset[int]]:
    """AssignmentTestUtil.mkAssignment(mkTopicAssignment(...), ...), as Kafka's Assignment would
    hold it after a record round trip (Java HashSet/HashMap order)."""
    return assignment_from_record((t, list(ps)) for t, ps in entries)  # type: ignore[return-value]


def member(
    topics: Iterable[Uuid],
    assignment: Mapping[Uuid, Iterable[int]] | None = None,
    *,
    instance: str | None = None,
    rack: str | None = None,
) -> MemberSubscriptionAndAssignmentImpl:
    partitions = mk_assignment(*(assignment or {}).items())
    return MemberSubscriptionAndAssignmentImpl(rack, instance, frozenset(topics), partitions)


def inverted(members: Mapping[str, MemberSubscriptionAndAssignmentImpl]) -> dict:
    """AssignmentTestUtil.invertedTargetAssignment."""
    result: dict[Uuid, dict[int, str]] = {}
    for member_id, m in members.items():
        for topic_id, partitions in m.partitions.items():
            for p in partitions:
                result.setdefault(topic_id, {})[p] = member_id
    return result


def spec(
    members: Mapping[str, MemberSubscriptionAndAssignmentImpl],
    subscription_type: SubscriptionType = HOMOGENEOUS,
) -> GroupSpecImpl:
    return GroupSpecImpl(
        dict(members),
        subscription_type=subscription_type,
        inverted_member_assignment=inverted(members),
    )


def describer(partitions: Mapping[Uuid, int]) -> SubscribedTopicDescriberImpl:
    return SubscribedTopicDescriberImpl(
        {t: TopicMetadata(t, NAMES.get(t, f"t-{t}"), n) for t, n in partitions.items()}
    )


def plain(result: GroupAssignment) -> dict[str, dict[Uuid, set[int]]]:
    """The result as plain dicts and sets (Java's equals: content, not order)."""
    return {m: {t: set(ps) for t, ps in a.partitions.items()} for m, a in result.members.items()}


def expect(**members: Mapping[Uuid, Iterable[int]]) -> dict[str, dict[Uuid, set[int]]]:
    return {m: {t: set(ps) for t, ps in a.items()} for m, a in members.items()}


def mk_ordered(*entries: tuple[Uuid, Iterable[int]]) -> dict:
    """AssignmentTestUtil.mkOrderedAssignment: a LinkedHashMap of LinkedHashSets (insertion
    order); a dict of dict key views iterates the same way."""
    return {t: dict.fromkeys(ps).keys() for t, ps in entries}


def member_ordered(topics: Iterable[Uuid], ordered: dict) -> MemberSubscriptionAndAssignmentImpl:
    return MemberSubscriptionAndAssignmentImpl(None, None, frozenset(topics), ordered)


def check_validity_and_balance(
    members: Mapping[str, MemberSubscriptionAndAssignmentImpl], result: GroupAssignment
) -> None:
    """OptimizedUniformAssignmentBuilderTest.checkValidityAndBalance: every assigned topic is
    subscribed, no partition twice, sizes differ by at most one."""
    owner: dict[tuple[Uuid, int], str] = {}
    sizes = []
    for member_id, assignment in result.members.items():
        size = 0
        for topic_id, partitions in assignment.partitions.items():
            assert topic_id in members[member_id].subscribed_topic_ids
            for p in partitions:
                assert (topic_id, p) not in owner, (member_id, owner[(topic_id, p)])
                owner[(topic_id, p)] = member_id
            size += len(partitions)
        sizes.append(size)
    if sizes:
        assert max(sizes) - min(sizes) <= 1, sizes
