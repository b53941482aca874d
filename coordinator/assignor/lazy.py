"""``GroupAssignment.members`` as a read-on-demand mapping.

Kafka's assignors return a ``HashMap<String, MemberAssignment>`` holding one object per member.
groupsim's keep, per member, what its assignment is made of (an ordinal, a stretch of partitions,
recorded map steps) and build the member's :class:`MemberAssignmentImpl` when it is first read,
once. The coordinator reads every member anyway; the assignor itself does not need to. A builder
that can make every member at once (numpy passes, objects made in C) passes ``make_maps``
(every member's partitions map, in member order), used when everything is read before any
single member was. :meth:`LazyMembers.partition_maps` hands those maps over without
the per-member wrappers (``TargetAssignmentBuilder`` only reads the maps); ``values()`` is
the list of assignments itself (no ``member id -> assignment`` dict is made unless
``items()`` asks for it).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, ItemsView, Iterator, Mapping, Sequence, ValuesView
from typing import cast

from coordinator.assignor.api import MemberAssignment, TopicPartitions
from coordinator.assignor.spec import MemberAssignmentImpl, member_assignments
from coordinator.gc_pause import gc_paused

_partitions_of = operator.attrgetter("partitions")


class LazyMembers(Mapping[str, MemberAssignment]):
    """member id -> assignment, ``make(i)`` building the i-th member's on first read."""

    __slots__ = (
        "_all_map",
        "_built",
        "_everyone_list",
        "_ids",
        "_index",
        "_make",
        "_make_maps",
        "_maps",
        "_some_built",
    )

    def __init__(
        self,
        member_ids: Sequence[str],
        make: Callable[[int], MemberAssignment],
        make_maps: Callable[[], list[TopicPartitions]] | None = None,
    ) -> None:
        self._ids = member_ids
        self._make = make
        self._make_maps = make_maps
        self._index: dict[str, int] | None = None
        self._built: list[MemberAssignment | None] = [None] * len(member_ids)
        self._some_built = False
        self._all_map: dict[str, MemberAssignment] | None = None
        self._everyone_list: list[MemberAssignment] | None = None
        self._maps: list[TopicPartitions] | None = None

    def member(self, i: int) -> MemberAssignment:
        built = self._built[i]
        if built is None:
            maps = self._maps  # made already: member i's map is there (make(i) made it again)
            built = self._built[i] = (
                self._make(i) if maps is None else MemberAssignmentImpl(maps[i])
            )
            self._some_built = True
        return built

    def __getitem__(self, member_id: str) -> MemberAssignment:
        if self._index is None:
            self._index = dict(zip(self._ids, range(len(self._ids)), strict=True))
        return self.member(self._index[member_id])

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def member_ids(self) -> Sequence[str]:
        """The member ids in the result's order (the sequence itself: do not mutate)."""
        return self._ids

    def partition_maps(self) -> list[TopicPartitions]:
        """Every member's partitions map, in :meth:`member_ids` order (a builder's
        ``make_maps`` when nothing was read before, without making the assignment objects)."""
        if self._maps is None:
            if self._make_maps is not None and not self._some_built:
                with gc_paused():
                    self._maps = self._make_maps()
            else:
                self._maps = list(map(_partitions_of, self._everyone()))
        return self._maps

    def _everyone(self) -> list[MemberAssignment]:
        """Every member's assignment in member order, built now (once). The build allocates a
        few acyclic containers per member; CPython's cyclic collector would run on the
        allocation count many times over (each pass also walking the older heap) and find
        nothing, so it is paused for the build and resumed after (objects stay tracked: the
        next pass sees them)."""
        everyone = self._everyone_list
        if everyone is None:
            with gc_paused():
                if not self._some_built and (self._maps is not None or self._make_maps is not None):
                    everyone = _Values(member_assignments(self.partition_maps()))
                else:
                    everyone = _Values(map(self.member, range(len(self._ids))))
            self._built = everyone  # type: ignore[assignment]
            self._some_built = True
            self._everyone_list = everyone
        return everyone

    def _all(self) -> dict[str, MemberAssignment]:
        """member id -> assignment, every member built (the dict made on first use: a read of
        :meth:`values` alone, what the coordinator does, does not need it)."""
        if self._all_map is None:
            self._all_map = dict(zip(self._ids, self._everyone(), strict=True))
        return self._all_map

    def values(self) -> ValuesView[MemberAssignment]:
        return cast(ValuesView[MemberAssignment], self._everyone())

    def items(self) -> ItemsView[str, MemberAssignment]:
        return self._all().items()


class _Values(list[MemberAssignment]):
    """``LazyMembers.values()``: the assignments in member order, as a list (iterated in C),
    registered as a :class:`~collections.abc.ValuesView`; read-only by contract."""

    __slots__ = ()


ValuesView.register(_Values)
