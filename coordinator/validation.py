"""Shape checks for incoming requests: a malformed request gets Kafka's error, never a traceback.

Kafka's request parser rejects what does not fit the schema (INVALID_REQUEST); the simulator has
no wire format, so it checks field types instead. ``malformed_reason`` returns None for a
well-formed request, or a short reason ("group_id" means the group id itself is unusable, which
Kafka answers INVALID_GROUP_ID).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coordinator import protocol as P
from coordinator.kafka_uuid import Uuid


def _is_int(value: object) -> bool:
    """An int but not a bool. The checks of the frequent requests spell it
    ``type(v) is int or _is_int(v)``: the exact type first, which needs no call."""
    return isinstance(value, int) and not isinstance(value, bool)


def _opt_str(value: object) -> bool:
    """None or a str (spelled out inline in the checks of the frequent requests)."""
    return value is None or isinstance(value, str)


def _is_tuple_of(value: object, kind: type) -> bool:
    if not isinstance(value, tuple):
        return False
    for v in value:  # noqa: SIM110  (all() over a generator costs 3-5x more on short tuples)
        if not isinstance(v, kind):
            return False
    return True


def request_check(kind: type) -> Callable[[Any], str | None] | None:
    """The shape check of request type ``kind`` itself (it covers ``api_version``), or None for
    any other type: the broker looks it up once per type, ``malformed_reason`` per request."""
    return _CHECKS.get(kind)


def malformed_reason(request: object) -> str | None:
    check = _CHECKS.get(type(request))
    if check is not None:
        # One of the request types itself (the common case): its check covers api_version.
        return check(request)
    # A subclass of a request type is checked as that type; anything else is unknown.
    if not _valid_version(request):
        return "api_version"
    check = next((_CHECKS[c] for c in type(request).__mro__ if c in _CHECKS), None)
    if check is None:
        return "unknown api"
    return check(request)


def _valid_version(request: object) -> bool:
    """The first check of every request: ``api_version``, where the request has one."""
    version = getattr(request, "api_version", 0)
    return (type(version) is int or _is_int(version)) and version >= 0


def _find_coordinator(request: P.FindCoordinatorRequest) -> str | None:
    if not _valid_version(request):
        return "api_version"
    if not isinstance(request.key, str) or not _is_int(request.key_type):
        return "key"
    return None


def _metadata(request: P.MetadataRequest) -> str | None:
    if request.topics is not None and not _is_tuple_of(request.topics, str):
        return "topics"
    return None


def _list_groups(request: P.ListGroupsRequest) -> str | None:
    return None if _is_tuple_of(request.states_filter, str) else "states_filter"


def _add_offsets_to_txn(request: P.AddOffsetsToTxnRequest) -> str | None:
    if not isinstance(request.transactional_id, str):
        return "transactional_id"
    if not _is_int(request.producer_id) or not _is_int(request.producer_epoch):
        return "producer_id"
    return None if isinstance(request.group_id, str) else "group_id"


def _end_txn(request: P.EndTxnRequest) -> str | None:
    if not isinstance(request.transactional_id, str):
        return "transactional_id"
    if not _is_int(request.producer_id) or not _is_int(request.producer_epoch):
        return "producer_id"
    return None if isinstance(request.committed, bool) else "committed"


def _describe_groups(request: P.DescribeGroupsRequest) -> str | None:
    return None if _is_tuple_of(request.groups, str) else "groups"


def _delete_groups(request: P.DeleteGroupsRequest) -> str | None:
    return None if _is_tuple_of(request.groups_names, str) else "groups_names"


def _join_group(request: P.JoinGroupRequest) -> str | None:
    if not _valid_version(request):
        return "api_version"
    if not isinstance(request.group_id, str):
        return "group_id"
    session, rebalance = request.session_timeout_ms, request.rebalance_timeout_ms
    if not (
        (type(session) is int or _is_int(session))
        and (type(rebalance) is int or _is_int(rebalance))
    ):
        return "timeouts"
    if rebalance < 0 and request.api_version != 0:
        return "rebalance_timeout_ms"
    instance_id = request.group_instance_id
    if not isinstance(request.member_id, str) or not (
        instance_id is None or isinstance(instance_id, str)
    ):
        return "member_id"
    if instance_id == "":
        return "group_instance_id"
    if not isinstance(request.protocol_type, str):
        return "protocol_type"
    protocols = request.protocols
    if not _is_tuple_of(protocols, P.JoinGroupRequestProtocol):
        return "protocols"
    for p in protocols:
        if not (isinstance(p.name, str) and isinstance(p.metadata, bytes)):
            return "protocols"
    if len({p.name for p in protocols}) != len(protocols):
        # Kafka would count a duplicated name twice and could never elect it (an internal
        # error at join completion); the simulator refuses the request up front.
        return "duplicate protocol names"
    if not isinstance(request.client_id, str) or not isinstance(request.client_host, str):
        return "client_id"
    return None


def _sync_group(request: P.SyncGroupRequest) -> str | None:
    if not _valid_version(request):
        return "api_version"
    if not isinstance(request.group_id, str):
        return "group_id"
    generation = request.generation_id
    if not (type(generation) is int or _is_int(generation)) or not isinstance(
        request.member_id, str
    ):
        return "member_id"
    instance_id, protocol_type = request.group_instance_id, request.protocol_type
    if not (
        (instance_id is None or isinstance(instance_id, str))
        and (protocol_type is None or isinstance(protocol_type, str))
    ):
        return "group_instance_id"
    if not (request.protocol_name is None or isinstance(request.protocol_name, str)):
        return "protocol_name"
    if not _is_tuple_of(request.assignments, P.SyncGroupRequestAssignment):
        return "assignments"
    for a in request.assignments:
        if not (isinstance(a.member_id, str) and isinstance(a.assignment, bytes)):
            return "assignments"
    return None


def _heartbeat(request: P.HeartbeatRequest) -> str | None:
    if not isinstance(request.group_id, str):
        return "group_id"
    generation = request.generation_id
    if not (type(generation) is int or _is_int(generation)) or not isinstance(
        request.member_id, str
    ):
        return "member_id"
    instance_id = request.group_instance_id
    return None if instance_id is None or isinstance(instance_id, str) else "group_instance_id"


def _leave_group(request: P.LeaveGroupRequest) -> str | None:
    if not _valid_version(request):
        return "api_version"
    if not isinstance(request.group_id, str):
        return "group_id"
    if not _is_tuple_of(request.members, P.MemberIdentity):
        return "members"
    for m in request.members:
        if not (isinstance(m.member_id, str) and _opt_str(m.group_instance_id)):
            return "members"
    return None


def _offset_commit(request: P.OffsetCommitRequest) -> str | None:
    if not _valid_version(request):
        return "api_version"
    if not isinstance(request.group_id, str):
        return "group_id"
    generation = request.generation_id
    if not (type(generation) is int or _is_int(generation)) or not isinstance(
        request.member_id, str
    ):
        return "member_id"
    if not (request.group_instance_id is None or isinstance(request.group_instance_id, str)):
        return "group_instance_id"
    if not _is_tuple_of(request.topics, P.OffsetCommitRequestTopic):
        return "topics"
    for topic in request.topics:
        if not isinstance(topic.name, str) or not _is_tuple_of(
            topic.partitions, P.OffsetCommitRequestPartition
        ):
            return "topics"
        for part in topic.partitions:
            index, offset, epoch = (
                part.partition_index,
                part.committed_offset,
                part.committed_leader_epoch,
            )
            if not (
                (type(index) is int or _is_int(index))
                and (type(offset) is int or _is_int(offset))
                and (type(epoch) is int or _is_int(epoch))
                and (part.committed_metadata is None or isinstance(part.committed_metadata, str))
            ):
                return "partitions"
    return None


def _txn_offset_commit(request: P.TxnOffsetCommitRequest) -> str | None:
    """TxnOffsetCommit's shape; below v3 the generation, member and instance ids do not exist
    on the wire, so a request that sets them cannot be sent (Kafka's serializer refuses it)."""
    if not _valid_version(request):
        return "api_version"
    if not isinstance(request.group_id, str):
        return "group_id"
    if not isinstance(request.transactional_id, str):
        return "transactional_id"
    if not (_is_int(request.producer_id) and _is_int(request.producer_epoch)):
        return "producer_id"
    if not (_is_int(request.generation_id) and isinstance(request.member_id, str)):
        return "member_id"
    if not _opt_str(request.group_instance_id):
        return "group_instance_id"
    if request.api_version < 3 and (
        request.generation_id != -1
        or request.member_id != ""
        or request.group_instance_id is not None
    ):
        return "member_id"
    if not _is_tuple_of(request.topics, P.TxnOffsetCommitRequestTopic):
        return "topics"
    for topic in request.topics:
        if not isinstance(topic.name, str) or not _is_tuple_of(
            topic.partitions, P.TxnOffsetCommitRequestPartition
        ):
            return "topics"
        for part in topic.partitions:
            if not (
                _is_int(part.partition_index)
                and _is_int(part.committed_offset)
                and _is_int(part.committed_leader_epoch)
                and _opt_str(part.committed_metadata)
            ):
                return "partitions"
    return None


def _offset_fetch(request: P.OffsetFetchRequest) -> str | None:
    if not isinstance(request.group_id, str):
        return "group_id"
    member_id, epoch = request.member_id, request.member_epoch
    if not (member_id is None or isinstance(member_id, str)) or not (
        type(epoch) is int or _is_int(epoch)
    ):
        return "member_id"
    if request.topics is None:
        return None
    if not _is_tuple_of(request.topics, P.OffsetFetchRequestTopic):
        return "topics"
    for t in request.topics:
        if not isinstance(t.name, str):
            return "topics"
        for i in t.partition_indexes:
            if not (type(i) is int or _is_int(i)):
                return "topics"
    return None


def _consumer_group_heartbeat(request: P.ConsumerGroupHeartbeatRequest) -> str | None:
    """The schema's types: strings (nullable where Kafka's are), ints, topic ids and partitions."""
    if not _valid_version(request):
        return "api_version"
    if not isinstance(request.group_id, str):
        return "group_id"
    if not isinstance(request.member_id, str) or not _is_int(request.member_epoch):
        return "member_id"
    for name in ("instance_id", "rack_id", "subscribed_topic_regex", "server_assignor"):
        if not _opt_str(getattr(request, name)):
            return name
    if not (isinstance(request.client_id, str) and isinstance(request.client_host, str)):
        return "client_id"
    if not _is_int(request.rebalance_timeout_ms):
        return "rebalance_timeout_ms"
    names = request.subscribed_topic_names
    if names is not None and not _is_tuple_of(names, str):
        return "subscribed_topic_names"
    owned = request.topic_partitions
    if owned is not None:
        if not _is_tuple_of(owned, P.ConsumerGroupHeartbeatTopicPartitions):
            return "topic_partitions"
        for t in owned:
            if not isinstance(t.topic_id, Uuid) or not all(_is_int(p) for p in t.partitions):
                return "topic_partitions"
    return None


def _consumer_group_describe(request: P.ConsumerGroupDescribeRequest) -> str | None:
    if not _is_tuple_of(request.group_ids, str):
        return "group_ids"
    return None


_CHECKS: dict[type, Callable[[Any], str | None]] = {
    P.ConsumerGroupHeartbeatRequest: _consumer_group_heartbeat,
    P.ConsumerGroupDescribeRequest: _consumer_group_describe,
    P.FindCoordinatorRequest: _find_coordinator,
    P.MetadataRequest: _metadata,
    P.ListGroupsRequest: _list_groups,
    P.DescribeGroupsRequest: _describe_groups,
    P.DeleteGroupsRequest: _delete_groups,
    P.JoinGroupRequest: _join_group,
    P.SyncGroupRequest: _sync_group,
    P.HeartbeatRequest: _heartbeat,
    P.LeaveGroupRequest: _leave_group,
    P.OffsetCommitRequest: _offset_commit,
    P.OffsetFetchRequest: _offset_fetch,
    P.TxnOffsetCommitRequest: _txn_offset_commit,
    P.AddOffsetsToTxnRequest: _add_offsets_to_txn,
    P.EndTxnRequest: _end_txn,
}
"""One check per request type, found by a dict lookup (the coordinator checks every request).

The check of a type with an ``api_version`` field checks it first: a subclass may have one.
"""
