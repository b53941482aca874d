"""The group protocols' requests and responses (classic, and KIP-848's ConsumerGroupHeartbeat
and ConsumerGroupDescribe), as frozen attrs classes.

Names and fields follow Kafka's message schemas (clients/src/main/resources/common/message/*.json)
in snake_case, so ``JoinGroupRequest.rebalance_timeout_ms`` is Kafka's ``rebalanceTimeoutMs``.
Collections are tuples so that every message is immutable and hashable. ``api_version`` carries
the behaviours that depend on it (KIP-394 member id required from JoinGroup v4, skipAssignment
from v9, batch LeaveGroup from v3, GROUP_ID_NOT_FOUND for OffsetCommit from v9); it defaults to
the newest version a modern Java client sends. ``client_id`` stands in for the request header's
client id, which Kafka uses to build member ids.
"""

from __future__ import annotations

from attrs import field, frozen

from coordinator.errors import ERROR_NAMES, Errors, error_code_name
from coordinator.java import java_string_length, java_substring
from coordinator.kafka_uuid import ZERO_UUID, Uuid
from coordinator.tuples import to_optional_tuple, to_tuple

# --- FindCoordinator ---------------------------------------------------------------------------

KEY_TYPE_GROUP = 0


@frozen
class FindCoordinatorRequest:
    key: str
    key_type: int = KEY_TYPE_GROUP
    api_version: int = 3


@frozen
class FindCoordinatorResponse:
    error_code: Errors
    node_id: int = -1
    host: str = ""
    port: int = -1
    error_message: str | None = None


# --- Metadata (topics the leader assigns, and the racks of their replicas) --------------------


@frozen
class MetadataRequest:
    topics: tuple[str, ...] | None = None  # None = all topics


@frozen
class MetadataResponsePartition:
    partition_index: int
    leader_id: int
    replica_nodes: tuple[int, ...] = ()


@frozen
class MetadataResponseTopic:
    name: str
    error_code: Errors = Errors.NONE
    partitions: tuple[MetadataResponsePartition, ...] = ()
    #: The topic's id (Metadata v10+, ``topicId``); ZERO_UUID for a topic that does not exist.
    #: A KIP-848 consumer resolves the ids of its ConsumerGroupHeartbeat assignment with it.
    topic_id: Uuid = ZERO_UUID


@frozen
class MetadataResponseBroker:
    node_id: int
    host: str
    port: int
    rack: str | None = None


@frozen
class MetadataResponse:
    brokers: tuple[MetadataResponseBroker, ...] = ()
    topics: tuple[MetadataResponseTopic, ...] = ()


# --- JoinGroup ---------------------------------------------------------------------------------


#: JoinGroupRequest.maybeTruncateReason: the longest reason a client puts in JoinGroup/LeaveGroup.
MAX_REASON_LENGTH = 255


def maybe_truncate_reason(reason: str) -> str:
    """JoinGroupRequest.maybeTruncateReason: a KIP-800 reason is cut to 255 chars (Java's: UTF-16
    units, ``String.length`` and ``substring``)."""
    if len(reason) <= MAX_REASON_LENGTH and (reason.isascii() or max(reason) <= "\uffff"):
        return reason  # as many units as characters, and no more than 255 of them
    if java_string_length(reason) <= MAX_REASON_LENGTH:
        return reason
    return java_substring(reason, 0, MAX_REASON_LENGTH)


@frozen
class JoinGroupRequestProtocol:
    name: str
    metadata: bytes = b""


@frozen
class JoinGroupRequest:
    group_id: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    member_id: str
    protocol_type: str
    protocols: tuple[JoinGroupRequestProtocol, ...] = field(converter=to_tuple)
    group_instance_id: str | None = None
    reason: str | None = None
    api_version: int = 9
    client_id: str = "consumer"
    client_host: str = "/127.0.0.1"


@frozen
class JoinGroupResponseMember:
    member_id: str
    group_instance_id: str | None
    metadata: bytes


@frozen
class JoinGroupResponse:
    error_code: Errors
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    skip_assignment: bool = False
    member_id: str = ""
    members: tuple[JoinGroupResponseMember, ...] = field(default=(), converter=to_tuple)
    # seed 004's design 2 only (never on Kafka's wire): the assignment the coordinator computed
    assignment: bytes | None = None


# --- SyncGroup ---------------------------------------------------------------------------------


@frozen
class SyncGroupRequestAssignment:
    member_id: str
    assignment: bytes


@frozen
class SyncGroupRequest:
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None = None
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignments: tuple[SyncGroupRequestAssignment, ...] = field(default=(), converter=to_tuple)
    api_version: int = 5


@frozen
class SyncGroupResponse:
    error_code: Errors
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


# --- Heartbeat ---------------------------------------------------------------------------------


@frozen
class HeartbeatRequest:
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None = None


@frozen
class HeartbeatResponse:
    error_code: Errors


# --- LeaveGroup (batch form, v3+) ----------------------------------------------------------------


@frozen
class MemberIdentity:
    member_id: str
    group_instance_id: str | None = None
    reason: str | None = None


@frozen
class LeaveGroupRequest:
    group_id: str
    members: tuple[MemberIdentity, ...] = field(converter=to_tuple)
    api_version: int = 5


@frozen
class LeaveGroupResponseMember:
    member_id: str
    group_instance_id: str | None
    error_code: Errors


@frozen
class LeaveGroupResponse:
    error_code: Errors
    members: tuple[LeaveGroupResponseMember, ...] = field(default=(), converter=to_tuple)


# --- OffsetCommit / OffsetFetch ------------------------------------------------------------------


@frozen
class OffsetCommitRequestPartition:
    partition_index: int
    committed_offset: int
    committed_leader_epoch: int = -1
    committed_metadata: str | None = ""


@frozen
class OffsetCommitRequestTopic:
    name: str
    partitions: tuple[OffsetCommitRequestPartition, ...] = field(converter=to_tuple)


@frozen
class OffsetCommitRequest:
    group_id: str
    generation_id: int  # Kafka: generationIdOrMemberEpoch
    member_id: str
    topics: tuple[OffsetCommitRequestTopic, ...] = field(converter=to_tuple)
    group_instance_id: str | None = None
    api_version: int = 9


@frozen
class OffsetCommitResponsePartition:
    partition_index: int
    error_code: Errors


@frozen
class OffsetCommitResponseTopic:
    name: str
    partitions: tuple[OffsetCommitResponsePartition, ...] = field(converter=to_tuple)


@frozen
class OffsetCommitResponse:
    topics: tuple[OffsetCommitResponseTopic, ...] = field(default=(), converter=to_tuple)


@frozen
class OffsetFetchRequestTopic:
    name: str
    partition_indexes: tuple[int, ...] = field(converter=to_tuple)


@frozen
class OffsetFetchRequest:
    group_id: str
    topics: tuple[OffsetFetchRequestTopic, ...] | None = None  # None = every committed offset
    require_stable: bool = False
    member_id: str | None = None  # v9+ (KIP-848): the member's id, or null
    member_epoch: int = -1  # v9+: the member epoch, -1 when not a group member


@frozen
class OffsetFetchResponsePartition:
    partition_index: int
    committed_offset: int = -1
    committed_leader_epoch: int = -1
    metadata: str | None = ""
    error_code: Errors = Errors.NONE


@frozen
class OffsetFetchResponseTopic:
    name: str
    partitions: tuple[OffsetFetchResponsePartition, ...] = field(converter=to_tuple)


@frozen
class OffsetFetchResponse:
    error_code: Errors
    topics: tuple[OffsetFetchResponseTopic, ...] = field(default=(), converter=to_tuple)


# --- TxnOffsetCommit (KIP-98; generation, member and instance ids from v3, KIP-447) ----------


@frozen
class TxnOffsetCommitRequestPartition:
    partition_index: int
    committed_offset: int
    committed_leader_epoch: int = -1  # v2+ (ignorable: dropped below v2)
    committed_metadata: str | None = ""


@frozen
class TxnOffsetCommitRequestTopic:
    name: str
    partitions: tuple[TxnOffsetCommitRequestPartition, ...] = field(converter=to_tuple)


@frozen
class TxnOffsetCommitRequest:
    """The offsets a transactional producer commits for ``group_id`` inside its transaction
    (KafkaProducer.sendOffsetsToTransaction); they stay pending until the transaction's marker."""

    transactional_id: str
    group_id: str
    producer_id: int
    producer_epoch: int
    topics: tuple[TxnOffsetCommitRequestTopic, ...] = field(converter=to_tuple)
    generation_id: int = -1  # v3+
    member_id: str = ""  # v3+
    group_instance_id: str | None = None  # v3+
    api_version: int = 4


@frozen
class TxnOffsetCommitResponsePartition:
    partition_index: int
    error_code: Errors


@frozen
class TxnOffsetCommitResponseTopic:
    name: str
    partitions: tuple[TxnOffsetCommitResponsePartition, ...] = field(converter=to_tuple)


@frozen
class TxnOffsetCommitResponse:
    topics: tuple[TxnOffsetCommitResponseTopic, ...] = field(default=(), converter=to_tuple)
    throttle_time_ms: int = 0


# --- AddOffsetsToTxn / EndTxn: the transaction coordinator's part (KIP-98) ---------------------


@frozen
class AddOffsetsToTxnRequest:
    """The producer adds ``group_id``'s offsets partition to its transaction, the first step of
    KafkaProducer.sendOffsetsToTransaction (TransactionManager's AddOffsetsToTxnHandler)."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    group_id: str


@frozen
class AddOffsetsToTxnResponse:
    error_code: Errors
    throttle_time_ms: int = 0


@frozen
class EndTxnRequest:
    """commitTransaction (``committed``) or abortTransaction: the transaction coordinator writes
    the COMMIT or ABORT marker to every partition of the transaction."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    committed: bool


@frozen
class EndTxnResponse:
    error_code: Errors
    throttle_time_ms: int = 0


# --- DescribeGroups / ListGroups / DeleteGroups --------------------------------------------------


@frozen
class DescribeGroupsRequest:
    groups: tuple[str, ...] = field(converter=to_tuple)


@frozen
class DescribedGroupMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    member_metadata: bytes
    member_assignment: bytes


@frozen
class DescribedGroup:
    error_code: Errors
    group_id: str
    group_state: str = ""
    protocol_type: str = ""
    protocol_data: str = ""
    members: tuple[DescribedGroupMember, ...] = field(default=(), converter=to_tuple)


@frozen
class DescribeGroupsResponse:
    groups: tuple[DescribedGroup, ...] = field(converter=to_tuple)


@frozen
class ListGroupsRequest:
    states_filter: tuple[str, ...] = field(default=(), converter=to_tuple)


@frozen
class ListedGroup:
    group_id: str
    protocol_type: str
    group_state: str
    group_type: str = "classic"  # v5+: "classic" or "consumer"


@frozen
class ListGroupsResponse:
    error_code: Errors
    groups: tuple[ListedGroup, ...] = field(default=(), converter=to_tuple)


@frozen
class DeleteGroupsRequest:
    groups_names: tuple[str, ...] = field(converter=to_tuple)


@frozen
class DeletableGroupResult:
    group_id: str
    error_code: Errors


@frozen
class DeleteGroupsResponse:
    results: tuple[DeletableGroupResult, ...] = field(converter=to_tuple)


# --- ConsumerGroupHeartbeat / ConsumerGroupDescribe (KIP-848) -----------------------------------

#: ConsumerGroupHeartbeatRequest.JOIN_GROUP_MEMBER_EPOCH and its siblings: what a member epoch
#: of 0, -1 and -2 ask of the coordinator.
JOIN_GROUP_MEMBER_EPOCH = 0
LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2


@frozen
class ConsumerGroupHeartbeatTopicPartitions:
    """``TopicPartitions`` of ConsumerGroupHeartbeatRequest/Response: partitions of one topic,
    named by id."""

    topic_id: Uuid
    partitions: tuple[int, ...] = field(converter=to_tuple)


@frozen
class ConsumerGroupHeartbeatRequest:
    """ConsumerGroupHeartbeatRequest (api key 68). ``None`` in an optional field means "not
    provided or unchanged since the last heartbeat"; ``rebalance_timeout_ms`` uses -1 for that."""

    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] | None = field(
        default=None, converter=to_optional_tuple
    )
    subscribed_topic_regex: str | None = None  # v1+
    server_assignor: str | None = None
    topic_partitions: tuple[ConsumerGroupHeartbeatTopicPartitions, ...] | None = field(
        default=None, converter=to_optional_tuple
    )
    api_version: int = 0
    client_id: str = "consumer"
    client_host: str = "/127.0.0.1"


@frozen
class ConsumerGroupHeartbeatResponseAssignment:
    """The ``Assignment`` struct: the partitions the member may use now."""

    topic_partitions: tuple[ConsumerGroupHeartbeatTopicPartitions, ...] = field(
        default=(), converter=to_tuple
    )


@frozen
class ConsumerGroupHeartbeatResponse:
    error_code: Errors
    error_message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: ConsumerGroupHeartbeatResponseAssignment | None = None
    throttle_time_ms: int = 0


@frozen
class ConsumerGroupDescribeRequest:
    """ConsumerGroupDescribeRequest (api key 69)."""

    group_ids: tuple[str, ...] = field(converter=to_tuple)
    include_authorized_operations: bool = False


@frozen
class ConsumerGroupDescribeTopicPartitions:
    topic_id: Uuid
    topic_name: str
    partitions: tuple[int, ...] = field(converter=to_tuple)


@frozen
class ConsumerGroupDescribeAssignment:
    topic_partitions: tuple[ConsumerGroupDescribeTopicPartitions, ...] = field(
        default=(), converter=to_tuple
    )


@frozen
class ConsumerGroupDescribeMember:
    member_id: str
    instance_id: str | None
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...] = field(converter=to_tuple)
    subscribed_topic_regex: str | None
    assignment: ConsumerGroupDescribeAssignment
    target_assignment: ConsumerGroupDescribeAssignment


@frozen
class ConsumerGroupDescribedGroup:
    error_code: Errors
    group_id: str | None  # None: an empty id's INVALID_GROUP_ID answer
    error_message: str | None = None
    group_state: str = ""
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor_name: str = ""
    members: tuple[ConsumerGroupDescribeMember, ...] = field(default=(), converter=to_tuple)
    authorized_operations: int = -(2**31)


@frozen
class ConsumerGroupDescribeResponse:
    groups: tuple[ConsumerGroupDescribedGroup, ...] = field(converter=to_tuple)
    throttle_time_ms: int = 0


def offset_commit_response(request: OffsetCommitRequest, error: Errors) -> OffsetCommitResponse:
    """An OffsetCommit answer giving ``error`` for every partition the request names (Kafka's
    OffsetCommitRequest.getErrorResponse shape)."""
    return OffsetCommitResponse(
        tuple(
            OffsetCommitResponseTopic(
                t.name,
                tuple(
                    OffsetCommitResponsePartition(p.partition_index, error) for p in t.partitions
                ),
            )
            for t in request.topics
        )
    )


def txn_offset_commit_response(
    request: TxnOffsetCommitRequest, error: Errors
) -> TxnOffsetCommitResponse:
    """TxnOffsetCommitRequest.getErrorResponse: ``error`` for every partition of the request."""
    return TxnOffsetCommitResponse(
        tuple(
            TxnOffsetCommitResponseTopic(
                t.name,
                tuple(
                    TxnOffsetCommitResponsePartition(p.partition_index, error) for p in t.partitions
                ),
            )
            for t in request.topics
        )
    )


def response_error(message: object) -> Errors | None:
    """The error a message reports, as the event log names it: its error code; for the
    responses that carry codes only per entry (OffsetCommit per partition, DeleteGroups per
    group) the first failed entry's, else NONE; None for a message without error codes."""
    code = getattr(message, "error_code", None)
    if code is not None:
        return code
    if isinstance(message, OffsetCommitResponse | TxnOffsetCommitResponse):
        for topic in message.topics:
            for p in topic.partitions:
                if p.error_code != Errors.NONE:
                    return p.error_code
        return Errors.NONE
    if isinstance(message, DeleteGroupsResponse):
        for result in message.results:
            if result.error_code != Errors.NONE:
                return result.error_code
        return Errors.NONE
    return None


def error_name(message: object) -> str | None:
    """The name of the error a message reports (:func:`response_error`), as the event log writes
    it; None for a message without error codes. Every sent and received message is logged with
    it, so known codes are looked up, not converted."""
    code = getattr(message, "error_code", None)  # response_error's first case, without the call
    if code is None:
        code = response_error(message)
        if code is None:
            return None
    name = ERROR_NAMES.get(code)  # error_code_name, inlined
    return name if name is not None else error_code_name(code)


def api_name(message: object) -> str:
    """Kafka's API key name for a request or response ("JoinGroup", "Heartbeat", ...)."""
    kind = type(message)
    name = API_NAMES.get(kind)
    if name is None:
        name = api_name_of(kind)
    return name


def api_name_of(kind: type) -> str:
    """The API key name of message type ``kind`` (memoised: every message sent and received
    is logged with its API name)."""
    name = API_NAMES.get(kind)
    if name is None:
        name = API_NAMES[kind] = _strip_api_suffix(kind.__name__)
    return name


API_NAMES: dict[type, str] = {}
"""api_name's memo, by message type: the hot paths read it first (``API_NAMES.get(type(m))``)
and call ``api_name`` only for a type not named yet."""


def _strip_api_suffix(name: str) -> str:
    for suffix in ("Request", "Response"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


REQUEST_TYPES: frozenset[type] = frozenset(
    (
        FindCoordinatorRequest,
        MetadataRequest,
        JoinGroupRequest,
        SyncGroupRequest,
        HeartbeatRequest,
        LeaveGroupRequest,
        OffsetCommitRequest,
        OffsetFetchRequest,
        TxnOffsetCommitRequest,
        AddOffsetsToTxnRequest,
        EndTxnRequest,
        DescribeGroupsRequest,
        ListGroupsRequest,
        DeleteGroupsRequest,
        ConsumerGroupHeartbeatRequest,
        ConsumerGroupDescribeRequest,
    )
)
"""Every request type the brokers answer."""


def request_type(message: object) -> type | None:
    """The request type ``message`` is handled as: its own type, or for a subclass the request
    type it extends (the types are slotted, so a class extends at most one); None for anything
    else. Memoised per class, so the broker, the service and the shard route every request with
    a dict lookup instead of a chain of isinstance calls."""
    kind = type(message)
    try:
        return _REQUEST_TYPE_OF[kind]
    except KeyError:
        found = next((c for c in kind.__mro__ if c in REQUEST_TYPES), None)
        _REQUEST_TYPE_OF[kind] = found
        return found


_REQUEST_TYPE_OF: dict[type, type | None] = {kind: kind for kind in REQUEST_TYPES}
