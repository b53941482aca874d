"""Answers of pure functions of immutable input, kept for the next identical call.

A rebalance repeats most of the previous one's bytes: the leader reads every member's
subscription, each member reads its assignment, and groups on the same topics share them. Parsing
them again is pure work with the same answer, so the parsers keep their answers here. A memo is
bounded twice, by a number of entries and by the bytes its keys hold (a hostile scenario's
megabyte subscriptions cannot pile up), and is emptied when either is reached: simple, and the
next rebalance refills it. Only answers are kept, never errors, so a bad input is refused every
time. The answers must be immutable: every caller shares them.
"""

from __future__ import annotations

from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

#: Room for tens of thousands of distinct members' subscriptions and assignments.
ENTRIES = 65_536
#: Bytes of keys one memo holds at most.
BUDGET = 64 << 20


class Memo(Generic[K, V]):
    """``answers`` is read directly on the hot path (a dict lookup, no call); ``keep`` files a
    new answer."""

    __slots__ = ("_budget", "_entries", "_held", "answers")

    def __init__(self, entries: int = ENTRIES, budget: int = BUDGET) -> None:
        if entries < 1 or budget < 1:
            raise ValueError("a memo needs room for at least one entry and one byte")
        self.answers: dict[K, V] = {}
        self._entries = entries
        self._budget = budget
        self._held = 0

    def keep(self, key: K, answer: V, size: int) -> V:
        """File ``answer`` under ``key``, whose input is about ``size`` bytes; returns it. An
        input larger than the whole budget is answered but not kept."""
        if size > self._budget:
            return answer
        if len(self.answers) >= self._entries or self._held + size > self._budget:
            self.answers.clear()
            self._held = 0
        self.answers[key] = answer
        self._held += size
        return answer

    def __len__(self) -> int:
        return len(self.answers)
