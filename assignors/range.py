"""Kafka's ``RangeAssignor`` ("range"), including the KIP-881 rack-aware variant (Kafka 3.5+).

Plain algorithm, per topic and independently of every other topic: sort the topic's subscribers
in ``MemberInfo`` order (static members by ``group.instance.id`` first, then member ids, Java string
order), then hand out contiguous ranges. With P partitions and C subscribers the first ``P % C``
members get ``P // C + 1`` partitions, the rest ``P // C``. The same members get the extra partition
in every topic, so skew adds up across topics: that keeps equally sized topics co-partitioned.

List order. Kafka appends each member's partitions topic by topic in the iteration order of a
``HashMap`` of topics, and only the rack-aware path sorts the lists at the end. ``topic_order="java"``
(the default) reproduces that order with :func:`coordinator.java.java_hashmap_order`;
``topic_order="sorted"`` appends topics in name order instead. The sets are identical either way.

Rack-aware variant (KIP-881), used only when some topic *needs* it (a subscriber has a rack, the
consumer and replica racks intersect, and not every partition lives on every rack; the test-only
``prefer_rack_aware_logic`` drops the last condition):

1. topics are grouped by their exact subscribers (ids and racks), then by partition count (recorded
   as 0 when no subscriber has a rack, a Kafka quirk that disables step 2 for such groups);
2. a group of two or more co-partitioned topics assigns partition ``p`` of every topic together to
   the first member that matches all their racks and still has quota in each;
3. a lone topic that needs rack awareness lets each member, in order, take matching partitions
   up to its quota;
4. every topic is then filled with the ordinary range rule (first unassigned partitions, up to the
   member's quota, whatever their racks);
5. each member's list is sorted by (topic, partition).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from operator import itemgetter
from typing import Literal

from assignors.api import (
    Assignment,
    ClusterLike,
    ClusterMetadata,
    PartitionAssignor,
    Subscription,
    TopicPartition,
    as_cluster,
    partitions_of,
)
from assignors.common import (
    GroupTopics,
    check_inputs,
    existing_partition_counts,
    member_info_order,
    subscribers_per_topic,
)
from coordinator.java import java_hashmap_order, java_string_key, needs_utf16_order

TopicOrder = Literal["java", "sorted"]


class RangeAssignor(PartitionAssignor):
    """``org.apache.kafka.clients.consumer.RangeAssignor``; see the module docstring."""

    name = "range"

    def __init__(
        self, *, topic_order: TopicOrder = "java", prefer_rack_aware_logic: bool = False
    ) -> None:
        if topic_order not in ("java", "sorted"):
            raise ValueError(f"topic_order must be 'java' or 'sorted', got {topic_order!r}")
        self.topic_order: TopicOrder = topic_order
        self.prefer_rack_aware_logic = prefer_rack_aware_logic

    def assign(self, cluster: ClusterLike, subscriptions: Mapping[str, Subscription]) -> Assignment:
        meta = as_cluster(cluster)
        group = check_inputs(meta, subscriptions)
        counts = existing_partition_counts(meta, group.topics)
        topics = self._topic_iteration_order(group, counts, list(subscriptions))
        subscribers = subscribers_per_topic(group, member_info_order(subscriptions), counts)
        assignment: Assignment = {m: [] for m in subscriptions}

        racks = _consumer_racks(subscriptions)
        if racks and meta.partition_racks:
            states = [
                _RackTopicState(
                    t, counts[t], subscribers[t], racks, meta, self.prefer_rack_aware_logic
                )
                for t in topics
            ]
            if any(s.needs_rack_awareness for s in states):
                _assign_with_racks(states, assignment)
                return assignment

        _assign_plain(topics, counts, subscribers, assignment)
        return assignment

    def _topic_iteration_order(
        self, group: GroupTopics, counts: Mapping[str, int], member_ids: list[str]
    ) -> list[str]:
        if self.topic_order == "sorted":
            names = list(counts)
            return sorted(names, key=java_string_key) if needs_utf16_order(names) else sorted(names)
        # Kafka: subscriptions is a HashMap of member ids; their topics fill a HashSet; the
        # existing ones are put into the HashMap partitionsPerTopic that the topic loop iterates.
        # Insertion order only matters inside a bucket; with several distinct topic lists, a
        # list's topics are inserted when the first of its members (in HashMap order) is visited.
        # That HashMap was filled in the caller's member order (``member_ids``): two ids sharing
        # a bucket keep that order (ordering the ids list by list instead broke such ties).
        if len(group.lists) == 1:
            inserted: Iterable[str] = next(iter(group.lists))
        else:
            position = {m: i for i, m in enumerate(java_hashmap_order(member_ids))}
            visited = sorted(
                group.lists, key=lambda tl: min(map(position.__getitem__, group.lists[tl]))
            )
            inserted = chain.from_iterable(visited)
        topic_set = java_hashmap_order(inserted)
        return java_hashmap_order([t for t in topic_set if t in counts])


def _range_bounds(count: int, n_members: int) -> list[int]:
    """Start offsets of each member's range, plus the end: first ``count % n`` get one extra."""
    per, extra = divmod(count, n_members)
    return [per * i + min(i, extra) for i in range(n_members + 1)]


def _assign_plain(
    topics: Sequence[str],
    counts: Mapping[str, int],
    subscribers: Mapping[str, list[str]],
    assignment: Assignment,
) -> None:
    """Contiguous ranges per topic, appended in ``topics`` order.

    Consecutive topics with the same subscriber list and partition count form a *run*: within a
    run every member takes the same slice of each topic, so one C-level ``map`` over the run's
    partition tuples replaces a Python loop per (member, topic) pair.
    """
    runs: list[tuple[list[str], int, list[tuple[TopicPartition, ...]]]] = []
    for topic in topics:
        members = subscribers[topic]
        if not members:
            continue
        count = counts[topic]
        parts = partitions_of(topic, count)
        if runs and runs[-1][0] is members and runs[-1][1] == count:
            runs[-1][2].append(parts)
        else:
            runs.append((members, count, [parts]))
    bounds_cache: dict[tuple[int, int], list[int]] = {}
    for members, count, tuples in runs:
        key = (count, len(members))
        bounds = bounds_cache.get(key)
        if bounds is None:
            bounds = bounds_cache[key] = _range_bounds(count, len(members))
        single = tuples[0] if len(tuples) == 1 else None
        # Partition j of every topic in the run, for members that take exactly one partition
        # per topic: one C-level transpose instead of a lookup per (member, topic).
        columns: list[tuple[TopicPartition, ...]] | None = None
        for i, member in enumerate(members):
            start, end = bounds[i], bounds[i + 1]
            if start >= end:
                continue
            if single is not None:
                assignment[member].extend(single[start:end])
            elif end - start == 1:
                if columns is None:
                    columns = list(zip(*tuples, strict=True))
                assignment[member].extend(columns[start])
            else:
                assignment[member].extend(
                    chain.from_iterable(map(itemgetter(slice(start, end)), tuples))
                )


def _consumer_racks(subscriptions: Mapping[str, Subscription]) -> dict[str, str]:
    """Members' ``client.rack``; Kafka ignores empty strings."""
    return {m: s.rack_id for m, s in subscriptions.items() if s.rack_id}


class _RackTopicState:
    """One topic's bookkeeping for the rack-aware path (Kafka's ``TopicAssignmentState``)."""

    def __init__(
        self,
        topic: str,
        count: int,
        members: list[str],
        consumer_racks: Mapping[str, str],
        meta: ClusterMetadata,
        prefer_rack_aware_logic: bool,
    ) -> None:
        self.topic = topic
        self.count = count
        self.members = members
        self.member_racks = {m: consumer_racks.get(m) for m in members}
        n = len(members)
        self.per = count // n if n else 0
        self.extra_left = count % n if n else 0
        self.assigned_count = dict.fromkeys(members, 0)
        self.unassigned = [True] * count
        # Per candidate list (None: all partitions; a rack: partitions with a replica there),
        # the index before which every candidate is assigned. See take().
        self._cursors: dict[str | None, int] = {}
        self._by_rack: dict[str, list[int]] | None = None
        all_consumer_racks = {r for r in self.member_racks.values() if r is not None}
        self.partition_racks: list[frozenset[str]] = []
        all_partition_racks: set[str] = set()
        if all_consumer_racks:
            self.partition_racks = [meta.racks_of(topic, p) for p in range(count)]
            for racks in self.partition_racks:
                all_partition_racks |= racks
        self.needs_rack_awareness = _use_rack_aware(
            all_consumer_racks, all_partition_racks, self.partition_racks, prefer_rack_aware_logic
        )
        # Kafka groups co-partitioned topics by the size of this map: 0 without consumer racks.
        self.group_partition_count = len(self.partition_racks)
        self.group_key = tuple((m, self.member_racks[m]) for m in members)

    def racks_match(self, member: str, partition: int) -> bool:
        rack = self.member_racks[member]
        return rack is None or (
            bool(self.partition_racks) and rack in self.partition_racks[partition]
        )

    def max_assignable(self, member: str) -> int:
        quota = self.per + (1 if self.extra_left > 0 else 0)
        return max(0, quota - self.assigned_count[member])

    def on_assigned(self, member: str, partitions: Sequence[int]) -> None:
        n = self.assigned_count[member] + len(partitions)
        self.assigned_count[member] = n
        if n > self.per:
            self.extra_left -= 1
        for p in partitions:
            self.unassigned[p] = False

    def take(self, member: str, limit: int, rack_matching: bool) -> list[int]:
        """The first ``limit`` unassigned partitions (matching the member's rack if asked).

        Each candidate list (all partitions, or those with a replica on one rack) keeps a cursor
        before which everything is assigned; a take only skips assigned partitions and stops at
        ``limit``, so the cursors only move forward and each topic costs O(partitions x replicas).
        """
        rack = self.member_racks[member] if rack_matching else None
        candidates: Sequence[int]
        if rack is None:
            candidates, key = range(self.count), None
        else:
            candidates, key = self._on_rack(rack), rack
        start = self._cursors.get(key, 0)
        unassigned = self.unassigned
        while start < len(candidates) and not unassigned[candidates[start]]:
            start += 1
        self._cursors[key] = start
        out: list[int] = []
        if limit <= 0:
            return out
        for i in range(start, len(candidates)):
            p = candidates[i]
            if unassigned[p]:
                out.append(p)
                if len(out) >= limit:
                    break
        return out

    def _on_rack(self, rack: str) -> list[int]:
        if self._by_rack is None:
            self._by_rack = {}
            for p, racks in enumerate(self.partition_racks):
                for r in racks:
                    self._by_rack.setdefault(r, []).append(p)
        return self._by_rack.get(rack, [])

    def has_unassigned(self) -> bool:
        start = self._cursors.get(None, 0)
        while start < self.count and not self.unassigned[start]:
            start += 1
        self._cursors[None] = start
        return start < self.count


def _use_rack_aware(
    consumer_racks: set[str],
    partition_racks: set[str],
    per_partition: list[frozenset[str]],
    prefer_rack_aware_logic: bool,
) -> bool:
    """``AbstractPartitionAssignor.useRackAwareAssignment``."""
    if not consumer_racks or consumer_racks.isdisjoint(partition_racks):
        return False
    if prefer_rack_aware_logic:
        return True
    return not all(racks == partition_racks for racks in per_partition)


def _assign_ranges(state: _RackTopicState, assignment: Assignment, rack_matching: bool) -> None:
    parts = partitions_of(state.topic, state.count)
    for member in state.members:
        if not state.has_unassigned():
            break
        chosen = state.take(member, state.max_assignable(member), rack_matching)
        if not chosen:
            continue
        assignment[member].extend(parts[p] for p in chosen)
        state.on_assigned(member, chosen)


def _assign_co_partitioned(
    states: list[_RackTopicState], num_partitions: int, assignment: Assignment
) -> None:
    """Partition ``p`` of every topic in the group goes to the first member, in member order,
    that matches the racks of all of them and still has quota (Kafka's
    ``assignCoPartitionedWithRackMatching``).

    The topics share members and partition count, and every step assigns to all of them at once,
    so their quotas move in lockstep: checking the first topic's quota is checking all of them. A
    member without quota never regains it, so each rack keeps a queue of members (in order) whose
    exhausted heads are dropped; the chosen member is the earliest head among the queues of racks
    holding ``p`` in every topic, plus the queue of members without a rack.
    """
    lead = states[0]
    rank = {m: i for i, m in enumerate(lead.members)}
    queues: dict[str | None, deque[str]] = {}
    for m in lead.members:
        queues.setdefault(lead.member_racks[m], deque()).append(m)
    for p in range(num_partitions):
        common = set(lead.partition_racks[p])
        for s in states[1:]:
            common &= s.partition_racks[p]
        chosen: str | None = None
        for key in (None, *common):
            queue = queues.get(key)
            if not queue:
                continue
            while queue and lead.max_assignable(queue[0]) <= 0:
                queue.popleft()
            if queue and (chosen is None or rank[queue[0]] < rank[chosen]):
                chosen = queue[0]
        if chosen is None:
            if not any(queues.values()):
                break
            continue
        for s in states:
            assignment[chosen].append(TopicPartition(s.topic, p))
            s.on_assigned(chosen, [p])


def _assign_with_racks(states: list[_RackTopicState], assignment: Assignment) -> None:
    groups: dict[tuple, dict[int, list[_RackTopicState]]] = {}
    for s in states:
        groups.setdefault(s.group_key, {}).setdefault(s.group_partition_count, []).append(s)
    # Group order does not matter: each topic keeps its own quotas and lists are sorted below.
    for by_count in groups.values():
        for num_partitions, group in by_count.items():
            if len(group) > 1:
                _assign_co_partitioned(group, num_partitions, assignment)
            elif group[0].needs_rack_awareness:
                _assign_ranges(group[0], assignment, rack_matching=True)
    for s in states:
        _assign_ranges(s, assignment, rack_matching=False)
    utf16 = needs_utf16_order(s.topic for s in states)
    for parts in assignment.values():
        if utf16:
            parts.sort(key=lambda tp: (java_string_key(tp.topic), tp.partition))
        else:
            parts.sort()
