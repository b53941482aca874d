"""KIP-848 recorded traces of a consumer group's end: DeleteGroups and the offsets-expiry job
(GroupCoordinatorShard.deleteGroups and cleanupGroupMetadata) on consumer groups, recorded from
Kafka's own shard (tools/kafka-oracle/Oracle.java's ``cgh``, ``commit``, ``delete`` and
``advance`` ops) and replayed by test_kip848_traces.py like the heartbeat streams.

Each seeded script has one or two consumer groups (``g``, and ``h`` in half the scripts) of one
or two members subscribed to ``foo`` or ``foo`` and ``bar``. Members commit offsets of both
topics with their member epoch; a member may narrow its subscription to ``foo`` (its ``bar``
offsets then expire while the group is live, ConsumerGroup's isSubscribedToTopic condition);
admins try DeleteGroups while members remain (NON_EMPTY_GROUP) and after they leave; the clock
jumps by days, past ``offsets.retention.minutes`` (7 days), so that the expiry job (every 10
minutes) writes the expired offsets' tombstones and, for an empty group whose offsets are all
gone, the group's tombstones.

    python -m tests.oracle.kip848_lifecycle --oracle /tmp/k848coord-oracle/oracle.sh --seeds 0:40

writes tests/oracle/data/kip848-lifecycle.jsonl.xz.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from coordinator.kafka_uuid import topic_id_for
from tests.oracle.oracle_process import OracleProcess
from tests.oracle.script_files import read_scripts, record_command, record_seeds

DATA = Path(__file__).parent / "data" / "kip848-lifecycle.jsonl.xz"
TOPICS = {"foo": 2, "bar": 2}
DAY_MS = 86_400_000


def _ops_for(rng: random.Random, send: Any) -> list[dict[str, Any]]:
    """Play one script against ``send`` (op -> Kafka's lines); the ops, as sent."""
    ops: list[dict[str, Any]] = []
    t = 0

    def go(op: dict[str, Any]) -> list[dict[str, Any]]:
        nonlocal t
        ops.append(op)
        lines = send(op)
        t = lines[-1]["t"]
        return lines

    for name, partitions in TOPICS.items():
        go({"op": "topic", "id": str(topic_id_for(name)), "name": name, "partitions": partitions})
    groups = ["g", "h"] if rng.random() < 0.5 else ["g"]
    epochs: dict[tuple[str, str], int] = {}
    for group in groups:
        for m in range(rng.choice((1, 2))):
            member = f"{group}-m{m}"
            topics = ["foo", "bar"] if rng.random() < 0.7 else ["foo"]
            lines = go(
                {
                    "op": "cgh",
                    "group": group,
                    "member": member,
                    "epoch": 0,
                    "rebalance": 30_000,
                    "topics": topics,
                    "owned": [],
                }
            )
            response = next(x for x in lines if x.get("ev") == "response")
            epochs[(group, member)] = response["member_epoch"]
    live = dict(epochs)
    for _ in range(rng.choice((4, 6, 8))):
        roll = rng.random()
        if roll < 0.3 and live:
            (group, member), epoch = rng.choice(sorted(live.items()))
            topic = rng.choice(("foo", "bar"))
            go(
                {
                    "op": "commit",
                    "group": group,
                    "member": member,
                    "generation": epoch,
                    "version": 9,
                    "topics": [[topic, [[rng.randrange(2), rng.randrange(1000)]]]],
                }
            )
        elif roll < 0.4 and live:
            (group, member), epoch = rng.choice(sorted(live.items()))
            lines = go(
                {"op": "cgh", "group": group, "member": member, "epoch": epoch, "topics": ["foo"]}
            )
            response = next(x for x in lines if x.get("ev") == "response")
            if response["error"] == "NONE":
                live[(group, member)] = response["member_epoch"]
        elif roll < 0.6 and live:
            (group, member), epoch = rng.choice(sorted(live.items()))
            go({"op": "cgh", "group": group, "member": member, "epoch": -1})
            del live[(group, member)]
        elif roll < 0.75:
            go({"op": "delete", "groups": rng.sample(groups, rng.randint(1, len(groups)))})
        else:
            # a heartbeat keeps a live member's session across the jump (else it expires)
            go({"op": "advance", "to": t + rng.choice((1, 3, 6, 8)) * DAY_MS})
            for group, member in sorted(live):
                lines = go(
                    {"op": "cgh", "group": group, "member": member, "epoch": live[(group, member)]}
                )
                response = next(x for x in lines if x.get("ev") == "response")
                if response["error"] == "NONE":
                    live[(group, member)] = response["member_epoch"]
                else:
                    del live[(group, member)]
    go({"op": "advance", "to": t + 8 * DAY_MS})
    go({"op": "delete", "groups": list(groups)})
    return ops


def record(oracle_command: str, seeds: range) -> list[dict[str, Any]]:
    return record_seeds(oracle_command, seeds, _play)


def _play(process: OracleProcess, seed: int) -> dict[str, Any]:
    """One seeded script, played against Kafka's answers."""
    process.config({"op": "config", "configs": {}, "show_state": True})
    answers: list[list[dict[str, Any]]] = []

    def send(op: dict[str, Any]) -> list[dict[str, Any]]:
        lines = process.send(op)
        # the expiry job's and the size counter's firings are not compared: drop them
        lines = [x for x in lines if x.get("ev") != "timer"]
        answers.append(lines)
        return lines

    ops = _ops_for(random.Random(seed), send)
    return {"seed": seed, "ops": ops, "answers": answers}


def load(path: Path = DATA) -> list[dict[str, Any]]:
    return read_scripts(path)


def main() -> None:
    record_command(__doc__, record, DATA, "0:40")


if __name__ == "__main__":
    main()
