"""KIP-848 recorded traces: seeded ConsumerGroupHeartbeat streams, recorded from Kafka's own
GroupCoordinatorShard (tools/kafka-oracle/Oracle.java's ``cgh`` and ``topic`` ops) and replayed
through groupsim's KafkaCluster.

Members also fetch their offsets with their member id and epoch (OffsetFetch v9, ``fetch``:
stale epochs, unknown or empty ids, an admin's fetch without a member) and admins describe the
group (ConsumerGroupDescribe, ``cg_describe``, with unknown, empty and repeated ids).

A script is a list of ops; its recording is what Kafka answered to each (the response line, the
records written by the op and by the timers it fired, the consumer group's state). The generator
plays up to four clients that react to Kafka's answers as the Java consumer does (report the
assignment they were given as owned; rejoin at epoch 0 after FENCED_MEMBER_EPOCH or
UNKNOWN_MEMBER_ID), with random mistakes (stale or missing owned partitions, wrong epochs,
invalid requests), static members leaving with -2 and coming back under a new member id,
subscription changes, partitions added, silent members whose session or rebalance timeout
expires.

    python -m tests.oracle.kip848 --oracle /tmp/k848coord-oracle/oracle.sh --seeds 0:150
    python -m tests.oracle.kip848 --large --oracle ... --seeds 0:40

writes tests/oracle/data/kip848.jsonl.xz (``--large``: kip848-large.jsonl.xz, groups of 12 to 32
members, see ``LARGE``). Some ops also fail their write (``append_error``), and
the coordinator is unloaded and loaded again (the group replayed from its records). The replay (test_kip848_traces.py) compares, per op, the
response (error, message, member id and epoch, heartbeat interval, assignment), every record
written (type, key and value, partitions compared as sets), the group's state, epochs and member
epochs/states, and the live session/rebalance timers.
"""

from __future__ import annotations

import functools
import random
import sys
from pathlib import Path
from typing import Any

from attrs import frozen

from coordinator.kafka_uuid import topic_id_for
from tests.oracle.oracle_process import OracleProcess
from tests.oracle.script_files import read_scripts, record_command, record_seeds

DATA = Path(__file__).parent / "data" / "kip848.jsonl.xz"
LARGE_DATA = Path(__file__).parent / "data" / "kip848-large.jsonl.xz"
GROUP = "g"


@frozen
class Shape:
    """A suite's sizes: its topics (name -> partitions at the start; the first is the one
    offsets are committed and fetched on), the topic lists clients subscribe to, and the choices
    of client count and script length."""

    topics: dict[str, int]
    subscriptions: tuple[tuple[str, ...], ...]
    clients: tuple[int, ...]
    lengths: tuple[int, ...]


SMALL = Shape({"foo": 6, "bar": 3}, (("foo",), ("foo", "bar"), ("bar",)), (2, 3, 4), (15, 25, 40))
LARGE = Shape(
    {"foo": 24, "bar": 12, "baz": 48, "qux": 5},
    (
        ("foo",),
        ("foo", "bar"),
        ("bar",),
        ("baz",),
        ("foo", "baz", "qux"),
        ("foo", "bar", "baz", "qux"),
    ),
    (12, 20, 32),
    (120, 200),
)
"""The ``--large`` suite: groups of 12 to 32 members on four topics of 5 to 48 partitions (more
when the script adds some), so the uniform and range assignors, the target-assignment builder and
reconciliation run on groups the size of real ones; longer scripts, so that many members converge."""
TOPICS = SMALL.topics  # the default suite's, as before


def topic_ops(shape: Shape = SMALL) -> list[dict[str, Any]]:
    return [
        {"op": "topic", "id": str(topic_id_for(name)), "name": name, "partitions": n}
        for name, n in shape.topics.items()
    ]


class Client:
    def __init__(self, index: int, seed: int, rng: random.Random, shape: Shape = SMALL) -> None:
        self.index = index
        self.member_id = f"m{index}-{seed}"
        self.instance = f"i{index}" if rng.random() < 0.3 else None
        self.incarnation = 0
        self.epoch = -1  # not in the group
        self.assigned: dict[str, list[int]] = {}
        self.previous: dict[str, list[int]] = {}
        self.topics = rng.choice(shape.subscriptions)
        self.assignor = rng.choice((None, None, "uniform", "range"))
        self.rebalance = rng.choice((3000, 10000, 30000))


def owned(partitions: dict[str, list[int]]) -> list[list[Any]]:
    return [[t, ps] for t, ps in sorted(partitions.items()) if ps]


LOADED = [True]
APPEND_ERRORS = ("NOT_LEADER_OR_FOLLOWER", "NOT_ENOUGH_REPLICAS", "REQUEST_TIMED_OUT")


def next_op(
    rng: random.Random, clients: list[Client], t: int, shape: Shape = SMALL
) -> dict[str, Any]:
    op = _next_op(rng, clients, t, shape)
    if op["op"] == "cgh" and rng.random() < 0.05:
        op["append_error"] = rng.choice(APPEND_ERRORS)
    return op


def _next_op(rng: random.Random, clients: list[Client], t: int, shape: Shape) -> dict[str, Any]:
    first, second = list(shape.topics)[:2]
    first_count = shape.topics[first]
    if not LOADED[0] and rng.random() < 0.5:
        LOADED[0] = True
        return {"op": "load"}
    if LOADED[0] and rng.random() < 0.03:
        LOADED[0] = False
        return {"op": "unload"}
    roll = rng.random()
    if roll < 0.04:  # ConsumerGroupDescribe (also of unknown, empty or repeated ids)
        ids = rng.choice(([GROUP], [GROUP], [GROUP, "x"], ["", GROUP], [GROUP, GROUP], ["x"]))
        return {"op": "cg_describe", "groups": ids}
    if roll < 0.08:  # OffsetFetch v9 with the member's id and epoch (or an admin's, or stale)
        c = rng.choice(clients)
        op = {"op": "fetch", "group": GROUP, "stable": rng.random() < 0.5}
        if rng.random() < 0.8:
            op["member"] = c.member_id if rng.random() < 0.9 else rng.choice(("", "nobody"))
            op["member_epoch"] = c.epoch if rng.random() < 0.7 else c.epoch + rng.choice((-1, 1))
        elif rng.random() < 0.3:
            op["member_epoch"] = rng.choice((-1, 0, 3))
        if rng.random() < 0.5:
            op["topics"] = [[first, sorted(rng.sample(range(first_count), 2))], [second, [0]]]
        return op
    if roll < 0.14:  # an offset commit with the member's epoch (or a stale one, or v8)
        c = rng.choice(clients)
        epoch = c.epoch if rng.random() < 0.7 else c.epoch + rng.choice((-1, 1))
        op = {
            "op": "commit",
            "group": GROUP,
            "member": c.member_id if rng.random() < 0.9 else "",
            "generation": epoch,
            "version": 9 if rng.random() < 0.9 else 8,
            "topics": [[first, [[rng.randrange(first_count), rng.randrange(1000)]]]],
        }
        if op["member"] == "":
            op["generation"] = -1
        return op
    if roll < 0.15:
        return {"op": "advance", "to": t + rng.choice((500, 2000, 5000, 12000, 30000, 46000))}
    if roll < 0.18:
        name = rng.choice(list(shape.topics))
        TOPICS_NOW[name] += rng.choice((1, 2))
        return {
            "op": "topic",
            "id": str(topic_id_for(name)),
            "name": name,
            "partitions": TOPICS_NOW[name],
        }
    c = rng.choice(clients)
    op: dict[str, Any] = {"op": "cgh", "group": GROUP, "member": c.member_id}
    if c.instance is not None:
        op["instance"] = c.instance
    if c.epoch < 0:
        if c.epoch == -2 and rng.random() < 0.7:  # the static instance comes back, new id
            c.incarnation += 1
            c.member_id = f"m{c.index}-{c.incarnation}-x"
            op["member"] = c.member_id
        if rng.random() < 0.05:
            op["group"] = rng.choice(("", "  "))
        op.update(epoch=0, rebalance=c.rebalance, topics=list(c.topics), owned=[])
        if c.assignor is not None:
            op["assignor"] = c.assignor
        if rng.random() < 0.05:
            del op["rebalance"]
        return op
    roll = rng.random()
    if roll < 0.08:
        op["epoch"] = -2 if c.instance is not None and rng.random() < 0.6 else -1
        return op
    op["epoch"] = c.epoch
    if roll < 0.13:
        op["epoch"] = c.epoch + rng.choice((1, -1, -2))
    choice = rng.random()
    if choice < 0.7:
        op["owned"] = owned(c.assigned)
    elif choice < 0.8:
        op["owned"] = owned(c.previous)
    if rng.random() < 0.08:
        c.topics = rng.choice(shape.subscriptions)
        op["topics"] = list(c.topics)
    if rng.random() < 0.1:  # a full heartbeat (as after an error)
        op.update(rebalance=c.rebalance, topics=list(c.topics), owned=owned(c.assigned))
    return op


TOPICS_NOW: dict[str, int] = {}


def learn(c: Client, op: dict[str, Any], response: dict[str, Any], names: dict[str, str]) -> None:
    """The client's view after Kafka's answer (as the Java consumer keeps it)."""
    error = response["error"]
    if op.get("epoch") in (-1, -2):
        if error == "NONE":
            c.epoch = op["epoch"] if op["epoch"] == -2 else -1
            c.assigned, c.previous = {}, {}
        return
    if error in ("FENCED_MEMBER_EPOCH", "UNKNOWN_MEMBER_ID", "UNRELEASED_INSTANCE_ID"):
        c.epoch = -1
        c.assigned, c.previous = {}, {}
        return
    if error != "NONE":
        return
    c.epoch = response["member_epoch"]
    if response["assignment"] is not None:
        c.previous = c.assigned
        c.assigned = {tid: sorted(ps) for tid, ps in response["assignment"]}


def record(oracle_command: str, seeds: range) -> list[dict[str, Any]]:
    return record_seeds(oracle_command, seeds, _play)


def record_large(oracle_command: str, seeds: range) -> list[dict[str, Any]]:
    return record_seeds(oracle_command, seeds, functools.partial(_play, shape=LARGE))


def _play(process: OracleProcess, seed: int, shape: Shape = SMALL) -> dict[str, Any]:
    """One seeded script, played against Kafka's answers."""
    rng = random.Random(seed)
    TOPICS_NOW.clear()
    TOPICS_NOW.update(shape.topics)
    LOADED[0] = True
    names = {str(topic_id_for(n)): n for n in shape.topics}
    clients = [Client(i, seed, rng, shape) for i in range(rng.choice(shape.clients))]
    process.config({"op": "config", "configs": {}, "show_state": True})
    ops: list[dict[str, Any]] = []
    answers: list[list[dict[str, Any]]] = []
    t = 0
    for op in topic_ops(shape):
        ops.append(op)
        answers.append(process.send(op))
    for _ in range(rng.choice(shape.lengths)):
        op = next_op(rng, clients, t, shape)
        lines = process.send(op)
        ops.append(op)
        answers.append(lines)
        t = lines[-1]["t"]
        if op["op"] == "cgh":
            response = next(x for x in lines if x.get("ev") == "response")
            client = next(c for c in clients if c.member_id == op["member"])
            learn(client, op, response, names)
    return {"seed": seed, "ops": ops, "answers": answers}


def load(path: Path = DATA) -> list[dict[str, Any]]:
    return read_scripts(path)


def main() -> None:
    if "--large" in sys.argv:
        sys.argv.remove("--large")
        record_command(__doc__, record_large, LARGE_DATA, "0:40")
    else:
        record_command(__doc__, record, DATA, "0:100")


if __name__ == "__main__":
    main()
