"""The classic groups' map after a load is in Kafka's replay order (CoordinatorLoader replaying
the log record by record into GroupMetadataManager/OffsetMetadataManager), not the compacted
view's. Recorded trace: failover seed 300552 (an expiry batch after a load)."""

from __future__ import annotations

from coordinator.loading import classic_groups_in_replay_order
from coordinator.records import (
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    Record,
)


def _records(*entries: tuple[object, object]) -> tuple[Record, ...]:
    return tuple(Record(i, k, v, 0) for i, (k, v) in enumerate(entries))  # type: ignore[arg-type]


def _group(group_id: str) -> tuple[GroupMetadataKey, GroupMetadataValue]:
    return GroupMetadataKey(group_id), GroupMetadataValue("consumer", 1, "range", None, 0)


def _offset(group_id: str, value: bool = True) -> tuple[OffsetCommitKey, OffsetCommitValue | None]:
    return OffsetCommitKey(group_id, "t", 0), OffsetCommitValue(1, -1, "", 0) if value else None


def test_groups_follow_their_first_record_and_a_tombstone_sends_a_group_to_the_end() -> None:
    records = _records(
        _offset("s"),  # a simple group, created by its first offset
        _group("g"),
        _group("x"),
        _group("s"),  # replaces s in its place
        (GroupMetadataKey("g"), None),  # g removed ...
        _group("g"),  # ... and created again: after x
        _offset("x"),  # x exists: no put
    )
    order, high_water = classic_groups_in_replay_order(records)
    assert order == ["s", "x", "g"]
    # puts: s (1), g (2), x (3), s replaced (size 3 + 1 = 4), g again (2 + 1)
    assert high_water == 4


def test_offset_tombstones_and_consumer_groups_make_no_classic_group() -> None:
    records = _records(_offset("a", value=False), _offset("cg"), _offset("b"))
    assert classic_groups_in_replay_order(records, {"cg"}) == (["b"], 1)
