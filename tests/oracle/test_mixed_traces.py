"""groupsim against Kafka on mixed-protocol recorded traces (tests/oracle/mixed.py records them;
tests/oracle/data/mixed.jsonl.xz): classic JoinGroup / SyncGroup / Heartbeat / LeaveGroup
interleaved with ConsumerGroupHeartbeat on one group id, so that it is upgraded, lives as a mixed
consumer group and is downgraded, under the migration policy the script's configs name.

After every op: every response (the ones a timer or a later op completed included), every
record written (the classic group's records field by field; the consumer group's as
test_kip848_traces.py compares them, plus each member's classic metadata), the group's type and
state, and the live timers of what Kafka's state holds (a classic group's join/sync/heartbeat
timers; every consumer-group member's session, rebalance, join and sync timers). Kafka leaves a
converted classic group's timers behind to fire as no-ops; groupsim cancels them: they are not
compared (a timer that mattered would show in the responses, records and states).
"""

from __future__ import annotations

import base64
import functools
import os
from typing import Any

import pytest

from coordinator.consumer_protocol import SchemaError, decode_version, read_assignment
from coordinator.protocol import (
    ConsumerGroupHeartbeatResponse,
)
from coordinator.records import ConsumerGroupMemberMetadataKey, GroupMetadataKey, Record
from tests.oracle.adapter import ClusterAdapter
from tests.oracle.mixed import DATA, LARGE_DATA, load
from tests.oracle.replay import (
    group_state,
    kafka_defect,
    kafka_group_state,
    kafka_response,
    live_timer_keys,
    record_fields,
    response_fields,
    to_request,
)
from tests.oracle.script_files import disagreements
from tests.oracle.test_kip848_traces import _kafka_record, _ours, cgh_request

GROUP = "g"


#: ``make test`` replays one script in three; ``make oracle`` (GROUPSIM_ORACLE_TRACES=all) all
FULL = os.environ.get("GROUPSIM_ORACLE_TRACES") == "all"


@functools.cache
def scripts() -> tuple[dict[str, Any], ...]:
    if not DATA.exists():
        return ()
    return tuple(s for s in load(DATA) if FULL or s["seed"] % 3 == 0)


def _assignment(pairs: Any) -> Any:
    return None if pairs is None else sorted([t, sorted(ps)] for t, ps in pairs if ps)


def cgh_fields(message: ConsumerGroupHeartbeatResponse) -> dict[str, Any]:
    assignment = message.assignment
    return {
        "error": message.error_code.name,
        "message": message.error_message,
        "member_id": message.member_id,
        "member_epoch": message.member_epoch,
        "heartbeat_interval": message.heartbeat_interval_ms,
        "assignment": None
        if assignment is None
        else _assignment([(str(t.topic_id), t.partitions) for t in assignment.topic_partitions]),
    }


def _sync_assignment(fields: dict[str, Any]) -> dict[str, Any]:
    """A SyncGroup's assignment bytes read back (version, partitions as a set, user data): a
    consumer group serializes a member's HashMap of topics, whose order among topic ids that
    share a bucket is Kafka's insertion history (compared as sets, as the other suites do)."""
    raw = base64.b64decode(fields.get("assignment") or "")
    try:
        partitions, user_data = read_assignment(raw)
        fields["assignment"] = (decode_version(raw), sorted(partitions), user_data)
    except SchemaError:
        pass
    return fields


def _kafka_response(event: dict[str, Any]) -> dict[str, Any]:
    out = kafka_response(event)
    if out["op"] == "cgh":
        out["assignment"] = _assignment(out["assignment"])
    elif out["op"] == "sync":
        out = _sync_assignment(out)
    return out


def _ours_record(record: Record) -> Any:
    key, value = record.key, record.value
    if isinstance(key, GroupMetadataKey):
        return record_fields(record)
    ours = _ours(key, value)
    if isinstance(key, ConsumerGroupMemberMetadataKey) and value is not None:
        classic = value.classic_member_metadata  # type: ignore[union-attr]
        extra = None
        if classic is not None:
            extra = (
                classic.session_timeout_ms,
                tuple(
                    (p.name, base64.b64encode(p.metadata).decode())
                    for p in classic.supported_protocols
                ),
            )
        return (*ours, extra)
    return ours


def _theirs_record(r: dict[str, Any]) -> Any:
    if r["type"] == "GroupMetadata":
        return {k: v for k, v in r.items() if k != "tombstone" or v}
    theirs = _kafka_record(r)
    if r["type"] == "ConsumerGroupMemberMetadata" and not r.get("tombstone"):
        classic = r.get("classic")
        extra = None
        if classic is not None:
            extra = (classic["session"], tuple((n, m) for n, m in classic["protocols"]))
        return (*theirs, extra)
    return theirs


def consumer_state(adapter: ClusterAdapter) -> dict[str, Any] | None:
    shard = adapter.cluster.service.shards.get(0)
    group = None if shard is None else shard.consumer_group_manager.groups.get(GROUP)
    if group is None:
        return None
    return {
        "type": "consumer",
        "state": str(group.state),
        "group_epoch": group.group_epoch,
        "assignment_epoch": group.target_assignment_epoch,
        "members": {
            m.member_id: [m.member_epoch, m.previous_member_epoch, m.state.name]
            for m in sorted(group.members.values(), key=lambda m: m.member_id)
        },
    }


def _consumer_timer(name: str, member_ids: set[str]) -> bool:
    for prefix in ("session-timeout-", "rebalance-timeout-", "join-", "sync-"):
        if name.startswith(f"{prefix}{GROUP}-") and name[len(prefix) + len(GROUP) + 1 :] in (
            member_ids
        ):
            return True
    return False


def replay(script: dict[str, Any]) -> list[str]:
    """Every difference from Kafka's answers (empty: identical)."""
    adapter = ClusterAdapter(script.get("configs", {}))
    ops = script["ops"]
    diffs: list[str] = []
    stop = kafka_defect({"out": script["answers"]})
    for seq, (op, lines) in enumerate(zip(ops, script["answers"], strict=True)):
        if stop is not None and seq > stop:
            break  # Kafka's rolled-back join timer (replay.kafka_defect): not copied
        where = f"seed {script['seed']} op {seq} {op}"
        error = op.get("append_error")
        kind = op["op"]
        if kind == "topic":
            cluster = adapter.cluster
            if op["name"] in cluster.topics():
                cluster.add_partitions(op["name"], op["partitions"])
            else:
                cluster.create_topic(op["name"], op["partitions"])
        elif kind == "advance":
            adapter.advance(op["to"])
        elif kind == "unload":
            adapter.unload()
        elif kind == "load":
            adapter.load()
        elif kind == "cgh":
            adapter.request(seq, cgh_request(op), error)
        else:
            adapter.request(seq, to_request(op), error)
        ours_r = []
        for corr, message, t in adapter.take_responses():
            fields = (
                cgh_fields(message)
                if isinstance(message, ConsumerGroupHeartbeatResponse)
                else response_fields(ops[corr], message)
            )
            if ops[corr]["op"] == "sync":
                fields = _sync_assignment(fields)
            ours_r.append({"seq": corr, "op": ops[corr]["op"], "t": t, **fields})
        theirs_r = [_kafka_response(e) for e in lines if e.get("ev") == "response"]
        if ours_r != theirs_r:
            diffs.append(f"{where}: responses\n  kafka    {theirs_r}\n  groupsim {ours_r}")
        ours_w = [_ours_record(r) for r in adapter.take_records()]
        theirs_w = [
            _theirs_record(r) for e in lines if e.get("ev") == "write" for r in e["records"]
        ]
        if ours_w != theirs_w:
            diffs.append(f"{where}: records\n  kafka    {theirs_w}\n  groupsim {ours_w}")
        state = next(e for e in lines if e.get("ev") == "state")
        kafka_group = state.get("groups", {}).get(GROUP)
        members: set[str] = set()
        if kafka_group is not None and kafka_group.get("type") == "consumer":
            ours_g: Any = consumer_state(adapter)
            theirs_g: Any = dict(kafka_group)
            members = set(kafka_group["members"])
            live: set[str] = set()
        else:
            ours_g = group_state(adapter, GROUP) if consumer_state(adapter) is None else "consumer"
            theirs_g = kafka_group_state(kafka_group) if kafka_group is not None else None
            live = live_timer_keys({GROUP: kafka_group}) if kafka_group is not None else set()
            if kafka_group is None:
                ours_g = None if ours_g == {"state": None} else ours_g
        if ours_g != theirs_g:
            diffs.append(f"{where}: group\n  kafka    {theirs_g}\n  groupsim {ours_g}")
        theirs_t = sorted(
            (k, d) for k, d in state.get("timers", []) if k in live or _consumer_timer(k, members)
        )
        ours_t = [(k, d) for k, d in adapter.timers() if k in live or _consumer_timer(k, members)]
        if ours_t != theirs_t:
            diffs.append(f"{where}: timers\n  kafka    {theirs_t}\n  groupsim {ours_t}")
        if diffs:
            break
    return diffs


#: Scripts on which groupsim still differs from Kafka, and why. The test fails if one of them
#: starts to agree (take it out) or if any other script differs.
KNOWN_DIVERGENCES: dict[int, str] = {}


@pytest.mark.skipif(not DATA.exists(), reason="no recorded mixed-protocol traces")
def test_mixed_protocol_groups_agree_with_kafka() -> None:
    failures = disagreements(scripts(), replay, KNOWN_DIVERGENCES)
    assert not failures, f"{len(failures)} of {len(scripts())} scripts:\n" + "\n".join(failures[:3])


@pytest.mark.skipif(not LARGE_DATA.exists(), reason="no recorded large mixed-protocol traces")
def test_large_mixed_protocol_groups_agree_with_kafka() -> None:
    """The ``--large`` recording (mixed.record_large: 10 to 24 clients, 150 or 250 ops); one
    script in three in ``make test``, all with GROUPSIM_ORACLE_TRACES=all."""
    scripts = tuple(s for s in load(LARGE_DATA) if FULL or s["seed"] % 3 == 0)
    failures = disagreements(scripts, replay, {})
    assert not failures, f"{len(failures)} of {len(scripts)} scripts:\n" + "\n".join(failures[:3])
    assert len(scripts) >= 13
