"""A KIP-848 consumer group and its members: Kafka's ``modern/consumer/ConsumerGroup`` (with the
``ModernGroup`` part it extends) and ``ConsumerGroupMember``, at 1eb7644.

A member is a frozen value (Kafka's immutable ``ConsumerGroupMember`` built with its Builder:
here ``attrs.evolve``). The group is the state the replay of the records builds: members, the
group epoch, the target assignment and its epoch, the subscription metadata, and the derived
state (``maybeUpdateGroupState``). Its partition-epoch map enforces Kafka's ownership assertions:
a partition is owned by at most one member at a time (``addPartitionEpochs`` /
``removePartitionEpochs`` raise ``IllegalStateException``, here :class:`OwnershipError`).

Assignments are ``Mapping[Uuid, frozenset[int]]`` (Kafka's ``Map<Uuid, Set<Integer>>``), never
mutated once built.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Mapping

import attrs
from attrs import frozen

from coordinator.assignor.api import SubscriptionType
from coordinator.errors import ApiError, Errors
from coordinator.java import java_spread_hash, sized_capacity
from coordinator.kafka_uuid import Uuid
from coordinator.records import ClassicMemberMetadata, ClassicProtocol
from coordinator.timeline_order import capacity_for, iteration_order

Partitions = Mapping[Uuid, frozenset[int]]
EMPTY: Partitions = {}


class ReplayedPartitions(frozenset[int]):
    """One topic's partitions of a target assignment as Kafka holds them once the record is
    replayed (``Assignment.fromRecord``: ``new HashSet<>(partitions)``): a frozenset (membership
    and set operations in C) that iterates in that ``HashSet``'s order.

    The order matters: the next target assignment is computed from these sets, and the uniform
    assignor keeps the first ``quota`` partitions a member holds in iteration order
    (``UniformHomogeneousAssignmentBuilder.maybeRevokePartitions``). A plain frozenset iterates
    in Python's hash order instead ({4, 5, 7, 8} as 8, 4, 5, 7 where Java's 16 buckets give
    4, 5, 7, 8), and a member over its quota then gave up a different partition than Kafka's.
    """

    __slots__ = ("_order",)
    _order: tuple[int, ...]

    def __new__(cls, ordered: Iterable[int]) -> ReplayedPartitions:
        items = tuple(ordered)
        self = super().__new__(cls, items)
        self._order = items if len(self) == len(items) else tuple(dict.fromkeys(items))
        return self

    def __iter__(self) -> Iterator[int]:
        return iter(self._order)


#: ConsumerGroupHeartbeatRequest.LEAVE_GROUP_MEMBER_EPOCH / LEAVE_GROUP_STATIC_MEMBER_EPOCH
LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2


class MemberState(enum.Enum):
    """modern.MemberState: where a member is in its reconciliation (the record's int8 value)."""

    STABLE = 0
    UNREVOKED_PARTITIONS = 1
    UNRELEASED_PARTITIONS = 2
    UNKNOWN = 127

    @classmethod
    def from_value(cls, value: int) -> MemberState:
        """MemberState.fromValue: an unknown byte is UNKNOWN."""
        for state in cls:
            if state.value == value:
                return state
        return cls.UNKNOWN


class ConsumerGroupState(enum.Enum):
    """ConsumerGroup.ConsumerGroupState, named as Kafka prints it."""

    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"

    def __str__(self) -> str:
        return self.value


class OwnershipError(Exception):
    """Kafka's IllegalStateException of the partition-epoch map: two members would own one
    partition, or a member releases a partition it does not own at its epoch. A groupsim
    invariant: it never happens unless the coordinator is wrong."""


def freeze(partitions: Mapping[Uuid, Iterable[int]]) -> Partitions:
    """An assignment with frozen partition sets and without empty topics."""
    return {t: frozenset(ps) for t, ps in partitions.items() if ps}


@attrs.frozen(hash=False)
class ConsumerGroupMember:
    """ConsumerGroupMember (its Builder's defaults: epoch 0, previous epoch -1, STABLE)."""

    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: MemberState = MemberState.STABLE
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: frozenset[str] = frozenset()
    subscribed_topic_regex: str | None = ""
    server_assignor_name: str | None = None
    # equal by content, as Java's Map.equals (not hashable: members are never hashed)
    assigned_partitions: Partitions = attrs.field(factory=dict)
    partitions_pending_revocation: Partitions = attrs.field(factory=dict)
    # set while the member speaks the classic protocol (JoinGroup/SyncGroup/Heartbeat) inside
    # a consumer group: its session timeout and its JoinGroup protocols (KIP-848 migration)
    classic_member_metadata: ClassicMemberMetadata | None = None

    def with_(self, **changes: object) -> ConsumerGroupMember:
        """The Builder: a copy with ``changes``."""
        return attrs.evolve(self, **changes)  # type: ignore[arg-type]

    def update_member_epoch(self, epoch: int, **changes: object) -> ConsumerGroupMember:
        """Builder.updateMemberEpoch: the current epoch becomes the previous one."""
        return self.with_(member_epoch=epoch, previous_member_epoch=self.member_epoch, **changes)

    def is_reconciled_to(self, target_assignment_epoch: int) -> bool:
        """ModernGroupMember.isReconciledTo: STABLE at the target epoch."""
        return self.state == MemberState.STABLE and self.member_epoch == target_assignment_epoch

    @property
    def use_classic_protocol(self) -> bool:
        """useClassicProtocol: the member joined with JoinGroup (it has classic metadata)."""
        return self.classic_member_metadata is not None

    @property
    def classic_protocol_session_timeout(self) -> int | None:
        metadata = self.classic_member_metadata
        return None if metadata is None else metadata.session_timeout_ms

    @property
    def supported_classic_protocols(self) -> tuple[ClassicProtocol, ...] | None:
        metadata = self.classic_member_metadata
        return None if metadata is None else metadata.supported_protocols


def merge_counts(
    counts: Mapping[str, int], old: Iterable[str] | None, new: Iterable[str] | None
) -> dict[str, int]:
    """Utils.decValue / incValue over a count map (a name whose count drops to 0 is removed)."""
    out = dict(counts)
    for name in old or ():
        left = out.get(name, 0) - 1
        if left <= 0:
            out.pop(name, None)
        else:
            out[name] = left
    for name in new or ():
        out[name] = out.get(name, 0) + 1
    return out


class _JavaStringHashMap:
    """Just enough of ``java.util.HashMap<String, Integer>`` for the order of its entries: the
    copy constructor's table size, ``put`` appending to a bin, ``compute`` of an absent key
    PREPENDING to its bin (``newNode(hash, key, v, first)``), removal, and resizes that keep each
    bin's order."""

    def __init__(self, source: list[tuple[str, int]]) -> None:
        self.capacity = 0
        self.threshold = 16
        if source:  # putMapEntries: tableSizeFor((int)(s / 0.75f + 1))
            self.threshold = sized_capacity(len(source))
        self.bins: list[list[tuple[str, int]]] = []
        self.size = 0
        for key, value in source:
            self._insert(key, value, head=False)

    def _bin(self, key: str) -> int:
        return java_spread_hash(key) & (self.capacity - 1)

    def _grow(self) -> None:
        old = self.bins
        if self.capacity == 0:
            self.capacity = self.threshold
        else:
            self.capacity *= 2
        self.threshold = int(self.capacity * 0.75)
        self.bins = [[] for _ in range(self.capacity)]
        for entries in old:
            for key, value in entries:
                self.bins[self._bin(key)].append((key, value))

    def _insert(self, key: str, value: int, *, head: bool) -> None:
        if self.capacity == 0:
            self._grow()
        entries = self.bins[self._bin(key)]
        if head:
            entries.insert(0, (key, value))
        else:
            entries.append((key, value))
        self.size += 1
        if self.size > self.threshold:
            self._grow()

    def compute(self, key: str, delta: int) -> None:
        """``compute(key, Utils::incValue / decValue)``: a count reaching 0 is removed."""
        if self.capacity:
            entries = self.bins[self._bin(key)]
            for i, (k, v) in enumerate(entries):
                if k == key:
                    if v + delta <= 0:
                        del entries[i]
                        self.size -= 1
                    else:
                        entries[i] = (k, v + delta)
                    return
        if delta > 0:
            self._insert(key, delta, head=True)

    def items(self) -> list[tuple[str, int]]:
        return [entry for entries in self.bins for entry in entries]


def subscription_type(
    subscribed_topic_names: Mapping[str, int], num_members: int
) -> SubscriptionType:
    """ModernGroup.subscriptionType: HOMOGENEOUS when every subscribed topic has every member."""
    for count in subscribed_topic_names.values():
        if count != num_members:
            return SubscriptionType.HETEROGENEOUS
    return SubscriptionType.HOMOGENEOUS


@frozen
class TopicMetadata:
    """modern.TopicMetadata as the group's subscription metadata holds it."""

    id: Uuid
    name: str
    num_partitions: int


class ConsumerGroup:
    """ConsumerGroup: the state its records build (see the module docstring)."""

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = 0
        self.target_assignment_epoch = 0
        self.members: dict[str, ConsumerGroupMember] = {}
        # the largest size + 1 at a put: the capacity of Kafka's TimelineHashMap of members,
        # whose iteration order the target assignment's inputs follow (timeline_order)
        self.members_high_water = 0
        self.static_members: dict[str, str] = {}  # instance id -> member id
        self.subscribed_topic_names: dict[str, int] = {}
        self.server_assignors: dict[str, int] = {}
        self.server_assignors_high_water = 0
        self.subscription_metadata: dict[str, TopicMetadata] = {}
        self.subscription_type_ = SubscriptionType.HOMOGENEOUS
        self.target_assignment: dict[str, Partitions] = {}
        self.inverted_target_assignment: dict[Uuid, dict[int, str]] = {}
        self.current_partition_epoch: dict[Uuid, dict[int, int]] = {}
        self.state = ConsumerGroupState.EMPTY
        # numClassicProtocolMembers and classicProtocolMembersSupportedProtocols (name -> count)
        self.num_classic_protocol_members = 0
        self.classic_protocols: dict[str, int] = {}
        # ModernGroup.metadataRefreshDeadline: (deadline ms, group epoch)
        self.metadata_refresh_deadline = (0, 0)

    # --- reads ---------------------------------------------------------------------------------

    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def num_members(self) -> int:
        return len(self.members)

    def is_empty(self) -> bool:
        return self.state == ConsumerGroupState.EMPTY

    def get_or_maybe_create_member(
        self, member_id: str, create_if_not_exists: bool
    ) -> ConsumerGroupMember:
        """getOrMaybeCreateMember: the member, a new one, or UnknownMemberIdException."""
        member = self.members.get(member_id)
        if member is not None:
            return member
        if not create_if_not_exists:
            raise ApiError(
                Errors.UNKNOWN_MEMBER_ID,
                f"Member {member_id} is not a member of group {self.group_id}.",
            )
        return ConsumerGroupMember(member_id)

    def static_member_id(self, instance_id: str | None) -> str | None:
        return None if instance_id is None else self.static_members.get(instance_id)

    def static_member(self, instance_id: str | None) -> ConsumerGroupMember | None:
        member_id = self.static_member_id(instance_id)
        return None if member_id is None else self.get_or_maybe_create_member(member_id, False)

    def has_static_member(self, instance_id: str | None) -> bool:
        return instance_id is not None and instance_id in self.static_members

    def target_assignment_of(self, member_id: str, instance_id: str | None = None) -> Partitions:
        """targetAssignment(memberId[, instanceId]): a static member's comes from the member its
        instance id names now (the one it replaces)."""
        if instance_id is None:
            return self.target_assignment.get(member_id, EMPTY)
        previous = self.static_member_id(instance_id)
        if previous is not None:
            return self.target_assignment.get(previous, EMPTY)
        return EMPTY

    def partition_epoch(self, topic_id: Uuid, partition: int) -> int:
        """currentPartitionEpoch: the epoch of the member owning it, or -1."""
        partitions = self.current_partition_epoch.get(topic_id)
        return -1 if partitions is None else partitions.get(partition, -1)

    def has_metadata_expired(self, now_ms: int) -> bool:
        deadline, epoch = self.metadata_refresh_deadline
        return now_ms >= deadline or self.group_epoch < epoch

    def request_metadata_refresh(self) -> None:
        self.metadata_refresh_deadline = (0, 0)

    def compute_subscribed_topic_names(
        self, old: ConsumerGroupMember | None, new: ConsumerGroupMember | None
    ) -> dict[str, int]:
        return merge_counts(
            self.subscribed_topic_names,
            old.subscribed_topic_names if old is not None else None,
            new.subscribed_topic_names if new is not None else None,
        )

    def compute_preferred_server_assignor(
        self, old: ConsumerGroupMember | None, new: ConsumerGroupMember | None
    ) -> str | None:
        """computePreferredServerAssignor: the counts copied into a HashMap (from the
        TimelineHashMap's order), the member's change applied with ``compute``, then
        ``stream().max(comparingByValue())``, which keeps the first of tied maxima in the
        HashMap's order."""
        order = iteration_order(
            self.server_assignors, capacity_for(self.server_assignors_high_water)
        )
        counts = _JavaStringHashMap([(name, self.server_assignors[name]) for name in order])
        if old is not None and old.server_assignor_name:
            counts.compute(old.server_assignor_name, -1)
        if new is not None and new.server_assignor_name:
            counts.compute(new.server_assignor_name, +1)
        best: tuple[str, int] | None = None
        for name, count in counts.items():
            if best is None or count > best[1]:
                best = (name, count)
        return None if best is None else best[0]

    def compute_server_assignor_counts(
        self, old: ConsumerGroupMember | None, new: ConsumerGroupMember | None
    ) -> dict[str, int]:
        """The counts computePreferredServerAssignor takes its maximum of."""
        return merge_counts(
            self.server_assignors,
            [old.server_assignor_name] if old is not None and old.server_assignor_name else None,
            [new.server_assignor_name] if new is not None and new.server_assignor_name else None,
        )

    def supports_classic_protocols(self, protocol_type: str, names: Iterable[str]) -> bool:
        """supportsClassicProtocols: a JoinGroup of the ``consumer`` type naming a protocol
        every classic member of the group supports (any protocol if the group is empty)."""
        if protocol_type != "consumer":
            return False
        names = list(names)
        if self.is_empty():
            return bool(names)
        return any(
            self.classic_protocols.get(name, 0) == self.num_classic_protocol_members
            for name in names
        )

    def all_members_use_classic_protocol_except(self, member_id: str) -> bool:
        """allMembersUseClassicProtocolExcept: ``member_id`` is the last consumer-protocol one."""
        return (
            self.num_classic_protocol_members == len(self.members) - 1
            and not self.get_or_maybe_create_member(member_id, False).use_classic_protocol
        )

    def waiting_on_unreleased_partition(self, member: ConsumerGroupMember) -> bool:
        """waitingOnUnreleasedPartition: a partition of its target is still owned by another."""
        if member.state != MemberState.UNRELEASED_PARTITIONS:
            return False
        for topic_id, partitions in self.target_assignment.get(member.member_id, EMPTY).items():
            assigned = member.assigned_partitions.get(topic_id, frozenset())
            for p in partitions:
                if p not in assigned and self.partition_epoch(topic_id, p) != -1:
                    return True
        return False

    # --- writes (the replay) -------------------------------------------------------------------

    def set_group_epoch(self, epoch: int) -> None:
        self.group_epoch = epoch
        self._update_state()

    def set_target_assignment_epoch(self, epoch: int) -> None:
        self.target_assignment_epoch = epoch
        self._update_state()

    def update_target_assignment(self, member_id: str, assignment: Partitions) -> None:
        """updateTargetAssignment, with updateInvertedTargetAssignment's rule: a partition is
        removed from the inverted map only if it still points at this member."""
        old = self.target_assignment.get(member_id, EMPTY)
        self._update_inverted(member_id, old, assignment)
        self.target_assignment[member_id] = assignment

    def remove_target_assignment(self, member_id: str) -> None:
        self._update_inverted(member_id, self.target_assignment.get(member_id, EMPTY), EMPTY)
        self.target_assignment.pop(member_id, None)

    def _update_inverted(self, member_id: str, old: Partitions, new: Partitions) -> None:
        inverted = self.inverted_target_assignment
        for topic_id in set(old) | set(new):
            old_ps = old.get(topic_id, frozenset())
            new_ps = new.get(topic_id, frozenset())
            owners = inverted.setdefault(topic_id, {})
            for p in old_ps:
                if p not in new_ps and owners.get(p) == member_id:
                    del owners[p]
            for p in new_ps:
                if p not in old_ps:
                    owners[p] = member_id
            if not owners:
                del inverted[topic_id]

    def update_member(self, new: ConsumerGroupMember) -> None:
        """updateMember: counts, partition epochs, static member, state."""
        old = self.members.get(new.member_id)
        # BaseHashTable.baseAddOrReplace grows while (size + 1) * 0.75 > capacity BEFORE the
        # put, a replacement included: the table's capacity follows the largest size + 1 seen
        self.members_high_water = max(self.members_high_water, len(self.members) + 1)
        self.members[new.member_id] = new
        self.subscribed_topic_names = self.compute_subscribed_topic_names(old, new)
        self.subscription_type_ = subscription_type(self.subscribed_topic_names, len(self.members))
        if new.server_assignor_name or (old is not None and old.server_assignor_name):
            self.server_assignors_high_water = max(
                self.server_assignors_high_water, len(self.server_assignors) + 1
            )
        self.server_assignors = self.compute_server_assignor_counts(old, new)
        if old is not None:
            self._remove_partition_epochs(old.assigned_partitions, old.member_epoch)
            self._remove_partition_epochs(old.partitions_pending_revocation, old.member_epoch)
        self._add_partition_epochs(new.assigned_partitions, new.member_epoch)
        self._add_partition_epochs(new.partitions_pending_revocation, new.member_epoch)
        if new.instance_id is not None:
            self.static_members[new.instance_id] = new.member_id
        self._update_classic_counts(old, new)
        self._update_state()

    def remove_member(self, member_id: str) -> None:
        old = self.members.pop(member_id, None)
        self.subscribed_topic_names = self.compute_subscribed_topic_names(old, None)
        self.subscription_type_ = subscription_type(self.subscribed_topic_names, len(self.members))
        self.server_assignors = self.compute_server_assignor_counts(old, None)
        if old is not None:
            self._remove_partition_epochs(old.assigned_partitions, old.member_epoch)
            self._remove_partition_epochs(old.partitions_pending_revocation, old.member_epoch)
            if old.instance_id is not None:
                self.static_members.pop(old.instance_id, None)
            self._update_classic_counts(old, None)
        self._update_state()

    def _update_classic_counts(
        self, old: ConsumerGroupMember | None, new: ConsumerGroupMember | None
    ) -> None:
        """maybeUpdateNumClassicProtocolMembers and
        maybeUpdateClassicProtocolMembersSupportedProtocols."""
        old_names = [p.name for p in (old.supported_classic_protocols or ())] if old else []
        new_names = [p.name for p in (new.supported_classic_protocols or ())] if new else []
        self.num_classic_protocol_members += (new is not None and new.use_classic_protocol) - (
            old is not None and old.use_classic_protocol
        )
        if old_names or new_names:
            self.classic_protocols = merge_counts(self.classic_protocols, old_names, new_names)

    def _remove_partition_epochs(self, assignment: Partitions, expected_epoch: int) -> None:
        for topic_id, partitions in assignment.items():
            epochs = self.current_partition_epoch.get(topic_id)
            if epochs is None:
                raise OwnershipError(
                    f"Cannot remove the epoch {expected_epoch} from {topic_id} because it does "
                    "not have any epoch"
                )
            for p in partitions:
                previous = epochs.pop(p, None)
                if previous != expected_epoch:
                    raise OwnershipError(
                        f"Cannot remove the epoch {expected_epoch} from {topic_id}-{p} because "
                        f"the partition is still owned at a different epoch {previous}"
                    )
            if not epochs:
                del self.current_partition_epoch[topic_id]

    def _add_partition_epochs(self, assignment: Partitions, epoch: int) -> None:
        for topic_id, partitions in assignment.items():
            epochs = self.current_partition_epoch.setdefault(topic_id, {})
            for p in partitions:
                previous = epochs.get(p)
                epochs[p] = epoch
                if previous is not None:
                    raise OwnershipError(
                        f"Cannot set the epoch of {topic_id}-{p} to {epoch} because the "
                        f"partition is still owned at epoch {previous}"
                    )

    def set_subscription_metadata(self, metadata: Mapping[str, TopicMetadata]) -> None:
        self.subscription_metadata = dict(metadata)

    def _update_state(self) -> None:
        """maybeUpdateGroupState."""
        if not self.members:
            self.state = ConsumerGroupState.EMPTY
        elif self.group_epoch > self.target_assignment_epoch:
            self.state = ConsumerGroupState.ASSIGNING
        elif any(
            not m.is_reconciled_to(self.target_assignment_epoch) for m in self.members.values()
        ):
            self.state = ConsumerGroupState.RECONCILING
        else:
            self.state = ConsumerGroupState.STABLE
