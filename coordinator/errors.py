"""Kafka's protocol error codes, by Kafka's own names (org.apache.kafka.common.protocol.Errors).

Only the codes the classic group protocol, KIP-848's ConsumerGroupHeartbeat, offsets and topic
metadata can produce are listed.
An ``IntEnum`` so that ``Errors.REBALANCE_IN_PROGRESS == 27`` and the name travels in logs.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Final


class Errors(IntEnum):
    UNKNOWN_SERVER_ERROR = -1
    NONE = 0
    UNKNOWN_TOPIC_OR_PARTITION = 3
    INVALID_FETCH_SIZE = 4
    NOT_LEADER_OR_FOLLOWER = 6
    REQUEST_TIMED_OUT = 7
    MESSAGE_TOO_LARGE = 10
    OFFSET_METADATA_TOO_LARGE = 12
    NETWORK_EXCEPTION = 13
    COORDINATOR_LOAD_IN_PROGRESS = 14
    COORDINATOR_NOT_AVAILABLE = 15
    NOT_COORDINATOR = 16
    INVALID_TOPIC_EXCEPTION = 17
    RECORD_LIST_TOO_LARGE = 18
    NOT_ENOUGH_REPLICAS = 19
    ILLEGAL_GENERATION = 22
    INCONSISTENT_GROUP_PROTOCOL = 23
    INVALID_GROUP_ID = 24
    UNKNOWN_MEMBER_ID = 25
    INVALID_SESSION_TIMEOUT = 26
    REBALANCE_IN_PROGRESS = 27
    INVALID_COMMIT_OFFSET_SIZE = 28
    TOPIC_AUTHORIZATION_FAILED = 29
    GROUP_AUTHORIZATION_FAILED = 30
    UNSUPPORTED_VERSION = 35
    TOPIC_ALREADY_EXISTS = 36
    INVALID_PARTITIONS = 37
    INVALID_REQUEST = 42
    KAFKA_STORAGE_ERROR = 56
    NON_EMPTY_GROUP = 68
    GROUP_ID_NOT_FOUND = 69
    MEMBER_ID_REQUIRED = 79
    GROUP_MAX_SIZE_REACHED = 81
    FENCED_INSTANCE_ID = 82
    UNSTABLE_OFFSET_COMMIT = 88
    # KIP-848
    FENCED_MEMBER_EPOCH = 110
    UNRELEASED_INSTANCE_ID = 111
    UNSUPPORTED_ASSIGNOR = 112
    STALE_MEMBER_EPOCH = 113

    @property
    def code(self) -> int:
        return int(self)

    @property
    def retriable(self) -> bool:
        """Kafka's RetriableException subclasses, as the clients treat them."""
        return self in _RETRIABLE


_RETRIABLE = frozenset(
    {
        Errors.UNKNOWN_TOPIC_OR_PARTITION,
        Errors.NOT_LEADER_OR_FOLLOWER,
        Errors.REQUEST_TIMED_OUT,
        Errors.NETWORK_EXCEPTION,
        Errors.COORDINATOR_LOAD_IN_PROGRESS,
        Errors.COORDINATOR_NOT_AVAILABLE,
        Errors.NOT_COORDINATOR,
        Errors.NOT_ENOUGH_REPLICAS,
        Errors.KAFKA_STORAGE_ERROR,
        Errors.UNSTABLE_OFFSET_COMMIT,
    }
)


# Each error's name, for the logs (every response is logged with it): ``error.name`` goes
# through enum's property machinery on each access.
ERROR_NAMES: dict[Errors, str] = {error: error.name for error in Errors}

#: ``Errors.NONE`` as a module constant, for the hot paths: reading an enum member off its class
#: goes through the enum metaclass's attribute hook (about 0.3 us on CPython 3.11), a module
#: global imported from here is a dict lookup.
NO_ERROR: Final = Errors.NONE


def error_code_name(code: int) -> str:
    """The name of error ``code`` as the event log writes it (Kafka's ``Errors.forCode(code)``
    name): looked up, as every logged response needs it; an unknown code raises ValueError."""
    name = ERROR_NAMES.get(code)  # type: ignore[call-overload]
    return name if name is not None else Errors(code).name


#: The simple class name of the exception Kafka's ``Errors.exception()`` raises for each code
#: (``NONE`` has none). The client words some of its log lines and its KIP-800 rejoin reasons
#: with it, e.g. "rebalance failed due to UnknownMemberIdException".
EXCEPTION_NAMES: dict[Errors, str] = {
    Errors.UNKNOWN_SERVER_ERROR: "UnknownServerException",
    Errors.UNKNOWN_TOPIC_OR_PARTITION: "UnknownTopicOrPartitionException",
    Errors.INVALID_FETCH_SIZE: "InvalidFetchSizeException",
    Errors.NOT_LEADER_OR_FOLLOWER: "NotLeaderOrFollowerException",
    Errors.REQUEST_TIMED_OUT: "TimeoutException",
    Errors.MESSAGE_TOO_LARGE: "RecordTooLargeException",
    Errors.OFFSET_METADATA_TOO_LARGE: "OffsetMetadataTooLarge",
    Errors.NETWORK_EXCEPTION: "NetworkException",
    Errors.COORDINATOR_LOAD_IN_PROGRESS: "CoordinatorLoadInProgressException",
    Errors.COORDINATOR_NOT_AVAILABLE: "CoordinatorNotAvailableException",
    Errors.NOT_COORDINATOR: "NotCoordinatorException",
    Errors.INVALID_TOPIC_EXCEPTION: "InvalidTopicException",
    Errors.RECORD_LIST_TOO_LARGE: "RecordBatchTooLargeException",
    Errors.NOT_ENOUGH_REPLICAS: "NotEnoughReplicasException",
    Errors.ILLEGAL_GENERATION: "IllegalGenerationException",
    Errors.INCONSISTENT_GROUP_PROTOCOL: "InconsistentGroupProtocolException",
    Errors.INVALID_GROUP_ID: "InvalidGroupIdException",
    Errors.UNKNOWN_MEMBER_ID: "UnknownMemberIdException",
    Errors.INVALID_SESSION_TIMEOUT: "InvalidSessionTimeoutException",
    Errors.REBALANCE_IN_PROGRESS: "RebalanceInProgressException",
    Errors.INVALID_COMMIT_OFFSET_SIZE: "InvalidCommitOffsetSizeException",
    Errors.TOPIC_AUTHORIZATION_FAILED: "TopicAuthorizationException",
    Errors.GROUP_AUTHORIZATION_FAILED: "GroupAuthorizationException",
    Errors.UNSUPPORTED_VERSION: "UnsupportedVersionException",
    Errors.TOPIC_ALREADY_EXISTS: "TopicExistsException",
    Errors.INVALID_PARTITIONS: "InvalidPartitionsException",
    Errors.INVALID_REQUEST: "InvalidRequestException",
    Errors.KAFKA_STORAGE_ERROR: "KafkaStorageException",
    Errors.NON_EMPTY_GROUP: "GroupNotEmptyException",
    Errors.GROUP_ID_NOT_FOUND: "GroupIdNotFoundException",
    Errors.MEMBER_ID_REQUIRED: "MemberIdRequiredException",
    Errors.GROUP_MAX_SIZE_REACHED: "GroupMaxSizeReachedException",
    Errors.FENCED_INSTANCE_ID: "FencedInstanceIdException",
    Errors.UNSTABLE_OFFSET_COMMIT: "UnstableOffsetCommitException",
    Errors.FENCED_MEMBER_EPOCH: "FencedMemberEpochException",
    Errors.UNRELEASED_INSTANCE_ID: "UnreleasedInstanceIdException",
    Errors.UNSUPPORTED_ASSIGNOR: "UnsupportedAssignorException",
    Errors.STALE_MEMBER_EPOCH: "StaleMemberEpochException",
}


class ApiError(Exception):
    """Kafka's ApiException as the KIP-848 handlers throw it: an error code and its message.
    GroupCoordinatorService turns it into the response (handleOperationException)."""

    def __init__(self, error: Errors, message: str | None = None) -> None:
        super().__init__(message if message is not None else error.name)
        self.error = error
        self.message = message
