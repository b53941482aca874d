"""bench assignors' "exact" column: the digest the Java driver writes, and how rows compare."""

from __future__ import annotations

import zlib

from assignors.api import TopicPartition
from bench.assignors import _exact, digest


def test_digest_is_the_drivers_text_members_sorted_partitions_in_list_order() -> None:
    result = {
        "c1": [TopicPartition("t", 1)],
        "c0": [TopicPartition("t", 0), TopicPartition("u", 2)],
    }
    text = "m:c0\nt-0\nu-2\n", "m:c1\nt-1\n"
    expected = zlib.crc32(text[1].encode(), zlib.crc32(text[0].encode()))
    assert digest(result) == f"{expected:x}"
    assert digest(dict(reversed(result.items()))) == digest(result)
    swapped = {**result, "c0": list(reversed(result["c0"]))}
    assert digest(swapped) != digest(result)  # a member's partition order counts


def test_exact_against_a_java_row() -> None:
    assert _exact({"digest": "ab", "stable": True}, "ab") == "yes"
    assert _exact({"digest": "ab", "stable": True}, "cd") == "NO"
    assert _exact({"digest": "ab", "stable": False}, "ab") == "yes*"
    assert _exact(None, "ab") == "-"
    assert _exact({"seconds": 0.1}, "ab") == "-"  # a driver built before the digest
