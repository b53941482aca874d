"""Read-only snapshots of groups, for queries, reports and tests (never live objects)."""

from __future__ import annotations

from attrs import field, frozen

from coordinator.tuples import to_tuple


@frozen
class MemberView:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    assignment: bytes
    awaiting_join: bool
    awaiting_sync: bool
    is_new: bool
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocols: tuple[tuple[str, bytes], ...] = field(converter=to_tuple)


@frozen
class GroupView:
    group_id: str
    state: str  # Kafka's names: Empty, PreparingRebalance, CompletingRebalance, Stable, Dead
    generation_id: int
    protocol_type: str | None
    protocol_name: str | None
    leader_id: str | None
    members: tuple[MemberView, ...] = field(converter=to_tuple)
    pending_members: tuple[str, ...] = field(converter=to_tuple)
    partition: int = -1
    coordinator: str | None = None

    def member(self, member_id: str) -> MemberView | None:
        for m in self.members:
            if m.member_id == member_id:
                return m
        return None

    @property
    def member_ids(self) -> tuple[str, ...]:
        return tuple(m.member_id for m in self.members)


#: partitions by topic name: ((topic, (p, ...)), ...), topics and partitions ascending
NamedPartitions = tuple[tuple[str, tuple[int, ...]], ...]


@frozen
class ConsumerGroupMemberView:
    """A KIP-848 member: its epochs, reconciliation state and partitions (by topic name)."""

    member_id: str
    instance_id: str | None
    member_epoch: int
    previous_member_epoch: int
    state: str  # STABLE, UNREVOKED_PARTITIONS, UNRELEASED_PARTITIONS, UNKNOWN
    subscribed_topic_names: tuple[str, ...]
    assigned: NamedPartitions
    pending_revocation: NamedPartitions
    target: NamedPartitions
    rebalance_timeout_ms: int
    client_id: str


@frozen
class ConsumerGroupView:
    """A KIP-848 consumer group: epochs, derived state, members."""

    group_id: str
    state: str  # Empty, Assigning, Reconciling, Stable
    group_epoch: int
    assignment_epoch: int
    members: tuple[ConsumerGroupMemberView, ...] = field(converter=to_tuple)
    partition: int = -1
    coordinator: str | None = None

    def member(self, member_id: str) -> ConsumerGroupMemberView | None:
        for m in self.members:
            if m.member_id == member_id:
                return m
        return None
