"""Deliberately naive, line-by-line ports of Kafka's range and round-robin loops.

The production assignors take shortcuts (contiguous slices, strided slices, shared subscriber
lists); these step through partitions one at a time exactly as the Java code does, so a
differential test can check that the shortcuts change nothing, list order included.
"""

from __future__ import annotations

from collections.abc import Mapping

from assignors.api import Subscription, TopicPartition


def member_key(member: str, sub: Subscription):
    """MemberInfo.compareTo for BMP strings: static by instance id first, then member id."""
    if sub.group_instance_id is None:
        return (1, member, "")
    return (0, sub.group_instance_id, member)


def literal_range(
    counts: Mapping[str, int], subs: Mapping[str, Subscription], topic_order: list[str]
) -> dict[str, list[TopicPartition]]:
    """RangeAssignor without racks: per topic, a quota counter and an 'extra slots left' counter."""
    assignment: dict[str, list[TopicPartition]] = {m: [] for m in subs}
    for topic in topic_order:
        count = counts.get(topic, 0)
        if count <= 0:
            continue
        members = sorted(
            (m for m in subs if topic in subs[m].topics), key=lambda m: member_key(m, subs[m])
        )
        if not members:
            continue
        per, extra_left = count // len(members), count % len(members)
        unassigned = [TopicPartition(topic, p) for p in range(count)]
        for m in members:
            if not unassigned:
                break
            limit = max(0, per + (1 if extra_left > 0 else 0))
            taken, unassigned = unassigned[:limit], unassigned[limit:]
            if not taken:
                continue
            assignment[m].extend(taken)
            if len(taken) > per:
                extra_left -= 1
    return assignment


def literal_roundrobin(
    counts: Mapping[str, int], subs: Mapping[str, Subscription]
) -> dict[str, list[TopicPartition]]:
    """RoundRobinAssignor: a circular iterator that skips non-subscribers, one partition at a time."""
    assignment: dict[str, list[TopicPartition]] = {m: [] for m in subs}
    members = sorted(subs, key=lambda m: member_key(m, subs[m]))
    topics = sorted({t for s in subs.values() for t in s.topics})
    cursor = 0
    for topic in topics:
        for p in range(counts.get(topic, 0)):
            while topic not in subs[members[cursor]].topics:
                cursor = (cursor + 1) % len(members)
            assignment[members[cursor]].append(TopicPartition(topic, p))
            cursor = (cursor + 1) % len(members)
    return assignment
