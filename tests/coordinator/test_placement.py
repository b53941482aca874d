"""GroupCoordinatorService.partitionFor worked examples (Java String.hashCode, Utils.abs)."""

import numpy as np
import pytest

from coordinator import java_string_hashcode, partition_for
from coordinator.placement import partitions_for

# (group id, UTF-16 units, hashCode, partition of 50)
EXAMPLES = [
    ("", 0, 0, 0),
    ("a", 1, 97, 47),
    ("my-group", 8, -1906497762, 12),
    ("test-group", 10, 627841412, 12),
    ("group-id", 8, 506313513, 13),
    ("groupId", 7, 293428218, 18),
    ("consumer-group-1", 16, 147483020, 20),
    ("console-consumer-12345", 22, 158455506, 6),
    ("connect-cluster", 15, 1440343063, 13),
    ("foo", 3, 101574, 24),
    ("Aa", 2, 2112, 12),
    ("BB", 2, 2112, 12),
    ("Gr\u00fc\u00dfe", 5, 69215351, 1),
    ("group\u00e9", 6, -1237460406, 6),
    ("\u65e5\u672c\u8a9e\u30b0\u30eb\u30fc\u30d7", 7, -305235731, 31),
    ("\u0433\u0440\u0443\u043f\u043f\u0430", 6, 1749938458, 8),
    ("\U0001f680rocket", 8, -1579737481, 31),
    ("a\U0001f600b", 4, 57849694, 44),
    ("polygenelubricants", 18, -2147483648, 0),
    ("GydZG_", 6, -2147483648, 0),
    ("group-ajxob4", 12, -2147483648, 0),
    ("app--rddxg", 10, -2147483648, 0),
]

THREE = [
    ("", 0),
    ("a", 1),
    ("my-group", 0),
    ("test-group", 2),
    ("consumer-group-1", 2),
    ("Gr\u00fc\u00dfe", 2),
    ("\U0001f680rocket", 1),
    ("polygenelubricants", 0),
]


@pytest.mark.parametrize(("group_id", "units", "hashcode", "p50"), EXAMPLES)
def test_worked_examples(group_id, units, hashcode, p50):
    assert len(group_id.encode("utf-16-be")) // 2 == units
    assert java_string_hashcode(group_id) == hashcode
    assert partition_for(group_id) == p50
    assert partition_for(group_id, 50) == p50


@pytest.mark.parametrize(("group_id", "p3"), THREE)
def test_three_partitions(group_id, p3):
    assert partition_for(group_id, 3) == p3


def test_vectorised_variant_agrees_with_every_example():
    ids = [g for g, *_ in EXAMPLES]
    assert partitions_for(ids).tolist() == [p for *_, p in EXAMPLES]
    assert partitions_for([g for g, _ in THREE], 3).tolist() == [p for _, p in THREE]
    assert isinstance(partitions_for(ids), np.ndarray)


def test_code_point_hashing_would_be_wrong():
    # Hashing Python code points instead of UTF-16 units gives partition 0 for "🚀rocket".
    h = 0
    for ch in "\U0001f680rocket":
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    assert h - (1 << 32) == -1272816300
    assert partition_for("\U0001f680rocket") == 31


def test_cluster_routes_groups_by_placement():
    from coordinator import KafkaCluster

    cluster = KafkaCluster(num_brokers=3)
    assert cluster.partition_for("my-group") == 12
    # partition 12's preferred leader is broker (12 % 3) = 0
    assert cluster.coordinator_for("my-group") == "broker-0"
    assert cluster.coordinator_for("a") == "broker-2"  # partition 47
