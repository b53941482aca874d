"""Replaying __consumer_offsets (replay): last value wins, tombstones delete, fields restored."""

import pytest

from coordinator.config import CoordinatorConfig
from coordinator.errors import Errors
from coordinator.log import AppendFailed, OffsetsLog
from coordinator.records import (
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
)

from .harness import Driver


def member(mid, rebalance=-1, session=9000, instance=None):
    return MemberMetadataValue(
        mid,
        instance,
        "cid",
        "/h",
        rebalance,
        session,
        b"sub-" + mid.encode(),
        b"asg-" + mid.encode(),
    )


def failover(d: Driver, group_id="g") -> str:
    d.apply(d.cluster.fail_broker(d.coordinator(group_id), d.now))
    return d.coordinator(group_id)


def test_replay_rebuilds_the_last_group_record():
    d = Driver(CoordinatorConfig(group_min_session_timeout_ms=10, load_time_ms=0))
    p = d.cluster.partition_for("g")
    log = d.cluster.offsets_log
    log.append(
        p,
        [
            (
                GroupMetadataKey("g"),
                GroupMetadataValue("consumer", 3, "range", "m1", 5, (member("m1"), member("m2"))),
            )
        ],
        0,
    )
    log.append(
        p,
        [
            (
                GroupMetadataKey("g"),
                GroupMetadataValue(
                    "consumer",
                    4,
                    "sticky",
                    "m2",
                    7,
                    (member("m2", rebalance=20000, instance="i2"),),
                ),
            )
        ],
        0,
    )
    log.append(
        p,
        [
            (OffsetCommitKey("g", "t", 0), OffsetCommitValue(10, -1, "", 1)),
            (OffsetCommitKey("g", "t", 0), OffsetCommitValue(11, 2, "meta", 2)),
            (OffsetCommitKey("g", "t", 1), OffsetCommitValue(5, -1, "", 1)),
            (OffsetCommitKey("g", "t", 1), None),
        ],
        0,
    )
    d.now = 100
    new = failover(d)
    view = d.cluster.group("g")
    assert view.state == "Stable" and view.generation_id == 4
    assert view.protocol_name == "sticky" and view.leader_id == "m2"
    (m,) = view.members
    assert m.member_id == "m2" and m.group_instance_id == "i2"
    assert m.protocols == (("sticky", b"sub-m2"),) and m.assignment == b"asg-m2"
    assert m.rebalance_timeout_ms == 20000 and m.session_timeout_ms == 9000
    assert d.cluster.committed_offsets("g") == {("t", 0): 11}
    assert d.deadline(f"{new}/heartbeat-g-m2") == 100 + 9000
    assert d.heartbeat("X", "m2", 4, instance_id="i2") == Errors.NONE


def test_replay_stored_rebalance_timeout_minus_one_means_session_timeout():
    d = Driver(CoordinatorConfig(group_min_session_timeout_ms=10, load_time_ms=0))
    p = d.cluster.partition_for("g")
    d.cluster.offsets_log.append(
        p,
        [
            (
                GroupMetadataKey("g"),
                GroupMetadataValue(
                    "consumer", 1, "range", "m1", 0, (member("m1", rebalance=-1, session=4321),)
                ),
            )
        ],
        0,
    )
    failover(d)
    assert d.cluster.group("g").members[0].rebalance_timeout_ms == 4321


@pytest.mark.parametrize("stored", [-2, -1000])
def test_replay_keeps_a_negative_rebalance_timeout_other_than_minus_one(stored):
    """Only -1 (the value of records written before rebalance timeouts existed) stands for the
    session timeout: GroupMetadataManager.replay tests ``rebalanceTimeout() == -1`` and loads any
    other stored value as it is, negative ones included."""
    d = Driver(CoordinatorConfig(group_min_session_timeout_ms=10, load_time_ms=0))
    p = d.cluster.partition_for("g")
    d.cluster.offsets_log.append(
        p,
        [
            (
                GroupMetadataKey("g"),
                GroupMetadataValue(
                    "consumer", 1, "range", "m1", 0, (member("m1", rebalance=stored, session=4321),)
                ),
            )
        ],
        0,
    )
    failover(d)
    assert d.cluster.group("g").members[0].rebalance_timeout_ms == stored


def test_replay_tombstone_deletes_the_group():
    d = Driver(CoordinatorConfig(group_min_session_timeout_ms=10, load_time_ms=0))
    p = d.cluster.partition_for("g")
    log = d.cluster.offsets_log
    log.append(p, [(GroupMetadataKey("g"), GroupMetadataValue("consumer", 2, None, None, 0))], 0)
    log.append(p, [(GroupMetadataKey("g"), None)], 0)
    failover(d)
    assert d.cluster.group("g") is None


def test_offsets_log_compaction_view_and_fault_injection():
    log = OffsetsLog(3)
    key = OffsetCommitKey("g", "t", 0)
    log.append(1, [(key, OffsetCommitValue(1, -1, "", 0))], 5)
    log.append(1, [(key, OffsetCommitValue(2, -1, "", 0))], 6)
    assert len(log.partition(1)) == 2 and log.latest(1)[key].offset == 2
    assert [r.offset for r in log.partition(1)] == [0, 1]
    log.fail_next_append(Errors.NOT_ENOUGH_REPLICAS, count=2)
    for _ in range(2):
        with pytest.raises(AppendFailed) as failed:
            log.append(1, [(key, None)], 7)
        assert failed.value.error == Errors.NOT_ENOUGH_REPLICAS
    assert len(log) == 2  # nothing written by failed appends
    log.append(1, [(key, None)], 8)
    assert log.latest(1)[key] is None and log.partition(1)[-1].is_tombstone
