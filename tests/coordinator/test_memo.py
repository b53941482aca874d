"""coordinator/memo.py: a memo is bounded by entries and by bytes, and keeps only what fits."""

from __future__ import annotations

import pytest

from coordinator.memo import Memo


def test_answers_are_kept_until_the_entry_bound_then_the_memo_starts_over() -> None:
    memo: Memo[bytes, int] = Memo(entries=3, budget=1_000)
    for i in range(3):
        assert memo.keep(bytes([i]), i, 1) == i
    assert memo.answers == {b"\x00": 0, b"\x01": 1, b"\x02": 2}
    memo.keep(b"\x03", 3, 1)
    assert memo.answers == {b"\x03": 3}


def test_the_byte_budget_empties_the_memo_before_it_is_exceeded() -> None:
    memo: Memo[str, str] = Memo(entries=100, budget=10)
    memo.keep("a", "A", 6)
    memo.keep("b", "B", 4)
    assert len(memo) == 2
    memo.keep("c", "C", 1)  # 11 > 10: start over
    assert memo.answers == {"c": "C"}


def test_an_input_larger_than_the_budget_is_answered_but_not_kept() -> None:
    memo: Memo[str, str] = Memo(entries=100, budget=10)
    memo.keep("small", "s", 2)
    assert memo.keep("huge", "h", 11) == "h"
    assert memo.answers == {"small": "s"}


@pytest.mark.parametrize(("entries", "budget"), [(0, 10), (10, 0)])
def test_a_memo_without_room_is_refused(entries: int, budget: int) -> None:
    with pytest.raises(ValueError, match="room"):
        Memo(entries=entries, budget=budget)
