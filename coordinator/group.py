"""A classic group's in-memory state: members, pending ids, static map, protocol counts.

Mutable on purpose (it is the coordinator's private state); the outside world sees GroupView.
Members live in a dict plus a JavaHashMapOrder so that "first member" means what it means in
Kafka's HashMap (see coordinator.java).
"""

from __future__ import annotations

from attrs import define, field

from coordinator.java import JavaHashMapOrder, first_max_by_count
from coordinator.state_machine import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
    GroupStateModel,
    attach,
)
from coordinator.views import GroupView, MemberView


@define(eq=False)
class Parked:
    """A request the coordinator holds without answering (its envelope)."""

    src: str
    correlation_id: int
    api_version: int


@define(eq=False)
class Member:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: tuple[tuple[str, bytes], ...]
    assignment: bytes = b""
    join_waiter: Parked | None = None
    sync_waiter: Parked | None = None
    is_new: bool = False

    @property
    def awaiting_join(self) -> bool:
        return self.join_waiter is not None

    @property
    def awaiting_sync(self) -> bool:
        return self.sync_waiter is not None

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    def metadata_for(self, protocol: str | None) -> bytes:
        for name, metadata in self.protocols:
            if name == protocol:
                return metadata
        return b""

    def matches(self, protocols: tuple[tuple[str, bytes], ...]) -> bool:
        """ClassicGroupMember.matches: same names, same order, byte-identical metadata."""
        return self.protocols == protocols

    def vote(self, candidates: set[str]) -> str:
        for name, _ in self.protocols:
            if name in candidates:
                return name
        raise RuntimeError(f"member {self.member_id} supports none of {sorted(candidates)}")

    def has_satisfied_heartbeat(self) -> bool:
        """ClassicGroupMember.hasSatisfiedHeartbeat: parked (and not new) members need no beats."""
        if self.is_new:
            return False
        return self.awaiting_join or self.awaiting_sync


@define(eq=False)
class ClassicGroup:
    group_id: str
    created_ms: int
    model: GroupStateModel = field(init=False)
    generation_id: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str | None = None
    members: dict[str, Member] = field(factory=dict)
    order: JavaHashMapOrder = field(factory=JavaHashMapOrder)
    pending_members: dict[str, None] = field(factory=dict)  # insertion-ordered set
    static_members: dict[str, str] = field(factory=dict)  # instance id -> member id
    protocol_counts: dict[str, int] = field(factory=dict)
    pending_sync: dict[str, None] = field(factory=dict)
    new_member_added: bool = False
    state_timestamp_ms: int = 0
    # The initial-delay chain (tryCompleteInitialRebalanceElseSchedule): window length, "remaining".
    join_delay_ms: int = 0
    join_remaining_ms: int = 0
    initial_state: str = EMPTY
    subscribed_topics: frozenset[str] | None = None

    def __attrs_post_init__(self) -> None:
        self.model = attach(GroupStateModel(self.group_id), initial=self.initial_state)
        self.state_timestamp_ms = self.created_ms

    # --- state ---------------------------------------------------------------------------------

    @property
    def state(self) -> str:
        return self.model.state

    @property
    def previous_state(self) -> str | None:
        return self.model.previous_state

    def is_in(self, *states: str) -> bool:
        return self.model.state in states  # not self.state: one property call less, per check

    def can_rebalance(self) -> bool:
        return self.model.state in (STABLE, COMPLETING_REBALANCE, EMPTY)

    # --- members -------------------------------------------------------------------------------

    def iter_members(self) -> list[Member]:
        """Members in Java HashMap iteration order."""
        return [self.members[mid] for mid in self.order.order()]

    def add(self, member: Member) -> None:
        """ClassicGroup.add: the first member sets the type; the first one without leader leads."""
        if not self.members:
            self.protocol_type = member.protocol_type
        self.members[member.member_id] = member
        self.order.put(member.member_id)
        for name, _ in member.protocols:
            self.protocol_counts[name] = self.protocol_counts.get(name, 0) + 1
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id
        self.pending_members.pop(member.member_id, None)
        if self.leader_id is None:
            self.leader_id = member.member_id

    def remove(self, member_id: str) -> Member | None:
        """ClassicGroup.remove: a removed leader is replaced by the first remaining member."""
        member = self.members.pop(member_id, None)
        if member is None:
            return None
        self.order.remove(member_id)
        for name, _ in member.protocols:
            self.protocol_counts[name] -= 1
            if self.protocol_counts[name] == 0:
                del self.protocol_counts[name]
        instance_id = member.group_instance_id
        if instance_id is not None and self.static_members.get(instance_id) == member_id:
            del self.static_members[instance_id]
        self.pending_sync.pop(member_id, None)
        if self.leader_id == member_id:
            self.leader_id = self.order.first()
        return member

    def remove_pending(self, member_id: str) -> bool:
        return self.pending_members.pop(member_id, 0) is None

    def update_protocols(self, member: Member, protocols: tuple[tuple[str, bytes], ...]) -> None:
        for name, _ in member.protocols:
            self.protocol_counts[name] -= 1
            if self.protocol_counts[name] == 0:
                del self.protocol_counts[name]
        member.protocols = protocols
        for name, _ in member.protocols:
            self.protocol_counts[name] = self.protocol_counts.get(name, 0) + 1

    def replace_static_member(self, instance_id: str, old_id: str, new_id: str) -> Member:
        """ClassicGroup.replaceStaticMember: a fresh member under ``new_id`` inherits the old one.

        The caller answers the old member's parked requests (FENCED_INSTANCE_ID) first.

        The pending-sync set is left alone, as in Kafka: an old id that had not synced yet stays
        pending, so the pending-sync deadline (expirePendingSync) still starts a rebalance.
        """
        old = self.members.pop(old_id)
        self.order.remove(old_id)
        new = Member(
            member_id=new_id,
            group_instance_id=old.group_instance_id,
            client_id=old.client_id,
            client_host=old.client_host,
            rebalance_timeout_ms=old.rebalance_timeout_ms,
            session_timeout_ms=old.session_timeout_ms,
            protocol_type=old.protocol_type,
            protocols=old.protocols,
            assignment=old.assignment,
        )
        self.members[new_id] = new
        self.order.put(new_id)
        self.static_members[instance_id] = new_id
        if self.leader_id == old_id:
            self.leader_id = new_id
        return new

    def has_all_members_joined(self) -> bool:
        if self.pending_members:
            return False
        # a loop, not all() over a generator; m.join_waiter, not the awaiting_join property
        for m in self.members.values():  # noqa: SIM110  (every JoinGroup asks)
            if m.join_waiter is None:
                return False
        return True

    def num_awaiting_join(self) -> int:
        return sum([1 for m in self.members.values() if m.join_waiter is not None])

    def rebalance_timeout_ms(self) -> int:
        """R: the largest rebalance timeout among current members (0 with no members)."""
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def supports_protocols(self, protocol_type: str, names: list[str]) -> bool:
        """ClassicGroup.supportsProtocols."""
        if self.model.state == EMPTY:
            return protocol_type != "" and bool(names)
        if protocol_type != self.protocol_type:
            return False
        n = len(self.members)
        counts = self.protocol_counts
        for name in names:  # noqa: SIM110  (not any() over a generator: every JoinGroup asks)
            if counts.get(name, 0) == n:
                return True
        return False

    def candidate_protocols(self) -> set[str]:
        n = len(self.members)
        return {name for name, count in self.protocol_counts.items() if count == n}

    def select_protocol(self) -> str:
        """ClassicGroup.selectProtocol: members vote (HashMap order), Java's tie-break."""
        candidates = self.candidate_protocols()
        votes: dict[str, int] = {}
        for member in self.iter_members():
            choice = member.vote(candidates)
            votes[choice] = votes.get(choice, 0) + 1
        return first_max_by_count(votes.items())

    def maybe_elect_new_joined_leader(self) -> bool:
        """ClassicGroup.maybeElectNewJoinedLeader: a leader that did not rejoin is replaced."""
        if self.leader_id is None:
            return False
        leader = self.members.get(self.leader_id)
        if leader is not None and leader.awaiting_join:
            return True
        first = self.order.first(self._is_awaiting_join)
        if first is None:
            return False
        self.leader_id = first
        return True

    def _is_awaiting_join(self, member_id: str) -> bool:
        # a method, not a lambda: mypyc cannot compile a closure in an attrs class's method
        return self.members[member_id].awaiting_join

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    # --- views ---------------------------------------------------------------------------------

    def view(self, partition: int = -1, coordinator: str | None = None) -> GroupView:
        return GroupView(
            group_id=self.group_id,
            state=self.state,
            generation_id=self.generation_id,
            protocol_type=self.protocol_type,
            protocol_name=self.protocol_name,
            leader_id=self.leader_id,
            members=tuple(
                MemberView(
                    member_id=m.member_id,
                    group_instance_id=m.group_instance_id,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    assignment=m.assignment,
                    awaiting_join=m.awaiting_join,
                    awaiting_sync=m.awaiting_sync,
                    is_new=m.is_new,
                    session_timeout_ms=m.session_timeout_ms,
                    rebalance_timeout_ms=m.rebalance_timeout_ms,
                    protocols=m.protocols,
                )
                for m in self.iter_members()
            ),
            pending_members=tuple(self.pending_members),
            partition=partition,
            coordinator=coordinator,
        )


__all__ = [
    "COMPLETING_REBALANCE",
    "DEAD",
    "EMPTY",
    "PREPARING_REBALANCE",
    "STABLE",
    "ClassicGroup",
    "Member",
    "Parked",
]
