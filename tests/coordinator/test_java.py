"""Java HashMap iteration order (bucket of spread hash, insertion order within a bucket)."""

from coordinator.java import (
    JavaHashMapOrder,
    first_max_by_count,
    hashmap_order_by_hash,
    java_hashmap_order,
    java_spread_hash,
    java_string_hashcode,
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
        assert java_spread_hash(name) & 15 == bucket


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
    assert java_hashmap_order(["BB", "Aa"]) == ["BB", "Aa"]
    assert java_hashmap_order(["Aa", "BB"]) == ["Aa", "BB"]


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
    assert [(java_spread_hash(k) & 15) for k in small.order()] == sorted(
        (java_spread_hash(k) & 15) for k in keys[:12]
    )
    assert [(java_spread_hash(k) & 31) for k in big.order()] == sorted(
        (java_spread_hash(k) & 31) for k in keys[:12]
    )


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


# Recorded with OpenJDK 17: partitions of ``__consumer_offsets`` put into a fresh
# HashMap<TopicPartition, ...> in the first order, iterated in the second (the order in which
# GroupCoordinatorService answers DescribeGroups/DeleteGroups partition by partition).
TOPIC_PARTITION_ORDERS = [
    (
        "21,6,14,3,7,40,47,38,45,32,36,43,11,23,34,41,35,2,4,10,46,15,29,28,42,31,24,39,27,48,19,44,9,20,17,8,18,12,26,22,5,13,16,1",
        "15,48,13,46,11,44,9,42,23,21,19,17,32,28,26,7,40,5,38,3,36,1,34,47,16,45,14,43,12,41,10,24,22,20,18,31,29,27,39,8,6,35,4,2",
    ),
    (
        "27,11,19,40,29,39,30,1,12,47,24,41,14,34,3,48,6,46,45,31,37,21,23,2,8,13,7,32,36",
        "48,13,46,11,23,21,19,32,30,7,40,3,36,1,34,47,45,14,12,41,24,31,29,27,39,8,37,6,2",
    ),
    (
        "21,23,27,1,9,2,42,18,34,30,17,49,35,44,15,33,16,26,0,36,13,24,14,10,7,45,38,22,47,39,41,11,28,8,5,3,32,40,4,48,37,19",
        "15,48,13,11,44,9,42,23,21,19,17,32,30,28,26,7,40,5,38,3,36,1,34,47,16,45,14,41,10,24,22,49,18,0,27,39,8,37,35,4,33,2",
    ),
]


def test_topic_partition_order_agrees_with_openjdk():
    topic_hash = java_string_hashcode("__consumer_offsets")
    for inserted_csv, iterated_csv in TOPIC_PARTITION_ORDERS:
        inserted = [int(p) for p in inserted_csv.split(",")]
        hashes = [31 * (31 + p) + topic_hash for p in inserted]  # TopicPartition.hashCode
        iterated = [inserted[i] for i in hashmap_order_by_hash(hashes)]
        assert iterated == [int(p) for p in iterated_csv.split(",")]
