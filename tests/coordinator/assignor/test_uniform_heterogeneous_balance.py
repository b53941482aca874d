"""Internals of the heterogeneous builder's speed-ups, against plain versions.

* The balancing loop skips topics it knows ``balanceTopic`` leaves
unchanged (within one, or nothing movable since no subscriber's size changed); here against
Kafka's loop written out literally (``balanceTopics``: every topic, every pass, until a whole
pass ends at the last topic that moved), over random groups with previous assignments and
overlapping subscriptions, read member by member in iteration order (Hypothesis, bounded).
* ``_singles``: one-partition sets are shared below ``INTERNED_LIMIT``, made anew above it, and
  are the same read-only sets either way."""

from __future__ import annotations

from hypothesis import given

from coordinator.assignor import uniform_heterogeneous
from coordinator.assignor.sets import OrderedPartitions
from coordinator.assignor.uniform_heterogeneous import (
    INTERNED_LIMIT,
    MAX_ITERATION_COUNT,
    _Builder,
    _singles,
)

from .helpers import SETTINGS, describer
from .test_properties import groups


class _LiteralBalance(_Builder):
    """balanceTopics as Kafka writes it: balanceTopic called for every topic."""

    def balance(self) -> None:
        topics = [t for t, s in enumerate(self.subscribers) if len(s) >= 2]
        if not topics:
            return
        ordered = sorted(topics, key=self._sort_key)
        last = -1
        for _ in range(MAX_ITERATION_COUNT):
            for i, t in enumerate(ordered):
                if i == last:
                    return
                moved = self.balance_topic(t, [])
                if moved > 0 or last == -1:
                    last = i


def _read(result) -> list:
    return [(m, [(t, list(ps)) for t, ps in a.partitions.items()]) for m, a in result.items()]


@SETTINGS
@given(groups(homogeneous=False))
def test_skipping_settled_topics_gives_kafkas_balance(group):
    spec, counts = group
    topics = describer(counts)
    fast = uniform_heterogeneous.build_heterogeneous(spec, topics).members
    literal = _LiteralBalance(spec, topics).build().members
    assert _read(fast) == _read(literal)


def test_one_partition_sets_are_shared_below_the_limit_only():
    low = _singles([3, 0, 3])
    assert low == [{3}, {0}, {3}] and low[0] is low[2]
    assert all(isinstance(s, OrderedPartitions) for s in low)
    assert _singles([5], 5)[0] is _singles([5])[0]
    high = _singles([INTERNED_LIMIT, 2, INTERNED_LIMIT])
    assert [list(s) for s in high] == [[INTERNED_LIMIT], [2], [INTERNED_LIMIT]]
    assert high[0] is not high[2] and high[0] == high[2]
    assert _singles([]) == []
