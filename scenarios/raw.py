"""Raw protocol requests of a ``send:`` step: the request types, building, reading answers.

A ``send:`` step (``scenarios.actions.Send``) puts a hand-written request on the network, as a
test client would (Kafka's ``GroupMetadataManagerTest`` builds requests the same way). This module
knows the request classes (``REQUESTS``), the fields a step may leave out (filled with a Java
client's usual values), ``$name.field`` references to earlier answers, and how an answer's fields
read in a step's ``expect:``.
"""

from __future__ import annotations

import re
from typing import Any

import attrs

from coordinator import protocol as proto

REQUESTS: dict[str, type] = {
    "FindCoordinator": proto.FindCoordinatorRequest,
    "Metadata": proto.MetadataRequest,
    "JoinGroup": proto.JoinGroupRequest,
    "SyncGroup": proto.SyncGroupRequest,
    "Heartbeat": proto.HeartbeatRequest,
    "LeaveGroup": proto.LeaveGroupRequest,
    "OffsetCommit": proto.OffsetCommitRequest,
    "OffsetFetch": proto.OffsetFetchRequest,
    "DescribeGroups": proto.DescribeGroupsRequest,
    "ListGroups": proto.ListGroupsRequest,
    "DeleteGroups": proto.DeleteGroupsRequest,
}
SEND_META = ("api", "from", "to")
RESPONSE_EXTRA_KEYS = ("error", "members_count", "assignment", "response")
REF = re.compile(r"^\$(?P<name>[A-Za-z_][A-Za-z0-9_]*)\.(?P<field>[a-z_]+)$")
DEFAULT_SESSION_TIMEOUT_MS = 45000
DEFAULT_REBALANCE_TIMEOUT_MS = 300000
_DEFAULTED = frozenset(
    {
        ("JoinGroup", "session_timeout_ms"),
        ("JoinGroup", "rebalance_timeout_ms"),
        ("JoinGroup", "member_id"),
        ("JoinGroup", "protocol_type"),
        ("JoinGroup", "protocols"),
        ("LeaveGroup", "members"),
        ("OffsetCommit", "topics"),
        ("OffsetCommit", "member_id"),
        ("OffsetCommit", "generation_id"),
        ("DescribeGroups", "groups"),
        ("DeleteGroups", "groups_names"),
        ("SyncGroup", "member_id"),
        ("SyncGroup", "generation_id"),
        ("Heartbeat", "member_id"),
        ("Heartbeat", "generation_id"),
    }
)


def defaulted(api: str, name: str) -> bool:
    """Fields a raw request may omit: ``build_request`` fills them with a Java client's values."""
    return (api, name) in _DEFAULTED


@attrs.define
class RawStep:
    """One ``send:`` step of a run: its action, the call on the network, or why it was not sent."""

    action: Any  # scenarios.model.Action
    call: Any = None  # scenarios.simulation.RawCall
    problem: str | None = None


def build_request(api: str, fields: dict[str, Any], groups: tuple[str, ...]) -> object:
    """A protocol request from a ``send`` step's fields, with a Java client's usual defaults.

    ``groups`` (the scenario's groups) is what DescribeGroups and DeleteGroups name by default.
    """
    from assignors.api import Subscription, TopicPartition
    from members.consumer_protocol import encode_assignment, encode_subscription

    f = dict(fields)
    if api == "JoinGroup":
        topics = f.pop("topics", [])
        protocols = []
        for p in f.get("protocols", ["range"]):
            if isinstance(p, str):
                protocols.append(
                    proto.JoinGroupRequestProtocol(
                        p, encode_subscription(Subscription(topics=list(topics)))
                    )
                )
            else:
                protocols.append(
                    proto.JoinGroupRequestProtocol(
                        p["name"],
                        encode_subscription(Subscription(topics=list(p.get("topics", topics)))),
                    )
                )
        f["protocols"] = tuple(protocols)
        f.setdefault("session_timeout_ms", DEFAULT_SESSION_TIMEOUT_MS)
        f.setdefault("rebalance_timeout_ms", DEFAULT_REBALANCE_TIMEOUT_MS)
        f.setdefault("member_id", "")
        f.setdefault("protocol_type", "consumer")
        return proto.JoinGroupRequest(**f)
    if api == "SyncGroup":
        assignments = f.pop("assignments", {}) or {}
        if isinstance(assignments, dict):
            f["assignments"] = tuple(
                proto.SyncGroupRequestAssignment(
                    str(mid), encode_assignment([TopicPartition.parse(str(p)) for p in parts])
                )
                for mid, parts in assignments.items()
            )
        f.setdefault("member_id", "")
        f.setdefault("generation_id", -1)
        return proto.SyncGroupRequest(**f)
    if api == "Heartbeat":
        f.setdefault("member_id", "")
        f.setdefault("generation_id", -1)
        return proto.HeartbeatRequest(**f)
    if api == "LeaveGroup":
        members = []
        for m in f.pop("members", []) or []:
            if isinstance(m, str):
                members.append(proto.MemberIdentity(m))
            else:
                members.append(proto.MemberIdentity(**m))
        f["members"] = tuple(members)
        return proto.LeaveGroupRequest(**f)
    if api == "OffsetCommit":
        committed: dict[str, list[proto.OffsetCommitRequestPartition]] = {}
        for text, offset in (f.pop("topics", {}) or {}).items():
            tp = TopicPartition.parse(str(text))
            committed.setdefault(tp.topic, []).append(
                proto.OffsetCommitRequestPartition(tp.partition, int(offset))
            )
        f["topics"] = tuple(
            proto.OffsetCommitRequestTopic(t, tuple(ps)) for t, ps in committed.items()
        )
        f.setdefault("member_id", "")
        f.setdefault("generation_id", -1)
        return proto.OffsetCommitRequest(**f)
    if api == "OffsetFetch":
        raw = f.pop("topics", None)
        if raw is not None:
            by_topic: dict[str, list[int]] = {}
            for text in raw:
                tp = TopicPartition.parse(str(text))
                by_topic.setdefault(tp.topic, []).append(tp.partition)
            f["topics"] = tuple(
                proto.OffsetFetchRequestTopic(t, tuple(ps)) for t, ps in by_topic.items()
            )
        return proto.OffsetFetchRequest(**f)
    if api == "DescribeGroups":
        f.setdefault("groups", list(groups))
        f["groups"] = tuple(f["groups"])
        return proto.DescribeGroupsRequest(**f)
    if api == "DeleteGroups":
        f.setdefault("groups_names", list(groups))
        f["groups_names"] = tuple(f["groups_names"])
        return proto.DeleteGroupsRequest(**f)
    if api == "Metadata" and f.get("topics") is not None:
        f["topics"] = tuple(f["topics"])
    if api == "ListGroups" and "states_filter" in f:
        f["states_filter"] = tuple(f["states_filter"])
    return REQUESTS[api](**f)


def response_field(response: object, key: str) -> Any:
    """The value of ``key`` in an answer, as a step's ``expect:`` compares it."""
    if key == "error":
        code = getattr(response, "error_code", None)
        if code is None and hasattr(response, "topics"):
            # OffsetCommit answers per partition: the error when every partition agrees
            codes = {p.error_code for t in response.topics for p in t.partitions}
            code = codes.pop() if len(codes) == 1 else None
        return getattr(code, "name", code)
    if key == "members_count":
        return len(getattr(response, "members", ()))
    if key == "members":
        return [getattr(m, "member_id", m) for m in getattr(response, "members", ())]
    if key == "assignment":
        return decode_assignment(getattr(response, "assignment", b"")) or []
    value = getattr(response, key, None)
    return (
        getattr(value, "name", value)
        if hasattr(value, "name") and not isinstance(value, str)
        else value
    )


def decode_assignment(data: bytes) -> list[str] | None:
    """A ConsumerProtocol assignment's partitions as ``t-p`` texts (None: empty or unreadable)."""
    if not data:
        return None
    try:
        from members.consumer_protocol import decode_assignment as decode

        parts, _ = decode(data)
    except Exception:
        return None
    return [str(tp) for tp in parts]


def summary(request: object) -> str:
    """The ``summary`` field of ``scenario_raw_sent``: the request's identifying fields."""
    bits = []
    for key in ("group_id", "member_id", "generation_id", "group_instance_id"):
        v = getattr(request, key, None)
        if v is not None and v != -1:
            bits.append(f"{key}={v!r}" if v == "" else f"{key}={v}")
    protocols = getattr(request, "protocols", None)
    if protocols:
        bits.append("protocols=[" + ", ".join(p.name for p in protocols) + "]")
    return " ".join(bits)
