"""coordinator.timeline_order against Kafka's own TimelineHashMap (recorded by
tests/coordinator/data/TimelineOrder.java: 40 runs of 60 random puts and removes)."""

from __future__ import annotations

import json
from pathlib import Path

from coordinator.timeline_order import capacity_for, iteration_order, slot_of

CASES = json.loads((Path(__file__).parent / "data" / "timeline_orders.json").read_text())


def test_iteration_order_matches_kafkas_timeline_hash_map() -> None:
    for case in CASES:
        keys: dict[str, None] = {}
        high_water = 0
        for op in case["ops"]:
            key = op[1:]
            if op[0] == "+":
                keys.setdefault(key)
            else:
                keys.pop(key, None)
            high_water = max(high_water, len(keys))
        assert iteration_order(keys, capacity_for(high_water)) == case["order"], case["ops"]


def test_capacity_grows_past_three_quarters_and_slots_use_the_top_bits() -> None:
    assert [capacity_for(n) for n in (0, 1, 2, 3, 5, 6, 21, 22)] == [2, 2, 2, 4, 4, 8, 16, 32]
    assert {slot_of(k, 2) for k in ("g", "h", "group-1", "group-2")} <= {0, 1}
    # keys of one slot come out newest first
    same = [k for k in (f"k{i}" for i in range(50)) if slot_of(k, 2) == 0][:3]
    assert iteration_order(same, 2) == same[::-1]


def test_offsets_order_grows_for_a_replaced_partition() -> None:
    """BaseHashTable.baseAddOrReplace grows for size + 1 before it finds the key: two
    partitions in one slot of a 2-slot table come out newest first, but re-committing one of
    them doubles the table and splits them (seen in the offsets oracle trace, seed 100103)."""
    from coordinator.timeline_order import GroupOffsetsOrder, int_iteration_order

    assert int_iteration_order([1, 3], 2) == [3, 1]
    order = GroupOffsetsOrder()
    order.added("t1")
    order.added("t1")
    assert order.order([("t1", 1), ("t1", 3)]) == [("t1", 3), ("t1", 1)]
    order.replaced("t1")
    assert order.order([("t1", 1), ("t1", 3)]) == [("t1", 1), ("t1", 3)]
    assert not order.removed("t1") and order.removed("t1")
