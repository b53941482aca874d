"""Kafka's ``GeneralAssignmentBuilder`` (KAFKA-12675): the sticky path for differing subscriptions.

The semantics are Kafka's, step for step (reference notes section 4.5): keep valid owned
partitions, place the rest on "the first member in load order that subscribes to the topic" (load
order = (partition count, member id)), freeze what cannot move, then repeat
``performReassignments`` until nothing moves, with Kafka's ``prevAssignment`` rule, its anti-swap
rule (``getTheActualPartitionToBeMoved``) and the revert-if-no-gain check.

A literal port is far too slow in Python (Java needs 15 s for a million partitions), so the data
structures differ:

* partitions are integer ids, owners a numpy array, counts a numpy array;
* members that subscribe to exactly the same topics form a *group*; "first member of the topic's
  subscribers in load order" is an argmin over the group, cached until the next move;
* placing a run of partitions of one topic is a *water-filling*: each pick takes the member with
  the smallest (count, member id), so the picks come out ordered by (level, member id) and are
  computed in one vectorised step per topic instead of a TreeSet walk per partition;
* ``isBalanced()`` is evaluated with array operations (the largest owner count per topic, then per
  member the largest over its topics) and cached until the next move.

Java ``HashSet`` order decides which partition the anti-swap rule moves back; that order is
emulated (:class:`JavaHashSetOrder`, ``TopicPartition.hashCode``). Tree-ified buckets (8+ colliding
partitions of one topic between the same two members, in a table of 64+) are not emulated.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Collection, Sequence
from operator import attrgetter

import numpy as np

from assignors.sticky_context import BuildResult, Claims, StickyContext
from assignors.sticky_user_data import DEFAULT_GENERATION
from coordinator.java import (
    JavaHashSetOrder,
    java_string_hashcode,
    spread,
    topic_partition_hashcode,
)


class PartitionMovements:
    """Kafka's ``PartitionMovements``: who moved what during one general-builder run."""

    def __init__(self, ctx: StickyContext) -> None:
        self._index = ctx.index
        self._topic_hash = [java_string_hashcode(t) for t in ctx.index.topics]
        self.moves: dict[int, tuple[int, int]] = {}
        self.by_topic: dict[int, dict[tuple[int, int], JavaHashSetOrder]] = {}

    def _spread(self, pid: int, topic: int) -> int:
        part = pid - int(self._index.offsets[topic])
        return spread(topic_partition_hashcode(self._topic_hash[topic], part))

    def _topic(self, pid: int) -> int:
        return int(self._index.topic_of[pid])

    def _remove_record(self, pid: int) -> tuple[int, int]:
        pair = self.moves.pop(pid)
        topic = self._topic(pid)
        pairs = self.by_topic[topic]
        pairs[pair].remove(pid)
        if not pairs[pair]:
            del pairs[pair]
        if not pairs:
            del self.by_topic[topic]
        return pair

    def _add_record(self, pid: int, pair: tuple[int, int]) -> None:
        self.moves[pid] = pair
        topic = self._topic(pid)
        pairs = self.by_topic.setdefault(topic, {})
        bucket = pairs.get(pair)
        if bucket is None:
            bucket = pairs[pair] = JavaHashSetOrder()
        bucket.add(pid, self._spread(pid, topic))

    def move(self, pid: int, old: int, new: int) -> None:
        if pid in self.moves:
            src, _dst = self._remove_record(pid)
            if src != new:
                self._add_record(pid, (src, new))
        else:
            self._add_record(pid, (old, new))

    def actual_partition_to_move(self, pid: int, old: int, new: int) -> int:
        """``getTheActualPartitionToBeMoved``: undo an earlier reverse move instead, if any."""
        pairs = self.by_topic.get(self._topic(pid))
        if pairs is None:
            return pid
        if pid in self.moves:
            old = self.moves[pid][0]
        reverse = pairs.get((new, old))
        if reverse is None:
            return pid
        return reverse.first()

    def is_sticky(self) -> bool:
        """No topic has partitions that moved both A->B and B->A (Kafka's 2-cycle check)."""
        for pairs in self.by_topic.values():
            for src, dst in pairs:
                if (dst, src) in pairs:
                    return False
        return True


#: below this many (members x topic runs), placement runs in plain Python (see _place_small)
_SMALL_PLACEMENT = 20_000


def _flatten(
    arrays: list[np.ndarray], flat: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated ``arrays`` (``flat``, if the caller has it) and, for each entry, the index
    of its array."""
    sizes = np.fromiter(map(len, arrays), dtype=np.int64, count=len(arrays))
    if flat is None:
        nonempty = [a for a in arrays if a.size]
        if not nonempty:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        flat = np.concatenate(nonempty)
    flat = flat.astype(np.int64, copy=False)
    return flat, np.repeat(np.arange(len(arrays), dtype=np.int64), sizes)


def _waterfill(c: np.ndarray, r: np.ndarray, k: int) -> np.ndarray:
    """Indices into ``c`` of ``k`` successive picks of the member with the smallest (count, rank).

    Member ``j`` is picked at levels ``c[j], c[j]+1, ...``; the picks are ordered by (level, rank).
    """
    n = c.size
    span = int(r.max()) + 1
    if k == 1:
        return np.array([int(np.argmin(c * span + r))], dtype=np.int64)
    cs = np.sort(c)
    prefix = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(cs, out=prefix[1:])

    def filled(level: int) -> int:
        below = int(np.searchsorted(cs, level, side="left"))
        return level * below - int(prefix[below])

    lo = int(cs[0])
    hi = lo + k
    while lo < hi:  # largest level T with filled(T) <= k
        mid = (lo + hi + 1) // 2
        if filled(mid) <= k:
            lo = mid
        else:
            hi = mid - 1
    top = lo
    full = np.maximum(0, top - c)
    idx = np.repeat(np.arange(n, dtype=np.int64), full)
    start = np.repeat(np.cumsum(full) - full, full)
    level = c[idx] + (np.arange(idx.size, dtype=np.int64) - start)
    rest = k - idx.size
    if rest > 0:
        eligible = np.flatnonzero(c <= top)
        eligible = eligible[np.argsort(r[eligible], kind="stable")][:rest]
        idx = np.concatenate((idx, eligible))
        level = np.concatenate((level, np.full(rest, top, dtype=np.int64)))
    return idx[np.argsort(level * span + r[idx], kind="stable")]


_TOPICS = attrgetter("topics")
_NO_OWNER = np.array([-1], dtype=np.int64)  # the count read for an unowned partition


class _GeneralBuilder:
    def __init__(
        self,
        ctx: StickyContext,
        owned: list[np.ndarray],
        claims: Sequence[Claims],
        max_generation: int,
        distinct_lists: Collection[tuple[str, ...]] | None = None,
        owned_flat: np.ndarray | None = None,
    ) -> None:
        self.ctx = ctx
        index = ctx.index
        self.index = index
        self.n_members = n_members = len(ctx.members)
        self.n_topics = n_topics = len(index.topics)
        self.rank = ctx.rank
        self.movements = PartitionMovements(ctx)

        # potential topics per member (duplicates kept, as Kafka's lists do): looked up once per
        # distinct topic list when members share a few (``distinct_lists``), else per member
        topic_lists = list(map(_TOPICS, ctx.subs))
        few = distinct_lists is not None and len(distinct_lists) * 4 <= n_members
        keys = list(distinct_lists) if few and distinct_lists is not None else topic_lists
        listed = list(map(len, keys))
        cols = np.fromiter(
            map(index.topic_pos.get, itertools.chain.from_iterable(keys), itertools.repeat(-1)),
            dtype=np.int64,
            count=sum(listed),
        )
        rows = np.repeat(np.arange(len(keys), dtype=np.int64), listed)
        if cols.size and int(cols.min()) < 0:
            known = cols >= 0
            cols, rows = cols[known], rows[known]
        # per list, how often it names each topic
        times = np.bincount(rows * n_topics + cols, minlength=len(keys) * n_topics).reshape(
            len(keys), n_topics
        )
        # a member's maximum: all partitions if it lists as many topics as exist (Kafka's
        # shortcut, duplicates included), else the sum over its listed topics
        max_size = np.where(times.sum(axis=1) == n_topics, index.n, times @ index.counts)
        present = times > 0
        if few:
            which = np.fromiter(
                map(dict(zip(keys, itertools.count())).__getitem__, topic_lists),
                dtype=np.int64,
                count=n_members,
            )
            self.pot = present[which]
            self.pot_count = np.bincount(which, minlength=len(keys)) @ times
            self.max_size = max_size[which]
        else:
            self.pot = present
            self.pot_count = times.sum(axis=0)
            self.max_size = max_size
        # subscriber groups: topics with the same set of potential members share one group
        # (numbered in topic order); one packbits call gives every topic's set as bytes (of
        # lists, when members share few: the same lists name the same members)
        groups: dict[bytes, int] = {}
        group_of_topic: list[int] = []
        first_topics: list[int] = []
        packed = np.ascontiguousarray(np.packbits(present, axis=0).T)
        for t, row in enumerate(packed):
            key = row.tobytes()
            g = groups.get(key)
            if g is None:
                g = groups[key] = len(first_topics)
                first_topics.append(t)
            group_of_topic.append(g)
        if few:
            self.group_members: list[np.ndarray] = [
                np.flatnonzero(self.pot[:, t]) for t in first_topics
            ]
        else:
            by_topic = self.pot.T.nonzero()[1]  # each topic's potential members, topic by topic
            ends = np.cumsum(self.pot.sum(axis=0)).tolist()
            starts = [0, *ends[:-1]]
            self.group_members = [by_topic[starts[t] : ends[t]] for t in first_topics]
        self.group_of_topic = np.array(group_of_topic, dtype=np.int64)
        self.group_cache: dict[int, tuple[int, int, int]] = {}
        self._rack_eligible: dict[tuple[int, frozenset[str]], np.ndarray] = {}
        self.version = 0
        self.balanced_cache: tuple[int, bool] = (-1, False)

        self.owned = owned
        self.owner = np.full(index.n, -1, dtype=np.int64)
        self.owned_flat, self.owned_rows = owned_flat, owned_rows = _flatten(owned, owned_flat)
        # each member's list cut from one list of all: one tolist, not one per member
        ends = list(itertools.accumulate(map(len, owned)))
        self.lists: list[list[int]] = list(
            map(owned_flat.tolist().__getitem__, map(slice, [0, *ends[:-1]], ends))
        )
        self.owner[owned_flat] = owned_rows  # each pid is claimed by one member after sanitising
        # partitions topic by topic, topics by (number of potential members, position)
        topic_order = np.lexsort((np.arange(n_topics), self.pot_count))
        run = index.counts[topic_order]
        shift = index.offsets[topic_order] - (np.cumsum(run) - run)
        self.sorted_all = np.repeat(shift, run) + np.arange(index.n, dtype=np.int64)
        self.prev = self._prev_assignment(claims, max_generation)
        self.active = np.ones(n_members, dtype=bool)
        # the members still balanced, and their maxima: set once ``active`` is final (build)
        self.active_members = np.arange(n_members, dtype=np.int64)
        self.active_max = self.max_size
        self.revocation_required = False
        self._snapshot: dict[int, list[int]] | None = None  # set by a non-initial build

    # -- setup ------------------------------------------------------------------------------------
    def _prev_assignment(
        self, claims: Sequence[Claims], max_generation: int
    ) -> dict[int, tuple[int, int]]:
        """``prepopulateCurrentAssignments``: claims of members below the max generation."""
        prev: dict[int, tuple[int, int]] = {}
        for m, data in enumerate(claims):
            if data.generation is not None and data.generation < max_generation:
                gen = data.generation
            elif data.generation is None and max_generation > DEFAULT_GENERATION:
                gen = DEFAULT_GENERATION
            else:
                continue
            for p in data.pids.tolist():
                old = prev.get(p)
                if old is None or gen > old[1]:
                    prev[p] = (m, gen)
        return prev

    def _keep_owned(self) -> np.ndarray:
        """``assignOwnedPartitions``: drop no-longer-subscribed and rack-mismatched partitions.

        Every member's owned partitions are checked in one numpy pass; only a member that loses
        some gets its list rebuilt."""
        racks = self.ctx.racks
        topic_of = self.index.topic_of
        assigned = np.zeros(self.index.n, dtype=bool)
        flat, rows = self.owned_flat, self.owned_rows
        if not flat.size:
            return assigned
        ok = self.pot[rows, topic_of[flat]]
        if racks.enabled:
            ok &= np.fromiter(
                (
                    not racks.racks_mismatch(m, p)
                    for m, p in zip(rows.tolist(), flat.tolist(), strict=True)
                ),
                dtype=bool,
                count=flat.size,
            )
        if not ok.all():
            self.revocation_required = True
            ends = list(itertools.accumulate(map(len, self.owned)))
            for m in np.unique(rows[~ok]).tolist():
                start = ends[m] - len(self.owned[m])
                self.lists[m] = flat[start : ends[m]][ok[start : ends[m]]].tolist()
            flat = flat[ok]
        assigned[flat] = True
        return assigned

    # -- load order helpers -------------------------------------------------------------------
    def _group_first(self, g: int) -> tuple[int, int]:
        """(smallest count, member with the smallest (count, id)) among group ``g``'s members."""
        cached = self.group_cache.get(g)
        if cached is not None and cached[0] == self.version:
            return cached[1], cached[2]
        members = self.group_members[g]
        c = self.counts[members]
        best = int(members[int(np.argmin(c * self.n_members + self.rank[members]))])
        low = int(self.counts[best])
        self.group_cache[g] = (self.version, low, best)
        return low, best

    def _is_balanced(self) -> bool:
        if self.balanced_cache[0] == self.version:
            return self.balanced_cache[1]
        result = self._compute_balanced()
        self.balanced_cache = (self.version, result)
        return result

    def _compute_balanced(self) -> bool:
        act = self.active_members
        if act.size == 0:
            return True
        c = self.counts[act]
        if int(c.min()) >= int(c.max()) - 1:
            return True
        # Kafka skips only members holding exactly their maximum (a member can hold more, e.g.
        # after a prevAssignment move to a member no longer subscribed)
        cand = act[c != self.active_max]
        if cand.size == 0:
            return True
        owner_counts = np.concatenate((self.counts, _NO_OWNER))[self.owner]
        topic_max = np.maximum.reduceat(owner_counts, self.index.offsets[:-1])
        reach = np.where(self.pot[cand], topic_max, -1).max(axis=1)
        return not bool((reach > self.counts[cand] + 1).any())

    # -- placement ----------------------------------------------------------------------------
    def _place(self, unassigned: np.ndarray) -> None:
        """``maybeAssign``: each partition to the first subscriber in load order."""
        if unassigned.size == 0:
            return
        if self.ctx.racks.enabled:
            left = [p for p in unassigned.tolist() if not self._place_one(p, True)]
            for p in left:
                self._place_one(p, False)
            return
        topic_of = self.index.topic_of
        topics = topic_of[unassigned]
        cuts = np.flatnonzero(np.diff(topics)) + 1
        starts = np.concatenate(([0], cuts))
        ends = np.concatenate((cuts, [unassigned.size]))
        if self.n_members * starts.size <= _SMALL_PLACEMENT:
            self._place_small(unassigned, topics, starts.tolist(), ends.tolist())
            return
        for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
            run = unassigned[s:e]
            members = self.group_members[int(self.group_of_topic[topics[s]])]
            if members.size == 0:
                continue
            picks = members[_waterfill(self.counts[members], self.rank[members], e - s)]
            self.owner[run] = picks
            lists = self.lists
            for p, w in zip(run.tolist(), picks.tolist(), strict=True):
                lists[w].append(p)
            self.counts += np.bincount(picks, minlength=self.n_members)
        self.version += 1

    def _place_small(
        self, unassigned: np.ndarray, topics: np.ndarray, starts: list[int], ends: list[int]
    ) -> None:
        """:meth:`_place` for small groups, where numpy's per-call cost dominates: the same
        picks (each partition to the subscriber with the smallest (count, rank)) from a heap."""
        counts = self.counts.tolist()
        rank = self.rank.tolist()
        lists = self.lists
        pids = unassigned.tolist()
        topic_list = topics.tolist()
        group_of_topic = self.group_of_topic
        placed: list[int] = []
        placed_to: list[int] = []
        for s, e in zip(starts, ends, strict=True):
            members = self.group_members[int(group_of_topic[topic_list[s]])].tolist()
            if not members:
                continue
            heap = [(counts[j], rank[j], j) for j in members]
            heapq.heapify(heap)
            for p in pids[s:e]:
                c, r, j = heap[0]
                lists[j].append(p)
                placed.append(p)
                placed_to.append(j)
                counts[j] = c + 1
                heapq.heapreplace(heap, (c + 1, r, j))
        if placed:
            self.owner[np.array(placed, dtype=np.int64)] = np.array(placed_to, dtype=np.int64)
        self.counts[:] = counts
        self.version += 1

    def _place_one(self, pid: int, rack_match: bool) -> bool:
        """One partition to the first subscriber in load order (rack-matching ones if asked)."""
        t = int(self.index.topic_of[pid])
        g = int(self.group_of_topic[t])
        members = self.group_members[g]
        if rack_match:
            racks = self.ctx.racks
            prs = racks.partition_racks[pid]
            key = (g, prs)
            eligible = self._rack_eligible.get(key)
            if eligible is None:
                keep = [not racks.racks_mismatch(m, pid) for m in members.tolist()]
                eligible = self._rack_eligible[key] = members[np.asarray(keep, dtype=bool)]
            members = eligible
        if members.size == 0:
            return False
        best = int(
            members[int(np.argmin(self.counts[members] * self.n_members + self.rank[members]))]
        )
        self.lists[best].append(pid)
        self.owner[pid] = best
        self.counts[best] += 1
        self.version += 1
        return True

    # -- reassignment -------------------------------------------------------------------------
    def _move(self, pid: int, new: int) -> tuple[int, int]:
        """``reassignPartition(partition, newConsumer)`` + ``processPartitionMovement``; returns
        the partition actually moved and its old owner."""
        old = int(self.owner[pid])
        pid = self.movements.actual_partition_to_move(pid, old, new)
        old = int(self.owner[pid])
        self.movements.move(pid, old, new)
        snapshot = self._snapshot
        if snapshot is not None:  # the lists as they were before the first move, to revert
            for m in (old, new):
                if m not in snapshot and self.active[m]:
                    snapshot[m] = list(self.lists[m])
        self.lists[old].remove(pid)
        self.lists[new].append(pid)
        self.owner[pid] = new
        self.counts[old] -= 1
        self.counts[new] += 1
        self.version += 1
        return pid, old

    def _perform_reassignments(self, partitions: np.ndarray) -> bool:
        """``performReassignments``: sweep ``partitions`` until a sweep moves nothing.

        The loop reads plain-Python copies of the owners, counts and flags (numpy scalar reads
        cost ~100 ns each), kept in step with each move; the balance check and each group's
        first member are recomputed only after a move."""
        performed = False
        prev = self.prev
        items = partitions.tolist()
        # each partition's subscriber group, looked up once
        groups = self.group_of_topic[self.index.topic_of[partitions]].tolist()
        active = self.active.tolist()
        owner_of = self.owner.tolist()
        counts = self.counts.tolist()
        while True:
            modified = False
            balanced = self._is_balanced()
            firsts: dict[int, tuple[int, int]] = {}
            for p, g in zip(items, groups, strict=True):
                if balanced:
                    break
                owner = owner_of[p]
                before = prev.get(p) if prev else None
                if (
                    before is not None
                    and active[before[0]]
                    and counts[owner] > counts[before[0]] + 1
                ):
                    target = before[0]
                else:
                    low_first = firsts.get(g)
                    if low_first is None:
                        low_first = firsts[g] = self._group_first(g)
                    if counts[owner] <= low_first[0] + 1:
                        continue
                    target = low_first[1]
                moved, old = self._move(p, target)
                performed = modified = True
                owner_of[moved] = target
                counts[old] -= 1
                counts[target] += 1
                balanced = self._is_balanced()
                firsts.clear()
            if not modified:
                return performed

    @staticmethod
    def _balance_score(c: np.ndarray) -> int:
        """Sum over all member pairs of |count difference| (Kafka's ``getBalanceScore``)."""
        s = np.sort(c)
        n = s.size
        return int((s * (2 * np.arange(n, dtype=np.int64) - n + 1)).sum())

    # -- the build ----------------------------------------------------------------------------
    def build(self) -> BuildResult:
        index = self.index
        assigned = self._keep_owned()
        unassigned = self.sorted_all[~assigned[self.sorted_all]]
        self.counts = np.fromiter(map(len, self.lists), dtype=np.int64, count=len(self.lists))
        initializing = self.n_members == 0 or int(self.counts.max()) == 0

        self._place(unassigned)

        fixed_topic = self.pot_count < 2
        if fixed_topic.any():
            keep = ~fixed_topic[index.topic_of[self.sorted_all]]
            self.sorted_all = self.sorted_all[keep]
            unassigned = unassigned[~fixed_topic[index.topic_of[unassigned]]]
        for m in np.flatnonzero(self.counts >= self.max_size).tolist():
            lst = self.lists[m]
            if (
                not lst
                or not (self.pot_count[index.topic_of[np.asarray(lst, dtype=np.int64)]] >= 2).any()
            ):
                self.active[m] = False
        self.version += 1

        act = np.flatnonzero(self.active)
        self.active_members = act  # fixed from here on
        self.active_max = self.max_size[act]
        # Kafka keeps the pre-reassignment state only to revert a non-initial build that
        # worsened the balance; an initial build is never reverted, so it copies nothing, and a
        # later one copies a member's list at its first move (:meth:`_move`), not every list
        snapshot: dict[int, list[int]] = {}
        self._snapshot = None if initializing else snapshot
        owner_before = self.owner if initializing else self.owner.copy()
        counts_before = self.counts if initializing else self.counts.copy()

        if not self.revocation_required:
            self._perform_reassignments(unassigned)
        performed = self._perform_reassignments(self.sorted_all)

        if (
            not initializing
            and performed
            and self._balance_score(self.counts[self.active])
            >= self._balance_score(counts_before[self.active])
        ):
            for m, lst in snapshot.items():
                self.lists[m] = lst
            self.owner = owner_before
            self.counts = counts_before
        return BuildResult.from_lists(self.lists, None)


def build_general(
    ctx: StickyContext,
    owned: list[np.ndarray],
    claims: Sequence[Claims],
    max_generation: int,
    distinct_lists: Collection[tuple[str, ...]] | None = None,
    owned_flat: np.ndarray | None = None,
) -> tuple[BuildResult, PartitionMovements]:
    """``distinct_lists``: the members' distinct topic lists, if known (each once);
    ``owned_flat``: the owned lists concatenated, if known."""
    builder = _GeneralBuilder(ctx, owned, claims, max_generation, distinct_lists, owned_flat)
    return builder.build(), builder.movements
