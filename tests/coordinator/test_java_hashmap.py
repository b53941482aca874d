"""Java HashMap iteration order (bucket of spread hash, insertion order within a bucket)."""

from coordinator.java_hashmap import (
    JavaHashMapOrder,
    bucket_of,
    first_max_by_count,
    iteration_order,
    spread,
)


def test_buckets_of_the_reference_table():
    expected = {
        "sticky": 8,
        "range": 9,
        "roundrobin": 10,
        "protocol2": 13,
        "protocol1": 14,
        "cooperative-sticky": 15,
    }
    for name, bucket in expected.items():
        assert bucket_of(name, 16) == bucket


def test_spread_uses_unsigned_shift():
    assert spread(-1) == 0xFFFFFFFF ^ 0xFFFF
    assert spread(0x10000) == 0x10001


def test_vote_ties_follow_map_order_not_insertion():
    assert first_max_by_count([("roundrobin", 1), ("range", 1)]) == "range"
    assert first_max_by_count([("cooperative-sticky", 1), ("range", 1)]) == "range"
    assert first_max_by_count([("range", 1), ("sticky", 1)]) == "sticky"
    assert first_max_by_count([("range", 1), ("roundrobin", 2)]) == "roundrobin"


def test_same_bucket_keeps_insertion_order():
    # "Aa" and "BB" share a hashCode, hence a bucket.
    assert iteration_order(["BB", "Aa"]) == ["BB", "Aa"]
    assert iteration_order(["Aa", "BB"]) == ["Aa", "BB"]


def test_capacity_doubles_past_load_factor_and_never_shrinks():
    m = JavaHashMapOrder()
    for i in range(12):
        m.put(f"k{i}")
    assert m.capacity == 16
    m.put("k12")
    assert m.capacity == 32
    for i in range(13):
        m.remove(f"k{i}")
    assert m.capacity == 32 and len(m) == 0


def test_order_depends_on_capacity():
    keys = [f"member-{i}" for i in range(13)]
    small = JavaHashMapOrder()
    for k in keys[:12]:
        small.put(k)
    big = JavaHashMapOrder()
    for k in keys:
        big.put(k)
    big.remove(keys[12])
    assert sorted(small.order()) == sorted(big.order())
    assert [bucket_of(k, 16) for k in small.order()] == sorted(bucket_of(k, 16) for k in keys[:12])
    assert [bucket_of(k, 32) for k in big.order()] == sorted(bucket_of(k, 32) for k in keys[:12])


def test_reinsert_moves_to_end_of_bucket_and_put_existing_keeps_place():
    m = JavaHashMapOrder()
    m.put("Aa")
    m.put("BB")
    m.put("Aa")
    assert m.order() == ["Aa", "BB"]
    m.remove("Aa")
    m.put("Aa")
    assert m.order() == ["BB", "Aa"]
    assert m.first() == "BB"
    assert m.first(lambda k: k != "BB") == "Aa"


def test_matches_real_java_hashmaps():
    """60 recorded runs of java.util.HashMap (OpenJDK 17): puts, removals, resizes, collisions."""
    import json
    from pathlib import Path

    data = json.loads(
        (Path(__file__).parent / "data" / "java_hashmap_orders.json").read_text(encoding="utf-8")
    )
    assert len(data["cases"]) == 60
    for case in data["cases"]:
        m = JavaHashMapOrder()
        for op, key in case["ops"]:
            if op == "put":
                m.put(key)
            else:
                m.remove(key)
        assert m.order() == case["java_order"]


def test_vote_tie_break_matches_java():
    """80 recorded votes counted the way ClassicGroup.selectProtocol does, on OpenJDK 17."""
    import json
    from pathlib import Path

    data = json.loads(
        (Path(__file__).parent / "data" / "java_hashmap_orders.json").read_text(encoding="utf-8")
    )
    for case in data["votes"]:
        counts: dict[str, int] = {}
        for name in case["votes_in_member_order"]:
            counts[name] = counts.get(name, 0) + 1
        assert first_max_by_count(counts.items()) == case["java_winner"]
