"""The exactly-once read-process-write loop (issue 16): the producer's steps
(members.transactions, after Kafka's TransactionManager and its TxnOffsetCommitHandler), the
transaction coordinator's AddOffsetsToTxn/EndTxn through KafkaCluster, and the loop in a
simulation across a rebalance (the lesson exactly-once-zombie-fenced)."""

from __future__ import annotations

import pytest

from assignors.api import TopicPartition
from coordinator.errors import Errors
from coordinator.protocol import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
    EndTxnRequest,
    EndTxnResponse,
    OffsetFetchRequest,
    OffsetFetchRequestTopic,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
    TxnOffsetCommitResponsePartition,
    TxnOffsetCommitResponseTopic,
)
from members.config import ConfigError, ConsumerConfig
from members.transactions import ExactlyOnce, TxnStep, producer_id_for
from scenarios.loader import load_scenario
from scenarios.runner import run_scenario
from tests.coordinator.harness import Driver

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


def _producer(instance_id: str | None = None) -> ExactlyOnce:
    return ExactlyOnce(
        group_id="g",
        transactional_id="tx-1",
        interval_ms=100,
        retry_backoff_ms=50,
        instance_id=instance_id,
    )


def _txn_answer(error: Errors) -> TxnOffsetCommitResponse:
    parts = (TxnOffsetCommitResponsePartition(0, Errors.NONE),)
    parts += (TxnOffsetCommitResponsePartition(1, error),)
    return TxnOffsetCommitResponse((TxnOffsetCommitResponseTopic("t", parts),))


def _to_offsets_commit(txn: ExactlyOnce, now: int = 100) -> TxnOffsetCommitRequest:
    add = txn.begin(now, {T0: 5, T1: 7}, 3, "member-a")
    assert isinstance(add, AddOffsetsToTxnRequest)
    commit, outcome = txn.on_response(AddOffsetsToTxnResponse(Errors.NONE), now)
    assert outcome is None and isinstance(commit, TxnOffsetCommitRequest)
    return commit


def test_a_transaction_sends_the_group_metadata_and_commits() -> None:
    """sendOffsetsToTransaction(offsets, groupMetadata()) then commitTransaction()."""
    txn = _producer("app-1")
    add = txn.begin(100, {T0: 5, T1: 7}, 3, "member-a")
    assert add == AddOffsetsToTxnRequest("tx-1", producer_id_for("tx-1"), 0, "g")
    commit, _ = txn.on_response(AddOffsetsToTxnResponse(Errors.NONE), 101)
    assert isinstance(commit, TxnOffsetCommitRequest)
    assert (commit.group_id, commit.generation_id, commit.member_id) == ("g", 3, "member-a")
    assert commit.group_instance_id == "app-1"
    assert [(t.name, [(p.partition_index, p.committed_offset) for p in t.partitions])
            for t in commit.topics] == [("t", [(0, 5), (1, 7)])]  # fmt: skip
    end, _ = txn.on_response(_txn_answer(Errors.NONE), 102)
    assert end == EndTxnRequest("tx-1", producer_id_for("tx-1"), 0, True)
    again, outcome = txn.on_response(EndTxnResponse(Errors.NONE), 103)
    assert again is None and outcome is not None
    assert outcome.transaction.committed and outcome.transaction.offsets == {T0: 5, T1: 7}
    assert txn.step is TxnStep.IDLE and txn.next_wakeup() == 200


@pytest.mark.parametrize(
    "error", [Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID, Errors.FENCED_INSTANCE_ID]
)
def test_a_fenced_txn_offset_commit_aborts_the_transaction(error: Errors) -> None:
    """TxnOffsetCommitHandler: abortableError (CommitFailedException, FencedInstanceId); the
    application calls abortTransaction(): EndTxn with committed false."""
    txn = _producer()
    _to_offsets_commit(txn)
    end, outcome = txn.on_response(_txn_answer(error), 110)
    assert outcome is None
    assert isinstance(end, EndTxnRequest) and end.committed is False
    _, outcome = txn.on_response(EndTxnResponse(Errors.NONE), 111)
    assert outcome is not None
    assert not outcome.transaction.committed and outcome.transaction.error == error.name


def test_retriable_errors_and_lost_requests_are_sent_again_after_the_backoff() -> None:
    txn = _producer()
    commit = _to_offsets_commit(txn)
    nothing, outcome = txn.on_response(_txn_answer(Errors.COORDINATOR_LOAD_IN_PROGRESS), 120)
    assert nothing is None and outcome is None and txn.next_wakeup() == 170
    assert txn.due_retry(169) is None
    assert txn.due_retry(170) == commit
    txn.failed(200)  # the retry's connection dropped
    assert txn.due_retry(250) == commit


def test_the_config_refuses_auto_commit_with_a_transactional_id() -> None:
    with pytest.raises(ConfigError, match=r"enable\.auto\.commit must be false"):
        ConsumerConfig("g", transactional_id="tx")
    with pytest.raises(ConfigError, match=r"transactional\.id must be null or a non-blank"):
        ConsumerConfig("g", transactional_id=" ", enable_auto_commit=False)
    with pytest.raises(ConfigError, match=r"transaction\.interval\.ms must be a positive"):
        ConsumerConfig(
            "g", transactional_id="tx", enable_auto_commit=False, transaction_interval_ms=0
        )


def _fetch(d: Driver, group_id: str = "g") -> tuple[Errors, int]:
    request = OffsetFetchRequest(group_id, (OffsetFetchRequestTopic("t", (0,)),), True)
    _corr, (answer,) = d.send("new-owner", request)
    (partition,) = answer.topics[0].partitions
    return partition.error_code, partition.committed_offset


def test_require_stable_sees_the_offsets_only_after_the_commit_marker() -> None:
    """AddOffsetsToTxn, TxnOffsetCommit (pending), EndTxn: the marker makes them committed; a
    require_stable OffsetFetch meanwhile is UNSTABLE_OFFSET_COMMIT; a stale generation is
    fenced (ILLEGAL_GENERATION) and an aborted transaction commits nothing."""
    d = Driver()
    ids, gen = d.stable_group(("A", "B"), group_id="g")
    txn = _producer()
    add = txn.begin(d.now, {T0: 42}, gen, ids["A"])
    _corr, (added,) = d.send("A", add, dst=d.coordinator("g"))
    assert added == AddOffsetsToTxnResponse(Errors.NONE)
    commit, _ = txn.on_response(added, d.now)
    _corr, (committed,) = d.send("A", commit)
    assert committed.topics[0].partitions[0].error_code == Errors.NONE
    assert _fetch(d) == (Errors.UNSTABLE_OFFSET_COMMIT, -1)
    end, _ = txn.on_response(committed, d.now)
    _corr, (ended,) = d.send("A", end, dst=d.coordinator("g"))
    assert ended == EndTxnResponse(Errors.NONE)
    assert _fetch(d) == (Errors.NONE, 42)
    # a zombie with the previous generation is fenced, and its abort leaves 42 committed
    zombie = _producer()
    add = zombie.begin(d.now, {T0: 99}, gen - 1, ids["B"])
    _corr, (added,) = d.send("B", add, dst=d.coordinator("g"))
    commit, _ = zombie.on_response(added, d.now)
    _corr, (fenced,) = d.send("B", commit)
    assert fenced.topics[0].partitions[0].error_code == Errors.ILLEGAL_GENERATION
    end, _ = zombie.on_response(fenced, d.now)
    assert isinstance(end, EndTxnRequest) and not end.committed
    _corr, (ended,) = d.send("B", end, dst=d.coordinator("g"))
    assert ended == EndTxnResponse(Errors.NONE)
    assert _fetch(d) == (Errors.NONE, 42)


def test_the_loop_across_a_rebalance_fences_the_zombie() -> None:
    """The lesson: C3, cut off, is removed; its next transaction carries generation 1 and a
    member id the group no longer has: aborted; C1 and C2 commit in every generation."""
    result = run_scenario(load_scenario("exactly-once-zombie-fenced"))
    assert result.error is None and result.passed
    events = result.events
    aborted = [e for e in events if e["event"] == "txn_aborted"]
    assert [(e["node"], e["error"], e["generation_id"]) for e in aborted] == [
        ("C3", "UNKNOWN_MEMBER_ID", 1)
    ]
    committed = {(e["node"], e["generation_id"]) for e in events if e["event"] == "txn_committed"}
    assert {("C1", 1), ("C1", 2), ("C1", 3), ("C2", 2), ("C3", 1), ("C3", 3)} <= committed
    assert ("C3", 2) not in committed
    # no plain OffsetCommit: every offset went through a transaction
    assert not [e for e in events if e["event"] == "commit_completed"]
