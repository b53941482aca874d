"""Kafka's ``ConstrainedAssignmentBuilder`` (KAFKA-9987): the sticky path for uniform subscriptions.

Same steps and tie-breaks as Kafka; the data structures are integer arrays:

1. Keep owned partitions, visiting members in Java ``HashMap`` order (see ``sticky_common``): each
   member's owned list (rack-mismatched ones dropped, doubly-claimed ones dropped) is sorted by
   (partition, topic) (Kafka 3.8+, KAFKA-16277) and cut to ``minQuota`` or, while "max slots"
   remain, ``maxQuota``. Who keeps a max slot therefore depends on HashMap order.
2. Unassigned partitions in (topic, partition) order; if members have racks, stably re-sorted by
   how many members sit on the partition's racks.
3. Rack-aware round robin (only when rack-aware): a literal port.
4. Round robin: Kafka deals the unassigned partitions cyclically over the members under
   ``minQuota`` (sorted by member id), moving each member that reaches ``minQuota`` to the end of
   the "exactly min" list, then hands one more partition to each member popped from the front of
   that list. Dealing cyclically with removal is the same as ordering the picks by (round, position
   in the under-min list), and the second phase is a slice of a queue, so the whole step is a few
   numpy operations instead of a loop over a million partitions.

A fresh group (nothing owned, no member racks) skips the steps: the deal is then a table
(:func:`_deal_fresh`), which tests check against the steps.

``partitionsTransferringOwnership`` records a newly placed partition whose previous owner had it
trimmed away (``maybeRevokedPartitions``), or that was claimed by several owners.
"""

from __future__ import annotations

import numpy as np

from assignors.sticky_context import BuildResult, StickyContext, split_by_sizes


class StickyAssignmentError(RuntimeError):
    """Kafka's ``IllegalStateException`` from the builders: an internal inconsistency."""


def build_constrained(
    ctx: StickyContext,
    owned: list[np.ndarray] | None,
    multi: set[int],
    owned_flat: np.ndarray | None = None,
    owned_sizes: np.ndarray | None = None,
) -> BuildResult:
    """``owned``: each member's owned pids; or ``None``, and the owned pids given as
    ``owned_flat`` (all lists concatenated) cut by ``owned_sizes``. ``owned_flat`` alone: the
    owned lists concatenated, if the caller has them."""
    index = ctx.index
    racks = ctx.racks
    n_members = len(ctx.members)
    total = index.n
    min_q = total // n_members
    max_q = -(-total // n_members)
    expected_over = total % n_members
    if owned is None:
        assert owned_flat is not None and owned_sizes is not None  # the other form
        if _is_fresh(ctx, not owned_flat.size, multi):
            return _deal_fresh(ctx, total, n_members)
        sizes = owned_sizes
    else:
        if _is_fresh(ctx, not any(map(len, owned)), multi):
            return _deal_fresh(ctx, total, n_members)
        sizes = np.fromiter(map(len, owned), dtype=np.int64, count=len(owned))

    # 1. keep owned partitions, in HashMap order of members
    maybe_revoked = np.full(total, -1, dtype=np.int64) if total else np.zeros(0, dtype=np.int64)
    if racks.enabled or multi:
        if owned is None:
            owned = split_by_sizes(owned_flat, sizes.tolist())  # type: ignore[arg-type]
        kept_flat, kept_mem, counts, under_min, exactly_min, current_over = _keep_owned_loop(
            ctx, owned, multi, min_q, max_q, expected_over, maybe_revoked
        )
    else:
        kept_flat, kept_mem, counts, under_min, exactly_min, current_over = _keep_owned(
            ctx, sizes, min_q, max_q, expected_over, maybe_revoked, owned, owned_flat
        )

    # 2. unassigned partitions, (topic, partition) order
    assigned = np.zeros(total, dtype=bool)
    assigned[kept_flat] = True
    unassigned = np.flatnonzero(~assigned)
    rank = ctx.rank
    under_min.sort(key=rank.__getitem__)
    exactly_min.sort(key=rank.__getitem__)
    if racks.num_consumers is not None and unassigned.size:
        unassigned = unassigned[np.argsort(racks.num_consumers[unassigned], kind="stable")]

    new_pids: list[np.ndarray] = []
    new_members: list[np.ndarray] = []

    # 3. rack-aware round robin (literal port; only with rack-aware logic)
    if racks.enabled and unassigned.size:
        unassigned, current_over = _rack_aware_round_robin(
            ctx,
            unassigned,
            under_min,
            exactly_min,
            counts,
            min_q,
            max_q,
            expected_over,
            current_over,
            new_pids,
            new_members,
        )

    # 4. round robin over the members under minQuota, then one more each from "exactly min"
    if unassigned.size:
        _round_robin(unassigned, under_min, exactly_min, counts, min_q, new_pids, new_members)
        under_min = [m for m in under_min if counts[m] < min_q]
    if under_min and any(counts[m] != min_q for m in under_min):
        raise StickyAssignmentError(
            "constrained sticky assignment left members under minQuota with no partitions left"
        )

    # results: kept (sorted owned) first, then newly placed partitions in placement order
    if not new_pids:
        return BuildResult(kept_flat, counts, {})
    placed = np.concatenate(new_pids) if len(new_pids) > 1 else new_pids[0]
    placed_to = np.concatenate(new_members) if len(new_members) > 1 else new_members[0]
    transferring: dict[int, int] = {}
    prev = maybe_revoked[placed]
    moving = (prev >= 0) & (prev != placed_to)
    if multi:
        moving |= np.isin(placed, np.fromiter(multi, dtype=np.int64, count=len(multi)))
    if moving.any():
        transferring = dict(zip(placed[moving].tolist(), placed_to[moving].tolist(), strict=True))
    flat = _group_by_member(kept_flat, kept_mem, placed, placed_to, n_members)
    return BuildResult(flat, counts, transferring)


def _is_fresh(ctx: StickyContext, nothing_owned: bool, multi: set[int]) -> bool:
    """Nobody keeps anything and no member has a rack: :func:`_deal_fresh` gives the result."""
    return bool(ctx.members) and nothing_owned and not multi and ctx.racks.num_consumers is None


def _deal_fresh(ctx: StickyContext, total: int, n_members: int) -> BuildResult:
    """Steps 1-4 when nobody owns anything and no member has a rack (a fresh group).

    Nothing is kept, so the unassigned partitions are all of them in (topic, partition) order,
    and every member is under ``minQuota`` (or, when ``minQuota`` is 0, in "exactly min"): the
    round robin deals partition ``i`` to the member at position ``i mod M`` in member-id order,
    and the ``maxQuota`` extras continue the same rotation (members reach ``minQuota`` in list
    order and queue in it). So the member at position ``j`` gets ``j, j + M, j + 2M, ...``:
    that table, rows in context order, is the result, and those progressions are its ``runs``;
    nothing transfers ownership.
    """
    max_q = -(-total // n_members)
    steps = np.arange(0, max_q * n_members, n_members, dtype=np.int64)
    flat = (ctx.rank[:, None] + steps).ravel()
    counts = np.full(n_members, total // n_members, dtype=np.int64)
    if max_q * n_members != total:
        counts += ctx.rank < total % n_members
        flat = flat[flat < total]
    runs = (ctx.rank, np.full(n_members, n_members, dtype=np.int64))
    return BuildResult(flat, counts, {}, runs=runs)


def _keep_owned(
    ctx: StickyContext,
    sizes: np.ndarray,
    min_q: int,
    max_q: int,
    expected_over: int,
    maybe_revoked: np.ndarray,
    owned: list[np.ndarray] | None,
    owned_flat: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int], list[int], int]:
    """Step 1 without racks or doubly-claimed partitions, for all members at once.

    Kafka's member loop in closed form: the first ``expected_over`` members (HashMap order) that
    own at least ``maxQuota`` keep ``maxQuota``, the others at least ``minQuota`` keep
    ``minQuota``, the rest keep all they own. "Exactly min" ends up empty once the max slots are
    used up (Kafka clears it then and adds no more), else it holds every member that kept
    ``minQuota``. Owned lists are sorted by (partition, topic) in one sort keyed by member.
    Returns (kept pids grouped by member, their members, kept counts, under min, exactly min,
    max slots used); the trimmed tails are recorded in ``maybe_revoked``. ``sizes``: each
    member's owned count; ``owned`` its owned pids, or ``None`` when ``owned_flat`` holds them.
    """
    n_members = sizes.size
    over = np.zeros(0, dtype=np.int64)
    if expected_over:
        over = np.flatnonzero(sizes >= max_q)[:expected_over]
    current_over = int(over.size)
    quota = np.full(n_members, min_q, dtype=np.int64)
    quota[over] = max_q
    counts = np.minimum(sizes, quota)
    under_min = np.flatnonzero(sizes < min_q).tolist()
    exactly_min: list[int] = []
    if current_over < expected_over:
        at_min = sizes >= min_q
        at_min[over] = False
        exactly_min = np.flatnonzero(at_min).tolist()
    owned_total = int(sizes.sum())
    if not owned_total:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, counts, under_min, exactly_min, current_over
    index = ctx.index
    sort_key = index.partition_topic_key
    long_lists = owned_total >= 64 * n_members
    if long_lists:
        # one small sort per member beats one sort of everything
        if owned is None:
            assert owned_flat is not None  # the other form of the owned lists
            owned = split_by_sizes(owned_flat, sizes.tolist())
        flat = np.concatenate(
            [a[np.argsort(sort_key[a], kind="stable")] for a in owned if a.size]
        ).astype(np.int64, copy=False)
    else:
        if owned_flat is None:
            assert owned is not None
            owned_flat = np.concatenate(list(filter(len, owned)))
        flat = owned_flat.astype(np.int64, copy=False)
    mem = np.repeat(np.arange(n_members, dtype=np.int64), sizes)
    if not long_lists and int(sizes.max()) > 1:
        span = max(index.count_list, default=1) * max(1, len(index.topics))  # > any key
        if n_members * span < 2**62:
            # (member, key) as one integer: one stable sort several times faster than numpy's
            # lexsort of the two columns, and none when the lists are sorted already (as the
            # lists this builder hands out are, kept partitions first, while nothing was added)
            keyed = mem * span + sort_key[flat]
            if not bool((keyed[1:] >= keyed[:-1]).all()):
                flat = flat[np.argsort(keyed, kind="stable")]
        else:
            flat = flat[np.lexsort((sort_key[flat], mem))]
    starts = np.cumsum(sizes) - sizes
    keep = np.arange(owned_total, dtype=np.int64) - starts[mem] < quota[mem]
    if keep.all():
        return flat, mem, counts, under_min, exactly_min, current_over
    trimmed = ~keep
    maybe_revoked[flat[trimmed]] = mem[trimmed]
    return flat[keep], mem[keep], counts, under_min, exactly_min, current_over


def _keep_owned_loop(
    ctx: StickyContext,
    owned: list[np.ndarray],
    multi: set[int],
    min_q: int,
    max_q: int,
    expected_over: int,
    maybe_revoked: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int], list[int], int]:
    """Step 1 member by member, as Kafka does: with racks (mismatched partitions dropped) or
    partitions claimed by several members (dropped from every list). Same outputs as
    :func:`_keep_owned`."""
    index = ctx.index
    racks = ctx.racks
    n_members = len(owned)
    current_over = 0
    counts = np.zeros(n_members, dtype=np.int64)
    kept: list[np.ndarray] = []
    under_min: list[int] = []
    exactly_min: list[int] = []
    sort_key = None
    for m in range(n_members):
        mine = owned[m]
        if mine.size and racks.enabled:
            keep = [p for p in mine.tolist() if not racks.racks_mismatch(m, p)]
            lost = [p for p in mine.tolist() if racks.racks_mismatch(m, p)]
            if lost:
                maybe_revoked[np.asarray(lost, dtype=np.int64)] = m
            mine = np.asarray(keep, dtype=np.int64)
        if mine.size > 1:
            if sort_key is None:
                sort_key = index.partition_topic_key
            mine = mine[np.argsort(sort_key[mine], kind="stable")]
        if multi and mine.size:
            as_list = mine.tolist()
            for p in multi:
                if p in as_list:
                    as_list.remove(p)
            mine = np.asarray(as_list, dtype=np.int64)
        size = int(mine.size)
        if size < min_q:
            kept.append(mine)
            under_min.append(m)
        elif size >= max_q and current_over < expected_over:
            current_over += 1
            if current_over == expected_over:
                exactly_min.clear()
            kept.append(mine[:max_q])
            if size > max_q:
                maybe_revoked[mine[max_q:]] = m
        else:
            kept.append(mine[:min_q])
            if size > min_q:
                maybe_revoked[mine[min_q:]] = m
            if current_over < expected_over:
                exactly_min.append(m)
        counts[m] = kept[-1].size
    nonempty = [k for k in kept if k.size]
    flat = (
        np.concatenate(nonempty).astype(np.int64, copy=False)
        if nonempty
        else np.zeros(0, dtype=np.int64)
    )
    mem = np.repeat(np.arange(n_members, dtype=np.int64), counts)
    return flat, mem, counts, under_min, exactly_min, current_over


def _group_by_member(
    kept: np.ndarray,
    kept_mem: np.ndarray,
    placed: np.ndarray,
    placed_to: np.ndarray,
    n_members: int,
) -> np.ndarray:
    """Every member's partitions, members in context order: its kept ones, then its newly
    placed ones in placement order.

    Fast path: nothing kept and a single dealing round where every member took the same number
    of partitions in strict rotation (a fresh group) is a reshape; otherwise a stable sort by
    member (kept entries come first in the sort's input, so they stay first).
    """
    if not kept.size and placed_to.size:
        k = min(placed_to.size, n_members)
        head = placed_to[:k]
        if (
            placed_to.size % k == 0
            and np.unique(head).size == k
            and np.array_equal(placed_to, np.tile(head, placed_to.size // k))
        ):
            table = placed.reshape(placed_to.size // k, k).T
            return table[np.argsort(head)].ravel()
    members = np.concatenate((kept_mem, placed_to))
    return np.concatenate((kept, placed))[np.argsort(members, kind="stable")]


def _round_robin(
    unassigned: np.ndarray,
    under_min: list[int],
    exactly_min: list[int],
    counts: np.ndarray,
    min_q: int,
    new_pids: list[np.ndarray],
    new_members: list[np.ndarray],
) -> None:
    """Kafka's ``assignRoundRobin`` in closed form (see the module docstring)."""
    remaining = int(unassigned.size)
    under = np.asarray(under_min, dtype=np.int64)
    deficit = min_q - counts[under] if under.size else np.zeros(0, dtype=np.int64)
    phase1 = int(deficit.sum())
    if under.size:
        if deficit.min() == deficit.max():
            picks = np.tile(np.arange(under.size, dtype=np.int64), int(deficit[0]))
        else:
            pos = np.repeat(np.arange(under.size, dtype=np.int64), deficit)
            starts = np.repeat(np.cumsum(deficit) - deficit, deficit)
            rounds = np.arange(phase1, dtype=np.int64) - starts
            picks = pos[np.argsort(rounds * under.size + pos, kind="stable")]
        picks = picks[:remaining]
        who = under[picks]
    else:
        who = np.zeros(0, dtype=np.int64)
    extra = remaining - who.size
    if extra > 0:
        # members reach minQuota at round deficit-1, in list order, and queue behind exactly_min
        reached = under[np.lexsort((np.arange(under.size), deficit))] if under.size else under
        queue = np.concatenate((np.asarray(exactly_min, dtype=np.int64), reached))
        if extra > queue.size:
            raise StickyAssignmentError("No more unfilled consumers to be assigned.")
        who = np.concatenate((who, queue[:extra]))
    counts += np.bincount(who, minlength=counts.size)
    new_pids.append(unassigned)
    new_members.append(who)


def _rack_aware_round_robin(
    ctx: StickyContext,
    unassigned: np.ndarray,
    under_min: list[int],
    exactly_min: list[int],
    counts: np.ndarray,
    min_q: int,
    max_q: int,
    expected_over: int,
    current_over: int,
    new_pids: list[np.ndarray],
    new_members: list[np.ndarray],
) -> tuple[np.ndarray, int]:
    """Kafka's ``assignRackAwareRoundRobin``, step by step (rack-aware groups are small)."""
    racks = ctx.racks

    def next_rack_consumer(pid: int, members: list[int], first: int) -> int:
        prs = racks.partition_racks[pid]
        if not prs:
            return -1
        n = len(members)
        for i in range(n):
            idx = (first + i) % n
            rack = racks.consumer_racks.get(members[idx])
            if rack is not None and rack in prs:
                return idx
        return -1

    next_index = 0
    left: list[int] = []
    placed: list[int] = []
    placed_to: list[int] = []
    for pid in unassigned.tolist():
        member = -1
        idx = next_rack_consumer(pid, under_min, next_index)
        if idx >= 0:
            member = under_min[idx]
            new_count = int(counts[member]) + 1
            if new_count >= min_q:
                under_min.remove(member)
                if new_count < max_q and current_over < expected_over:
                    exactly_min.append(member)
            else:
                idx += 1
            next_index = idx % len(under_min) if under_min else 0
        elif exactly_min:
            first = next_rack_consumer(pid, exactly_min, 0)
            if first >= 0:
                member = exactly_min[first]
                if int(counts[member]) + 1 == max_q:
                    del exactly_min[first]
                    current_over += 1
                    if current_over == expected_over:
                        exactly_min.clear()
        if member >= 0:
            counts[member] += 1
            placed.append(pid)
            placed_to.append(member)
        else:
            left.append(pid)
    if placed:
        new_pids.append(np.asarray(placed, dtype=np.int64))
        new_members.append(np.asarray(placed_to, dtype=np.int64))
    return np.asarray(left, dtype=np.int64), current_over
