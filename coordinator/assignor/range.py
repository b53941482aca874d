"""Kafka's server-side RangeAssignor (``coordinator.group.assignor.RangeAssignor`` at 1eb7644).

Members sorted by instance id (static members first) and then member id, each subscribed topic cut
into contiguous ranges: ``numPartitions / numMembers`` each, one extra for the first
``numPartitions % numMembers`` members. Homogeneous groups co-partition; in heterogeneous groups
each topic's quota counts only its subscribers.

Data layout: Kafka hands ranges out member by member (``addPartitionsToAssignment``), so the
``k``-th subscriber of a topic with ``n`` partitions among ``m`` gets ``[k*q + min(k, e), ...)``
with ``q, e = divmod(n, m)``. The assignor computes each member's ordinals ``k``: one number in
a homogeneous group (its position). In a heterogeneous group members are first grouped by
subscription (:func:`~coordinator.assignor.bulk.group_subscriptions`, no ``Uuid`` hashed per
member); each topic's subscribing groups (its signature) give one numpy column of ordinals per
group and signature, usually one column per group. The result builds the ``RangeSet`` maps when first read: a read of the whole
result makes every member's plain dict at once in numpy and C-level passes
(:func:`range_maps`), a read of one member only that member's (:class:`RangeAssignment`).

Order: each member's ``topic id -> RangeSet`` map iterates like Kafka's pre-sized
``HashMap<Uuid, Set<Integer>>`` (topics put in the order of the member's subscribed-topic set);
a RangeSet iterates ascending, as Kafka's does. ``GroupAssignment.members`` follows the sorted
member order (Kafka's is a HashMap that nobody iterates: the coordinator reads it by member id).
"""

from __future__ import annotations

import operator
from collections import deque
from collections.abc import ItemsView, Iterable, Iterator, Mapping, Sequence, ValuesView
from collections.abc import Set as AbstractSet
from itertools import chain, repeat

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
from coordinator.assignor.sets import RangeSet, uuid_hashcode
from coordinator.assignor.spec import (
    EMPTY_PARTITIONS,
    GroupSpecImpl,
    MemberAssignmentImpl,
)
from coordinator.java import (
    java_sorted,
    java_string_key,
    needs_utf16_order,
    sized_capacity,
    spread,
)
from coordinator.kafka_uuid import Uuid

RANGE_ASSIGNOR_NAME = "range"
NON_EXISTENT = "Member is subscribed to a non-existent topic"
_instance_id = operator.attrgetter("instance_id")
_subscribed = operator.attrgetter("subscribed_topic_ids")


class _Topics:
    """The topics of one subscription, in the member map's order, with their quotas."""

    __slots__ = ("extra", "ids", "quota", "template", "uniform")

    def __init__(self, ids: Sequence[Uuid], num_partitions: Sequence[int], members: Sequence[int]):
        self.ids = tuple(ids)
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


def range_maps(topics: _Topics, ordinals: np.ndarray) -> list[TopicPartitions]:
    """The maps of members with these ordinals (one per member: the same on every topic; or
    rows x topics), made in numpy and C-level passes, no Python call per member: one
    ``RangeSet`` shared by a member's topics when every topic gives its ordinal the same range
    (a copy of the template map), else each member's non-empty ranges zipped with its topics."""
    rows = len(ordinals)
    if ordinals.ndim == 1 and topics.uniform is not None:
        q, e = topics.uniform
        starts = ordinals * q + np.minimum(ordinals, e)
        stops = starts + q + (ordinals < e)
        given = np.flatnonzero(stops > starts)
        sets = _range_sets(starts[given], stops[given])
        maps: list[TopicPartitions] = list(map(dict.fromkeys, repeat(topics.template), sets))
        if len(maps) == rows:
            return maps
        out = [EMPTY_PARTITIONS] * rows
        deque(map(out.__setitem__, given.tolist(), maps), maxlen=0)
        return out
    ks = ordinals if ordinals.ndim == 2 else ordinals[:, None]
    quota = np.array(topics.quota, dtype=np.int64)
    extra = np.array(topics.extra, dtype=np.int64)
    starts = ks * quota + np.minimum(ks, extra)
    stops = starts + quota + (ks < extra)
    given = stops > starts  # rows x topics, read row by row: members in order
    sets = _range_sets(starts[given], stops[given])
    keys = list(map(topics.ids.__getitem__, np.nonzero(given)[1].tolist()))
    bounds = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(given.sum(axis=1), out=bounds[1:])
    slices = list(map(slice, bounds[:-1].tolist(), bounds[1:].tolist()))
    return list(map(dict, map(zip, map(keys.__getitem__, slices), map(sets.__getitem__, slices))))


def _range_sets(starts: np.ndarray, stops: np.ndarray) -> list[RangeSet]:
    """``RangeSet(start, stop)`` of each non-empty range, made in C (``tuple.__new__``: a
    non-empty RangeSet is its tuple of elements, nothing else)."""
    ranges = map(range, starts.tolist(), stops.tolist())
    return list(map(tuple.__new__, repeat(RangeSet), ranges))


def sort_member_ids(group_spec: GroupSpec) -> list[str]:
    """RangeAssignor.sortMemberIds: static members first by instance id, then the others by
    member id, both in Java ``String.compareTo`` order (a stable sort, like Java's)."""
    ids = list(group_spec.member_ids())
    if isinstance(group_spec, GroupSpecImpl):
        instance_ids = list(map(_instance_id, group_spec.members.values()))
    else:
        instance_ids = [group_spec.member_subscription(m).instance_id for m in ids]
    if instance_ids.count(None) == len(instance_ids):
        return java_sorted(ids)
    instance = dict(zip(ids, instance_ids, strict=True))
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
    if isinstance(group_spec, GroupSpecImpl) and len(member_ids) > 1:
        # one itemgetter call looks every member up in C
        members = operator.itemgetter(*member_ids)(group_spec.members)
        return list(map(_subscribed, members))
    if isinstance(group_spec, GroupSpecImpl):
        return list(map(_subscribed, map(group_spec.members.__getitem__, member_ids)))
    return [group_spec.member_subscription(m).subscribed_topic_ids for m in member_ids]


def _counts(topic_ids: Iterable[Uuid], describer: SubscribedTopicDescriber) -> list[int]:
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
        subscribed = tuple(_subscriptions(group_spec, member_ids[:1])[0])
        counts = _counts(subscribed, describer)
        # Every member's map holds (a subset of) the same topics, put in the same order into a
        # table of the same size: one bucket order serves all.
        order = map_order(list(map(_spread_hash, subscribed)))
        topics = _Topics(
            [subscribed[i] for i in order],
            [counts[i] for i in order],
            [len(member_ids)] * len(order),
        )

        def make_maps() -> list[TopicPartitions]:
            """Every member's map at once: the k-th member's ordinal is k on every topic."""
            return range_maps(topics, np.arange(len(member_ids), dtype=np.int64))

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
        # Members with the same subscription share one topic table; positions are indices in
        # the sorted member list, each group's ascending.
        member_groups, group_firsts, arrays = group_subscriptions(subscriptions)
        member_group = member_groups.tolist()
        group_subs = [subscriptions[f] for f in group_firsts]
        sizes = [len(a) for a in arrays]
        # Topics numbered (a topic id hashed once per object, then known by its id()), each
        # group's as numbers. A topic's subscribing groups (ascending) are its "signature": they
        # give its numMembers, and its k-th subscriber is the k-th position among their members.
        topic_ids: list[Uuid] = []
        number: dict[Uuid, int] = {}
        number_by_id: dict[int, int] = {}
        group_topics: list[list[int]] = []
        topic_groups: list[list[int]] = []
        for g, subscribed in enumerate(group_subs):
            numbers = []
            for topic_id in subscribed:
                t = number_by_id.get(id(topic_id))
                if t is None:
                    t = number_by_id[id(topic_id)] = number.setdefault(topic_id, len(topic_ids))
                    if t == len(topic_ids):
                        topic_ids.append(topic_id)
                        topic_groups.append([])
                numbers.append(t)
                topic_groups[t].append(g)
            group_topics.append(numbers)
        counts = _counts(topic_ids, describer)
        hashes = list(map(_spread_hash, topic_ids))
        subscribers: dict[tuple[int, ...], np.ndarray] = {}
        tables: list[_Topics] = []
        columns: list[list[np.ndarray]] = []
        # each topic's subscribing groups and their member count, once per topic
        signature_of = [tuple(groups) for groups in topic_groups]
        subscribers_of = [
            sizes[s[0]] if len(s) == 1 else sum(map(sizes.__getitem__, s)) for s in signature_of
        ]
        for g, numbers in enumerate(group_topics):
            ordered = [numbers[i] for i in map_order([hashes[t] for t in numbers])]
            signatures = [signature_of[t] for t in ordered]
            tables.append(
                _Topics(
                    [topic_ids[t] for t in ordered],
                    [counts[t] for t in ordered],
                    [subscribers_of[t] for t in ordered],
                )
            )
            made: dict[tuple[int, ...], np.ndarray] = {}
            for signature in signatures:
                if signature in made:
                    continue
                if signature == (g,):  # only this group: the k-th member is the k-th subscriber
                    made[signature] = np.arange(sizes[g], dtype=np.int64)
                    continue
                if signature not in subscribers:
                    subscribers[signature] = np.sort(np.concatenate([arrays[h] for h in signature]))
                made[signature] = np.searchsorted(subscribers[signature], arrays[g])
            columns.append([made[s] for s in signatures])
        # A group whose topics all have one signature gives each member one ordinal.
        ordinals = [
            c[0] if c and all(x is c[0] for x in c) else _stack(c, size)
            for c, size in zip(columns, sizes, strict=True)
        ]
        rows: list[int] = []

        def make(position: int) -> MemberAssignment:
            if not rows:
                rows_array = np.zeros(len(member_ids), dtype=np.int64)
                for positions in arrays:
                    rows_array[positions] = np.arange(len(positions))
                rows.extend(rows_array.tolist())
            g = member_group[position]
            row = ordinals[g][rows[position]]
            ks = int(row) if row.ndim == 0 else row.tolist()
            return MemberAssignmentImpl(RangeAssignment(tables[g], ks))

        def make_maps() -> list[TopicPartitions]:
            """Every member's map at once, a group at a time (:func:`range_maps`), put back in
            member order."""
            maps = list(chain.from_iterable(map(range_maps, tables, ordinals)))
            if len(arrays) == 1:
                return maps
            inverse = np.empty(len(member_ids), dtype=np.int64)
            inverse[np.concatenate(arrays)] = np.arange(len(member_ids))
            return list(map(maps.__getitem__, inverse.tolist()))

        return GroupAssignment(LazyMembers(member_ids, make, make_maps=make_maps))


def map_order(hashes: Sequence[int]) -> list[int]:
    """Where each of the topics put into a member's map (``new HashMap<>((int) (n / 0.75f +
    1))``, ``spread(hashCode)`` of each given in put order) comes in its iteration: by bucket,
    in put order within one (a stable sort)."""
    mask = sized_capacity(len(hashes)) - 1
    buckets = [h & mask for h in hashes]
    return sorted(range(len(buckets)), key=buckets.__getitem__)


def _spread_hash(topic_id: Uuid) -> int:
    return spread(uuid_hashcode(topic_id))


def _stack(columns: list[np.ndarray], rows: int) -> np.ndarray:
    """The ordinals of a group's members, one column per topic (rows x topics)."""
    return np.stack(columns, axis=1) if columns else np.zeros((rows, 0), dtype=np.int64)
