"""Kafka's UniformHeterogeneousAssignmentBuilder (1eb7644): members subscribe to different topics.

1. Keep each member's current partitions of topics it still subscribes to (drop the others).
2. Hand the unassigned partitions out topic by topic (topics by partitions per subscriber
   descending, then subscriber count ascending, then topic id), each to the least loaded
   subscriber (fewest partitions, then lowest member index) - a water-filling over the
   subscribers sorted by load.
3. Balance: repeatedly move partitions of a topic from its most to its least loaded subscribers
   until every topic's subscribers differ by at most one (at most 16 rounds over the topics).

Member indices follow ``GroupSpec.memberIds()``. Partition owners and member sizes are numpy
arrays; step 2 computes a whole topic's water-filling at once (Kafka calls
``nextLeastLoadedMember`` per partition; the sequence only depends on the sizes at the start of
the topic). Maps are copied on first change and sets keep Java's order, as in ``sets``.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet

import numpy as np

from coordinator.assignor.api import (
    GroupAssignment,
    GroupSpec,
    MemberAssignment,
    PartitionAssignorException,
    SubscribedTopicDescriber,
)
from coordinator.assignor.sets import TopicMap, java_runs, sized_capacity
from coordinator.assignor.spec import MemberAssignmentImpl
from coordinator.kafka_uuid import Uuid

MAX_ITERATION_COUNT = 16


def _as_runs(partitions: np.ndarray) -> list[range]:
    """Ascending partitions as few ranges (one when they are evenly spaced)."""
    n = len(partitions)
    if n == 1:
        p = int(partitions[0])
        return [range(p, p + 1)]
    first = int(partitions[0])
    step = int(partitions[1]) - first
    last = int(partitions[-1])
    if last - first == step * (n - 1) and (n == 2 or bool((np.diff(partitions) == step).all())):
        return [range(first, last + 1, step)]
    runs: list[range] = []
    for p in partitions.tolist():
        if runs and runs[-1].step == 1 and runs[-1].stop == p:
            runs[-1] = range(runs[-1].start, p + 1)
        else:
            runs.append(range(p, p + 1))
    return runs


class _Builder:
    def __init__(self, group_spec: GroupSpec, describer: SubscribedTopicDescriber) -> None:
        self.group_spec = group_spec
        self.describer = describer
        self.member_ids = list(group_spec.member_ids())
        count = len(self.member_ids)
        self.sizes = np.zeros(count, dtype=np.int64)
        # Members sharing one subscription object are handled together.
        groups: dict[int, tuple[AbstractSet[Uuid], list[int]]] = {}
        self.subscriptions: list[AbstractSet[Uuid]] = []
        for index, member_id in enumerate(self.member_ids):
            subscribed = group_spec.member_subscription(member_id).subscribed_topic_ids
            self.subscriptions.append(subscribed)
            group = groups.get(id(subscribed))
            if group is None:
                groups[id(subscribed)] = (subscribed, [index])
            else:
                group[1].append(index)
        lists: dict[Uuid, list[int]] = {}
        self.num_partitions: dict[Uuid, int] = {}
        for subscribed, indices in groups.values():
            for topic_id in subscribed:
                if topic_id not in self.num_partitions:
                    count_ = describer.num_partitions(topic_id)
                    if count_ == -1:
                        raise PartitionAssignorException(
                            f"Members are subscribed to topic {topic_id} which doesn't exist in "
                            "the topic metadata."
                        )
                    self.num_partitions[topic_id] = count_
                    lists[topic_id] = []
                lists[topic_id].extend(indices)
        self.subscribers = {t: np.array(v, dtype=np.int64) for t, v in lists.items()}
        self.owners = {t: np.full(n, -1, dtype=np.int64) for t, n in self.num_partitions.items()}
        self.targets: list[Mapping[Uuid, AbstractSet[int]]] = []
        self.copied: list[TopicMap | None] = [None] * len(self.member_ids)

    # --- helpers ---------------------------------------------------------------------------

    def _sort_key(self, topic_id: Uuid) -> tuple[float, int, Uuid]:
        subscribers = len(self.subscribers[topic_id])
        return (-(self.num_partitions[topic_id] / subscribers), subscribers, topic_id)

    def _mutable(self, index: int) -> TopicMap:
        topic_map = self.copied[index]
        if topic_map is None:
            topic_map = self.copied[index] = TopicMap.deep_copy(self.targets[index])
            self.targets[index] = topic_map
        return topic_map

    def _set_capacity(self, topic_id: Uuid) -> int:
        n = self.num_partitions[topic_id]
        s = len(self.subscribers[topic_id])
        return sized_capacity((n + s - 1) // s)

    def _add(self, topic_id: Uuid, partitions: np.ndarray, index: int) -> None:
        """addPartitionToTargetAssignment for ascending ``partitions``, one call each."""
        topic_map = self._mutable(index)
        target = topic_map.compute_if_absent(topic_id, self._set_capacity(topic_id))
        if len(partitions) > 1:
            topic_map.touch()
        target.add_runs(_as_runs(partitions))

    def _remove(self, topic_id: Uuid, partition: int, index: int) -> None:
        """removePartitionFromTargetAssignment."""
        topic_map = self._mutable(index)
        target = topic_map.set_of(topic_id)
        if target is not None:
            target.remove(partition)
            if not target:
                topic_map.remove(topic_id)
        self.owners[topic_id][partition] = -1
        self.sizes[index] -= 1

    # --- the phases ------------------------------------------------------------------------

    def build(self) -> GroupAssignment:
        if not self.num_partitions:
            return GroupAssignment({})
        self.revoke()
        unassigned = {}
        for topic_id, owners in self.owners.items():
            free = np.flatnonzero(owners == -1)
            if len(free):
                unassigned[topic_id] = free
        for topic_id in sorted(unassigned, key=self._sort_key):
            self.assign_topic(topic_id, unassigned[topic_id])
        self.balance()
        members: dict[str, MemberAssignment] = {
            m: MemberAssignmentImpl(t) for m, t in zip(self.member_ids, self.targets, strict=True)
        }
        return GroupAssignment(members)

    def revoke(self) -> None:
        """maybeRevokePartitions: drop topics no longer subscribed; count and own the rest."""
        sizes = self.sizes
        for index, member_id in enumerate(self.member_ids):
            old = self.group_spec.member_assignment(member_id).partitions
            subscribed = self.subscriptions[index]
            new: TopicMap | None = None
            for topic_id, partitions in old.items():
                if topic_id in subscribed:
                    sizes[index] += len(partitions)
                    owners = self.owners[topic_id]
                    for run in java_runs(partitions):
                        owners[run.start : run.stop : run.step] = index
                else:
                    if new is None:
                        new = TopicMap.deep_copy(old)
                    new.remove(topic_id)
            self.targets.append(old if new is None else new)
            self.copied[index] = new

    def assign_topic(self, topic_id: Uuid, partitions: np.ndarray) -> None:
        """assignRemainingPartitions for one topic: the balancer's nextLeastLoadedMember
        sequence, computed pass by pass (each pass gives one partition to every member of the
        least loaded range, then the range's level rises and it takes in the members at it)."""
        subscribers = self.subscribers[topic_id]
        loads = self.sizes[subscribers]
        order = np.lexsort((subscribers, loads))
        members = subscribers[order]
        levels = loads[order]
        total = len(partitions)
        pieces = []
        done = 0
        end = int(np.searchsorted(levels, levels[0], side="right"))
        level = int(levels[0])
        while done < total:
            if end < len(levels):
                passes = int(levels[end]) - level
            else:
                passes = (total - done + end - 1) // end
            batch = min(passes * end, total - done)
            pieces.append(np.resize(members[:end], batch))
            done += batch
            level += passes
            end = int(np.searchsorted(levels, level, side="right"))
        owner_of = np.concatenate(pieces) if len(pieces) > 1 else pieces[0]
        self.owners[topic_id][partitions] = owner_of
        self.sizes += np.bincount(owner_of, minlength=len(self.sizes))
        by_member = np.argsort(owner_of, kind="stable")
        grouped = owner_of[by_member]
        cuts = np.flatnonzero(np.diff(grouped)) + 1
        starts = [0, *cuts.tolist()]
        stops = [*cuts.tolist(), len(grouped)]
        for start, stop in zip(starts, stops, strict=True):
            self._add(topic_id, partitions[by_member[start:stop]], int(grouped[start]))

    def balance(self) -> None:
        topics = [t for t, s in self.subscribers.items() if len(s) >= 2]
        if not topics:
            return
        ordered = sorted(topics, key=self._sort_key)
        last = -1
        for _ in range(MAX_ITERATION_COUNT):
            for i, topic_id in enumerate(ordered):
                if i == last:
                    return
                moved = self.balance_topic(topic_id)
                if moved > 0 or last == -1:
                    last = i

    def balance_topic(self, topic_id: Uuid) -> int:
        """balanceTopic: move the topic's partitions from its most to its least loaded
        subscribers (Kafka's MemberAssignmentBalancer, step by step)."""
        subscribers = self.subscribers[topic_id]
        loads = self.sizes[subscribers]
        if int(loads.max()) - int(loads.min()) <= 1:
            return 0
        sizes = self.sizes
        order = np.lexsort((subscribers, loads))
        members: list[int] = subscribers[order].tolist()
        owners = self.owners[topic_id]
        # Partitions grouped by owner (ascending within), with each owner's [start, end).
        by_owner = np.argsort(owners, kind="stable")
        partitions: list[int] = by_owner.tolist()
        grouped = owners[by_owner]
        cuts = np.flatnonzero(np.diff(grouped)) + 1
        firsts = [0, *cuts.tolist()]
        lasts = [*cuts.tolist(), len(grouped)]
        owner_list = grouped[firsts].tolist() if len(grouped) else []
        start_of = dict(zip(owner_list, firsts, strict=True))
        end_of = dict(zip(owner_list, lasts, strict=True))

        n = len(members)
        # MemberAssignmentBalancer.initialize
        least_end = 0
        least_count = int(sizes[members[0]]) - 1
        next_least = 0
        most_start = n
        most_end = n
        most_count = int(sizes[members[-1]]) + 1
        next_most = n - 1
        moved = 0
        while most_count - least_count > 1:
            # nextMostLoadedMember, skipping members with nothing left to give
            while True:
                if next_most < most_start:
                    if most_end <= most_start and most_start > 0:
                        most_count = int(sizes[members[most_start - 1]])
                    else:
                        most_count -= 1
                    while most_start > 0 and int(sizes[members[most_start - 1]]) == most_count:
                        most_start -= 1
                    next_most = most_end - 1
                if next_most < 0:
                    most = -1
                    break
                most = members[next_most]
                next_most -= 1
                if most not in end_of or end_of[most] - start_of[most] <= 0:
                    # excludeMostLoadedMember
                    members[next_most + 1], members[most_end - 1] = (
                        members[most_end - 1],
                        members[next_most + 1],
                    )
                    most_end -= 1
                    continue
                break
            if most == -1:
                break
            end_of[most] -= 1
            partition = partitions[end_of[most]]
            # nextLeastLoadedMember
            if next_least >= least_end:
                least_count += 1
                while least_end < n and int(sizes[members[least_end]]) == least_count:
                    least_end += 1
                next_least = 0
            least = members[next_least]
            next_least += 1
            if most_count - least_count <= 1:
                break
            # assignPartition: from the old owner to the least loaded member
            self._remove(topic_id, partition, int(owners[partition]))
            owners[partition] = least
            sizes[least] += 1
            self._add(topic_id, np.array([partition]), least)
            moved += 1
        return moved


def build_heterogeneous(
    group_spec: GroupSpec, describer: SubscribedTopicDescriber
) -> GroupAssignment:
    return _Builder(group_spec, describer).build()
