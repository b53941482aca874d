"""Replay a recorded oracle script through groupsim and list every difference from Kafka.

A script's ops are the oracle's JSON ops; its ``out`` is, per op, what Kafka's coordinator printed
(responses, log writes, the state after the op; see tools/kafka-oracle/Oracle.java). Each op is
turned into groupsim's request at the op's API version, run through ``ClusterAdapter`` at the
same simulated time, and groupsim's answers are put in the oracle's shape (only the fields the
response version carries) and compared: every response, every record written, the groups'
state and the live timers after the op.
"""

from __future__ import annotations

import base64
import gzip
import json
import lzma
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from coordinator.errors import Errors
from coordinator.protocol import (
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    HeartbeatRequest,
    JoinGroupRequest,
    JoinGroupRequestProtocol,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    ListGroupsRequest,
    ListGroupsResponse,
    MemberIdentity,
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchRequestTopic,
    OffsetFetchResponse,
    SyncGroupRequest,
    SyncGroupRequestAssignment,
    SyncGroupResponse,
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
    TxnOffsetCommitResponse,
)
from coordinator.records import (
    NO_PRODUCER_ID,
    ControlRecordKey,
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    Record,
)
from tests.oracle.adapter import ClusterAdapter

DATA = Path(__file__).parent / "data"
CLIENT_HOST = "/127.0.0.1"


def load(path: Path, keep: Callable[[int], bool] = lambda _: True) -> Iterator[dict]:
    """The recorded scripts of ``path``; ``keep(i)`` picks the i-th line's (parsed only then)."""
    opener = lzma.open if path.suffix == ".xz" else gzip.open
    with opener(path, "rt") as f:
        for i, line in enumerate(f):
            if keep(i):
                yield expand(json.loads(line))


def compact(out: list[list[dict]]) -> list[list[dict]]:
    """Drop what a state line repeats from the one before (``null``), and its seq and time."""
    previous: dict[str, Any] = {"groups": None, "timers": None}
    result = []
    for events in out:
        kept = []
        for event in events:
            if event["ev"] == "state":
                event = {k: v for k, v in event.items() if k not in ("t", "seq")}
                for part in ("groups", "timers"):
                    value = event.get(part)
                    event[part] = None if value == previous[part] else value
                    previous[part] = value
            kept.append(event)
        result.append(kept)
    return result


def expand(script: dict) -> dict:
    """Undo ``compact``: every state line whole again."""
    previous: dict[str, Any] = {"groups": {}, "timers": []}
    for events in script["out"]:
        for event in events:
            if event["ev"] == "state":
                for part in ("groups", "timers"):
                    if event.get(part) is None:
                        event[part] = previous[part]
                    previous[part] = event[part]
    return script


def _b64(raw: bytes | None) -> str | None:
    return None if raw is None else base64.b64encode(raw).decode()


def _unb64(text: str | None) -> bytes:
    return b"" if text is None else base64.b64decode(text)


# --- ops -> groupsim requests ------------------------------------------------------------------


def to_request(op: dict) -> object:
    kind = op["op"]
    group = op.get("group", "g")
    member = op.get("member", "")
    instance = op.get("instance")
    if kind == "join":
        v = op.get("version", 9)
        return JoinGroupRequest(
            group_id=group,
            session_timeout_ms=op.get("session", 45000),
            rebalance_timeout_ms=op.get("rebalance", 300000) if v >= 1 else op.get("session"),
            member_id=member,
            protocol_type=op.get("protocol_type", "consumer"),
            protocols=[JoinGroupRequestProtocol(n, _unb64(m)) for n, m in op.get("protocols", [])],
            group_instance_id=instance if v >= 5 else None,
            reason=op.get("reason") if v >= 8 else None,
            api_version=v,
            client_id=op.get("client_id", "client"),
            client_host=CLIENT_HOST,
        )
    if kind == "sync":
        v = op.get("version", 5)
        return SyncGroupRequest(
            group_id=group,
            generation_id=op.get("generation", -1),
            member_id=member,
            group_instance_id=instance if v >= 3 else None,
            protocol_type=op.get("protocol_type", "consumer") if v >= 5 else None,
            protocol_name=op.get("protocol_name") if v >= 5 else None,
            assignments=[
                SyncGroupRequestAssignment(m, _unb64(a)) for m, a in op.get("assignments", [])
            ],
            api_version=v,
        )
    if kind == "heartbeat":
        v = op.get("version", 4)
        return HeartbeatRequest(
            group_id=group,
            generation_id=op.get("generation", -1),
            member_id=member,
            group_instance_id=instance if v >= 3 else None,
        )
    if kind == "leave":
        v = op.get("version", 5)
        identities = op.get("members", [op])
        return LeaveGroupRequest(
            group_id=group,
            members=[
                MemberIdentity(
                    m.get("member", ""),
                    m.get("instance") if v >= 3 else None,
                    m.get("reason") if v >= 5 else None,
                )
                for m in identities
            ],
            api_version=v,
        )
    if kind == "commit":
        v = op.get("version", 9)
        return OffsetCommitRequest(
            group_id=group,
            generation_id=op.get("generation", -1),
            member_id=member,
            topics=[
                OffsetCommitRequestTopic(
                    name,
                    [
                        OffsetCommitRequestPartition(
                            p[0],
                            p[1],
                            p[2] if len(p) > 2 and v >= 6 else -1,
                            p[3] if len(p) > 3 else "",
                        )
                        for p in partitions
                    ],
                )
                for name, partitions in op.get("topics", [])
            ],
            group_instance_id=instance if v >= 7 else None,
            api_version=v,
        )
    if kind == "fetch":
        topics = op.get("topics")
        return OffsetFetchRequest(
            group_id=group,
            topics=None
            if topics is None
            else tuple(OffsetFetchRequestTopic(n, ps) for n, ps in topics),
            require_stable=op.get("stable", False),
        )
    if kind == "txn_commit":
        v = op.get("version", 4)
        return TxnOffsetCommitRequest(
            transactional_id=op.get("transactional_id", "txn"),
            group_id=group,
            producer_id=op.get("producer", 1000),
            producer_epoch=op.get("epoch", 0),
            topics=[
                TxnOffsetCommitRequestTopic(
                    name,
                    [
                        TxnOffsetCommitRequestPartition(
                            p[0],
                            p[1],
                            p[2] if len(p) > 2 else -1,
                            p[3] if len(p) > 3 else "",
                        )
                        for p in partitions
                    ],
                )
                for name, partitions in op.get("topics", [])
            ],
            generation_id=op.get("generation", -1),
            member_id=member,
            group_instance_id=instance,
            api_version=v,
        )
    if kind == "describe":
        return DescribeGroupsRequest(op["groups"])
    if kind == "list":
        return ListGroupsRequest(op.get("states", []))
    if kind == "delete":
        return DeleteGroupsRequest(op["groups"])
    raise ValueError(f"no groupsim request for op {kind!r}")


# --- groupsim answers in the oracle's shape ----------------------------------------------------


def response_fields(op: dict, message: object) -> dict:
    """groupsim's response as the oracle prints it at the op's version."""
    if op["op"] in ("commit", "fetch", "describe", "list", "delete", "txn_commit", "end_txn"):
        return admin_response_fields(message)
    error = message.error_code.name  # type: ignore[attr-defined]
    if isinstance(message, JoinGroupResponse):
        v = op.get("version", 9)
        name = message.protocol_name
        if v < 7 and name is None:
            name = ""
        if v >= 7 and name == "":
            name = None
        return {
            "error": error,
            "member_id": message.member_id,
            "generation": message.generation_id,
            "leader": message.leader,
            "protocol_type": message.protocol_type if v >= 7 else None,
            "protocol_name": name,
            "skip_assignment": message.skip_assignment if v >= 9 else False,
            "members": [
                {
                    "member_id": m.member_id,
                    "instance": m.group_instance_id if v >= 5 else None,
                    "metadata": _b64(m.metadata),
                }
                for m in message.members
            ],
        }
    if isinstance(message, SyncGroupResponse):
        v = op.get("version", 5)
        return {
            "error": error,
            "protocol_type": message.protocol_type if v >= 5 else None,
            "protocol_name": message.protocol_name if v >= 5 else None,
            "assignment": _b64(message.assignment),
        }
    if isinstance(message, LeaveGroupResponse):
        v = op.get("version", 5)
        return {
            "error": error,
            "members": [
                {
                    "member_id": m.member_id,
                    "instance": m.group_instance_id,
                    "error": m.error_code.name,
                }
                for m in message.members
            ]
            if v >= 3
            else [],
        }
    return {"error": error}


def admin_response_fields(message: object) -> dict:
    """The offset and admin APIs' answers as the oracle prints them."""
    if isinstance(message, Errors):  # a transaction marker's outcome
        return {"error": message.name}
    if isinstance(message, OffsetCommitResponse | TxnOffsetCommitResponse):
        return {
            "topics": [
                [t.name, [[p.partition_index, p.error_code.name] for p in t.partitions]]
                for t in message.topics
            ]
        }
    if isinstance(message, OffsetFetchResponse):
        return {
            "error": message.error_code.name,
            "topics": [
                [
                    t.name,
                    [
                        [
                            p.partition_index,
                            p.committed_offset,
                            p.committed_leader_epoch,
                            p.metadata,
                            p.error_code.name,
                        ]
                        for p in t.partitions
                    ],
                ]
                for t in message.topics
            ],
        }
    if isinstance(message, DescribeGroupsResponse):
        return {
            "groups": [
                {
                    "group_id": g.group_id,
                    "error": g.error_code.name,
                    "state": g.group_state,
                    "protocol_type": g.protocol_type,
                    "protocol_data": g.protocol_data,
                    "members": [
                        {
                            "member_id": m.member_id,
                            "instance": m.group_instance_id,
                            "client_id": m.client_id,
                            "client_host": m.client_host,
                            "metadata": _b64(m.member_metadata),
                            "assignment": _b64(m.member_assignment),
                        }
                        for m in g.members
                    ],
                }
                for g in message.groups
            ]
        }
    if isinstance(message, ListGroupsResponse):
        return {
            "error": message.error_code.name,
            "groups": [[g.group_id, g.protocol_type, g.group_state] for g in message.groups],
        }
    if isinstance(message, DeleteGroupsResponse):
        return {"results": [[r.group_id, r.error_code.name] for r in message.results]}
    raise TypeError(type(message).__name__)


_RESPONSE_SKIP = ("ev", "completed_by", "tag")


def kafka_response(event: dict) -> dict:
    return {k: v for k, v in event.items() if k not in _RESPONSE_SKIP}


def record_fields(record: Record) -> dict:
    key, value = record.key, record.value
    if isinstance(key, GroupMetadataKey):
        out: dict[str, Any] = {"type": "GroupMetadata", "group": key.group}
        if value is None:
            out["tombstone"] = True
            return out
        assert isinstance(value, GroupMetadataValue)
        out.update(
            generation=value.generation,
            protocol_type=value.protocol_type,
            protocol=value.protocol,
            leader=value.leader,
            current_state_timestamp=value.current_state_timestamp,
            members=[
                {
                    "member_id": m.member_id,
                    "instance": m.group_instance_id,
                    "client_id": m.client_id,
                    "client_host": m.client_host,
                    "rebalance": m.rebalance_timeout,
                    "session": m.session_timeout,
                    "subscription": _b64(m.subscription),
                    "assignment": _b64(m.assignment),
                }
                for m in value.members
            ],
        )
        return out
    if isinstance(key, OffsetCommitKey):
        out = {"type": "OffsetCommit", "group": key.group, "topic": key.topic}
        out["partition"] = key.partition
        if value is None:
            out["tombstone"] = True
            return out
        assert isinstance(value, OffsetCommitValue)
        out.update(
            offset=value.offset,
            leader_epoch=value.leader_epoch,
            metadata=value.metadata,
            commit_timestamp=value.commit_timestamp,
            expire_timestamp=value.expire_timestamp,
        )
        return out
    if isinstance(key, ControlRecordKey):
        return {
            "type": "EndTransactionMarker",
            "producer_id": record.producer_id,
            "result": key.type,
        }
    raise TypeError(type(key).__name__)


def group_state(adapter: ClusterAdapter, group_id: str) -> dict:
    view = adapter.group(group_id)
    if view is None:
        return {"state": None}
    extras = adapter.group_extras(group_id)
    return {
        "state": view.state,
        "generation": view.generation_id,
        "protocol_type": view.protocol_type,
        "protocol": view.protocol_name,
        "leader": view.leader_id,
        "pending_join_ids": sorted(view.pending_members),
        "pending_sync_members": extras["pending_sync_members"],
        "new_member_added": extras["new_member_added"],
        "members": [
            {
                "member_id": m.member_id,
                "instance": m.group_instance_id,
                "client_id": m.client_id,
                "session": m.session_timeout_ms,
                "rebalance": m.rebalance_timeout_ms,
                "awaiting_join": m.awaiting_join,
                "awaiting_sync": m.awaiting_sync,
                "is_new": m.is_new,
                "protocols": [name for name, _ in m.protocols],
                "assignment": _b64(m.assignment),
            }
            for m in sorted(view.members, key=lambda m: m.member_id)
        ],
    }


def kafka_group_state(group: dict) -> dict:
    if group.get("state") in (None, "unloaded"):
        return {"state": None}  # gone, or no coordinator has the partition
    return {k: v for k, v in group.items() if k != "pending_join_members"}


def live_timer_keys(groups: dict[str, dict]) -> set[str]:
    """The timers that belong to what Kafka's state holds: each live group's join and sync
    timers and the heartbeat timers of its members and pending ids.

    Kafka leaves some timers behind when a group goes away (a creation rolled back after a
    failed write, an expired group's pending ids: docs/oracle.md); groupsim cancels them.
    Such a timer can only matter if it fires on something, which the responses, records and
    states compared after every op would show.
    """
    keys = set()
    for group_id, group in groups.items():
        if group.get("state") in (None, "unloaded"):
            continue
        keys.add(f"join-{group_id}")
        keys.add(f"sync-{group_id}")
        for m in group["members"]:
            keys.add(f"heartbeat-{group_id}-{m['member_id']}")
        for m in group["pending_join_ids"]:
            keys.add(f"heartbeat-{group_id}-{m}")
    return keys


def _unordered(value: object) -> object:
    """``value`` with orders made canonical, for suites that do not compare them: the offsets
    of a group in a write batch (OffsetCommit records in a row), a fetch-all answer's topics
    and partitions, and ListGroups' groups (Kafka: its TimelineHashMaps' order; groupsim:
    commit order or sorted)."""
    if isinstance(value, list) and value and isinstance(value[0], tuple):  # (t, record) pairs
        out, run = [], []
        for item in [*value, (None, {"type": None})]:
            if item[1]["type"] == "OffsetCommit" and (not run or run[0][0] == item[0]):
                run.append(item)
                continue
            out += sorted(run, key=lambda r: (r[1]["group"], r[1]["topic"], r[1]["partition"]))
            run = [item] if item[1]["type"] == "OffsetCommit" else []
            if item[0] is not None and not run:
                out.append(item)
        return out
    if isinstance(value, list):  # responses
        out = []
        for r in value:
            r = dict(r)
            if r["op"] == "fetch":
                r["topics"] = sorted([t, sorted(ps)] for t, ps in r["topics"])
            elif r["op"] == "list":
                r["groups"] = sorted(r["groups"])
            out.append(r)
        return out
    return value


# --- the replay --------------------------------------------------------------------------------


def kafka_defect(script: dict) -> int | None:
    """The first op after which Kafka holds a join timer for a group that does not exist.

    That is Kafka's defect of a rolled-back group creation (its join timer survives the
    revert) and, when the group id is used again, the stale timer completes the new group's
    join early. groupsim does not copy it (docs/oracle.md), so a replay stops there.
    """
    for seq, events in enumerate(script["out"]):
        state = next(e for e in events if e["ev"] == "state")
        for key, _ in state.get("timers", []):
            if key.startswith("join-"):
                group = state["groups"].get(key.removeprefix("join-"))
                if group is None or group.get("state") in (None, "unloaded"):
                    return seq
    return None


def replay(script: dict, *, strict_order: bool = True, strict_records: bool = True) -> list[str]:
    """Run ``script`` through groupsim; one line per difference from Kafka's recorded answers.

    A script in which Kafka shows its rolled-back-join-timer defect is compared up to the op
    where the defect appears (``kafka_defect``). ``strict_order=False`` forgives the orders
    groupsim does not follow (``_unordered``); ``strict_records=False`` only the order of a
    group's offsets in a write batch.
    """
    adapter = ClusterAdapter(
        script.get("configs", {}), script.get("topics"), num_brokers=script.get("brokers", 1)
    )
    diffs: list[str] = []
    ops = script["ops"]
    stop = kafka_defect(script)
    for seq, (op, events) in enumerate(zip(ops, script["out"], strict=True)):
        if stop is not None and seq > stop:
            break
        where = f"seed {script['seed']} op {seq} ({op['op']})"
        if "at" in op:
            adapter.advance(op["at"])
        error = op.get("append_error")
        if op["op"] == "unload":
            adapter.unload()
        elif op["op"] == "load":
            adapter.load(op.get("broker"), op.get("load_ms", 0))
        elif op["op"] == "advance":
            target = op["to"] if "to" in op else adapter.now + op.get("by", 0)
            first_timer = next((e["key"] for e in events if e["ev"] == "timer"), None)
            fail = (first_timer, error) if error and first_timer else None
            adapter.advance(target, fail_first=fail)
        elif op["op"] == "end_txn":
            adapter.end_transaction(seq, op.get("producer", 1000), op.get("commit", True), error)
        elif op["op"] != "state":
            if any(e["ev"] == "op_error" for e in events):
                diffs.append(f"{where}: the oracle refused the op: {events}")
                continue
            adapter.request(seq, to_request(op), error, op.get("broker"))
        # responses (completed by this op or by a timer it fired)
        ours = []
        for corr, message, t in adapter.take_responses():
            fields = response_fields(ops[corr], message)
            ours.append({"seq": corr, "op": ops[corr]["op"], "t": t, **fields})
        theirs = [kafka_response(e) for e in events if e["ev"] == "response"]
        if ours != theirs and (strict_order or _unordered(ours) != _unordered(theirs)):
            diffs.append(f"{where}: responses\n  kafka:    {theirs}\n  groupsim: {ours}")
        # records written
        ours_w = [
            (r.append_time_ms, {**record_fields(r), "producer_id": r.producer_id})
            for r in adapter.take_records()
        ]
        theirs_w = [
            (e["t"], {**r, "producer_id": e.get("producer_id", NO_PRODUCER_ID)})
            for e in events
            if e["ev"] == "write"
            for r in e["records"]
        ]
        if ours_w != theirs_w and (
            (strict_order and strict_records) or _unordered(ours_w) != _unordered(theirs_w)
        ):
            diffs.append(f"{where}: records\n  kafka:    {theirs_w}\n  groupsim: {ours_w}")
        # state and timers after the op
        state = next(e for e in events if e["ev"] == "state")
        for group_id, group in state["groups"].items():
            theirs_g = kafka_group_state(group)
            ours_g = group_state(adapter, group_id)
            if ours_g != theirs_g:
                diffs.append(
                    f"{where}: group {group_id}\n  kafka:    {theirs_g}\n  groupsim: {ours_g}"
                )
        live = live_timer_keys(state["groups"])
        theirs_t = sorted((k, d) for k, d in state.get("timers", []) if k in live)
        ours_t = [(k, d) for k, d in adapter.timers() if k in live]
        if ours_t != theirs_t:
            diffs.append(f"{where}: timers\n  kafka:    {theirs_t}\n  groupsim: {ours_t}")
    return diffs
