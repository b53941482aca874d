"""Pieces every built-in assignor shares: input checks, existing topics, Kafka's member order.

These mirror ``AbstractPartitionAssignor``: a topic that is unknown to the metadata, or has no
partitions, is left out of the assignment without an error, and every member appears in the
result, possibly with an empty list.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from assignors.api import ClusterMetadata, Subscription
from assignors.java_order import java_string_key, needs_utf16_order


class AssignmentInputError(ValueError):
    """The input to ``assign`` is malformed (wrong types, negative partition counts, ...)."""


def check_inputs(cluster: ClusterMetadata, subscriptions: Mapping[str, Subscription]) -> None:
    """Reject malformed input with a message that names the culprit, instead of a traceback."""
    if not isinstance(subscriptions, Mapping):
        raise AssignmentInputError(
            f"subscriptions must map member id -> Subscription, got {type(subscriptions).__name__}"
        )
    for member_id, sub in subscriptions.items():
        if not isinstance(member_id, str):
            raise AssignmentInputError(f"member ids must be strings, got {member_id!r}")
        if not isinstance(sub, Subscription):
            raise AssignmentInputError(
                f"member {member_id!r}: expected a Subscription, got {type(sub).__name__}"
            )
        for topic in sub.topics:
            if not isinstance(topic, str):
                raise AssignmentInputError(
                    f"member {member_id!r}: topic names must be strings, got {topic!r}"
                )
    for topic, count in cluster.partitions_per_topic.items():
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise AssignmentInputError(
                f"topic {topic!r}: partition count must be a non-negative integer, got {count!r}"
            )


def existing_partition_counts(cluster: ClusterMetadata, topics: Iterable[str]) -> dict[str, int]:
    """``{topic: count}`` for the given topics that exist with at least one partition."""
    counts = cluster.partitions_per_topic
    out: dict[str, int] = {}
    for topic in topics:
        if topic not in out:
            n = counts.get(topic, 0)
            if n > 0:
                out[topic] = n
    return out


def subscribed_topics(subscriptions: Mapping[str, Subscription]) -> list[str]:
    """Every topic some member subscribes to, each once, in first-seen order."""
    seen: dict[str, None] = {}
    for sub in subscriptions.values():
        seen.update(dict.fromkeys(sub.topics))
    return list(seen)


def member_info_order(subscriptions: Mapping[str, Subscription]) -> list[str]:
    """Member ids in Kafka's ``MemberInfo.compareTo`` order (range and roundrobin).

    Static members (with a ``group.instance.id``) come first, ordered by instance id; then dynamic
    members by member id. Both comparisons are Java ``String.compareTo`` (UTF-16 code units).
    Two static members with the same instance id compare equal in Java and keep their relative
    input order there only by accident of the sort; we break that tie by member id.
    """
    ids = list(subscriptions)
    instance_ids = [
        s.group_instance_id for s in subscriptions.values() if s.group_instance_id is not None
    ]
    if needs_utf16_order(ids) or needs_utf16_order(instance_ids):

        def key_utf16(m: str) -> tuple[int, bytes, bytes]:
            gid = subscriptions[m].group_instance_id
            if gid is None:
                return (1, java_string_key(m), b"")
            return (0, java_string_key(gid), java_string_key(m))

        return sorted(ids, key=key_utf16)

    def key(m: str) -> tuple[int, str, str]:
        gid = subscriptions[m].group_instance_id
        return (1, m, "") if gid is None else (0, gid, m)

    return sorted(ids, key=key)
