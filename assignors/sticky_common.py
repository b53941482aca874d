"""The shared core of ``sticky`` and ``cooperative-sticky``: Kafka's ``AbstractStickyAssignor``.

What this module does, in Kafka's order (see ``docs``/the reference notes, section 4):

1. **Member order.** Kafka iterates its ``subscriptions`` and ``consumerToOwnedPartitions``
   ``HashMap``s, so which member is visited first is Java ``HashMap`` iteration order of the member
   ids (bucket order; insertion order, i.e. the caller's mapping order, within a bucket). We
   reproduce that order (:func:`coordinator.java.java_hashmap_order`); it decides the
   constrained builder's owned-keeping pass, the empty-first-subscription bug and same-generation
   conflict chains.
2. **Ownership sanitising (KIP-341).** Each member's claimed partitions (``member_data``: user data
   for the eager assignor, ``owned_partitions`` for the cooperative one) are checked against the
   claims seen so far: a claim from a higher generation wins, a lower one is ignored, and two
   claims in the *same* generation cancel each other (``partitionsWithMultiplePreviousOwners``).
   The other claimant's generation is read from its ``Subscription.generation_id``, as Kafka does.
   The largest generation seen is kept on the instance (``max_generation``) and, as in Kafka,
   never reset: it carries over to later calls on the same assignor.
3. **Builder choice.** If every member's raw topic list has the size of, and is contained in, the
   first visited non-empty member's topics, the constrained (uniform) builder runs; otherwise the
   general one. Non-existent topics count; an empty first subscription is mirrored (Kafka bug).
4. **Racks (KIP-881).** Rack-aware logic is used when members have racks, partition replicas have
   racks, the two intersect and some partition is not on every rack (or ``prefer_rack_aware_logic``,
   Kafka's test knob, is set).

Deviation (documented): an owned partition whose number is beyond its topic's current partition
count is dropped like a partition of a vanished topic; Kafka's builders (constrained and general)
keep it and hand it out again. Kafka never shrinks topics; only a topic re-created with fewer
partitions while members still claim the old ones reaches this.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from itertools import repeat
from operator import is_, itemgetter
from typing import Any, cast

import numpy as np
from attrs import define

from assignors.api import (
    Assignment,
    ClusterLike,
    PartitionAssignor,
    Subscription,
    TopicPartition,
    as_cluster,
)
from assignors.common import (
    AssignmentInputError,
    GroupTopics,
    check_inputs,
    existing_partition_counts,
)
from assignors.sticky_common_constrained import build_constrained
from assignors.sticky_common_general import PartitionMovements, build_general
from assignors.sticky_common_index import PartitionIndex, partition_index
from assignors.sticky_context import BuildResult, ClaimBatch, Claims, RackInfo, StickyContext
from assignors.sticky_user_data import DEFAULT_GENERATION
from coordinator.java import (
    java_hashmap_capacity,
    java_spread_hash,
    java_string_key,
    needs_utf16_order,
)

__all__ = [
    "AbstractStickyAssignor",
    "ClaimConflict",
    "MemberData",
]


@define(slots=True)
class MemberData:
    """``AbstractStickyAssignor.MemberData``: what a member claims to own, and since when."""

    partitions: Sequence[TopicPartition]
    generation: int | None


@define(slots=True, frozen=True)
class ClaimConflict:
    """Two members claimed one partition (KIP-341). ``resolution`` is ``revoked_from_both`` (same
    generation: a zombie is suspected), ``higher_generation_wins`` (the new claim replaced the
    old) or ``kept_by_other`` (the new claim, from a lower generation, was ignored)."""

    member_id: str
    other_member_id: str
    partition: TopicPartition
    generation_id: int
    other_generation_id: int
    resolution: str


def _all_subscriptions_equal(subs: list[Subscription], group: GroupTopics) -> bool:
    """Kafka's check, member by member in HashMap order: the first non-empty topic list sets the
    reference; every later list must have its size and be contained in it. Members sharing a
    topic list get the same answer, so each distinct list is checked once when no list is
    empty (an empty one counts only after the reference, so then the member loop runs). The
    reference member itself is never checked (its list may repeat a topic)."""
    if () not in group.lists:
        first = subs[0].topics if subs else ()
        common = set(first)
        size = len(common)
        return all(
            (len(t) == size and common.issuperset(t)) or (t == first and len(members) == 1)
            for t, members in group.lists.items()
        )
    uniform = True
    common = set()
    for sub in subs:
        if not common:
            common.update(sub.topics)
        elif uniform and not (len(sub.topics) == len(common) and common.issuperset(sub.topics)):
            uniform = False
    return uniform


_PIDS = itemgetter(0)  # Claims.pids
_GENERATION = itemgetter(1)  # Claims.generation

#: ``HashMap.hash`` of member ids seen before: a Java ``String`` caches its own hash, and a
#: group's leader assigns the same members again and again (bounded, cleared when full)
_SPREAD: dict[str, int] = {}
_SPREAD_LIMIT = 1 << 16


def _spread_hashes(ids: list[str]) -> list[int]:
    try:
        return list(map(_SPREAD.__getitem__, ids))
    except KeyError:
        return _spread_hashes_missing(ids)


def _spread_hash_array(ids: list[str]) -> np.ndarray:
    """:func:`_spread_hashes` as an array, read straight from the memo when it holds every id."""
    try:
        return np.fromiter(map(_SPREAD.__getitem__, ids), dtype=np.int64, count=len(ids))
    except KeyError:
        return np.array(_spread_hashes_missing(ids), dtype=np.int64)


def _spread_hashes_missing(ids: list[str]) -> list[int]:
    """:func:`_spread_hashes` when some id is not memoised yet."""
    if len(ids) > _SPREAD_LIMIT:
        return list(map(java_spread_hash, ids))
    if len(_SPREAD) + len(ids) > _SPREAD_LIMIT:
        _SPREAD.clear()
    for m in ids:
        if m not in _SPREAD:
            _SPREAD[m] = java_spread_hash(m)
    return list(map(_SPREAD.__getitem__, ids))


def member_order(ids: list[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Distinct member ids (input order) -> (the ids in Java ``HashMap`` iteration order, for
    each input position its position in that order, each member's rank in Java ``String``
    order of the ids, by HashMap position).

    The same order as :func:`coordinator.java.java_hashmap_order` (bucket ascending, insertion
    order within a bucket: a stable sort by bucket); sorting the ids in input order, which
    callers usually keep sorted, is cheaper than sorting them in hash order.
    """
    n = len(ids)
    mask = java_hashmap_capacity(n) - 1
    if n < 64:
        buckets = [h & mask for h in _spread_hashes(ids)]
        order = np.array(sorted(range(n), key=buckets.__getitem__), dtype=np.int64)
    else:
        order = np.argsort(_spread_hash_array(ids) & mask, kind="stable")
    order_list = order.tolist()
    members = list(map(ids.__getitem__, order_list))
    utf16 = needs_utf16_order(ids)
    if not utf16 and sorted(ids) == ids:  # the caller's order is id order: rank = input position
        rank = order
    else:
        if utf16:
            keys = [java_string_key(m) for m in ids]
            by_id = sorted(range(n), key=keys.__getitem__)
        else:
            by_id = sorted(range(n), key=ids.__getitem__)
        rank_in = np.empty(n, dtype=np.int64)
        rank_in[np.array(by_id, dtype=np.int64)] = np.arange(n, dtype=np.int64)
        rank = rank_in[order]
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n, dtype=np.int64)
    return members, position, rank


class AbstractStickyAssignor(PartitionAssignor):
    """Base of the two sticky assignors; subclasses say where ownership comes from (``member_data``).

    After a call, ``partitions_transferring_ownership`` holds the constrained builder's
    ``{TopicPartition: new owner}`` map (``None`` after a general-builder run), and
    :meth:`is_sticky` answers Kafka's test helper ``isSticky()`` for the last general-builder run.
    """

    def __init__(self, prefer_rack_aware_logic: bool = False, logger: Any = None) -> None:
        self.max_generation: int = DEFAULT_GENERATION
        self.prefer_rack_aware_logic = prefer_rack_aware_logic
        self.logger = logger
        self.partitions_transferring_ownership: dict[TopicPartition, str] | None = {}
        #: "constrained" or "general": the builder of the last call (Kafka logs this at debug)
        self.last_builder: str | None = None
        #: claims of the last call that collided (Kafka logs these as errors/warnings)
        self.last_conflicts: list[ClaimConflict] = []
        self._movements: PartitionMovements | None = None  # of the last general-builder run

    # -- subclass hooks ---------------------------------------------------------------------
    def member_data(self, subscription: Subscription) -> MemberData:
        raise NotImplementedError

    def member_claims(self, subscription: Subscription, index: PartitionIndex) -> Claims:
        """``member_data`` as partition ids (claims outside the index dropped) and generation."""
        data = self.member_data(subscription)
        return Claims(index.pids(data.partitions), data.generation)

    # -- Kafka's test helpers -----------------------------------------------------------------
    def is_sticky(self) -> bool:
        """``AbstractStickyAssignor.isSticky()``: no partition of a topic moved A->B and B->A.

        Like Kafka, this describes the last *general-builder* run; before any such run it raises
        (Kafka throws a NullPointerException there).
        """
        if self._movements is None:
            raise RuntimeError("is_sticky() is only defined after a general-builder assignment")
        return self._movements.is_sticky()

    # -- the assignment -------------------------------------------------------------------------
    def assign(self, cluster: ClusterLike, subscriptions: Mapping[str, Subscription]) -> Assignment:
        ctx, result = self._assign_ids(cluster, subscriptions)
        return self._result_to_assignment(
            ctx, result.flat, result.sizes, subscriptions, result.runs
        )

    @staticmethod
    def _to_assignment(
        ctx: StickyContext | None,
        lists: Sequence[np.ndarray | list[int]],
        subscriptions: Mapping[str, Subscription],
    ) -> Assignment:
        """pid lists -> ``{member: [TopicPartition]}`` in the caller's member order."""
        if ctx is None:
            return {}
        built = BuildResult.from_lists(lists, None)
        return AbstractStickyAssignor._result_to_assignment(
            ctx, built.flat, built.sizes, subscriptions
        )

    @staticmethod
    def _result_to_assignment(
        ctx: StickyContext | None,
        flat: np.ndarray,
        sizes: np.ndarray,
        subscriptions: Mapping[str, Subscription],
        runs: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> Assignment:
        """Flat pids and per-member sizes -> ``{member: [TopicPartition]}`` in the caller's
        member order (:meth:`PartitionIndex.partition_lists`; ``runs``: the builder's)."""
        if ctx is None:
            return {}
        if ctx.position is not None:
            lists = ctx.index.partition_lists(flat, sizes, runs, ctx.position)
            # the caller's keys: a copy of its dict's key table (one step for a dict) whose
            # values are then replaced, cheaper than inserting the keys one by one
            out = cast("Assignment", dict(subscriptions))
            out.update(zip(subscriptions, lists, strict=True))
            return out
        lists = ctx.index.partition_lists(flat, sizes, runs)
        by_member = dict(zip(ctx.members, lists, strict=True))
        return {m: by_member[m] for m in subscriptions}

    def _assign_ids(
        self, cluster: ClusterLike, subscriptions: Mapping[str, Subscription]
    ) -> tuple[StickyContext | None, BuildResult]:
        meta = as_cluster(cluster)
        group = check_inputs(meta, subscriptions)
        if not subscriptions:
            # Kafka divides by the member count here and throws; an empty group gets nothing.
            self.partitions_transferring_ownership = {}
            return None, BuildResult.from_lists([], {})
        counts = existing_partition_counts(meta, group.topics)
        index = partition_index(counts)
        members, position, rank = member_order(list(subscriptions))
        subs = list(map(subscriptions.__getitem__, members))
        ctx = StickyContext(
            index=index,
            members=members,
            subs=subs,
            rank=rank,
            racks=RackInfo(index, meta, subs, self.prefer_rack_aware_logic),
            position=position,
        )
        self.last_conflicts = []
        uniform = _all_subscriptions_equal(subs, group)
        batch = self._claim_batch(subs, index)
        owned_flat = batch.flat if batch is not None else None
        if batch is not None and uniform and self._batch_is_clean(batch, index):
            # the constrained builder reads the claims as a whole: no array per member
            self.last_builder = "constrained"
            result = build_constrained(ctx, None, set(), batch.flat, batch.sizes)
            claims = None
        else:
            claims = batch.cut() if batch is not None else self._all_claims(members, subs, index)
            owned, multi, owned_flat = self._sanitise(ctx, claims, owned_flat)
            self.last_builder = "constrained" if uniform else "general"
            if uniform:
                result = build_constrained(ctx, owned, multi, owned_flat)
            else:
                result, self._movements = build_general(
                    ctx, owned, claims, self.max_generation, group.lists.keys(), owned_flat
                )
        if uniform:
            self.partitions_transferring_ownership = {
                index.flat[p]: members[m] for p, m in (result.transferring or {}).items()
            }
        else:
            self.partitions_transferring_ownership = None
        result.claims = claims
        result.claims_flat = owned_flat  # when known, the claims are the owned lists
        if self.logger is not None:
            self._log(ctx)
        return ctx, result

    def _claim_batch(self, subs: list[Subscription], index: PartitionIndex) -> ClaimBatch | None:
        """Every member's claims as one :class:`ClaimBatch`, when a subclass reads them so;
        ``None``: :meth:`_all_claims` reads them member by member."""
        return None

    def _batch_is_clean(self, batch: ClaimBatch, index: PartitionIndex) -> bool:
        """Note the batch's generations (``max_generation``); True when no partition is claimed
        twice, so that the claims are the owned lists as they stand (see :meth:`_sanitise`)."""
        self._note_generations(batch.generations)
        flat = batch.flat
        return not flat.size or int(np.bincount(flat, minlength=index.n).max()) <= 1

    def _note_generations(self, generations: list[int | None]) -> None:
        """``maxGeneration``: the largest generation claimed, kept across calls as in Kafka."""
        seen = set(generations)
        seen.discard(None)
        top = max(cast("set[int]", seen), default=DEFAULT_GENERATION)
        self.max_generation = max(self.max_generation, top)

    def _all_claims(
        self, members: list[str], subs: list[Subscription], index: PartitionIndex
    ) -> list[Claims]:
        """Every member's claims, in context order (a subclass may decode them all at once)."""
        return [self._claims_checked(m, s, index) for m, s in zip(members, subs, strict=True)]

    def _claims_checked(self, member: str, sub: Subscription, index: PartitionIndex) -> Claims:
        """``member_claims``, turning malformed ownership input into a clear error."""
        try:
            return self.member_claims(sub, index)
        except (TypeError, ValueError) as exc:
            raise AssignmentInputError(
                f"member {member!r}: owned partitions / user data are malformed "
                f"(expected TopicPartition(topic, partition) items and bytes): {exc}"
            ) from exc

    def _log(self, ctx: StickyContext) -> None:
        """Events for the log (docs/events.md); the caller's bound logger adds ``t_ms``/``node``."""
        for c in self.last_conflicts:
            self.logger.warning(
                "sticky_claim_conflict",
                assignor=self.name,
                member_id=c.member_id,
                other_member_id=c.other_member_id,
                topic=c.partition.topic,
                partition=c.partition.partition,
                generation_id=c.generation_id,
                other_generation_id=c.other_generation_id,
                resolution=c.resolution,
            )
        moving = self.partitions_transferring_ownership
        self.logger.info(
            "sticky_assignment_built",
            assignor=self.name,
            builder=self.last_builder,
            members=len(ctx.members),
            partitions=ctx.index.n,
            max_generation=self.max_generation,
            claim_conflicts=len(self.last_conflicts),
            transferring=None if moving is None else len(moving),
        )

    def _sanitise(
        self, ctx: StickyContext, claims: list[Claims], flat: np.ndarray | None = None
    ) -> tuple[list[np.ndarray], set[int], np.ndarray | None]:
        """KIP-341's sanitising of the claims: owned lists (pids), doubly-claimed pids, and the
        owned lists concatenated when that is known (the claims, none conflicting; ``flat``: the
        claims concatenated, if the caller has them)."""
        first = claims[0]
        if not len(first.pids) and all(map(is_, claims, repeat(first))):
            # one shared empty claim (a fresh group): one C-level identity pass decides
            if first.generation is not None:
                self.max_generation = max(self.max_generation, first.generation)
            return [first.pids] * len(claims), set(), None
        # C-level passes over the members: this runs on every call, whatever the group's size
        self._note_generations(list(map(_GENERATION, claims)))
        arrays = list(map(_PIDS, claims))
        if flat is None:
            nonempty = list(filter(len, arrays))
            if not nonempty:
                return arrays, set(), None
            flat = np.concatenate(nonempty)
        if not flat.size:
            return arrays, set(), None
        if np.bincount(flat, minlength=ctx.index.n).max() <= 1:
            return arrays, set(), flat
        gens = [DEFAULT_GENERATION if c.generation is None else c.generation for c in claims]
        owned, multi, conflicts = self._sanitise_conflicts(ctx, [a.tolist() for a in arrays], gens)
        self.last_conflicts = conflicts
        return owned, multi, None

    @staticmethod
    def _sanitise_conflicts(
        ctx: StickyContext, claims: list[list[int]], gens: list[int]
    ) -> tuple[list[np.ndarray], set[int], list[ClaimConflict]]:
        """The exact claim-by-claim pass, used only when some partition is claimed twice."""
        other_gen = [
            s.generation_id if s.generation_id >= 0 else DEFAULT_GENERATION for s in ctx.subs
        ]
        owner_of: dict[int, int] = {}
        owned: list[list[int]] = [[] for _ in claims]
        multi: set[int] = set()
        conflicts: list[ClaimConflict] = []
        for m, (claim, gen) in enumerate(zip(claims, gens, strict=True)):
            mine = owned[m]
            for p in claim:
                other = owner_of.get(p)
                if other is None:
                    mine.append(p)
                    owner_of[p] = m
                    continue
                og = other_gen[other]
                if gen == og:
                    multi.add(p)
                    _remove_first(owned[other], p)
                    owner_of[p] = m
                    resolution = "revoked_from_both"
                elif gen > og:
                    mine.append(p)
                    _remove_first(owned[other], p)
                    owner_of[p] = m
                    resolution = "higher_generation_wins"
                else:
                    resolution = "kept_by_other"
                conflicts.append(
                    ClaimConflict(
                        ctx.members[m], ctx.members[other], ctx.index.flat[p], gen, og, resolution
                    )
                )
        return [np.asarray(o, dtype=np.int64) for o in owned], multi, conflicts


def _remove_first(items: list[int], value: int) -> None:
    """Java ``List.remove(Object)``: drop the first occurrence, if any."""
    with contextlib.suppress(ValueError):
        items.remove(value)
