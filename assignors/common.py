"""Pieces every built-in assignor shares: input checks, existing topics, Kafka's member order.

These mirror ``AbstractPartitionAssignor``: a topic that is unknown to the metadata, or has no
partitions, is left out of the assignment without an error, and every member appears in the
result, possibly with an empty list.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from operator import attrgetter
from typing import NamedTuple

from assignors.api import ClusterMetadata, Subscription
from coordinator.java import java_string_key, needs_utf16_order

_TOPICS = attrgetter("topics")


class AssignmentInputError(ValueError):
    """The input to ``assign`` is malformed (wrong types, negative partition counts, ...)."""


class GroupTopics(NamedTuple):
    """The group's subscriptions folded by topic list.

    Large groups usually share a handful of distinct topic lists (often one), so work per distinct
    list instead of per member keeps 2000 members x 500 topics from costing a million steps.
    """

    lists: dict[tuple[str, ...], list[str]]  # distinct topic list -> its members, input order
    topics: list[str]  # every subscribed topic once, first-seen order


def group_topics(subscriptions: Mapping[str, Subscription]) -> GroupTopics:
    topic_lists = list(map(_TOPICS, subscriptions.values()))
    if topic_lists and topic_lists.count(topic_lists[0]) == len(topic_lists):
        # everyone on one topic list, the usual group: C-level passes (equal tuples of the
        # same strings compare item by identity)
        lists = {topic_lists[0]: list(subscriptions)}
        return GroupTopics(lists, list(dict.fromkeys(topic_lists[0])))
    lists = {}
    last: tuple[str, ...] | None = None
    last_members: list[str] = []
    for member, topics in zip(subscriptions, topic_lists, strict=True):
        # members in a row often share a list: comparing to the last one (item identity first)
        # is cheaper than hashing a long tuple again
        if topics != last:
            last = topics
            last_members = lists.setdefault(topics, [])
        last_members.append(member)
    return GroupTopics(lists, list(dict.fromkeys(chain.from_iterable(lists))))


def check_inputs(
    cluster: ClusterMetadata, subscriptions: Mapping[str, Subscription]
) -> GroupTopics:
    """Reject malformed input with a message naming the culprit; return the folded topic lists.

    Topic names are checked once per distinct name, however many members share them.
    """
    if not isinstance(subscriptions, Mapping):
        raise AssignmentInputError(
            f"subscriptions must map member id -> Subscription, got {type(subscriptions).__name__}"
        )
    # C-level passes over the types (joining the ids fails on a non-string); the loop that
    # names the culprit runs only on failure.
    try:
        "".join(subscriptions)
        ids_ok = True
    except TypeError:
        ids_ok = False
    if not ids_ok or set(map(type, subscriptions.values())) - {Subscription}:
        for member_id, sub in subscriptions.items():
            if not isinstance(member_id, str):
                raise AssignmentInputError(f"member ids must be strings, got {member_id!r}")
            if not isinstance(sub, Subscription):
                raise AssignmentInputError(
                    f"member {member_id!r}: expected a Subscription, got {type(sub).__name__}"
                )
    for topic, count in cluster.partitions_per_topic.items():
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise AssignmentInputError(
                f"topic {topic!r}: partition count must be a non-negative integer, got {count!r}"
            )
    try:
        group = group_topics(subscriptions)
    except TypeError as exc:  # an unhashable "topic"
        raise AssignmentInputError(f"topic names must be strings: {exc}") from exc
    for topic in group.topics if set(map(type, group.topics)) - {str} else ():
        if not isinstance(topic, str):
            owner = next(m for m, s in subscriptions.items() if topic in s.topics)
            raise AssignmentInputError(
                f"member {owner!r}: topic names must be strings, got {topic!r}"
            )
    return group


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
    return group_topics(subscriptions).topics


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
    if not instance_ids and not needs_utf16_order(ids):
        return sorted(ids)  # all dynamic: member id order (ids are distinct keys)
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


def subscribers_per_topic(
    group: GroupTopics, ordered: Sequence[str], topics: Iterable[str]
) -> dict[str, list[str]]:
    """Each of ``topics``' subscribers, in the order of ``ordered`` (all member ids, sorted).

    Members with identical topic lists form one block, so 2000 members x 500 identical topics
    costs a few hundred dictionary operations, not a million. Topics with the same blocks share
    one list object, which lets assignors treat such topics together.
    """
    rank = {m: i for i, m in enumerate(ordered)}
    block_lists = [sorted(members, key=rank.__getitem__) for members in group.lists.values()]
    blocks_of_topic: dict[str, list[int]] = {t: [] for t in topics}
    for b, topic_list in enumerate(group.lists):
        for t in dict.fromkeys(topic_list):
            if t in blocks_of_topic:
                blocks_of_topic[t].append(b)
    shared: dict[tuple[int, ...], list[str]] = {}
    out: dict[str, list[str]] = {}
    for t, bs in blocks_of_topic.items():
        key = tuple(bs)
        members = shared.get(key)
        if members is None:
            if len(bs) == 1:
                members = block_lists[bs[0]]
            else:
                members = sorted(
                    chain.from_iterable(block_lists[b] for b in bs), key=rank.__getitem__
                )
            shared[key] = members
        out[t] = members
    return out
