"""The assignor benchmark workloads, shared by ``bench/assignors.py`` and the kafka-python runner.

Shapes follow Kafka's own performance tests (``AbstractStickyAssignorTest``) and issue 3:

* ``uniform-1m``: 500 topics x 2000 partitions, 2000 members subscribed to all (constrained path);
* ``nonequal-1m``: the same, but the last member subscribes to ``t000`` only (general path);
* ``halves``: 100 x 200 partitions, 500 members; ``i % 4 == 0`` take the first half of the
  topics, the rest the second half;
* ``random-leave``: 40 topics of 1-10 partitions, 200 members with random (possibly repeated)
  topics; then 50 random removals (seeded);
* ``uniform-10k``: 10 topics x 1000 partitions, 1000 members;
* ``hetero-10k``: 100 topics x 100 partitions, 1000 members in 5 topic buckets (``i % 5``).

Round ``owned`` is Kafka's second step: members ``1..n-1`` resubscribe owning their round-1
result with generation 1, member 0 with a plain subscription. Round ``leave`` does the same and
then drops the removed members. Names use Kafka's zero padding (``t000``, ``c0000``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from assignors.api import Subscription, TopicPartition
from assignors.sticky_user_data import encode_sticky_user_data

Counts = dict[str, int]
Topics = dict[str, list[str]]


def _name(prefix: str, i: int, n: int) -> str:
    return prefix + str(i).zfill(len(str(n)))


@dataclass(frozen=True)
class Workload:
    key: str
    title: str
    assignors: tuple[str, ...]
    rounds: tuple[str, ...]
    build: Callable[[bool], tuple[Counts, Topics, list[str]]]  # quick -> counts, topics, leaving


def _uniform(n_topics: int, n_parts: int, n_members: int, odd_last: bool = False):
    def build(quick: bool) -> tuple[Counts, Topics, list[str]]:
        t_count = max(1, n_topics // 10) if quick else n_topics
        topics = [_name("t", i, t_count) for i in range(t_count)]
        counts = {t: n_parts for t in topics}
        members = {_name("c", i, n_members): topics for i in range(n_members)}
        if odd_last:
            members[_name("c", n_members - 1, n_members)] = topics[:1]
        return counts, members, []

    return build


def _halves(quick: bool) -> tuple[Counts, Topics, list[str]]:
    n_topics, n_parts, n_members = (100, 200, 500) if not quick else (20, 200, 100)
    topics = [_name("t", i, n_topics) for i in range(n_topics)]
    half = n_topics // 2
    members = {
        _name("c", i, n_members): topics[:half] if i % 4 == 0 else topics[half:]
        for i in range(n_members)
    }
    return {t: n_parts for t in topics}, members, []


def _random_leave(quick: bool) -> tuple[Counts, Topics, list[str]]:
    rnd = random.Random(2024)
    n_topics, n_members = 40, 200
    topics = [_name("t", i, n_topics) for i in range(n_topics)]
    counts = {t: rnd.randrange(10) + 1 for t in topics}
    members: Topics = {}
    for i in range(n_members):
        chosen: list[str] = []
        j = 0
        while j < rnd.randrange(20):  # Kafka's loop re-draws its bound each time
            chosen.append(topics[rnd.randrange(n_topics)])
            j += 1
        members[_name("c", i, n_members)] = chosen
    leaving = sorted({_name("c", rnd.randrange(n_members), n_members) for _ in range(50)})
    return counts, members, leaving


def _hetero(quick: bool) -> tuple[Counts, Topics, list[str]]:
    n_topics, n_parts, n_members = 100, 100, 1000
    topics = [_name("t", i, n_topics) for i in range(n_topics)]
    buckets = [topics[b::5] for b in range(5)]
    members = {_name("c", i, n_members): buckets[i % 5] for i in range(n_members)}
    return {t: n_parts for t in topics}, members, []


STICKY = ("sticky", "cooperative-sticky")
ALL = ("sticky", "cooperative-sticky", "range", "roundrobin")

WORKLOADS: tuple[Workload, ...] = (
    Workload(
        "uniform-1m",
        "500 topics x 2000 partitions (1,000,000), 2000 members, uniform",
        ALL,
        ("fresh", "owned"),
        _uniform(500, 2000, 2000),
    ),
    Workload(
        "nonequal-1m",
        "same, last member on t000 only (general builder)",
        STICKY,
        ("fresh", "owned"),
        _uniform(500, 2000, 2000, odd_last=True),
    ),
    Workload(
        "halves", "100 x 200 partitions, 500 members on halves", STICKY, ("fresh", "owned"), _halves
    ),
    Workload(
        "random-leave",
        "40 random topics, 200 members, 50 leave",
        STICKY,
        ("fresh", "leave"),
        _random_leave,
    ),
    Workload(
        "uniform-10k",
        "10 topics x 1000 partitions (10,000), 1000 members",
        ALL,
        ("fresh", "owned"),
        _uniform(10, 1000, 1000),
    ),
    Workload(
        "hetero-10k",
        "100 x 100 partitions, 1000 members in 5 topic buckets",
        ALL,
        ("fresh", "owned"),
        _hetero,
    ),
)


def by_key(key: str) -> Workload:
    for w in WORKLOADS:
        if w.key == key:
            return w
    raise KeyError(key)


def fresh_subscriptions(members: Topics) -> dict[str, Subscription]:
    return {m: Subscription(topics) for m, topics in members.items()}


def next_round_subscriptions(
    assignor_name: str,
    members: Topics,
    previous: dict[str, list[TopicPartition]],
    leaving: list[str],
) -> dict[str, Subscription]:
    """Kafka's second step: members 1..n-1 own their previous result (generation 1)."""
    out: dict[str, Subscription] = {}
    for i, (m, topics) in enumerate(members.items()):
        if m in leaving:
            continue
        if i == 0:
            out[m] = Subscription(topics)
        elif assignor_name == "sticky":
            out[m] = Subscription(topics, encode_sticky_user_data(previous[m], 1))
        else:
            out[m] = Subscription(topics, owned_partitions=previous[m], generation_id=1)
    return out
