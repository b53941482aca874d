"""Mixed-protocol recorded traces: one group id that classic members (JoinGroup / SyncGroup /
Heartbeat / LeaveGroup) and consumer-protocol members (ConsumerGroupHeartbeat) use at once, so
that the group is upgraded, lives as a mixed consumer group and is downgraded back, under a
varied ``group.consumer.migration.policy`` (and sometimes small group size limits). Recorded from
Kafka's own GroupCoordinatorShard (tools/kafka-oracle/Oracle.java) and replayed through
groupsim's KafkaCluster by test_mixed_traces.py.

Up to four clients react to Kafka's answers as the Java consumers do: a classic client joins in
two steps (MEMBER_ID_REQUIRED), the leader of a classic group assigns the partitions round-robin
(ConsumerProtocol bytes), members sync, heartbeat, rejoin on REBALANCE_IN_PROGRESS and start over
after UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION / FENCED_MEMBER_EPOCH; a consumer-protocol client
joins with epoch 0 and reports its assignment as owned. Clients leave, go silent (their session
or join/sync timer expires), and come back speaking the other protocol (a rolling upgrade or
downgrade).

    python -m tests.oracle.mixed --oracle /tmp/migration-oracle/oracle.sh --seeds 0:150
    python -m tests.oracle.mixed --large --oracle ... --seeds 0:40

writes tests/oracle/data/mixed.jsonl.xz (the same format as kip848.jsonl.xz, plus ``configs``;
``--large``: mixed-large.jsonl.xz, 10 to 24 clients, see ``record_large``).
"""

from __future__ import annotations

import base64
import functools
import random
import sys
from pathlib import Path
from typing import Any

from assignors.api import Subscription, TopicPartition
from members.consumer_protocol import decode_assignment, encode_assignment, encode_subscription
from tests.oracle.kip848 import topic_ops
from tests.oracle.oracle_process import OracleProcess
from tests.oracle.script_files import read_scripts, record_command, record_seeds

DATA = Path(__file__).parent / "data" / "mixed.jsonl.xz"
LARGE_DATA = Path(__file__).parent / "data" / "mixed-large.jsonl.xz"
GROUP = "g"
TOPICS = {"foo": 6, "bar": 3}
POLICIES = ("bidirectional", "bidirectional", "upgrade", "downgrade", "disabled")


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


class Client:
    def __init__(self, index: int, rng: random.Random) -> None:
        self.index = index
        self.name = f"c{index}"
        self.protocol = rng.choice(("classic", "classic", "consumer"))
        self.instance = f"i{index}" if rng.random() < 0.25 else None
        self.incarnation = 0
        self.topics = rng.choice((("foo",), ("foo", "bar")))
        self.session = rng.choice((10000, 30000, 45000))
        self.rebalance = rng.choice((5000, 20000))
        self.cooperative = rng.random() < 0.5
        self.reset()

    def reset(self) -> None:
        """Out of the group (the member id is kept by a classic client, as Kafka's does after
        REBALANCE_IN_PROGRESS, and dropped after UNKNOWN_MEMBER_ID)."""
        self.member_id = ""
        self.epoch = -1  # the consumer protocol's member epoch, or the classic generation
        self.assigned: list[tuple[str, int]] = []
        self.joined = False  # classic: a JoinGroup answered NONE at ``epoch``
        self.synced = False
        self.members: list[tuple[str, bytes]] = []  # classic leader: the JoinGroup's members
        self.parked = False  # a JoinGroup or SyncGroup waits for its answer

    def subscription(self) -> str:
        owned = [TopicPartition(t, p) for t, p in self.assigned] if self.cooperative else []
        return b64(encode_subscription(Subscription(self.topics, owned_partitions=owned)))


def assign(members: list[tuple[str, bytes]], generation: int) -> list[list[str]]:
    """The classic leader's assignment: every subscribed partition, round-robin over the
    members subscribed to its topic (sorted by member id)."""
    from members.consumer_protocol import decode_subscription

    subs = {m: set(decode_subscription(meta).topics) for m, meta in members}
    plan: dict[str, list[TopicPartition]] = {m: [] for m in subs}
    for topic in sorted(TOPICS_NOW):
        takers = sorted(m for m, ts in subs.items() if topic in ts)
        for p in range(TOPICS_NOW[topic]):
            if takers:
                plan[takers[p % len(takers)]].append(TopicPartition(topic, p))
    return [[m, b64(encode_assignment(tps))] for m, tps in plan.items()]


TOPICS_NOW: dict[str, int] = {}
LOADED = [True]
APPEND_ERRORS = ("NOT_LEADER_OR_FOLLOWER", "NOT_ENOUGH_REPLICAS")


def next_op(rng: random.Random, clients: list[Client], t: int) -> tuple[dict[str, Any], Client]:
    if not LOADED[0] and rng.random() < 0.5:
        LOADED[0] = True
        return {"op": "load"}, clients[0]
    if LOADED[0] and rng.random() < 0.02:
        LOADED[0] = False
        return {"op": "unload"}, clients[0]
    roll = rng.random()
    if roll < 0.12:
        return {"op": "advance", "to": t + rng.choice((500, 3000, 6000, 12000, 46000))}, clients[0]
    if roll < 0.14:
        name = rng.choice(list(TOPICS))
        TOPICS_NOW[name] += 1
        return {
            "op": "topic",
            "id": next(o["id"] for o in topic_ops() if o["name"] == name),
            "name": name,
            "partitions": TOPICS_NOW[name],
        }, clients[0]
    c = rng.choice(clients)
    if roll < 0.18:  # a restart speaking the other protocol (a rolling upgrade or downgrade)
        c.protocol = "consumer" if c.protocol == "classic" else "classic"
        c.incarnation += 1
        c.reset()
    op = classic_op(rng, c) if c.protocol == "classic" else consumer_op(rng, c)
    if op["op"] != "advance" and rng.random() < 0.04:
        op["append_error"] = rng.choice(APPEND_ERRORS)
    return op, c


def classic_op(rng: random.Random, c: Client) -> dict[str, Any]:
    base = {"group": GROUP, "client_id": c.name}
    if c.instance is not None:
        base["instance"] = c.instance
    if c.parked and rng.random() < 0.7:
        return {"op": "advance", "to": -1}  # filled in by the caller: wait a little
    if not c.joined or rng.random() < 0.05:
        names = ["range"] if rng.random() < 0.95 else ["roundrobin"]
        return {
            **base,
            "op": "join",
            "member": c.member_id,
            "session": c.session,
            "rebalance": c.rebalance,
            "protocols": [[n, c.subscription()] for n in names],
        }
    roll = rng.random()
    if not c.synced or roll < 0.05:
        op = {
            **base,
            "op": "sync",
            "member": c.member_id,
            "generation": c.epoch,
            "protocol_type": "consumer",
            "protocol_name": "range",
        }
        if c.members:
            op["assignments"] = assign(c.members, c.epoch)
        return op
    if roll < 0.12:
        return {**base, "op": "leave", "member": c.member_id}
    generation = c.epoch if rng.random() < 0.93 else c.epoch + 1
    return {**base, "op": "heartbeat", "member": c.member_id, "generation": generation}


def consumer_op(rng: random.Random, c: Client) -> dict[str, Any]:
    if c.member_id == "":
        c.member_id = f"m{c.index}-{c.incarnation}"
    op: dict[str, Any] = {"op": "cgh", "group": GROUP, "member": c.member_id}
    if c.instance is not None:
        op["instance"] = c.instance
    if c.epoch < 0:
        op.update(epoch=0, rebalance=c.rebalance, topics=list(c.topics), owned=[])
        return op
    if rng.random() < 0.08:
        op["epoch"] = -1
        return op
    op["epoch"] = c.epoch
    if rng.random() < 0.8:
        names = {o["id"]: o["name"] for o in topic_ops()}
        ids = {n: i for i, n in names.items()}
        by: dict[str, list[int]] = {}
        for t, p in c.assigned:
            by.setdefault(ids[t], []).append(p)
        op["owned"] = [[t, sorted(ps)] for t, ps in sorted(by.items())]
    return op


def learn(c: Client, op: dict[str, Any], response: dict[str, Any]) -> None:
    """The client's view after one of Kafka's answers to it."""
    error = response["error"]
    kind = op["op"]
    if kind == "cgh":
        if op.get("epoch") == -1 or error in ("FENCED_MEMBER_EPOCH", "UNKNOWN_MEMBER_ID"):
            c.epoch, c.assigned = -1, []
            if error != "NONE" and op.get("epoch") != -1:
                c.member_id = ""  # a fresh incarnation of the member
                c.incarnation += 1
            return
        if error == "NONE":
            c.epoch = response["member_epoch"]
            if response["assignment"] is not None:
                names = {o["id"]: o["name"] for o in topic_ops()}
                c.assigned = [(names[t], p) for t, ps in response["assignment"] for p in ps]
        return
    if kind == "join":
        c.parked = False
        if error == "MEMBER_ID_REQUIRED":
            c.member_id = response["member_id"]
        elif error == "NONE":
            c.member_id = response["member_id"]
            c.epoch = response["generation"]
            c.joined, c.synced = True, False
            c.members = [
                (m["member_id"], base64.b64decode(m["metadata"])) for m in response["members"]
            ]
            if not c.cooperative:
                c.assigned = []
        elif error in ("UNKNOWN_MEMBER_ID", "FENCED_INSTANCE_ID"):
            c.reset()
        return
    if kind == "sync":
        c.parked = False
        if error == "NONE":
            c.synced = True
            raw = base64.b64decode(response.get("assignment") or "")
            if raw:
                c.assigned = [(tp.topic, tp.partition) for tp in decode_assignment(raw)[0]]
        elif error == "REBALANCE_IN_PROGRESS":
            c.joined = False
        elif error in ("UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION", "FENCED_INSTANCE_ID"):
            c.reset()
        return
    if kind == "heartbeat":
        if error == "REBALANCE_IN_PROGRESS":
            c.joined = False
        elif error in ("UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION", "FENCED_INSTANCE_ID"):
            c.reset()
        return
    if kind == "leave":
        c.reset()


def record(oracle_command: str, seeds: range) -> list[dict[str, Any]]:
    return record_seeds(oracle_command, seeds, _play)


def record_large(oracle_command: str, seeds: range) -> list[dict[str, Any]]:
    """The ``--large`` suite: 10, 16 or 24 clients, 150 or 250 ops, size limits (when set) of
    8 or 12 members: rolling upgrades and downgrades of groups the size of real ones."""
    return record_seeds(oracle_command, seeds, functools.partial(_play, large=True))


def _play(process: OracleProcess, seed: int, large: bool = False) -> dict[str, Any]:
    """One seeded script, played against Kafka's answers."""
    rng = random.Random(seed)
    TOPICS_NOW.clear()
    TOPICS_NOW.update(TOPICS)
    LOADED[0] = True
    configs: dict[str, Any] = {
        "group.consumer.migration.policy": rng.choice(POLICIES),
        "group.initial.rebalance.delay.ms": rng.choice((0, 0, 3000)),
        "group.min.session.timeout.ms": 6000,
    }
    limits = (8, 12) if large else (1, 2)
    if rng.random() < 0.15:
        configs["group.max.size"] = rng.choice(limits)
    if rng.random() < 0.15:
        configs["group.consumer.max.size"] = rng.choice(limits)
    clients = [Client(i, rng) for i in range(rng.choice((10, 16, 24) if large else (2, 3, 4)))]
    process.config({"op": "config", "configs": configs, "show_state": True})
    ops: list[dict[str, Any]] = []
    answers: list[list[dict[str, Any]]] = []
    sent_by: dict[int, tuple[Client, dict[str, Any]]] = {}
    t = 0
    for op in topic_ops():
        ops.append(op)
        answers.append(process.send(op))
    for _ in range(rng.choice((150, 250) if large else (30, 50, 70))):
        op, client = next_op(rng, clients, t)
        if op["op"] == "advance" and op["to"] == -1:
            op["to"] = t + rng.choice((100, 1000, 3000))
        if op["op"] in ("join", "sync") and client.protocol == "classic":
            client.parked = True
        seq = len(ops)
        sent_by[seq] = (client, op)
        lines = process.send(op)
        ops.append(op)
        answers.append(lines)
        t = lines[-1]["t"]
        for line in lines:
            if line.get("ev") == "response" and line["seq"] in sent_by:
                who, sent = sent_by[line["seq"]]
                learn(who, sent, line)
    return {"seed": seed, "configs": configs, "ops": ops, "answers": answers}


def load(path: Path = DATA) -> list[dict[str, Any]]:
    return read_scripts(path)


def main() -> None:
    if "--large" in sys.argv:
        sys.argv.remove("--large")
        record_command(__doc__, record_large, LARGE_DATA, "0:40")
    else:
        record_command(__doc__, record, DATA, "0:150")


if __name__ == "__main__":
    main()
