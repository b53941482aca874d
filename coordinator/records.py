"""The ``__consumer_offsets`` record types (GroupMetadataKey/Value, OffsetCommitKey/Value) and
the transaction marker (Kafka's EndTransactionMarker control record).

Kafka's schemas (group-coordinator/src/main/resources/common/message/*.json) in snake_case. A
record whose ``value`` is None is a tombstone: the topic is compacted, the latest value per key wins.
A record carries the producer id of its batch: NO_PRODUCER_ID (-1) for the coordinator's own
writes, the transaction's producer id for a TxnOffsetCommit's offsets, which stay pending until
the transaction's marker (a control record of the same producer id) commits or aborts them.
"""

from __future__ import annotations

from attrs import field, frozen

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


NO_PRODUCER_ID = -1  # RecordBatch.NO_PRODUCER_ID: a non-transactional batch


@frozen
class ControlRecordKey:
    """The key of a transaction marker: ControlRecordType COMMIT or ABORT."""

    type: str  # "COMMIT" | "ABORT"


@frozen
class EndTransactionMarkerValue:
    """EndTransactionMarker's value (the transaction coordinator's epoch)."""

    coordinator_epoch: int = 0


RecordKey = GroupMetadataKey | OffsetCommitKey  # the coordinator's data records
RecordValue = GroupMetadataValue | OffsetCommitValue | None


@frozen
class Record:
    """One record of an ``__consumer_offsets`` partition; ``offset`` is its position in the log."""

    offset: int
    key: RecordKey | ControlRecordKey
    value: RecordValue | EndTransactionMarkerValue
    append_time_ms: int
    producer_id: int = NO_PRODUCER_ID  # the batch's producer id (transactional writes)

    @property
    def is_tombstone(self) -> bool:
        return self.value is None
