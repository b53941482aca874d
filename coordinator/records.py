"""The ``__consumer_offsets`` record types: the classic group's (GroupMetadataKey/Value), the
offsets' (OffsetCommitKey/Value) and KIP-848's consumer-group records (ConsumerGroup*Key/Value).

Kafka's schemas (group-coordinator/src/main/resources/common/message/*.json) in snake_case. A
record whose ``value`` is None is a tombstone: the topic is compacted, the latest value per key wins.
"""

from __future__ import annotations

from attrs import field, frozen

from coordinator.kafka_uuid import Uuid
from coordinator.tuples import to_tuple


@frozen
class GroupMetadataKey:
    group: str


@frozen
class MemberMetadataValue:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout: int
    session_timeout: int
    subscription: bytes  # the member's metadata for the selected protocol
    assignment: bytes


@frozen
class GroupMetadataValue:
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int
    members: tuple[MemberMetadataValue, ...] = field(default=(), converter=to_tuple)


@frozen
class OffsetCommitKey:
    group: str
    topic: str
    partition: int


@frozen
class OffsetCommitValue:
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int = -1


# --- KIP-848 consumer groups (ConsumerGroup*Key/Value.json, record versions 3 to 8) ----------------
# Topic ids are coordinator.kafka_uuid.Uuid; partitions of a topic are tuples of ints.


@frozen
class ConsumerGroupMetadataKey:
    group: str


@frozen
class ConsumerGroupMetadataValue:
    epoch: int


@frozen
class PartitionMetadata:
    partition: int
    racks: tuple[str, ...] = field(default=(), converter=to_tuple)


@frozen
class TopicMetadataRecord:
    """ConsumerGroupPartitionMetadataValue.TopicMetadata."""

    topic_id: Uuid
    topic_name: str
    num_partitions: int
    partition_metadata: tuple[PartitionMetadata, ...] = field(default=(), converter=to_tuple)


@frozen
class ConsumerGroupPartitionMetadataKey:
    group: str


@frozen
class ConsumerGroupPartitionMetadataValue:
    topics: tuple[TopicMetadataRecord, ...] = field(default=(), converter=to_tuple)


@frozen
class ClassicProtocol:
    name: str
    metadata: bytes


@frozen
class ClassicMemberMetadata:
    session_timeout_ms: int
    supported_protocols: tuple[ClassicProtocol, ...] = field(default=(), converter=to_tuple)


@frozen
class ConsumerGroupMemberMetadataKey:
    group: str
    member_id: str


@frozen
class ConsumerGroupMemberMetadataValue:
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...] = field(converter=to_tuple)
    subscribed_topic_regex: str | None
    rebalance_timeout_ms: int
    server_assignor: str | None
    classic_member_metadata: ClassicMemberMetadata | None = None


@frozen
class TopicPartitionsRecord:
    """``TopicPartitions`` of the assignment records: one topic's partitions, by id."""

    topic_id: Uuid
    partitions: tuple[int, ...] = field(converter=to_tuple)


@frozen
class ConsumerGroupTargetAssignmentMemberKey:
    group: str
    member_id: str


@frozen
class ConsumerGroupTargetAssignmentMemberValue:
    topic_partitions: tuple[TopicPartitionsRecord, ...] = field(converter=to_tuple)


@frozen
class ConsumerGroupTargetAssignmentMetadataKey:
    group: str


@frozen
class ConsumerGroupTargetAssignmentMetadataValue:
    assignment_epoch: int


@frozen
class ConsumerGroupCurrentMemberAssignmentKey:
    group: str
    member_id: str


@frozen
class ConsumerGroupCurrentMemberAssignmentValue:
    member_epoch: int
    previous_member_epoch: int
    state: int  # MemberState.value: 0 STABLE, 1 UNREVOKED_PARTITIONS, 2 UNRELEASED_PARTITIONS
    assigned_partitions: tuple[TopicPartitionsRecord, ...] = field(converter=to_tuple)
    partitions_pending_revocation: tuple[TopicPartitionsRecord, ...] = field(converter=to_tuple)


ConsumerGroupRecordKey = (
    ConsumerGroupMetadataKey
    | ConsumerGroupPartitionMetadataKey
    | ConsumerGroupMemberMetadataKey
    | ConsumerGroupTargetAssignmentMemberKey
    | ConsumerGroupTargetAssignmentMetadataKey
    | ConsumerGroupCurrentMemberAssignmentKey
)
ConsumerGroupRecordValue = (
    ConsumerGroupMetadataValue
    | ConsumerGroupPartitionMetadataValue
    | ConsumerGroupMemberMetadataValue
    | ConsumerGroupTargetAssignmentMemberValue
    | ConsumerGroupTargetAssignmentMetadataValue
    | ConsumerGroupCurrentMemberAssignmentValue
)
CONSUMER_GROUP_KEYS = (
    ConsumerGroupMetadataKey,
    ConsumerGroupPartitionMetadataKey,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMetadataKey,
    ConsumerGroupCurrentMemberAssignmentKey,
)

RecordKey = GroupMetadataKey | OffsetCommitKey | ConsumerGroupRecordKey
RecordValue = GroupMetadataValue | OffsetCommitValue | ConsumerGroupRecordValue | None


@frozen
class Record:
    """One record of an ``__consumer_offsets`` partition; ``offset`` is its position in the log."""

    offset: int
    key: RecordKey
    value: RecordValue
    append_time_ms: int

    @property
    def is_tombstone(self) -> bool:
        return self.value is None
