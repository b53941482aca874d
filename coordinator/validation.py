"""Shape checks for incoming requests: a malformed request gets Kafka's error, never a traceback.

Kafka's request parser rejects what does not fit the schema (INVALID_REQUEST); the simulator has
no wire format, so it checks field types instead. ``malformed_reason`` returns None for a
well-formed request, or a short reason ("group_id" means the group id itself is unusable, which
Kafka answers INVALID_GROUP_ID).
"""

from __future__ import annotations

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
    if isinstance(request, P.FindCoordinatorRequest):
        if not isinstance(request.key, str) or not _is_int(request.key_type):
            return "key"
        return None
    if isinstance(request, P.MetadataRequest):
        if request.topics is not None and not _is_tuple_of(request.topics, str):
            return "topics"
        return None
    if isinstance(request, P.ListGroupsRequest):
        return None if _is_tuple_of(request.states_filter, str) else "states_filter"
    if isinstance(request, P.DescribeGroupsRequest):
        return None if _is_tuple_of(request.groups, str) else "groups"
    if isinstance(request, P.DeleteGroupsRequest):
        return None if _is_tuple_of(request.groups_names, str) else "groups_names"
    group_id = getattr(request, "group_id", None)
    if isinstance(
        request,
        (
            P.JoinGroupRequest,
            P.SyncGroupRequest,
            P.HeartbeatRequest,
            P.LeaveGroupRequest,
            P.OffsetCommitRequest,
            P.OffsetFetchRequest,
        ),
    ) and not isinstance(group_id, str):
        return "group_id"
    if isinstance(request, P.JoinGroupRequest):
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
    if isinstance(request, P.SyncGroupRequest):
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
    if isinstance(request, P.HeartbeatRequest):
        if not _is_int(request.generation_id) or not isinstance(request.member_id, str):
            return "member_id"
        return None if _opt_str(request.group_instance_id) else "group_instance_id"
    if isinstance(request, P.LeaveGroupRequest):
        if not _is_tuple_of(request.members, P.MemberIdentity) or not all(
            isinstance(m.member_id, str) and _opt_str(m.group_instance_id) for m in request.members
        ):
            return "members"
        return None
    if isinstance(request, P.OffsetCommitRequest):
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
    if isinstance(request, P.OffsetFetchRequest):
        if request.topics is None:
            return None
        if not _is_tuple_of(request.topics, P.OffsetFetchRequestTopic) or not all(
            isinstance(t.name, str) and all(_is_int(i) for i in t.partition_indexes)
            for t in request.topics
        ):
            return "topics"
        return None
    return "unknown api"
