"""``cooperative-sticky``: Kafka's ``CooperativeStickyAssignor`` (KIP-429), COOPERATIVE and EAGER.

Ownership comes from ``Subscription.owned_partitions``; the generation from
``Subscription.generation_id`` when present (protocol v2+, KIP-792; negative means absent), else
from the int32 in this assignor's own user data, else absent.

The sticky assignment is then *adjusted*: a partition that moves from a current owner to a
different member is removed from the new owner's list for this round (KIP-429). Its old owner,
not finding it in its assignment, revokes it and rejoins; the follow-up rebalance hands it to the
new owner. So no partition is ever given to a new owner while its previous owner still lists it,
and a cooperative round is usually incomplete and unbalanced until the follow-up. Which partitions
are withheld:

* constrained builder: its ``partitionsTransferringOwnership`` (trimmed from another owner, or
  claimed by several owners; the latter are withheld although nobody keeps them, KAFKA-14639);
* general builder: every partition added to some member that some (other) member owned and lost.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat
from operator import attrgetter
from typing import Any

import numpy as np

from assignors.api import (
    Assignment,
    ClusterLike,
    RebalanceProtocol,
    Subscription,
    TopicPartition,
)
from assignors.sticky_common import AbstractStickyAssignor, MemberData
from assignors.sticky_common_index import PartitionIndex
from assignors.sticky_context import BuildResult, ClaimBatch, Claims, StickyContext
from assignors.sticky_user_data import (
    DEFAULT_GENERATION,
    decode_cooperative_user_data,
    encode_cooperative_user_data,
)

__all__ = ["CooperativeStickyAssignor"]

_OWNED = attrgetter("owned_partitions")
_USER_DATA = attrgetter("user_data")
_EMPTY = np.zeros(0, dtype=np.int64)
_GENERATION_ID = attrgetter("generation_id")


class CooperativeStickyAssignor(AbstractStickyAssignor):
    name = "cooperative-sticky"
    supported_protocols = (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER)
    version = 0

    def __init__(self, prefer_rack_aware_logic: bool = False, logger: Any = None) -> None:
        super().__init__(prefer_rack_aware_logic=prefer_rack_aware_logic, logger=logger)
        self.generation: int = DEFAULT_GENERATION

    def on_assignment(self, assignment: Sequence[TopicPartition], generation_id: int) -> None:
        self.generation = generation_id

    def subscription_user_data(self, topics: Iterable[str]) -> bytes | None:
        return encode_cooperative_user_data(self.generation)

    def member_data(self, subscription: Subscription) -> MemberData:
        if subscription.generation_id >= 0:
            return MemberData(subscription.owned_partitions, subscription.generation_id)
        return MemberData(
            subscription.owned_partitions, decode_cooperative_user_data(subscription.user_data)
        )

    def _claim_batch(self, subs: list[Subscription], index: PartitionIndex) -> ClaimBatch | None:
        """Every member's owned partitions converted to ids in one pass; ``None`` for long
        lists and malformed input: :meth:`_all_claims` reads those member by member (an error
        then names the member)."""
        try:
            if (
                not any(map(_OWNED, subs))
                and not any(map(_USER_DATA, subs))
                and max(map(_GENERATION_ID, subs), default=-1) < 0
            ):
                return ClaimBatch.nothing(len(subs))  # a fresh group
            batch = index.pids_flat(list(map(_OWNED, subs)))
            if batch is None:
                return None
            flat, sizes = batch
            return ClaimBatch(flat, np.array(sizes, dtype=np.int64), _generations(subs))
        except (TypeError, ValueError, OverflowError):  # e.g. a generation beyond int64
            return None

    def _all_claims(
        self, members: list[str], subs: list[Subscription], index: PartitionIndex
    ) -> list[Claims]:
        """Long owned lists converted list by list; malformed input takes the member-by-member
        path, whose error names the member."""
        owned = list(map(_OWNED, subs))
        try:
            pids = index.pids_of_many(owned)
            gens = _generations(subs)
        except (TypeError, ValueError, OverflowError):
            return super()._all_claims(members, subs, index)
        # the tuples built in C (``Claims`` adds nothing to ``tuple.__new__``): one per member
        return list(map(tuple.__new__, repeat(Claims), zip(pids, gens, strict=True)))

    def assign(self, cluster: ClusterLike, subscriptions: Mapping[str, Subscription]) -> Assignment:
        ctx, result = self._assign_ids(cluster, subscriptions)
        if ctx is None:
            return {}
        withheld = (
            result.transferring
            if result.transferring is not None
            else _transferring_by_diff(ctx, result)
        )
        flat, sizes, runs = result.flat, result.sizes, result.runs
        if withheld:
            runs = None
            mask = np.zeros(ctx.index.n, dtype=bool)
            mask[np.fromiter(withheld, dtype=np.int64, count=len(withheld))] = True
            keep = ~mask[flat]
            sizes = np.bincount(result.owners()[keep], minlength=sizes.size)
            flat = flat[keep]
        return self._result_to_assignment(ctx, flat, sizes, subscriptions, runs)


def _generations(subs: list[Subscription]) -> list[int | None]:
    """Each member's generation: ``Subscription.generation_id``, or where that is negative
    (absent) the one in its user data. Raises on a malformed generation."""
    ids: list[int] = list(map(_GENERATION_ID, subs))
    gens: list[int | None] = list(ids)
    if min(ids) < 0:  # those members' generation is in their user data
        at = np.fromiter(ids, dtype=np.int64, count=len(ids))
        for m in np.flatnonzero(at < 0).tolist():
            data = subs[m].user_data
            gens[m] = None if data is None else decode_cooperative_user_data(data)
    return gens


def _transferring_by_diff(ctx: StickyContext, result: BuildResult) -> dict[int, int]:
    """``computePartitionsTransferringOwnership``: added to someone AND revoked from someone."""
    n = ctx.index.n
    final_owner = np.full(n, -1, dtype=np.int64)
    final_owner[result.flat] = result.owners()
    # member_data's partitions are exactly Subscription.owned_partitions for this assignor
    claims = (
        [c.pids for c in result.claims]
        if result.claims is not None
        else [ctx.index.pids(sub.owned_partitions) for sub in ctx.subs]
    )
    sizes = np.fromiter(map(len, claims), dtype=np.int64, count=len(claims))
    kept_by_owner = np.zeros(n, dtype=bool)
    revoked = np.zeros(n, dtype=bool)
    if sizes.any():
        pids = (
            result.claims_flat
            if result.claims_flat is not None
            else np.concatenate([c for c in claims if c.size])
        )
        claimant = np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)
        mine = final_owner[pids] == claimant
        kept_by_owner[pids[mine]] = True
        revoked[pids[~mine]] = True
    added = (final_owner >= 0) & ~kept_by_owner
    moving = np.flatnonzero(added & revoked)
    return dict(zip(moving.tolist(), final_owner[moving].tolist(), strict=True))
