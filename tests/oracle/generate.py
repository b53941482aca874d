"""Seeded request scripts for the classic protocol, generated against Kafka's own coordinator.

Each script is a short life of one or two groups: 2-6 consumers (static or dynamic), each with
its own JoinGroup (v3-v9), SyncGroup (v0-v5), Heartbeat (v0-v4) and LeaveGroup (v0-v5) versions,
behaving mostly like a real client (rejoin with the id MEMBER_ID_REQUIRED gave, sync after the
join, heartbeat, rejoin on REBALANCE_IN_PROGRESS) and sometimes not (stale generations, unknown
or foreign member ids, wrong protocol names, batch leaves naming strangers), with injected
append failures (``append_error``), the clock moved to a timer's exact deadline (or just before
it), and broker configs varied (initial rebalance delay, min/max session, group.max.size, the
expiry interval).

The generator reacts to the oracle's answers (the member id a join handed out, the generation
a join completed), so a script is made and recorded in one pass: ``record(seed, oracle)``
returns the ops and, per op, what Kafka printed. Everything random comes from
``random.Random(seed)`` and the oracle is deterministic, so a seed always gives the same script.
"""

from __future__ import annotations

import base64
import random
import struct
from typing import Any

from tests.oracle.oracle_process import OracleProcess

INT_MAX = 2**31 - 1
PROTOCOL_NAMES = ("range", "roundrobin", "sticky")
TOPICS = ("t0", "t1", "t2")
APPEND_ERRORS = (
    "NOT_LEADER_OR_FOLLOWER",
    "NOT_ENOUGH_REPLICAS",
    "REQUEST_TIMED_OUT",
    "KAFKA_STORAGE_ERROR",
    "UNKNOWN_TOPIC_OR_PARTITION",
    "MESSAGE_TOO_LARGE",
)


def subscription(topics: list[str], user_data: bytes | None = None) -> str:
    """A ConsumerProtocolSubscription v0 (topics, user data), base64 as the oracle takes it."""
    out = struct.pack(">hi", 0, len(topics))
    for topic in topics:
        raw = topic.encode()
        out += struct.pack(">h", len(raw)) + raw
    out += struct.pack(">i", -1) if user_data is None else struct.pack(">i", len(user_data))
    out += user_data or b""
    return base64.b64encode(out).decode()


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


class Client:
    """What one simulated consumer knows from Kafka's answers."""

    def __init__(self, rng: random.Random, index: int, group: str, static: bool) -> None:
        self.index = index
        self.group = group
        self.client_id = f"c{index}"
        self.join_v = rng.randint(3, 9)
        self.instance = f"i{index}" if static else None
        if static and self.join_v < 5:
            self.join_v = rng.randint(5, 9)
        self.sync_v = rng.randint(3 if static else 0, 5)
        self.hb_v = rng.randint(3 if static else 0, 4)
        self.leave_v = rng.randint(3 if static else 0, 5)
        self.session = rng.choice((10000, 10000, 30000, 45000))
        self.rebalance = rng.choice((20000, 60000, 60000, 300000))
        self.protocols = self.pick_protocols(rng)
        self.forget()

    def pick_protocols(self, rng: random.Random) -> list[list[str]]:
        names = rng.sample(PROTOCOL_NAMES, rng.randint(1, 2))
        if rng.random() < 0.9 and "range" not in names:
            names[rng.randrange(len(names))] = "range"
        topics = sorted(rng.sample(TOPICS, rng.randint(1, 2)))
        return [[name, subscription(topics)] for name in names]

    def forget(self) -> None:
        self.member_id = ""
        self.generation = -1
        self.protocol_name: str | None = None
        self.leader = False
        self.members: list[str] = []
        self.synced = False
        self.rejoin = True

    def on_response(self, response: dict) -> None:
        error = response.get("error")
        op = response["op"]
        if op == "join":
            if error == "MEMBER_ID_REQUIRED":
                self.member_id = response["member_id"]
                self.rejoin = True
            elif error == "NONE":
                self.member_id = response["member_id"]
                self.generation = response["generation"]
                self.protocol_name = response["protocol_name"]
                self.leader = response["leader"] == self.member_id
                self.members = [m["member_id"] for m in response["members"]]
                self.synced = False
                self.rejoin = False
            elif error in ("UNKNOWN_MEMBER_ID", "FENCED_INSTANCE_ID"):
                self.forget()
        elif op == "sync":
            if error == "NONE":
                self.synced = True
            elif error in ("REBALANCE_IN_PROGRESS", "ILLEGAL_GENERATION"):
                self.rejoin = True
            elif error in ("UNKNOWN_MEMBER_ID", "FENCED_INSTANCE_ID"):
                self.forget()
        elif op == "commit":
            errors = {p[1] for t in response["topics"] for p in t[1]}
            if errors & {"REBALANCE_IN_PROGRESS", "ILLEGAL_GENERATION"}:
                self.rejoin = True
            elif errors & {"UNKNOWN_MEMBER_ID", "FENCED_INSTANCE_ID"}:
                self.forget()
        elif op == "heartbeat":
            if error in ("REBALANCE_IN_PROGRESS", "ILLEGAL_GENERATION"):
                self.rejoin = True
            elif error in ("UNKNOWN_MEMBER_ID", "FENCED_INSTANCE_ID"):
                self.forget()


def random_config(rng: random.Random) -> dict[str, Any]:
    configs: dict[str, Any] = {
        "group.initial.rebalance.delay.ms": rng.choice((0, 100, 3000, 3000)),
    }
    if rng.random() < 0.3:
        configs["group.min.session.timeout.ms"] = rng.choice((10, 6000))
    if rng.random() < 0.3:
        configs["group.max.session.timeout.ms"] = rng.choice((60000, 1800000))
    if rng.random() < 0.2:
        configs["group.max.size"] = rng.choice((1, 2, 3, 4))
    if rng.random() < 0.5:
        configs["offsets.retention.check.interval.ms"] = rng.choice((20000, 60000, 600000))
    return configs


class Script:
    """One script being generated: the ops so far and the oracle's answers to each."""

    def __init__(self, seed: int, oracle: OracleProcess) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.oracle = oracle
        self.ops: list[dict] = []
        self.out: list[list[dict]] = []
        self.now = 0
        self.state: dict = {"groups": {}, "timers": []}
        self.owner: dict[int, Client] = {}

    def send(self, op: dict) -> None:
        seq = len(self.ops)
        client = op.pop("client", None)
        if client is not None:
            self.owner[seq] = client
        self.ops.append(op)
        events = self.oracle.send(op)
        self.out.append(events)
        for event in events:
            if event["ev"] == "response" and event["seq"] in self.owner:
                self.owner[event["seq"]].on_response(event)
            elif event["ev"] == "state":
                self.state = event
                self.now = event["t"]


def _group_view(script: Script, group: str) -> dict:
    return script.state["groups"].get(group) or {}


def _join_op(rng: random.Random, client: Client, script: Script) -> dict:
    op: dict[str, Any] = {
        "op": "join",
        "group": client.group,
        "client_id": client.client_id,
        "member": client.member_id,
        "instance": client.instance,
        "protocols": client.protocols,
        "session": client.session,
        "rebalance": client.rebalance,
        "version": client.join_v,
    }
    roll = rng.random()
    if roll < 0.05:
        op["member"] = f"bogus-{rng.randint(0, 9)}"
    elif roll < 0.08:
        op["member"] = ""  # a restarted consumer: its id is forgotten
    elif roll < 0.11:
        others = [m["member_id"] for m in _group_view(script, client.group).get("members", [])]
        if others:
            op["member"] = rng.choice(others)
    if rng.random() < 0.1:
        client.protocols = client.pick_protocols(rng)
        op["protocols"] = client.protocols
    if rng.random() < 0.02:
        op["protocol_type"] = "connect"
    if rng.random() < 0.02:
        op["session"] = rng.choice((5, 3000, 3600000))
    if rng.random() < 0.05 and client.join_v >= 8:
        op["reason"] = "rejoin"
    return op


def _sync_op(rng: random.Random, client: Client, script: Script) -> dict:
    op: dict[str, Any] = {
        "op": "sync",
        "group": client.group,
        "member": client.member_id,
        "instance": client.instance,
        "generation": client.generation,
        "version": client.sync_v,
        "protocol_type": "consumer",
        "protocol_name": client.protocol_name,
    }
    if client.leader:
        members = list(client.members)
        if members and rng.random() < 0.1:
            members.pop(rng.randrange(len(members)))
        op["assignments"] = [[m, b64(f"{m[:3]}:{i}".encode())] for i, m in enumerate(members)]
    if client.generation < 0 and rng.random() < 0.5:
        # a client that never got this generation's JoinGroup answer (v5: it names a protocol)
        op["generation"] = _group_view(script, client.group).get("generation", 0)
        op["protocol_name"] = client.protocols[0][0]
    roll = rng.random()
    if roll < 0.06:
        op["generation"] = _group_view(script, client.group).get("generation", 0)
    elif roll < 0.1:
        op["generation"] = client.generation + rng.choice((-1, 1))
    roll = rng.random()
    if roll < 0.06:
        op["protocol_name"] = rng.choice(PROTOCOL_NAMES)
    elif roll < 0.09:
        op["protocol_name"] = None
    elif roll < 0.11:
        op["protocol_type"] = rng.choice(("connect", None))
    if rng.random() < 0.04:
        op["member"] = f"bogus-{rng.randint(0, 9)}"
    return op


def _heartbeat_op(rng: random.Random, client: Client, script: Script) -> dict:
    op: dict[str, Any] = {
        "op": "heartbeat",
        "group": client.group,
        "member": client.member_id,
        "instance": client.instance,
        "generation": client.generation,
        "version": client.hb_v,
    }
    if rng.random() < 0.08:
        op["generation"] = _group_view(script, client.group).get("generation", 0)
    if rng.random() < 0.04:
        op["member"] = f"bogus-{rng.randint(0, 9)}"
    return op


def _leave_op(rng: random.Random, client: Client, clients: list[Client]) -> dict:
    op: dict[str, Any] = {"op": "leave", "group": client.group, "version": client.leave_v}
    if client.leave_v >= 3 and rng.random() < 0.35:
        chosen = rng.sample(clients, rng.randint(1, min(4, len(clients))))
        members = []
        for c in chosen:
            if c.instance is not None and rng.random() < 0.4:
                members.append({"member": "", "instance": c.instance, "reason": "batch"})
            else:
                members.append({"member": c.member_id or "unknown", "instance": c.instance})
        if rng.random() < 0.2:
            members.append({"member": f"bogus-{rng.randint(0, 9)}"})
        op["members"] = members
        for c in chosen:
            c.forget()
        return op
    op["member"] = client.member_id
    op["instance"] = client.instance
    if client.leave_v >= 5 and rng.random() < 0.5:
        op["reason"] = "closing"
    client.forget()
    return op


def _next_time(rng: random.Random, script: Script) -> int:
    roll = rng.random()
    if roll < 0.45:
        return script.now
    if roll < 0.8:
        return script.now + rng.randint(1, 1500)
    return script.now + rng.randint(1500, 15000)


def _deadline_op(rng: random.Random, script: Script) -> dict | None:
    """Move the clock to a live timer's deadline (or 1 ms before it)."""
    deadlines = sorted({d for _, d in script.state.get("timers", []) if d >= script.now})
    if not deadlines:
        return None
    deadline = rng.choice(deadlines[:4])
    if rng.random() < 0.2 and deadline - 1 >= script.now:
        deadline -= 1
    return {"op": "advance", "to": deadline}


def record(seed: int, oracle: OracleProcess) -> dict:
    """Generate script ``seed`` against a (freshly reset) oracle; the ops and Kafka's answers."""
    rng = random.Random(seed)
    configs = random_config(rng)
    oracle.config({"op": "config", "configs": configs})
    script = Script(seed, oracle)
    groups = ["g"] if rng.random() < 0.8 else ["g", "h"]
    n = rng.randint(2, 6)
    static_share = rng.choice((0.0, 0.0, 0.5, 1.0))
    clients = [
        Client(rng, i + 1, groups[i % len(groups)], rng.random() < static_share) for i in range(n)
    ]
    length = rng.randint(12, 60)
    while len(script.ops) < length:
        roll = rng.random()
        if roll < 0.1:
            op = _deadline_op(rng, script)
            if op is None:
                continue
        elif roll < 0.13:
            op = {"op": "advance", "to": script.now + rng.randint(1000, 60000)}
        else:
            client = rng.choice(clients)
            peers = [c for c in clients if c.group == client.group]
            if client.member_id == "" or client.rejoin:
                kind = "join" if rng.random() < 0.8 else rng.choice(("heartbeat", "leave", "sync"))
            elif client.generation >= 0 and not client.synced:
                kind = rng.choices(("sync", "join", "heartbeat", "leave"), (8, 1, 1, 0.5))[0]
            else:
                kind = rng.choices(("heartbeat", "join", "sync", "leave"), (8, 1.5, 0.5, 0.7))[0]
            if kind == "join":
                op = _join_op(rng, client, script)
            elif kind == "sync":
                op = _sync_op(rng, client, script)
            elif kind == "heartbeat":
                op = _heartbeat_op(rng, client, script)
            else:
                op = _leave_op(rng, client, peers)
            op["client"] = client
            op["at"] = _next_time(rng, script)
        if rng.random() < 0.06:
            op["append_error"] = rng.choice(APPEND_ERRORS)
        script.send(op)
    return {"seed": seed, "configs": configs, "ops": script.ops, "out": script.out}


# --- the offsets / admin suite -----------------------------------------------------------------

OFFSET_TOPICS = {"t0": 4, "t1": 4}
OTHER_GROUPS = ("s", "x")  # a simple (offsets-only) group and one that never exists


def _commit_op(rng: random.Random, client: Client | None, script: Script) -> dict:
    """OffsetCommit by a member (its generation), or a simple commit (generation -1)."""
    version = rng.randint(1, 9)
    if client is None:
        op: dict[str, Any] = {
            "op": "commit",
            "group": rng.choice(("s", "s", "g")),
            "generation": -1,
        }
    else:
        op = {
            "op": "commit",
            "group": client.group,
            "member": client.member_id,
            "generation": client.generation,
        }
        if client.instance is not None:
            version = rng.randint(7, 9)
            op["instance"] = client.instance
        if rng.random() < 0.1:
            op["generation"] = client.generation + rng.choice((-1, 1))
    op["version"] = version
    topics = []
    for name in rng.sample(sorted(OFFSET_TOPICS), rng.randint(1, 2)):
        parts = []
        for p in rng.sample(range(OFFSET_TOPICS[name]), rng.randint(1, 3)):
            epoch = rng.choice((-1, rng.randint(0, 9))) if version >= 6 else -1
            metadata = rng.choice(("", "", "m", "x" * rng.randint(5, 40)))
            parts.append([p, rng.randint(0, 10_000), epoch, metadata])
        topics.append([name, parts])
    op["topics"] = topics
    return op


def _admin_op(rng: random.Random) -> dict:
    groups = ["g", *OTHER_GROUPS]
    kind = rng.choice(("fetch", "fetch", "describe", "list", "delete"))
    if kind == "fetch":
        op: dict[str, Any] = {"op": "fetch", "group": rng.choice(groups)}
        if rng.random() < 0.5:
            op["topics"] = None
        else:
            op["topics"] = [
                [name, sorted(rng.sample(range(OFFSET_TOPICS[name] + 1), rng.randint(1, 3)))]
                for name in rng.sample(sorted(OFFSET_TOPICS), rng.randint(1, 2))
            ]
        return op
    if kind == "list":
        filters = ((), ("Stable",), ("empty", " Stable "), ("PreparingRebalance", "Dead"))
        return {"op": "list", "states": list(rng.choice(filters))}
    chosen = rng.sample(groups, rng.randint(1, 3))
    if kind == "delete" and rng.random() < 0.2:
        chosen.append(chosen[0])
    return {"op": kind, "groups": chosen}


def record_offsets(seed: int, oracle: OracleProcess) -> dict:
    """A group's members commit and fetch offsets while admins describe, list and delete
    groups, offsets expire, and the coordinator is unloaded and loaded again."""
    rng = random.Random(seed)
    configs = random_config(rng)
    configs["offsets.retention.minutes"] = rng.choice((1, 1, 10080))
    configs["offsets.retention.check.interval.ms"] = rng.choice((20000, 30000, 600000))
    if rng.random() < 0.2:
        configs["offset.metadata.max.bytes"] = 20
    oracle.config({"op": "config", "configs": configs})
    script = Script(seed, oracle)
    clients = [Client(rng, i + 1, "g", rng.random() < 0.3) for i in range(rng.randint(2, 4))]
    unloaded = False
    length = rng.randint(15, 45)
    while len(script.ops) < length:
        roll = rng.random()
        client = rng.choice(clients)
        if roll < 0.08:
            op = _deadline_op(rng, script)
            if op is None:
                continue
        elif roll < 0.12:
            op = {"op": "advance", "to": script.now + rng.randint(10_000, 90_000)}
        elif roll < 0.15:
            op = {"op": "load" if unloaded else "unload"}
            unloaded = not unloaded
            if not unloaded:
                op["at"] = _next_time(rng, script)
        elif roll < 0.35:
            op = _commit_op(rng, client if rng.random() < 0.6 else None, script)
            if op.get("member"):
                op["client"] = client
            op["at"] = _next_time(rng, script)
        elif roll < 0.55:
            op = _admin_op(rng)
            op["at"] = _next_time(rng, script)
        else:
            if client.member_id == "" or client.rejoin:
                kind = "join"
            elif client.generation >= 0 and not client.synced:
                kind = "sync"
            else:
                kind = rng.choices(("heartbeat", "join", "leave"), (6, 1, 1))[0]
            if kind == "join":
                op = _join_op(rng, client, script)
            elif kind == "sync":
                op = _sync_op(rng, client, script)
            elif kind == "heartbeat":
                op = _heartbeat_op(rng, client, script)
            else:
                op = _leave_op(rng, client, clients)
            op["client"] = client
            op["at"] = _next_time(rng, script)
        if rng.random() < 0.05 and op["op"] not in ("unload", "load"):
            op["append_error"] = rng.choice(APPEND_ERRORS)
        script.send(op)
    return {
        "seed": seed,
        "configs": configs,
        "topics": OFFSET_TOPICS,
        "ops": script.ops,
        "out": script.out,
    }


# --- the transactions suite --------------------------------------------------------------------

PRODUCERS = (1000, 1001, 1002)


def _txn_commit_op(rng: random.Random, client: Client | None) -> dict:
    """TxnOffsetCommit by a producer: bound to a member (v3+: its id and generation, sometimes
    stale) or without one (any version, generation -1)."""
    op: dict[str, Any] = {"op": "txn_commit", "producer": rng.choice(PRODUCERS)}
    if client is None or client.member_id == "":
        op["group"] = rng.choice(("s", "g", "g", "x"))
        op["version"] = rng.randint(0, 4)
    else:
        op["version"] = rng.randint(3, 4)
        op["group"] = client.group
        op["member"] = client.member_id
        op["generation"] = client.generation
        if client.instance is not None:
            op["instance"] = client.instance
        if rng.random() < 0.1:
            op["generation"] = client.generation + rng.choice((-1, 1))
        if rng.random() < 0.05:
            op["member"] = "unknown-member"
    topics = []
    for name in rng.sample(sorted(OFFSET_TOPICS), rng.randint(1, 2)):
        parts = []
        for p in rng.sample(range(OFFSET_TOPICS[name]), rng.randint(1, 3)):
            epoch = rng.choice((-1, rng.randint(0, 9))) if op["version"] >= 2 else -1
            metadata = rng.choice(("", "", "m", "x" * rng.randint(5, 40)))
            parts.append([p, rng.randint(0, 10_000), epoch, metadata])
        topics.append([name, parts])
    op["topics"] = topics
    return op


def record_txn(seed: int, oracle: OracleProcess) -> dict:
    """The offsets suite's traffic plus transactions: producers commit offsets inside
    transactions (TxnOffsetCommit), their markers commit or abort them (end_txn), and
    OffsetFetch asks for stable offsets (require_stable) or not."""
    return _record_txn(seed, oracle, failover=False)


BROKERS = ("b0", "b1")
LOAD_MS = (0, 300, 2000, 2000, 10000)
# the ops a client sends to a broker (a marker goes to the partition's leader)
BROKER_OPS = ("join", "sync", "heartbeat", "leave", "commit", "fetch", "txn_commit")
BROKER_OPS += ("describe", "list", "delete")


def record_failover(seed: int, oracle: OracleProcess) -> dict:
    """The txn suite's traffic on two brokers whose coordinator moves: the partition is unloaded
    from its broker and loaded on one of the two (mostly the other), often taking ``load_ms``
    to load (requests meanwhile: COORDINATOR_LOAD_IN_PROGRESS); requests go to the leader or,
    as a client with a stale coordinator would, to the other broker (NOT_COORDINATOR)."""
    return _record_txn(seed, oracle, failover=True)


def _failover_op(rng: random.Random, leader: str | None, last: str) -> dict:
    """Unload the partition from ``leader``, or load it on a broker (mostly not ``last``)."""
    if leader is not None:
        return {"op": "unload"}
    other = BROKERS[1 - BROKERS.index(last)]
    return {
        "op": "load",
        "broker": other if rng.random() < 0.75 else last,
        "load_ms": rng.choice(LOAD_MS),
    }


def _record_txn(seed: int, oracle: OracleProcess, *, failover: bool) -> dict:
    rng = random.Random(seed)
    configs = random_config(rng)
    configs["offsets.retention.minutes"] = rng.choice((1, 1, 10080))
    configs["offsets.retention.check.interval.ms"] = rng.choice((20000, 30000, 600000))
    if rng.random() < 0.2:
        configs["offset.metadata.max.bytes"] = 20
    oracle.config({"op": "config", "configs": configs})
    script = Script(seed, oracle)
    clients = [Client(rng, i + 1, "g", rng.random() < 0.3) for i in range(rng.randint(2, 3))]
    unloaded = False
    leader: str | None = "b0"
    last = "b0"
    length = rng.randint(15, 45)
    while len(script.ops) < length:
        if failover and rng.random() < (0.06 if leader is not None else 0.35):
            op = _failover_op(rng, leader, last)
            if op["op"] == "load":
                leader = last = op["broker"]
                op["at"] = _next_time(rng, script)
            else:
                leader = None
            script.send(op)
            continue
        roll = rng.random()
        client = rng.choice(clients)
        if roll < 0.05:
            op = _deadline_op(rng, script)
            if op is None:
                continue
        elif roll < 0.08:
            op = {"op": "advance", "to": script.now + rng.randint(10_000, 90_000)}
        elif roll < 0.11:
            if failover:
                continue
            op = {"op": "load" if unloaded else "unload"}
            unloaded = not unloaded
            if not unloaded:
                op["at"] = _next_time(rng, script)
        elif roll < 0.30:
            op = _txn_commit_op(rng, client if rng.random() < 0.5 else None)
            if op.get("member"):
                op["client"] = client
            op["at"] = _next_time(rng, script)
        elif roll < 0.40:
            op = {
                "op": "end_txn",
                "producer": rng.choice(PRODUCERS),
                "commit": rng.random() < 0.7,
                "at": _next_time(rng, script),
            }
        elif roll < 0.50:
            op = _commit_op(rng, client if rng.random() < 0.6 else None, script)
            if op.get("member"):
                op["client"] = client
            op["at"] = _next_time(rng, script)
        elif roll < 0.65:
            op = _admin_op(rng)
            if op["op"] == "fetch":
                op["stable"] = rng.random() < 0.6
            op["at"] = _next_time(rng, script)
        else:
            if client.member_id == "" or client.rejoin:
                kind = "join"
            elif client.generation >= 0 and not client.synced:
                kind = "sync"
            else:
                kind = rng.choices(("heartbeat", "join", "leave"), (6, 1, 1))[0]
            if kind == "join":
                op = _join_op(rng, client, script)
            elif kind == "sync":
                op = _sync_op(rng, client, script)
            elif kind == "heartbeat":
                op = _heartbeat_op(rng, client, script)
            else:
                op = _leave_op(rng, client, clients)
            op["client"] = client
            op["at"] = _next_time(rng, script)
        if failover and op["op"] in BROKER_OPS:
            if leader is None:
                op["broker"] = rng.choice(BROKERS)
            else:
                op["broker"] = leader if rng.random() < 0.85 else BROKERS[1 - BROKERS.index(leader)]
        if rng.random() < 0.05 and op["op"] not in ("unload", "load"):
            op["append_error"] = rng.choice(APPEND_ERRORS)
        script.send(op)
    return {
        "seed": seed,
        "configs": configs,
        **({"brokers": 2} if failover else {}),
        "topics": OFFSET_TOPICS,
        "ops": script.ops,
        "out": script.out,
    }
