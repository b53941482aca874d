"""Kafka's UniformHeterogeneousAssignmentBuilder (1eb7644): members subscribe to different topics.

1. Keep each member's current partitions of topics it still subscribes to (drop the others).
2. Hand the unassigned partitions out topic by topic (topics by partitions per subscriber
   descending, then subscriber count ascending, then topic id), each to the least loaded
   subscriber (fewest partitions, then lowest member index) - a water-filling over the
   subscribers sorted by load.
3. Balance: repeatedly move partitions of a topic from its most to its least loaded subscribers
   until every topic's subscribers differ by at most one (at most 16 rounds over the topics).

Member indices follow ``GroupSpec.memberIds()``; topics are numbered too, so the hot loops
never hash a ``Uuid``. Partition owners and member sizes are numpy arrays; step 2 computes a
whole topic's water-filling at once (Kafka calls ``nextLeastLoadedMember`` per partition; the
sequence only depends on the sizes at the start of the topic) and finds each member's share as
one strided ``range`` when it is one. A changed member map is a
:class:`~coordinator.assignor.sets.DeferredTopicMap` (Kafka's deep copy and its
``computeIfAbsent``/``add``/``remove`` calls, replayed on first read); sets keep Java's order.
A read of the whole result builds the members whose map starts empty and only takes step-2
shares in one batch (``_Builder._fresh_maps``: Java's orders as
:func:`~coordinator.assignor.bulk.build_fresh_maps` computes them, one-partition sets shared).
The balancing loop skips the topics it knows ``balanceTopic`` would leave unchanged. A topic
with few partitions to hand out (:data:`SMALL_TOPIC`) is water-filled in Python lists
(``_assign_small_topic``): numpy's fixed cost per call is most of the work there.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections import deque
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from itertools import repeat

import numpy as np

from coordinator.assignor.api import (
    GroupAssignment,
    GroupSpec,
    MemberAssignment,
    PartitionAssignorException,
    SubscribedTopicDescriber,
    TopicPartitions,
)
from coordinator.assignor.bulk import (
    SMALL_BATCH,
    empty_maps,
    fresh_map_capacity,
    group_subscriptions,
    risky_rows,
    uuid_spread_hashes,
)
from coordinator.assignor.lazy import LazyMembers
from coordinator.assignor.sets import BatchMap, DeferredTopicMap, OrderedPartitions
from coordinator.assignor.spec import GroupSpecImpl, MemberAssignmentImpl
from coordinator.java import sized_capacity
from coordinator.kafka_uuid import Uuid

MAX_ITERATION_COUNT = 16
#: a topic with at most this many partitions to hand out is assigned in Python lists (about
#: where numpy's fixed cost per call stops outweighing its lower cost per partition)
SMALL_TOPIC = 128
_BY_VALUE = -2  # revoke: a topic id object not among the subscribed ones (look it up by value)

#: One-partition sets below this partition number are made once and shared (see _singles).
INTERNED_LIMIT = 1 << 16
_SINGLES: list[OrderedPartitions] = []


def _singles(partitions: list[int], high: int | None = None) -> list[OrderedPartitions]:
    """A one-partition set for each of ``partitions``. The sets are read-only tuples, equal by
    content, and a one-element ``HashSet`` iterates the same at any capacity, so the same
    object serves every member holding that partition number (made once per process, like
    Java's ``Integer`` cache); numbers from :data:`INTERNED_LIMIT` up are made each time.
    ``high``: the largest of ``partitions`` when the caller knows it."""
    if not partitions:
        return []
    high = max(partitions) if high is None else high
    if high >= INTERNED_LIMIT:
        return list(map(OrderedPartitions, zip(partitions)))
    if high >= len(_SINGLES):
        _SINGLES.extend(map(OrderedPartitions, zip(range(len(_SINGLES), high + 1))))
    return list(map(_SINGLES.__getitem__, partitions))


class _Batch:
    """What the maps of one :meth:`_Builder._fresh_maps` call hold, as arrays, so that the
    next round's revoke phase reads these rather than walking every entry of every map.

    Map ``r`` (``r`` from 0; its ``row`` attribute is ``base + r``, a number no other batch's
    map has) holds entries ``bounds[r]:bounds[r + 1]``: topic ``topic_ids[topics[e]]`` with
    ``counts[e]`` partitions from ``firsts[e]`` by ``steps[e]``. Its member subscribed (in the
    round that made it) to the topics ``group_topics[groups[r]]``, and topic ``k`` had
    ``num_partitions[k]`` partitions. The maps are read-only, so neither changes."""

    #: the first row number of the next batch (rows are numbered across all batches)
    next_row = 0

    __slots__ = (
        "_flat",
        "base",
        "bounds",
        "counts",
        "firsts",
        "group_topics",
        "groups",
        "num_partitions",
        "steps",
        "topic_ids",
        "topics",
    )

    def __init__(
        self,
        builder: _Builder,
        members: np.ndarray,
        bounds: np.ndarray,
        topics: np.ndarray,
        firsts: np.ndarray,
        steps: np.ndarray,
        counts: np.ndarray,
    ) -> None:
        self.base = _Batch.next_row
        _Batch.next_row += len(members)
        self.topic_ids = builder.topic_ids
        self.num_partitions = builder.num_partitions
        self.group_topics = builder.group_topics
        self.groups = builder.member_group_array[members]
        self.bounds = bounds
        self.topics = topics
        self.firsts = firsts
        self.steps = steps
        self.counts = counts
        self._flat: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

    def flat(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(Every partition of every map end to end; each one's row; each one's topic number;
        each row's partition count), made on first use."""
        if self._flat is None:
            counts = self.counts
            rows = np.repeat(np.arange(len(self.bounds) - 1, dtype=np.int64), np.diff(self.bounds))
            if bool((counts > 1).any()):
                starts = np.cumsum(counts) - counts
                of = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
                rank = np.arange(int(counts.sum()), dtype=np.int64) - starts[of]
                partitions = self.firsts[of] + rank * self.steps[of]
                topics, rows = self.topics[of], rows[of]
            else:
                partitions, topics = self.firsts, self.topics
            sizes = np.bincount(rows, minlength=len(self.bounds) - 1)
            self._flat = (partitions, rows, topics, sizes)
        return self._flat


def _runs_of(partitions: list[int]) -> list[range]:
    """Ascending partitions as ranges: one strided range when evenly spaced, else step-1 runs."""
    n = len(partitions)
    first = partitions[0]
    if n == 1:
        return [range(first, first + 1)]
    step = partitions[1] - first
    if partitions[-1] - first == step * (n - 1) and all(
        b - a == step for a, b in itertools.pairwise(partitions)
    ):
        return [range(first, partitions[-1] + 1, step)]
    runs: list[range] = []
    for p in partitions:
        if runs and runs[-1].step == 1 and runs[-1].stop == p:
            runs[-1] = range(runs[-1].start, p + 1)
        else:
            runs.append(range(p, p + 1))
    return runs


class _Builder:
    def __init__(self, group_spec: GroupSpec, describer: SubscribedTopicDescriber) -> None:
        self.member_ids = list(group_spec.member_ids())
        if isinstance(group_spec, GroupSpecImpl):
            specs = group_spec.members
            self.subscriptions = [specs[m].subscribed_topic_ids for m in self.member_ids]
            self.olds = [specs[m].partitions for m in self.member_ids]
        else:
            self.subscriptions = [
                group_spec.member_subscription(m).subscribed_topic_ids for m in self.member_ids
            ]
            self.olds = [group_spec.member_assignment(m).partitions for m in self.member_ids]
        # Members sharing a subscription (the same topic objects in the same order) are handled
        # together: topics are looked up once per subscription. Group g is numbered by its first
        # member; keys and the grouping are made in C (map, dict.setdefault, numpy).
        member_group, group_firsts, group_members = group_subscriptions(self.subscriptions)
        self.member_group: list[int] = member_group.tolist()
        self.member_group_array = member_group
        group_subs = [self.subscriptions[f] for f in group_firsts]
        self.topic_ids: list[Uuid] = []
        self.topic_index: dict[Uuid, int] = {}
        self.num_partitions: list[int] = []
        lists: list[list[np.ndarray]] = []
        self.group_topics: list[list[int]] = []  # each group's topic numbers
        for subscribed, members in zip(group_subs, group_members, strict=True):
            numbers = []
            for topic_id in subscribed:
                t = self.topic_index.get(topic_id)
                if t is None:
                    partitions = describer.num_partitions(topic_id)
                    if partitions == -1:
                        raise PartitionAssignorException(
                            f"Members are subscribed to topic {topic_id} which doesn't exist in "
                            "the topic metadata."
                        )
                    t = self.topic_index[topic_id] = len(self.topic_ids)
                    self.topic_ids.append(topic_id)
                    self.num_partitions.append(partitions)
                    lists.append([])
                lists[t].append(members)
                numbers.append(t)
            self.group_topics.append(numbers)
        self.index_by_object = {id(t): i for t, i in self.topic_index.items()}
        # topicSubscribers: each topic's members, ascending
        self.subscribers = [v[0] if len(v) == 1 else np.sort(np.concatenate(v)) for v in lists]
        self.set_capacity = [
            sized_capacity((n + len(v) - 1) // len(v))
            for n, v in zip(self.num_partitions, self.subscribers, strict=True)
        ]
        self.owners: list[np.ndarray] = []  # per topic: views of all_owners (topics end to end)
        self.all_owners = np.zeros(0, dtype=np.int64)
        self.offsets = np.zeros(1, dtype=np.int64)  # each topic's start in all_owners, then end
        self.sizes = np.zeros(len(self.member_ids), dtype=np.int64)
        self.targets: list[Mapping[Uuid, AbstractSet[int]]] = []
        self.changed: list[DeferredTopicMap | None] = []
        # step 2, per topic: (topic id, set capacity, owner of each share, first, last, step and
        # size of each share, irregular shares' runs); read per member through `by_member`
        self.records: list[tuple] = []
        self.by_member: tuple[list[int], list[int], list[int]] | None = None
        self.moves: dict[int, list[tuple]] = {}  # balancing: member -> recorded steps

    # --- helpers ---------------------------------------------------------------------------

    def _sort_key(self, t: int) -> tuple[float, int, int, int]:
        """topicComparator: partitions per subscriber descending, subscribers ascending, then
        ``Uuid.compareTo`` (the signed halves as plain ints: no attrs comparison per pair)."""
        subscribers = len(self.subscribers[t])
        topic_id = self.topic_ids[t]
        return (
            -(self.num_partitions[t] / subscribers),
            subscribers,
            topic_id.most_significant_bits,
            topic_id.least_significant_bits,
        )

    def _topic_of(self, topic_id: Uuid) -> int:
        """The topic's number, -1 when no member subscribes to it."""
        t = self.index_by_object.get(id(topic_id))
        return t if t is not None else self.topic_index.get(topic_id, -1)

    # --- the phases ------------------------------------------------------------------------

    def build(self) -> GroupAssignment:
        if not self.topic_ids:
            return GroupAssignment({})
        self.revoke()
        # computeUnassignedPartitions: each topic's free partitions, ascending. Counted for all
        # topics at once; a topic free throughout (a first assignment) needs no scan.
        free_mask = self.all_owners == -1
        free_before = np.zeros(len(free_mask) + 1, dtype=np.int64)
        np.cumsum(free_mask, out=free_before[1:])
        free_counts = np.diff(free_before[self.offsets]).tolist()
        unassigned = {}
        for t, (free, total) in enumerate(zip(free_counts, self.num_partitions, strict=True)):
            if free == total:
                if free:
                    unassigned[t] = np.arange(total, dtype=np.int64)
            elif free:
                unassigned[t] = np.flatnonzero(self.owners[t] == -1)
        for t in sorted(unassigned, key=self._sort_key):
            self.assign_topic(t, unassigned[t])
        self.balance()
        return GroupAssignment(LazyMembers(self.member_ids, self._member, make_maps=self._all_maps))

    def _all_maps(self) -> list[TopicPartitions]:
        """Every member's map: the members whose map starts empty and only takes step-2
        shares (a first assignment's members, a joining member) in one :meth:`_fresh_maps`
        batch, the members that keep their map as it is, and :meth:`_member_map` for the
        others."""
        count = len(self.member_ids)
        result: list[TopicPartitions] | None = None
        slow = np.zeros(count, dtype=bool)
        slow[np.fromiter(map(operator.is_not, self.changed, repeat(None)), bool, count)] = True
        slow[list(self.moves)] = True
        records = self.records
        if records:
            # The step-2 shares of every topic laid end to end: owner, first partition, step,
            # count (one entry per computeIfAbsent(...).add run of a member).
            share_members = np.concatenate([r[2] for r in records])
            for r in records:
                if r[7]:
                    slow[r[2][list(r[7])]] = True
            with_shares = np.zeros(count, dtype=bool)
            with_shares[share_members] = True
            fresh = with_shares & empty_maps(self.targets, slow.tolist()) & ~slow
            slow |= with_shares & ~fresh
            fresh_members = np.flatnonzero(fresh)
            if len(fresh_members) < SMALL_BATCH:  # a joining member or two: _member is cheaper
                slow |= fresh
            else:
                at = np.flatnonzero(fresh[share_members])
                at = at[np.argsort(share_members[at], kind="stable")]  # by member, topic order
                record_of = np.repeat(
                    np.arange(len(records), dtype=np.int64), [len(r[2]) for r in records]
                )[at]
                firsts, steps, counts = (
                    np.concatenate([r[i] for r in records])[at] for i in (3, 5, 6)
                )
                position = np.searchsorted(fresh_members, share_members[at])
                maps = self._fresh_maps(position, record_of, firsts, steps, counts, fresh_members)
                # a member whose map or set may get a tree bin: the exact step-replaying path
                for row in risky_rows(
                    position,
                    self._topic_hashes()[
                        np.array([self.topic_index[r[0]] for r in records])[record_of]
                    ],
                    firsts,
                    steps,
                    counts,
                    np.array([r[1] for r in records], dtype=np.int64)[record_of],
                    len(fresh_members),
                ):
                    maps[row] = self._member_map(int(fresh_members[row]))
                if len(fresh_members) == count:  # everyone (a first assignment); none slow
                    return maps
                result = list(self.targets)
                for i, member_map in zip(fresh_members.tolist(), maps, strict=True):
                    result[i] = member_map
        if result is None:
            result = list(self.targets)
        for i in np.flatnonzero(slow).tolist():
            result[i] = self._member_map(i)
        return result

    def _fresh_maps(
        self,
        position: np.ndarray,
        record_of: np.ndarray,
        firsts: np.ndarray,
        steps: np.ndarray,
        counts: np.ndarray,
        members: np.ndarray,
    ) -> list[TopicPartitions]:
        """The maps of ``members`` (ascending), which start empty (``new HashMap<>(0)``) and
        take ``computeIfAbsent(topic, k -> new HashSet<>(c)).add(p)`` calls: entry ``e`` is
        member ``members[position[e]]``'s share of step-2 record ``record_of[e]``, ``counts[e]``
        partitions from ``firsts[e]`` by ``steps[e]``; entries grouped by member, in call
        order. The same Java orders as :func:`~coordinator.assignor.bulk.build_fresh_maps`
        (which the homogeneous builder uses), with two shortcuts for what this builder makes
        most: one-partition shares are the shared :func:`_singles` sets (a one-element set's
        order does not depend on its table), and a whole share's order is computed from its
        first partition and step, without a partition list per entry. The maps carry their
        :class:`_Batch` (``batch``, ``row``) for the next round."""
        records = self.records
        member_count = len(members)
        entries = len(position)
        record_topic = np.array([self.topic_index[r[0]] for r in records], dtype=np.int64)
        topics = record_topic[record_of]
        keys_per_member = np.bincount(position, minlength=member_count)
        bounds = np.zeros(member_count + 1, dtype=np.int64)
        np.cumsum(keys_per_member, out=bounds[1:])
        key_list = keys_per_member.tolist()
        batch = _Batch(self, members, bounds, topics, firsts, steps, counts)
        multi = counts > 1
        order = None
        if entries and int(keys_per_member.max()) > 1:
            # Each map's final table (computeIfAbsent doubles it before linking a new key once
            # over its threshold; one more time when a call follows the last new key) and its
            # order: bucket of spread(topic hash) ascending, the later key first within one.
            has_keys = keys_per_member > 0
            trailing = np.zeros(member_count, dtype=bool)
            trailing[has_keys] = multi[bounds[1:][has_keys] - 1]
            most = int(keys_per_member.max())
            table = np.array(
                [fresh_map_capacity(k, t) for k in range(most + 1) for t in (False, True)],
                dtype=np.int64,
            )
            map_caps = table[keys_per_member * 2 + trailing]
            rank = np.arange(entries, dtype=np.int64) - np.repeat(bounds[:-1], keys_per_member)
            bucket = self._topic_hashes()[topics] & (map_caps - 1)[position]
            order = np.argsort(
                (position << 42) | (bucket << 21) | ((1 << 21) - 1 - rank), kind="stable"
            )
            topics = topics[order]
        if not multi.any():
            sets = _singles(
                (firsts if order is None else firsts[order]).tolist(), int(firsts.max(initial=0))
            )
        else:
            sets = _singles(firsts.tolist())
            at = np.flatnonzero(multi)
            sized = counts[at]
            # Each set's final table (doubled while over 0.75 x capacity) and its iteration
            # order: bucket spread(p) & (capacity - 1) ascending, insertion order within one.
            caps = np.array([r[1] for r in records], dtype=np.int64)[record_of[at]]
            while True:
                grow = sized * 4 > caps * 3
                if not grow.any():
                    break
                caps[grow] <<= 1
            starts = np.zeros(len(at) + 1, dtype=np.int64)
            np.cumsum(sized, out=starts[1:])
            entry_of = np.repeat(np.arange(len(at), dtype=np.int64), sized)
            partitions = np.repeat(firsts[at], sized) + (
                np.arange(int(starts[-1]), dtype=np.int64) - starts[entry_of]
            ) * np.repeat(steps[at], sized)
            buckets = (partitions ^ (partitions >> 16)) & (caps - 1)[entry_of]
            inside = entry_of[1:] == entry_of[:-1]
            if (np.diff(buckets)[inside] < 0).any():
                partitions = partitions[np.argsort((entry_of << 32) | buckets, kind="stable")]
            flat = partitions.tolist()
            made = map(
                OrderedPartitions,
                map(flat.__getitem__, map(slice, starts[:-1].tolist(), starts[1:].tolist())),
            )
            for e, partition_set in zip(at.tolist(), made, strict=True):
                sets[e] = partition_set
            if order is not None:
                sets = list(map(sets.__getitem__, order.tolist()))
        pairs = zip(map(self.topic_ids.__getitem__, topics.tolist()), sets, strict=True)
        maps: list[TopicPartitions] = list(
            map(BatchMap, map(itertools.islice, repeat(pairs), key_list))
        )
        deque(map(setattr, maps, repeat("batch"), repeat(batch)), 0)
        deque(map(setattr, maps, repeat("row"), range(batch.base, batch.base + member_count)), 0)
        return maps

    def _topic_hashes(self) -> np.ndarray:
        return uuid_spread_hashes(self.topic_ids)

    def revoke(self) -> None:
        """maybeRevokePartitions: drop topics no longer subscribed; count and own the rest.

        A map made in a batch (:class:`_Batch`) whose topics the member still subscribes to
        (its subscription then, mapped to this round's topics, within the one now) keeps all
        of it: its partitions come from the batch's arrays. The other maps are walked
        (:meth:`_walk`: C-level chains over their entries). Owners are written with numpy
        over the topics laid end to end; a partition two members hold goes to the later in
        member order, as in Kafka's loop."""
        olds = self.olds
        count = len(olds)
        self.targets = list(olds)
        self.changed = [None] * count
        offsets = np.zeros(len(self.num_partitions) + 1, dtype=np.int64)
        np.cumsum(self.num_partitions, out=offsets[1:])
        owners = np.full(int(offsets[-1]), -1, dtype=np.int64)
        self.all_owners = owners
        self.offsets = offsets
        self.owners = [owners[a:b] for a, b in itertools.pairwise(offsets.tolist())]
        self.sizes = np.zeros(count, dtype=np.int64)
        lengths = np.fromiter(map(len, olds), np.int64, count)
        if not lengths.any():
            return
        in_batch = list(map(isinstance, olds, repeat(BatchMap)))
        if any(in_batch):
            batch_members = np.flatnonzero(np.fromiter(in_batch, bool, count))
            batch: _Batch = olds[int(batch_members[0])].batch  # type: ignore[attr-defined]
            rows = np.fromiter(
                map(getattr, itertools.compress(olds, in_batch), repeat("row")),
                np.int64,
                len(batch_members),
            )
            walk = self._take_batch(batch, rows, batch_members, count)
            walk = walk[lengths[walk] > 0]
            if len(walk):
                self._take_walked(walk, lengths, after_batch=True)
        else:
            self._take_walked(np.arange(count, dtype=np.int64), lengths, after_batch=False)

    def _take_batch(
        self, batch: _Batch, rows: np.ndarray, members: np.ndarray, count: int
    ) -> np.ndarray:
        """Own and count the partitions of ``members``' maps (rows of ``batch``, or of another
        batch) that the batch's arrays describe; the members left to walk, ascending."""
        rows = rows - batch.base
        theirs = (rows >= 0) & (rows < len(batch.groups))
        if not theirs.all():
            members, rows = members[theirs], rows[theirs]
        # This round's number of each of the batch's topics (-1: nobody subscribes now).
        topic_map = np.fromiter(
            map(self._topic_of, batch.topic_ids), np.int64, len(batch.topic_ids)
        )
        # A member keeps its whole map when its subscription then (mapped) is within its
        # subscription now: checked once per (subscription then, subscription now) pair.
        groups_now = self.member_group_array[members]
        pairs = batch.groups[rows] * len(self.group_topics) + groups_now
        distinct, which = np.unique(pairs, return_inverse=True)
        keeps = np.zeros(len(distinct), dtype=bool)
        for k, pair in enumerate(distinct.tolist()):
            then, now = divmod(pair, len(self.group_topics))
            mapped = topic_map[batch.group_topics[then]].tolist()  # -1 is never subscribed
            keeps[k] = set(mapped) <= set(self.group_topics[now])
        kept = keeps[which]
        # Each partition's owner: its row's member (of two members holding one map object,
        # the later: both count it, the later owns it, as in Kafka's loop).
        member_of_row = np.full(len(batch.groups), -1, dtype=np.int64)
        member_of_row[rows[kept]] = members[kept]
        partitions, partition_rows, topics, row_sizes = batch.flat()
        holders = member_of_row[partition_rows]
        if not (member_of_row >= 0).all():
            present = holders >= 0
            partitions, holders, topics = partitions[present], holders[present], topics[present]
        # Kafka indexes the owner array with each partition: one beyond a topic that shrank
        # since is an error (its ArrayIndexOutOfBoundsException).
        now_partitions = np.asarray(self.num_partitions, dtype=np.int64)[topic_map]
        shrank = now_partitions < np.asarray(batch.num_partitions, dtype=np.int64)
        if (shrank & (topic_map >= 0)).any() and (partitions >= now_partitions[topics]).any():
            raise IndexError("a member owns a partition beyond its topic's partition count")
        self.all_owners[self.offsets[topic_map][topics] + partitions] = holders
        self.sizes[members[kept]] = row_sizes[rows[kept]]
        walk = np.ones(count, dtype=bool)
        walk[members[kept]] = False
        return np.flatnonzero(walk)

    def _take_walked(self, walk: np.ndarray, lengths: np.ndarray, after_batch: bool) -> None:
        """Own and count the partitions of the maps of ``walk`` (ascending), read from the
        maps; drop the topics no longer subscribed (``after_batch``: owners were written
        for other members already)."""
        olds = self.olds
        count = len(olds)
        member, topics, sizes, partitions, keys = self._walk(walk, lengths)
        # subscribed[g, t]: group g subscribes to topic t (column -1: an unknown topic)
        subscribed = np.zeros((len(self.group_topics), len(self.topic_ids) + 1), dtype=bool)
        for g, group_topics in enumerate(self.group_topics):
            subscribed[g, group_topics] = True
        kept = subscribed[self.member_group_array[member], topics]
        all_kept = bool(kept.all())
        if all_kept:
            kept_sizes = sizes
            kept_topics = topics
            kept_members = member
        else:
            kept_sizes = sizes[kept]
            kept_topics = topics[kept]
            kept_members = member[kept]
            partitions = partitions[np.repeat(kept, sizes)]
        self.sizes += np.bincount(kept_members, weights=kept_sizes, minlength=count).astype(
            np.int64
        )
        limits = np.repeat(np.asarray(self.num_partitions, dtype=np.int64)[kept_topics], kept_sizes)
        if len(partitions) and ((partitions < 0) | (partitions >= limits)).any():
            raise IndexError("a member owns a partition beyond its topic's partition count")
        positions = np.repeat(self.offsets[kept_topics], kept_sizes) + partitions
        holders = np.repeat(kept_members, kept_sizes)
        owners = self.all_owners
        if after_batch and (owners[positions] != -1).any():
            # A partition a member of the batch holds too: rewrite all in member order.
            taken = np.flatnonzero(owners != -1)
            positions = np.concatenate((taken, positions))
            holders = np.concatenate((owners[taken], holders))
            by_member = np.argsort(holders, kind="stable")
            positions, holders = positions[by_member], holders[by_member]
        owners[positions] = holders
        if all_kept:
            return
        key_list = keys()
        for j in np.flatnonzero(~kept).tolist():
            index = int(member[j])
            new = self.changed[index]
            if new is None:
                new = self.changed[index] = DeferredTopicMap(olds[index])
                self.targets[index] = new
            new.remove_topic(key_list[j])

    def _walk(
        self, members: np.ndarray, lengths: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Callable[[], list[Uuid]]]:
        """The map entries of ``members`` (ascending; some entries), read from the maps: (each entry's
        member, topic number (-1: unknown), partition count; the partitions end to end; a
        function giving each entry's key)."""
        olds = self.olds
        if len(members) == len(olds):
            maps: list[TopicPartitions] = olds
        else:
            maps = list(map(olds.__getitem__, members.tolist()))
        member_lengths = lengths[members]
        entries = int(member_lengths.sum())
        topics = np.fromiter(
            map(
                self.index_by_object.get,
                map(id, itertools.chain.from_iterable(maps)),
                repeat(_BY_VALUE),
            ),
            np.int64,
            entries,
        )
        if (topics == _BY_VALUE).any():  # equal topic ids held by other objects, or unknown
            for j, key in enumerate(itertools.chain.from_iterable(maps)):
                if topics[j] == _BY_VALUE:
                    topics[j] = self.topic_index.get(key, -1)
        member = np.repeat(members, member_lengths)
        # Every partition of every entry in one C-level pass; when there are as many
        # as entries, each set holds one partition and their sizes need no pass of their own.
        partitions = np.fromiter(
            itertools.chain.from_iterable(
                itertools.chain.from_iterable(map(operator.methodcaller("values"), maps))
            ),
            np.int64,
        )
        if len(partitions) == entries:
            sizes = np.ones(entries, dtype=np.int64)
        else:
            sizes = np.fromiter(
                map(len, itertools.chain.from_iterable(map(operator.methodcaller("values"), maps))),
                np.int64,
                entries,
            )
        return (
            member,
            topics,
            sizes,
            partitions,
            lambda: list(itertools.chain.from_iterable(maps)),
        )

    def assign_topic(self, t: int, partitions: np.ndarray) -> None:
        """assignRemainingPartitions for one topic: the balancer's nextLeastLoadedMember
        sequence, computed pass by pass (each pass gives one partition to every member of the
        least loaded range, then the range's level rises and it takes in the members at it)."""
        subscribers = self.subscribers[t]  # ascending
        loads = self.sizes[subscribers]
        if loads[0] == loads[-1] and (loads == loads[0]).all():
            members, levels = subscribers, loads
        else:
            order = np.argsort(loads, kind="stable")  # by load, then member index
            members = subscribers[order]
            levels = loads[order]
        total = len(partitions)
        if total <= len(members) and levels[total - 1] == levels[0]:
            # One pass over equally loaded members: each takes one partition, in order.
            owner_of = members[:total]
            self.owners[t][partitions] = owner_of
            self.sizes[owner_of] += 1
            ones = np.ones(total, dtype=np.int64)
            self.records.append(
                (
                    self.topic_ids[t],
                    self.set_capacity[t],
                    owner_of,
                    partitions,
                    partitions,
                    ones,
                    ones,
                    {},
                )
            )
            return
        if total <= SMALL_TOPIC:
            self._assign_small_topic(t, partitions, members.tolist(), levels.tolist())
            return
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
        self.owners[t][partitions] = owner_of
        self.sizes += np.bincount(owner_of, minlength=len(self.sizes))
        # Each member's partitions of this topic, ascending (one computeIfAbsent + add each).
        by_member = np.argsort(owner_of, kind="stable")
        grouped = owner_of[by_member]
        ordered = partitions[by_member]
        cuts = np.flatnonzero(np.diff(grouped)) + 1
        starts = np.concatenate(([0], cuts))
        stops = np.concatenate((cuts, [len(grouped)]))
        # A share is one strided range when its gaps are all equal (each share's own gaps:
        # the gap into the next member's share is masked out of the max and the min).
        count_arr = stops - starts
        step = ordered[np.minimum(starts + 1, len(ordered) - 1)] - ordered[starts]
        regular = count_arr == 1
        gaps = np.diff(ordered)
        if len(gaps):
            crossing = stops[:-1] - 1
            high = gaps.copy()
            high[crossing] = np.iinfo(np.int64).min
            low = gaps.copy()
            low[crossing] = np.iinfo(np.int64).max
            inner = np.minimum(starts, len(gaps) - 1)
            widest = np.maximum.reduceat(high, inner)
            narrowest = np.minimum.reduceat(low, inner)
            regular |= (widest == step) & (narrowest == step)
        irregular = {
            int(i): _runs_of(ordered[starts[i] : stops[i]].tolist())
            for i in np.flatnonzero(~regular)
        }
        self.records.append(
            (
                self.topic_ids[t],
                self.set_capacity[t],
                grouped[starts],
                ordered[starts],
                ordered[stops - 1],
                step,
                count_arr,
                irregular,
            )
        )

    def _assign_small_topic(
        self, t: int, partitions: np.ndarray, members: list[int], levels: list[int]
    ) -> None:
        """:meth:`assign_topic`'s passes for a topic of few partitions (``members`` by load
        then index, ``levels`` their loads), in Python lists: the same water-filling and the
        same record, without the dozens of numpy calls whose set-up cost is most of the work
        on a small topic."""
        total = len(partitions)
        # Passes: the members of the least loaded range each take one partition per pass
        # until the range's level reaches the next member's, which joins the range.
        owners: list[int] = []
        end = bisect.bisect_right(levels, levels[0])
        level = levels[0]
        while len(owners) < total:
            left = total - len(owners)
            passes = levels[end] - level if end < len(levels) else -(-left // end)
            batch = min(passes * end, left)
            owners += (members[:end] * -(-batch // end))[:batch]
            level += passes
            end = bisect.bisect_right(levels, level)
        owner_of = np.array(owners, dtype=np.int64)
        self.owners[t][partitions] = owner_of
        self.sizes += np.bincount(owner_of, minlength=len(self.sizes))
        # Each member's partitions of this topic, ascending, members ascending (one
        # computeIfAbsent + add each), as assign_topic records them.
        shares: dict[int, list[int]] = {}
        for owner, p in zip(owners, partitions.tolist(), strict=True):
            share = shares.get(owner)
            if share is None:
                shares[owner] = [p]
            else:
                share.append(p)
        share_members = sorted(shares)
        firsts: list[int] = []
        lasts: list[int] = []
        steps: list[int] = []
        counts: list[int] = []
        irregular: dict[int, list[range]] = {}
        for i, member in enumerate(share_members):
            share = shares[member]
            count = len(share)
            first = share[0]
            firsts.append(first)
            lasts.append(share[-1])
            counts.append(count)
            if count > 1:
                step = share[1] - first
                # two partitions are always one strided range; more when evenly spaced
                if count > 2 and share != list(range(first, share[-1] + 1, step)):
                    irregular[i] = _runs_of(share)
                steps.append(step)
            elif i + 1 < len(share_members):  # assign_topic's step: to the next share's first
                steps.append(shares[share_members[i + 1]][0] - first)
            else:
                steps.append(0)
        table = np.array([share_members, firsts, lasts, steps, counts], dtype=np.int64)
        self.records.append(
            (
                self.topic_ids[t],
                self.set_capacity[t],
                table[0],
                table[1],
                table[2],
                table[3],
                table[4],
                irregular,
            )
        )

    def _assign_steps(self, index: int) -> list[tuple]:
        """Member ``index``'s computeIfAbsent/add steps from step 2, in topic order."""
        if self.by_member is None:
            owners = [r[2] for r in self.records]
            if not owners:
                return []
            members = np.concatenate(owners)
            record = np.repeat(np.arange(len(owners)), [len(o) for o in owners])
            share = np.concatenate([np.arange(len(o)) for o in owners])
            order = np.argsort(members, kind="stable")
            self.by_member = (
                np.searchsorted(members[order], np.arange(len(self.member_ids) + 1)).tolist(),
                record[order].tolist(),
                share[order].tolist(),
            )
        bounds, records, shares = self.by_member
        steps = []
        for k, i in zip(
            records[bounds[index] : bounds[index + 1]],
            shares[bounds[index] : bounds[index + 1]],
            strict=True,
        ):
            topic_id, capacity, _, firsts, lasts, strides, counts, irregular = self.records[k]
            count = int(counts[i])
            runs = irregular.get(i)
            if runs is None:
                first = int(firsts[i])
                runs = [range(first, int(lasts[i]) + 1, int(strides[i]) if count > 1 else 1)]
            steps.append((0, topic_id, capacity, runs, count))
        return steps

    def _member(self, index: int) -> MemberAssignment:
        return MemberAssignmentImpl(self._member_map(index))

    def _member_map(self, index: int) -> TopicPartitions:
        """The member's new map: its revoke-phase map (or the caller's, deep-copied on the first
        change) with the step-2 additions, then the balancing moves, replayed on read."""
        steps = self._assign_steps(index)
        moves = self.moves.get(index)
        target = self.targets[index]
        if steps or moves:
            deferred = self.changed[index]
            if deferred is None:
                deferred = DeferredTopicMap(target)
            deferred._ops.extend(steps)
            if moves:
                deferred._ops.extend(moves)
            target = deferred
        return target

    def balance(self) -> None:
        topics = [t for t, s in enumerate(self.subscribers) if len(s) >= 2]
        if not topics:
            return
        ordered = sorted(topics, key=self._sort_key)
        # balanceTopic changes nothing for a topic whose subscribers are within one, nor for
        # one it already found nothing to move in while no subscriber's size changed since:
        # such topics are "settled" and skipped (as if called: it would return 0). One
        # vectorised check over all the topics' subscribers settles the balanced ones; a move
        # unsettles every topic of the groups of the members it touched.
        starts = np.zeros(len(ordered), dtype=np.int64)
        np.cumsum([len(self.subscribers[t]) for t in ordered[:-1]], out=starts[1:])
        loads = self.sizes[np.concatenate([self.subscribers[t] for t in ordered])]
        settled = (
            np.maximum.reduceat(loads, starts) - np.minimum.reduceat(loads, starts) <= 1
        ).tolist()
        if all(settled):  # the usual outcome of step 2: one pass, no change
            return
        position = {t: i for i, t in enumerate(ordered)}
        member_group = self.member_group
        last = -1
        for _ in range(MAX_ITERATION_COUNT):
            for i, t in enumerate(ordered):
                if i == last:
                    return
                if settled[i]:
                    moved = 0
                else:
                    touched: list[int] = []
                    moved = self.balance_topic(t, touched)
                    if moved:
                        for g in set(map(member_group.__getitem__, touched)):
                            for u in self.group_topics[g]:
                                j = position.get(u)
                                if j is not None:
                                    settled[j] = False
                    else:
                        settled[i] = True
                if moved > 0 or last == -1:
                    last = i

    def balance_topic(self, t: int, touched: list[int]) -> int:
        """balanceTopic: move the topic's partitions from its most to its least loaded
        subscribers (Kafka's MemberAssignmentBalancer, step by step); the members that gave or
        took a partition are appended to ``touched``."""
        subscribers = self.subscribers[t]
        loads = self.sizes[subscribers]
        if int(loads.max()) - int(loads.min()) <= 1:
            return 0
        sizes = self.sizes
        order = np.lexsort((subscribers, loads))
        members: list[int] = subscribers[order].tolist()
        owners = self.owners[t]
        topic_id = self.topic_ids[t]
        capacity = self.set_capacity[t]
        # Partitions grouped by owner (ascending within), with each owner's [start, end).
        by_owner = np.argsort(owners, kind="stable")
        partitions: list[int] = by_owner.tolist()
        grouped = owners[by_owner]
        cuts = np.flatnonzero(np.diff(grouped)) + 1
        firsts = [0, *cuts.tolist()] if len(grouped) else []
        lasts = [*cuts.tolist(), len(grouped)] if len(grouped) else []
        owner_list = grouped[firsts].tolist()
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
            # assignPartition: removePartitionFromTargetAssignment, addPartitionToTargetAssignment
            old_owner = int(owners[partition])
            self.moves.setdefault(old_owner, []).append((3, topic_id, partition, None, 0))
            sizes[old_owner] -= 1
            self.moves.setdefault(least, []).append(
                (0, topic_id, capacity, [range(partition, partition + 1)], 1)
            )
            owners[partition] = least
            sizes[least] += 1
            touched.append(old_owner)
            touched.append(least)
            moved += 1
        return moved


def build_heterogeneous(
    group_spec: GroupSpec, describer: SubscribedTopicDescriber
) -> GroupAssignment:
    return _Builder(group_spec, describer).build()
