"""Kafka's server-side RangeAssignor (``coordinator.group.assignor.RangeAssignor`` at 1eb7644).

Members sorted by instance id (static members first) and then member id, each subscribed topic cut
into contiguous ranges: ``numPartitions / numMembers`` each, one extra for the first
``numPartitions % numMembers`` members. Homogeneous groups co-partition; in heterogeneous groups
each topic's quota counts only its subscribers.

Data layout: Kafka hands ranges out member by member (``addPartitionsToAssignment``), so the
``k``-th subscriber of a topic with ``n`` partitions among ``m`` gets ``[k*q + min(k, e), ...)``
with ``q, e = divmod(n, m)``. The assignor computes each member's ordinals ``k`` (one number in a
homogeneous group; a numpy row per subscription in a heterogeneous one) and returns
:class:`RangeAssignment` values that build their ``RangeSet`` map when first read: the work per
member is constant, not per topic. A read of the whole result builds plain dicts for every member
at once.

Order: each member's ``topic id -> RangeSet`` map iterates like Kafka's pre-sized
``HashMap<Uuid, Set<Integer>>`` (topics put in the order of the member's subscribed-topic set);
a RangeSet iterates ascending, as Kafka's does. ``GroupAssignment.members`` follows the sorted
member order (Kafka's is a HashMap that nobody iterates: the coordinator reads it by member id).
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, Mapping, Sequence, ValuesView
from collections.abc import Set as AbstractSet
from itertools import repeat

import numpy as np

from coordinator.assignor.api import (
    GroupAssignment,
    GroupSpec,
    MemberAssignment,
    PartitionAssignorException,
    SubscribedTopicDescriber,
    SubscriptionType,
    TopicPartitions,
)
from coordinator.assignor.bulk import group_subscriptions
from coordinator.assignor.lazy import LazyMembers
from coordinator.assignor.ordering import uuid_order
from coordinator.assignor.sets import RangeSet
from coordinator.assignor.spec import (
    EMPTY_PARTITIONS,
    GroupSpecImpl,
    MemberAssignmentImpl,
)
from coordinator.java import java_sorted, java_string_key, needs_utf16_order, sized_capacity
from coordinator.kafka_uuid import Uuid

RANGE_ASSIGNOR_NAME = "range"
NON_EXISTENT = "Member is subscribed to a non-existent topic"


class _Topics:
    """The topics of one subscription, in the member map's order, with their quotas."""

    __slots__ = ("extra", "ids", "index", "num_partitions", "quota", "template", "uniform")

    def __init__(self, ids: Sequence[Uuid], num_partitions: Sequence[int], members: Sequence[int]):
        self.ids = tuple(ids)
        self.index = {t: i for i, t in enumerate(self.ids)}
        self.num_partitions = list(num_partitions)
        self.quota = [n // m for n, m in zip(num_partitions, members, strict=True)]
        self.extra = [n % m for n, m in zip(num_partitions, members, strict=True)]
        # dict.fromkeys(template, value) copies the keys with their stored hashes: a member's map
        # costs no Uuid.__hash__ call. ``uniform`` is the one (quota, extra) every topic has, if so.
        self.template = dict.fromkeys(self.ids)
        pairs = set(zip(self.quota, self.extra, strict=True))
        self.uniform = next(iter(pairs)) if len(pairs) == 1 else None


class RangeAssignment(Mapping[Uuid, AbstractSet[int]]):
    """One member's ``topic id -> RangeSet`` map, built on first read from its ordinals."""

    __slots__ = ("_map", "_ordinals", "_topics")

    def __init__(self, topics: _Topics, ordinals: int | Sequence[int] | np.ndarray) -> None:
        self._topics = topics
        self._ordinals = ordinals
        self._map: Mapping[Uuid, AbstractSet[int]] | None = None

    def _built(self) -> Mapping[Uuid, AbstractSet[int]]:
        if self._map is None:
            self._map = range_map(self._topics, self._ordinals)
        return self._map

    def __getitem__(self, topic_id: Uuid) -> AbstractSet[int]:
        return self._built()[topic_id]

    def __iter__(self) -> Iterator[Uuid]:
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._built())

    def items(self) -> ItemsView[Uuid, AbstractSet[int]]:
        return self._built().items()

    def values(self) -> ValuesView[AbstractSet[int]]:
        return self._built().values()

    def __repr__(self) -> str:
        return f"RangeAssignment({ {str(t): s for t, s in self.items()} })"


def range_map(
    topics: _Topics, ordinals: int | Sequence[int] | np.ndarray
) -> Mapping[Uuid, AbstractSet[int]]:
    """The ``topic id -> RangeSet`` map of the member with these ordinals (one int: the same
    on every topic)."""
    t = topics
    ks = ordinals
    if isinstance(ks, int) and t.uniform is not None:
        # Every topic gives ordinal k the same range: one shared RangeSet (read-only).
        q, e = t.uniform
        size = q + 1 if ks < e else q
        if not size:
            return EMPTY_PARTITIONS
        start = ks * q + (ks if ks < e else e)
        return dict.fromkeys(t.template, RangeSet(start, start + size))
    if isinstance(ks, int):
        ks = [ks] * len(t.ids)
    elif isinstance(ks, np.ndarray):
        ks = ks.tolist()
    built: dict[Uuid, AbstractSet[int]] = {}
    for topic_id, k, q, e in zip(t.ids, ks, t.quota, t.extra, strict=True):
        size = q + 1 if k < e else q
        if size:
            start = k * q + (k if k < e else e)
            built[topic_id] = RangeSet(start, start + size)
    return built


def sort_member_ids(group_spec: GroupSpec) -> list[str]:
    """RangeAssignor.sortMemberIds: static members first by instance id, then the others by
    member id, both in Java ``String.compareTo`` order (a stable sort, like Java's)."""
    ids = list(group_spec.member_ids())
    if isinstance(group_spec, GroupSpecImpl):
        instance = {m: s.instance_id for m, s in group_spec.members.items()}
    else:
        instance = {m: group_spec.member_subscription(m).instance_id for m in ids}
    if all(v is None for v in instance.values()):
        return java_sorted(ids)
    strings = [v for v in instance.values() if v is not None] + ids
    if needs_utf16_order(strings):
        return sorted(
            ids,
            key=lambda m: (
                (0, java_string_key(i))
                if (i := instance[m]) is not None
                else (1, java_string_key(m))
            ),
        )
    return sorted(ids, key=lambda m: (0, i) if (i := instance[m]) is not None else (1, m))


def _subscriptions(group_spec: GroupSpec, member_ids: list[str]) -> list[AbstractSet[Uuid]]:
    if isinstance(group_spec, GroupSpecImpl):
        members = group_spec.members
        return [members[m].subscribed_topic_ids for m in member_ids]
    return [group_spec.member_subscription(m).subscribed_topic_ids for m in member_ids]


def _counts(topic_ids: AbstractSet[Uuid], describer: SubscribedTopicDescriber) -> list[int]:
    counts = []
    for topic_id in topic_ids:
        n = describer.num_partitions(topic_id)
        if n == -1:
            raise PartitionAssignorException(NON_EXISTENT)
        counts.append(n)
    return counts


class RangeAssignor:
    """The ``range`` ConsumerGroupPartitionAssignor."""

    name = RANGE_ASSIGNOR_NAME

    def assign(
        self, group_spec: GroupSpec, subscribed_topic_describer: SubscribedTopicDescriber
    ) -> GroupAssignment:
        if not group_spec.member_ids():
            return GroupAssignment({})
        if group_spec.subscription_type() is SubscriptionType.HOMOGENEOUS:
            return self._homogeneous(group_spec, subscribed_topic_describer)
        return self._heterogeneous(group_spec, subscribed_topic_describer)

    @staticmethod
    def _homogeneous(group_spec: GroupSpec, describer: SubscribedTopicDescriber) -> GroupAssignment:
        member_ids = sort_member_ids(group_spec)
        subscribed = _subscriptions(group_spec, member_ids[:1])[0]
        counts = dict(zip(subscribed, _counts(subscribed, describer), strict=True))
        # Every member's map holds (a subset of) the same topics, put in the same order into a
        # table of the same size: one bucket order serves all.
        ordered = uuid_order(subscribed, sized_capacity(len(counts)))
        topics = _Topics(ordered, [counts[t] for t in ordered], [len(member_ids)] * len(ordered))

        def make_maps() -> list[TopicPartitions]:
            """Every member's map at once: plain dicts (reads run in C)."""
            n = len(member_ids)
            if topics.uniform is None:
                return list(map(range_map, repeat(topics), range(n)))
            # One shared RangeSet per member: ordinal k starts at k*q + min(k, e).
            q, e = topics.uniform
            given = n if q else min(e, n)
            starts = [k * q + min(k, e) for k in range(given + 1)]
            sets = map(RangeSet, starts[:-1], starts[1:])
            maps = [
                *map(dict.fromkeys, repeat(topics.template), sets),
                *repeat(EMPTY_PARTITIONS, n - given),
            ]
            return maps

        return GroupAssignment(
            LazyMembers(
                member_ids,
                lambda k: MemberAssignmentImpl(RangeAssignment(topics, k)),
                make_maps=make_maps,
            )
        )

    @staticmethod
    def _heterogeneous(
        group_spec: GroupSpec, describer: SubscribedTopicDescriber
    ) -> GroupAssignment:
        member_ids = sort_member_ids(group_spec)
        subscriptions = _subscriptions(group_spec, member_ids)
        # Members with the same subscription (the same topic objects in the same order) share
        # one topic table; positions are indices in the sorted member list.
        groups, group_firsts, arrays = group_subscriptions(subscriptions)
        group_subs = [subscriptions[f] for f in group_firsts]
        member_group = groups.tolist()
        counts: dict[Uuid, int] = {}
        positions_of: dict[Uuid, list[np.ndarray]] = {}
        for g, subscribed in enumerate(group_subs):
            for topic_id, n in zip(subscribed, _counts(subscribed, describer), strict=True):
                counts[topic_id] = n
                positions_of.setdefault(topic_id, []).append(arrays[g])
        subscribers = {
            t: np.sort(np.concatenate(ps)) if len(ps) > 1 else ps[0]
            for t, ps in positions_of.items()
        }
        tables = []
        ordinals = []
        for g, subscribed in enumerate(group_subs):
            ordered = uuid_order(subscribed, sized_capacity(len(subscribed)))
            tables.append(
                _Topics(
                    ordered, [counts[t] for t in ordered], [len(subscribers[t]) for t in ordered]
                )
            )
            columns = [np.searchsorted(subscribers[t], arrays[g]) for t in ordered]
            ordinals.append(np.stack(columns, axis=1) if columns else np.zeros((len(arrays[g]), 0)))
        rows_array = np.zeros(len(member_ids), dtype=np.int64)  # row in its group's ordinals
        for positions in arrays:
            rows_array[positions] = np.arange(len(positions))
        rows = rows_array.tolist()

        # A member whose ordinal is the same on every topic of its subscription (the usual case:
        # topics with the same subscribers) passes it as one int, the cheap path above.
        same = [
            (o == o[:, :1]).all(axis=1).tolist() if o.shape[1] else [False] * len(o)
            for o in ordinals
        ]

        def ordinal(position: int) -> int | np.ndarray:
            g = member_group[position]
            row = rows[position]
            return int(ordinals[g][row, 0]) if same[g][row] else ordinals[g][row]

        def make(position: int) -> MemberAssignment:
            return MemberAssignmentImpl(
                RangeAssignment(tables[member_group[position]], ordinal(position))
            )

        def make_maps() -> list[TopicPartitions]:
            """Every member's map at once: plain dicts (reads run in C). Ordinals are laid out
            per member with numpy (an int when the same on every topic, else the row)."""
            n = len(member_ids)
            first = np.zeros(n, dtype=np.int64)
            uniform = np.zeros(n, dtype=bool)
            for positions, o, same_g in zip(arrays, ordinals, same, strict=True):
                if o.shape[1]:
                    first[positions] = o[:, 0]
                uniform[positions] = same_g
            ords: list[int | np.ndarray] = list(first.tolist())
            for position in np.flatnonzero(~uniform).tolist():
                ords[position] = ordinal(position)
            return list(map(range_map, map(tables.__getitem__, member_group), ords))

        return GroupAssignment(LazyMembers(member_ids, make, make_maps=make_maps))
