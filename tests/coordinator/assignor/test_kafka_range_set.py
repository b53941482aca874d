"""Ports of Kafka's RangeSetTest (group-coordinator/src/test/.../assignor at 1eb7644).

Not ported: testUnsupportedOperations (a Python ``collections.abc.Set`` has no mutators to
refuse), testToArray / testToArrayWithArrayParameter (``list(range_set)`` is the Python
equivalent and testIterator covers it), testHashCode (groupsim's RangeSet is unhashable like
every Python set that compares equal to ``set``/``frozenset``).
"""

from __future__ import annotations

from coordinator.assignor.sets import RangeSet


def test_size():
    """RangeSetTest.testSize"""
    assert len(RangeSet(5, 10)) == 5


def test_is_empty():
    """RangeSetTest.testIsEmpty"""
    assert not RangeSet(5, 5)


def test_contains():
    """RangeSetTest.testContains"""
    r = RangeSet(5, 10)
    assert 5 in r and 9 in r and 10 not in r and 4 not in r


def test_iterator():
    """RangeSetTest.testIterator"""
    assert list(RangeSet(5, 10)) == [5, 6, 7, 8, 9]


def test_contains_all():
    """RangeSetTest.testContainsAll"""
    r = RangeSet(5, 10)
    assert {5, 6, 7, 8, 9} <= r
    assert not {5, 6, 10} <= r


def test_to_string():
    """RangeSetTest.testToString"""
    assert repr(RangeSet(5, 8)) == "RangeSet(from=5 (inclusive), to=8 (exclusive))"


def test_equals():
    """RangeSetTest.testEquals"""
    assert RangeSet(5, 10) == RangeSet(5, 10)
    assert RangeSet(5, 10) != RangeSet(6, 10)
    assert RangeSet(5, 10) == frozenset({5, 6, 7, 8, 9})
    assert RangeSet(6, 10) == {6, 7, 8, 9}
    assert RangeSet(5, 10) != object()
