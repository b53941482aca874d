"""groupsim against Kafka's own classic group coordinator, on recorded traces.

tests/oracle/data/*.jsonl.xz hold seeded request scripts (tests/oracle/generate.py) and what
Kafka's real GroupCoordinatorShard answered to each op (tools/kafka-oracle/, recorded by
scripts/record_oracle_traces.py; docs/oracle.md). Every script is replayed through groupsim's
KafkaCluster, and every response field the request's version carries, every record written, the
groups' state and the live timers after each op must equal Kafka's. Four suites: ``classic``
(JoinGroup, SyncGroup, Heartbeat, LeaveGroup), ``offsets`` (the offset and admin APIs, expiry,
unload and load), ``txn`` (the same with TxnOffsetCommit, transaction markers and
require_stable) and ``failover`` (the txn traffic while the coordinator moves between two
brokers and loads).

``make test`` replays one script in five; ``make oracle`` (GROUPSIM_ORACLE_TRACES=all) replays
all of them.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import pytest

from tests.oracle.replay import DATA, load, replay

FULL = os.environ.get("GROUPSIM_ORACLE_TRACES") == "all"
CHUNKS = 10
SUBSET = 5  # without FULL, one script in five is replayed

# Scripts on which groupsim still differs from Kafka: {suite: {reason: [seeds]}}.
KNOWN_FILE = Path(__file__).parent / "known_divergences.json"


@functools.cache
def known(suite: str) -> dict[int, str]:
    reasons = json.loads(KNOWN_FILE.read_text()).get(suite, {})
    return {seed: reason for reason, seeds in reasons.items() for seed in seeds}


def selected(line: int) -> bool:
    """Without FULL, one script in SUBSET of each chunk (line i holds seed first + i)."""
    return FULL or (line // CHUNKS) % SUBSET == 0


@functools.cache
def scripts(suite: str) -> tuple[dict, ...]:
    return tuple(load(DATA / f"{suite}.jsonl.xz", selected))


def _check(suite: str, chunk: int, *, strict_records: bool = True) -> int:
    divergent = known(suite)
    checked = 0
    failures = []
    for script in scripts(suite):
        seed = script["seed"]
        if seed % CHUNKS != chunk:
            continue
        checked += 1
        diffs = replay(script, strict_records=strict_records)
        if seed in divergent:
            if not diffs:
                failures.append(f"seed {seed} agrees with Kafka now: take it out of {KNOWN_FILE}")
        elif diffs:
            failures.append("\n".join(diffs[:3]))
    assert not failures, f"{len(failures)} of {checked} scripts:\n" + "\n".join(failures[:5])
    return checked


def _chunks() -> list:
    """Two xdist groups: each worker loads a suite's file once and replays half of it."""
    return [
        pytest.param(c, marks=pytest.mark.xdist_group(f"oracle-{c % 2}")) for c in range(CHUNKS)
    ]


@pytest.mark.parametrize("chunk", _chunks())
def test_classic_protocol_agrees_with_kafka(chunk: int) -> None:
    assert _check("classic", chunk) > 0


@pytest.mark.parametrize("chunk", _chunks())
def test_offsets_and_admin_apis_agree_with_kafka(chunk: int) -> None:
    """OffsetCommit/OffsetFetch, DescribeGroups/ListGroups/DeleteGroups, offset expiry and the
    coordinator's unload and load. Every order is compared too: a fetch-all answer's offsets,
    ListGroups' groups and a batch's tombstones in Kafka's TimelineHashMap order."""
    assert _check("offsets", chunk) > 0


@pytest.mark.parametrize("chunk", _chunks())
def test_transactional_offsets_agree_with_kafka(chunk: int) -> None:
    """TxnOffsetCommit (v0-4), transaction markers (COMMIT/ABORT, written or failing),
    OffsetFetch with and without require_stable, with the offsets suite's traffic around them
    (plain commits, expiry, DeleteGroups, unload and load). Responses in Kafka's order; the
    order of a DeleteGroups batch's tombstones for pending offsets is not compared."""
    assert _check("txn", chunk, strict_records=False) > 0


@pytest.mark.parametrize("chunk", _chunks())
def test_coordinator_failover_agrees_with_kafka(chunk: int) -> None:
    """The txn suite's traffic on two brokers whose coordinator moves (unloaded from one,
    loaded on either, often for a while): requests to the broker without the partition get
    NOT_COORDINATOR, those to a loading one COORDINATOR_LOAD_IN_PROGRESS (a Heartbeat NONE),
    and the broker that loads the partition replays the log into the same groups, offsets,
    pending transactions and map orders. Orders as in the txn suite."""
    assert _check("failover", chunk, strict_records=False) > 0
