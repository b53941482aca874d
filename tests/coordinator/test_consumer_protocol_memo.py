"""The consumer-protocol reads and writes are memoised by their immutable input: a repeated call
must answer exactly as a first one would, hand out nothing a caller could change for the next,
and still refuse bad bytes every time."""

from __future__ import annotations

import pytest

from coordinator.consumer_protocol import (
    SchemaError,
    read_assignment,
    read_subscription,
    write_assignment,
)
from coordinator.group_metadata_manager import parse_subscribed_topics


def test_a_repeated_assignment_read_gives_the_caller_its_own_list() -> None:
    data = write_assignment([("t", 1), ("t", 0), ("u", 2)], b"ud")
    first, user_data = read_assignment(data)
    assert (first, user_data) == ([("t", 1), ("t", 0), ("u", 2)], b"ud")
    first.clear()  # the caller's own list: the next read is not affected
    again, _ = read_assignment(bytes(data))  # an equal, distinct bytes object
    assert again == [("t", 1), ("t", 0), ("u", 2)]
    assert again is not first


def test_a_repeated_write_gives_the_same_bytes_for_equal_partitions() -> None:
    first = write_assignment(iter([("t", 0), ("u", 1)]), None, 1)
    assert write_assignment([("t", 0), ("u", 1)], None, 1) == first
    assert write_assignment([("t", 0), ("u", 1)], None, 3) != first  # the version is written
    assert write_assignment([("t", 0), ("u", 1)], b"", 1) != first  # empty is not null
    assert read_assignment(first) == ([("t", 0), ("u", 1)], None)


def test_a_version_of_another_type_is_not_answered_from_the_memo() -> None:
    write_assignment([("t", 0)], None, 1)
    with pytest.raises(Exception):  # noqa: B017  (the encoder's own error, as before the memo)
        write_assignment([("t", 0)], None, 1.0)  # type: ignore[arg-type]


def test_bad_bytes_are_refused_on_every_read() -> None:
    bad = b"\x00\x01\x00\x00\x00\x05"  # five topics announced, none there
    for _ in range(2):
        with pytest.raises(SchemaError):
            read_subscription(bad)
        with pytest.raises(SchemaError):
            read_assignment(bad)
        assert parse_subscribed_topics(bad) is None


def test_a_repeated_subscription_read_is_equal_to_a_first_one() -> None:
    data = (
        b"\x00\x00"  # version 0
        + b"\x00\x00\x00\x02"  # two topics
        + b"\x00\x01b\x00\x01a"
        + b"\xff\xff\xff\xff"  # no user data
    )
    first = read_subscription(data)
    assert first.topics == ("b", "a") and first.user_data is None
    assert read_subscription(bytearray(data)) == first  # not hashable: read, not memoised
    assert read_subscription(bytes(data)) == first
    assert parse_subscribed_topics(data) == frozenset({"a", "b"})
    assert parse_subscribed_topics(bytes(data)) == frozenset({"a", "b"})
