"""What the two sticky builders share with ``AbstractStickyAssignor``: their input (the
partition index, members in Java ``HashMap`` order, their ranks and racks, each member's claims)
and their output (per member partition ids, and the constrained builder's transfers).

Kept apart from :mod:`assignors.sticky_common` so that the builders
(:mod:`assignors.sticky_common_constrained`, :mod:`assignors.sticky_common_general`) and the
assignor that runs them import it, and not each other.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from itertools import repeat
from operator import attrgetter
from typing import NamedTuple

import numpy as np
from attrs import define

from assignors.api import ClusterMetadata, Subscription
from assignors.sticky_common_index import PartitionIndex, cut_by_sizes

_RACK_ID = attrgetter("rack_id")
_EMPTY = np.zeros(0, dtype=np.int64)


class RackInfo:
    """KIP-881 rack data for one call (Kafka's ``AbstractStickyAssignor.RackInfo``).

    ``consumer_racks`` (member index -> rack) is filled only when rack-aware logic is in use, so
    ``racks_mismatch`` is always False otherwise. ``num_consumers`` (pid -> number of members on
    the partition's racks) is computed whenever some member has a rack, as in Kafka, and orders the
    constrained builder's unassigned partitions.
    """

    def __init__(
        self,
        index: PartitionIndex,
        cluster: ClusterMetadata,
        subs: Sequence[Subscription],
        prefer_rack_aware_logic: bool,
    ) -> None:
        self.consumer_racks: dict[int, str] = {}
        self.partition_racks: list[frozenset[str]] = []
        self.num_consumers: np.ndarray | None = None
        if not any(map(_RACK_ID, subs)):  # one C pass: usually nobody has a rack
            return
        consumers_by_rack: dict[str, list[int]] = {}
        for m, sub in enumerate(subs):
            if sub.rack_id:
                consumers_by_rack.setdefault(sub.rack_id, []).append(m)
        empty: frozenset[str] = frozenset()
        if cluster.partition_racks:
            racks = [
                cluster.racks_of(t, p)
                for t, c in zip(index.topics, index.counts.tolist(), strict=True)
                for p in range(c)
            ]
        else:
            racks = [empty] * index.n
        all_racks: set[str] = set().union(*racks) if racks else set()
        self.num_consumers = np.fromiter(
            (sum(len(consumers_by_rack.get(r, ())) for r in rs) for rs in racks),
            dtype=np.int64,
            count=index.n,
        )
        if all_racks.isdisjoint(consumers_by_rack):
            return
        if prefer_rack_aware_logic or any(rs != all_racks for rs in racks):
            for rack, members in consumers_by_rack.items():
                for m in members:
                    self.consumer_racks[m] = rack
            self.partition_racks = racks

    @property
    def enabled(self) -> bool:
        return bool(self.consumer_racks)

    def racks_mismatch(self, member: int, pid: int) -> bool:
        rack = self.consumer_racks.get(member)
        return rack is not None and rack not in self.partition_racks[pid]


class Claims(NamedTuple):
    """A member's claimed partitions as ids (in its own order) and its generation (None: absent).

    A tuple: one is built per member on every call."""

    pids: np.ndarray
    generation: int | None


class ClaimBatch(NamedTuple):
    """Every member's claims at once, members in context order: their partition ids one after
    the other (``sizes[m]`` of them for member ``m``) and their generations. One array for the
    group instead of one per member: the constrained builder reads the claims only as a whole,
    and a thousand small arrays cost more than the ids in them."""

    flat: np.ndarray
    sizes: np.ndarray
    generations: list[int | None]

    @classmethod
    def nothing(cls, n_members: int) -> ClaimBatch:
        """A fresh group's: nobody claims anything, nobody has a generation."""
        return cls(_EMPTY, np.zeros(n_members, dtype=np.int64), [None] * n_members)

    def cut(self) -> list[Claims]:
        """Per member its :class:`Claims` (views of :attr:`flat`)."""
        n = len(self.generations)
        if not self.flat.size and self.generations.count(None) == n:
            return [Claims(_EMPTY, None)] * n  # one shared claim: a fresh group, at a glance
        pieces = cut_by_sizes(self.flat, self.sizes.tolist())
        # the tuples built in C (``Claims`` adds nothing to ``tuple.__new__``): one per member
        return list(map(tuple.__new__, repeat(Claims), zip(pieces, self.generations, strict=True)))


@define(slots=True)
class StickyContext:
    """Everything the builders share; members are referred to by their index in ``members``."""

    index: PartitionIndex
    members: list[str]  # Java HashMap iteration order
    subs: list[Subscription]
    rank: np.ndarray  # member index -> position in Java String order of member ids
    racks: RackInfo
    #: for each member in the caller's order, its index in ``members`` (None: look up by id)
    position: np.ndarray | None = None


class BuildResult:
    """A builder's output: every member's partition ids (context order, each in Kafka's list
    order) concatenated in ``flat``, member ``m`` owning the ``sizes[m]`` ids after the earlier
    members'. One flat array turns into the result's lists with one lookup, not one per member.

    ``transferring`` is the constrained builder's ``partitionsTransferringOwnership`` (pid ->
    member index); ``None`` on the general path, as in Kafka. ``runs`` is set by a builder that
    knows every member's ids step evenly: per member its first id and step
    (:func:`assignors.sticky_common_index.arithmetic_runs` need not look).
    """

    __slots__ = ("claims", "claims_flat", "flat", "runs", "sizes", "transferring")

    def __init__(
        self,
        flat: np.ndarray,
        sizes: np.ndarray,
        transferring: dict[int, int] | None,
        claims: list[Claims] | None = None,
        runs: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        self.flat = flat
        self.sizes = sizes
        self.transferring = transferring
        self.claims = claims
        #: the claims' ids concatenated, when the assignor has them (else None)
        self.claims_flat: np.ndarray | None = None
        self.runs = runs

    @classmethod
    def from_lists(
        cls, lists: Sequence[np.ndarray | list[int]], transferring: dict[int, int] | None
    ) -> BuildResult:
        if not set(map(type, lists)) - {list}:  # one pass, not one array per member
            size_list = list(map(len, lists))
            total = sum(size_list)
            flat_ids = np.fromiter(
                itertools.chain.from_iterable(lists), dtype=np.int64, count=total
            )
            return cls(flat_ids, np.array(size_list, dtype=np.int64), transferring)
        arrays = [a if isinstance(a, np.ndarray) else np.array(a, dtype=np.int64) for a in lists]
        sizes = np.fromiter(map(len, arrays), dtype=np.int64, count=len(arrays))
        nonempty = [a for a in arrays if a.size]
        flat = np.concatenate(nonempty) if nonempty else np.zeros(0, dtype=np.int64)
        return cls(flat.astype(np.int64, copy=False), sizes, transferring)

    @property
    def lists(self) -> list[np.ndarray]:
        """Per member (context order) its partition ids."""
        if not self.sizes.size:
            return []
        return split_by_sizes(self.flat, self.sizes.tolist())

    def owners(self) -> np.ndarray:
        """For each entry of ``flat``, its member index."""
        return np.repeat(np.arange(self.sizes.size, dtype=np.int64), self.sizes)


def split_by_sizes(flat: np.ndarray, sizes: list[int]) -> list[np.ndarray]:
    """``flat`` cut into consecutive views of ``sizes`` (``np.split`` without its per-piece
    overhead)."""
    out: list[np.ndarray] = []
    start = 0
    for size in sizes:
        out.append(flat[start : start + size])
        start += size
    return out
