"""Seeded random groups of 2 to 400 members for comparing the sticky assignors with Kafka's.

The recorded Java vectors (``data/sticky_kafka_java_vectors.json``) are small groups (at most 9
members), which never reach the size-dependent paths of groupsim's sticky builders (numpy
placement, batched claims, strided result lists). These cases do: members and topics at many
sizes, subscriptions uniform, in buckets, mostly uniform or random (with repeats and a topic that
does not exist), and a history of ownership that is none, a round-robin deal or a random
scattering over an earlier membership (members gone, members new), with stale,
missing and mixed generations and a few partitions claimed twice (a zombie member).

The cases depend only on the seed (``random.Random``), never on groupsim's own assignors, so
Kafka's answers recorded for them (``scripts/sweep_client_assignors_vs_java.py --record``) stay valid
whatever groupsim changes. ``GENERATOR`` names this version: change it with the generator.
"""

from __future__ import annotations

import math
import random
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

from assignors.api import ClusterMetadata, Subscription, TopicPartition
from assignors.cooperative_sticky import CooperativeStickyAssignor
from assignors.range import RangeAssignor
from assignors.roundrobin import RoundRobinAssignor
from assignors.sticky import StickyAssignor
from assignors.sticky_user_data import encode_sticky_user_data

GENERATOR = 1

Case = dict[str, Any]
"""``kind`` (sticky | coop), ``counts`` {topic: partitions}, ``members`` [[id, generation or
None, [topics], [[topic, partition], ...]], ...] in the order Kafka's map receives them."""

_COUNTS = (0, 1, 2, 3, 5, 8, 10, 16, 30, 64, 100, 200)


def _names(rnd: random.Random, n: int) -> list[str]:
    names: list[str] = []
    seen: set[str] = set()
    for i in range(n):
        style = rnd.randrange(4)
        if style == 0:
            name = f"consumer-{i}"
        elif style == 1:
            name = f"c{i:04d}"
        elif style == 2:
            name = f"consumer-grp-{i}-{rnd.getrandbits(32):08x}"
        else:
            letters = "abcdefghijklmnopqrstuvwxyz0123456789"
            name = "m" + "".join(rnd.choice(letters) for _ in range(rnd.randrange(1, 12))) + str(i)
        while name in seen:
            name += "x"
        seen.add(name)
        names.append(name)
    return names


def _subscriptions(rnd: random.Random, names: list[str], topics: list[str]) -> dict[str, list[str]]:
    pattern = rnd.choice(("uniform", "uniform", "buckets", "mostly", "random"))
    if pattern == "uniform":
        subs = {m: list(topics) for m in names}
    elif pattern == "buckets":
        buckets = [
            rnd.sample(topics, rnd.randrange(1, len(topics) + 1))
            for _ in range(rnd.randrange(2, 6))
        ]
        subs = {m: list(buckets[i % len(buckets)]) for i, m in enumerate(names)}
    elif pattern == "mostly":
        odd = set(rnd.sample(names, max(1, len(names) // 20)))
        subs = {
            m: rnd.sample(topics, rnd.randrange(1, len(topics) + 1)) if m in odd else list(topics)
            for m in names
        }
    else:
        subs = {m: [rnd.choice(topics) for _ in range(rnd.randrange(0, 8))] for m in names}
    if rnd.random() < 0.1:  # a topic nobody created
        for m in rnd.sample(names, max(1, len(names) // 3)):
            subs[m].append("ghost")
    return subs


def _history(
    rnd: random.Random, names: list[str], subs: dict[str, list[str]], counts: dict[str, int]
) -> dict[str, list[tuple[str, int]]]:
    """Each member's claimed partitions from an earlier round of a different membership."""
    owned: dict[str, list[tuple[str, int]]] = {m: [] for m in names}
    kind = rnd.choice(("fresh", "dealt", "dealt", "scattered", "claims"))
    if kind == "fresh":
        return owned
    if kind == "claims":  # arbitrary, overlapping claims
        every = [(t, p) for t, c in counts.items() for p in range(c)]
        for m in names:
            if every and rnd.random() < 0.6:
                owned[m] = rnd.sample(every, min(len(every), rnd.randrange(0, 6)))
        return owned
    earlier = [m for m in names if rnd.random() < 0.85]
    gone = [f"gone-{i}" for i in range(rnd.randrange(0, max(1, len(names) // 4)))]
    everyone = earlier + gone
    topics = list(counts)
    earlier_subs = {m: subs[m] for m in earlier}
    earlier_subs.update({m: rnd.sample(topics, rnd.randrange(1, len(topics) + 1)) for m in gone})
    start = rnd.randrange(max(1, len(everyone)))
    for t, c in counts.items():
        eligible = [m for m in everyone if t in earlier_subs[m]]
        if not eligible:
            continue
        # (claims beyond a topic's current count are left out: groupsim drops them, Kafka hands
        # them out again; a documented deviation, docs/sticky-assignors.md)
        for p in range(c):
            if kind == "dealt":
                holder = eligible[(start + p) % len(eligible)]
            elif rnd.random() < 0.9:
                holder = rnd.choice(eligible)
            else:
                continue
            if holder in owned:
                owned[holder].append((t, p))
        start += c
    for _ in range(rnd.randrange(0, 3)):  # a zombie still claims a partition
        a, b = rnd.choice(names), rnd.choice(names)
        if owned[a]:
            owned[b].append(rnd.choice(owned[a]))
    return owned


def generate(seed: int, index: int) -> Case:
    """Case ``index`` of seed ``seed`` (each case its own stream: any one can be rebuilt alone)."""
    rnd = random.Random(f"{GENERATOR}:{seed}:{index}")
    kind = rnd.choice(("sticky", "coop"))
    n_members = int(math.exp(rnd.uniform(math.log(2), math.log(400))))
    topics = [f"topic-{i}" if rnd.random() < 0.7 else f"t{i}" for i in range(rnd.randrange(1, 40))]
    counts = {
        t: rnd.choice(_COUNTS) if rnd.random() < 0.9 else rnd.randrange(1, 400) for t in topics
    }
    names = _names(rnd, n_members)
    subs = _subscriptions(rnd, names, topics)
    owned = _history(rnd, names, subs, counts)
    usual = rnd.randrange(1, 5)
    generations: dict[str, int | None] = {}
    for m in names:
        roll = rnd.random()
        if not owned[m] and roll < 0.5:
            generations[m] = None
        elif roll < 0.9:
            generations[m] = usual
        else:
            generations[m] = rnd.choice((None, -1, max(1, usual - 1), usual + 1))
        if kind == "coop":
            owned[m] = list(dict.fromkeys(owned[m]))  # a consumer reports each partition once
        elif generations[m] is None and owned[m]:
            generations[m] = -1  # Kafka's StickyAssignor always writes a generation (V1)
    rnd.shuffle(names)
    members = [[m, generations[m], subs[m], [list(tp) for tp in owned[m]]] for m in names]
    return {"kind": kind, "counts": counts, "members": members}


RACKS = ("a", "b", "c", "d")


def generate_with_racks(seed: int, index: int) -> Case:
    """Case ``index`` of seed ``seed`` with racks (KIP-881): each partition's replicas on one to
    three of four racks (one partition in five on all of them), each member in a rack or none,
    and Kafka's ``preferRackAwareLogic`` test switch on or off. The racks come from a stream of
    their own, so the rest of the case is :func:`generate`'s."""
    case = generate(seed, index)
    rnd = random.Random(f"{GENERATOR}:{seed}:{index}:racks")
    case["prefer"] = rnd.random() < 0.3
    case["racks"] = {
        t: [
            list(RACKS) if rnd.random() < 0.2 else rnd.sample(RACKS, rnd.randrange(1, 4))
            for _ in range(c)
        ]
        for t, c in case["counts"].items()
    }
    for member in case["members"]:
        member.append(rnd.choice(RACKS) if rnd.random() < 0.8 else None)
    return case


def generate_range_roundrobin(seed: int, index: int) -> Case:
    """Case ``index`` of seed ``seed`` for ``range`` or ``roundrobin``: :func:`generate`'s
    members and topics (their claims, which these assignors ignore, kept), racks half of the
    time (:func:`generate_with_racks`; range is rack-aware, KIP-881), and a static
    ``group.instance.id`` for some members (both order members by it first, ``MemberInfo``)."""
    rnd = random.Random(f"{GENERATOR}:{seed}:{index}:range-roundrobin")
    racked = rnd.random() < 0.5
    case = generate_with_racks(seed, index) if racked else generate(seed, index)
    case["kind"] = rnd.choice(("range", "roundrobin"))
    static = rnd.choice((0.0, 0.0, 0.3, 1.0))
    for i, member in enumerate(case["members"]):
        if not racked:
            member.append(None)
        member.append(f"i{rnd.randrange(10_000)}-{i}" if rnd.random() < static else None)
    return case


def subscriptions(case: Case) -> dict[str, Subscription]:
    """The case's members as Kafka's client would send them (user data or owned partitions)."""
    out: dict[str, Subscription] = {}
    for name, generation, topics, owned, *extra in case["members"]:
        parts = [TopicPartition(t, p) for t, p in owned]
        gen_id = -1 if generation is None else generation
        rack_id = extra[0] if extra else None
        instance = extra[1] if len(extra) > 1 else None
        if case["kind"] == "sticky":
            data = (
                None
                if not parts and generation is None
                else encode_sticky_user_data(parts, generation)
            )
            out[name] = Subscription(topics, data, (), gen_id, instance, rack_id)
        else:
            out[name] = Subscription(topics, None, parts, gen_id, instance, rack_id)
    return out


def assign(case: Case) -> dict[str, list[TopicPartition]]:
    if case["kind"] in ("range", "roundrobin"):
        simple: RangeAssignor | RoundRobinAssignor = (
            RangeAssignor(prefer_rack_aware_logic=case.get("prefer", False))
            if case["kind"] == "range"
            else RoundRobinAssignor()
        )
        cluster = ClusterMetadata(case["counts"], case.get("racks"))
        return simple.assign(cluster, subscriptions(case))
    cls = StickyAssignor if case["kind"] == "sticky" else CooperativeStickyAssignor
    if "racks" not in case:
        return cls().assign(case["counts"], subscriptions(case))
    assignor = cls(prefer_rack_aware_logic=case["prefer"])
    return assignor.assign(ClusterMetadata(case["counts"], case["racks"]), subscriptions(case))


def digest(order: Sequence[str], lists: Mapping[str, Sequence[str]]) -> str:
    """CRC32 of every member's list (``topic:partition`` in list order), members in ``order``."""
    text = "\n".join(f"{m} {','.join(lists[m])}" for m in order)
    return f"{zlib.crc32(text.encode()):08x}"


def our_digest(case: Case) -> str:
    result = assign(case)
    lists = {m: [f"{tp.topic}:{tp.partition}" for tp in parts] for m, parts in result.items()}
    return digest([m[0] for m in case["members"]], lists)
