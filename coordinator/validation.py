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


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _opt_str(value: object) -> bool:
    return value is None or isinstance(value, str)


def _is_tuple_of(value: object, kind: type) -> bool:
    return isinstance(value, tuple) and all(isinstance(v, kind) for v in value)


def malformed_reason(request: object) -> str | None:
    version = getattr(request, "api_version", 0)
    if not _is_int(version) or version < 0:
        return "api_version"
    check = _CHECKS.get(type(request))
    if check is None:
        # a subclass of a request type is checked as that type; anything else is unknown
        check = next((_CHECKS[c] for c in type(request).__mro__ if c in _CHECKS), None)
        if check is None:
            return "unknown api"
    return check(request)


def _find_coordinator(request: P.FindCoordinatorRequest) -> str | None:
    if not isinstance(request.key, str) or not _is_int(request.key_type):
        return "key"
    return None


def _metadata(request: P.MetadataRequest) -> str | None:
    if request.topics is not None and not _is_tuple_of(request.topics, str):
        return "topics"
    return None


def _list_groups(request: P.ListGroupsRequest) -> str | None:
    return None if _is_tuple_of(request.states_filter, str) else "states_filter"


def _describe_groups(request: P.DescribeGroupsRequest) -> str | None:
    return None if _is_tuple_of(request.groups, str) else "groups"


def _delete_groups(request: P.DeleteGroupsRequest) -> str | None:
    return None if _is_tuple_of(request.groups_names, str) else "groups_names"


def _join_group(request: P.JoinGroupRequest) -> str | None:
    if not isinstance(request.group_id, str):
        return "group_id"
    if not (_is_int(request.session_timeout_ms) and _is_int(request.rebalance_timeout_ms)):
        return "timeouts"
    if request.rebalance_timeout_ms < 0 and request.api_version != 0:
        return "rebalance_timeout_ms"
    if not isinstance(request.member_id, str) or not _opt_str(request.group_instance_id):
        return "member_id"
    if request.group_instance_id == "":
        return "group_instance_id"
    if not isinstance(request.protocol_type, str):
        return "protocol_type"
    if not _is_tuple_of(request.protocols, P.JoinGroupRequestProtocol) or not all(
        isinstance(p.name, str) and isinstance(p.metadata, bytes) for p in request.protocols
    ):
        return "protocols"
    names = [p.name for p in request.protocols]
    if len(set(names)) != len(names):
        # Kafka would count a duplicated name twice and could never elect it (an internal
        # error at join completion); the simulator refuses the request up front.
        return "duplicate protocol names"
    if not isinstance(request.client_id, str) or not isinstance(request.client_host, str):
        return "client_id"
    return None


def _sync_group(request: P.SyncGroupRequest) -> str | None:
    if not isinstance(request.group_id, str):
        return "group_id"
    if not _is_int(request.generation_id) or not isinstance(request.member_id, str):
        return "member_id"
    if not (_opt_str(request.group_instance_id) and _opt_str(request.protocol_type)):
        return "group_instance_id"
    if not _opt_str(request.protocol_name):
        return "protocol_name"
    if not _is_tuple_of(request.assignments, P.SyncGroupRequestAssignment) or not all(
        isinstance(a.member_id, str) and isinstance(a.assignment, bytes)
        for a in request.assignments
    ):
        return "assignments"
    return None


def _heartbeat(request: P.HeartbeatRequest) -> str | None:
    if not isinstance(request.group_id, str):
        return "group_id"
    if not _is_int(request.generation_id) or not isinstance(request.member_id, str):
        return "member_id"
    return None if _opt_str(request.group_instance_id) else "group_instance_id"


def _leave_group(request: P.LeaveGroupRequest) -> str | None:
    if not isinstance(request.group_id, str):
        return "group_id"
    if not _is_tuple_of(request.members, P.MemberIdentity) or not all(
        isinstance(m.member_id, str) and _opt_str(m.group_instance_id) for m in request.members
    ):
        return "members"
    return None


def _offset_commit(request: P.OffsetCommitRequest) -> str | None:
    if not isinstance(request.group_id, str):
        return "group_id"
    if not _is_int(request.generation_id) or not isinstance(request.member_id, str):
        return "member_id"
    if not _opt_str(request.group_instance_id):
        return "group_instance_id"
    if not _is_tuple_of(request.topics, P.OffsetCommitRequestTopic):
        return "topics"
    for topic in request.topics:
        if not isinstance(topic.name, str) or not _is_tuple_of(
            topic.partitions, P.OffsetCommitRequestPartition
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
    if request.topics is None:
        return None
    if not _is_tuple_of(request.topics, P.OffsetFetchRequestTopic) or not all(
        isinstance(t.name, str) and all(_is_int(i) for i in t.partition_indexes)
        for t in request.topics
    ):
        return "topics"
    return None


_CHECKS: dict[type, Callable[[Any], str | None]] = {
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
}
"""One check per request type, found by a dict lookup (the coordinator checks every request)."""
