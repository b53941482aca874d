"""Seeded random groups for comparing the server-side assignors with Kafka's, beyond its grid.

Kafka's ``ServerSideAssignorBenchmark`` grid knows two subscription shapes: everyone on every
topic, and five buckets of members on five slices of the topics. These cases draw 2 to 600
members, 1 to 60 topics of 0 to 400 partitions (500 to 5,000 for a group of fewer than
40 members on at most 5 topics, drawn more often than chance, so that members hold large sets), and for a heterogeneous group each member's own
random subset of the topics in its own order (some members on one topic, some on none), so the
heterogeneous builder meets topics with one subscriber or with all of them, members with
nothing to do, and partitions whose counts repeat or not. A case is ``FULL`` (first assignment)
or ``INCREMENTAL`` (the benchmark's step: one more member joins a group holding its first
assignment, here with the topics of member ``n-2``).

The cases depend on the seed only, so Kafka's answers recorded for them
(``scripts/sweep_server_assignors_vs_java.py --record``) stay valid whatever groupsim changes.
``GENERATOR`` names this version: change it with the generator.
"""

from __future__ import annotations

import random

from bench.server_assignors import Case, Inputs
from coordinator.java import copy_capacity, java_hashmap_order
from coordinator.kafka_uuid import topic_id_for

GENERATOR = 1
_COUNTS = (0, 1, 2, 3, 5, 8, 10, 16, 30, 64, 100, 200)


def case(seed: int, index: int) -> Case:
    """Case ``index`` of seed ``seed``: its shape (members, topics, kind); :class:`RandomInputs`
    draws the rest from the same stream."""
    return _shape(_stream(seed, index), index)


def _stream(seed: int, index: int) -> random.Random:
    return random.Random(f"server-sweep:{GENERATOR}:{seed}:{index}")


def _shape(rnd: random.Random, index: int) -> Case:
    roll = rnd.random()
    if roll < 0.15:  # few members holding many partitions each (large per-member sets)
        members, topics = rnd.randrange(2, 40), rnd.randrange(1, 6)
    else:
        members = rnd.randrange(2, 601) if roll < 0.4 else rnd.randrange(2, 60)
        topics = rnd.randrange(1, 61)
    return Case(
        members=members,
        ratio=index,  # unused by the random inputs: keeps the labels distinct
        topics=topics,
        rack_aware=False,
        subscription=rnd.choice(("HOMOGENEOUS", "HETEROGENEOUS", "HETEROGENEOUS")),
        assignor=rnd.choice(("uniform", "uniform", "range")),
        assignment=rnd.choice(("FULL", "INCREMENTAL")),
    )


class RandomInputs(Inputs):
    """:class:`bench.server_assignors.Inputs` with random partition counts and subscriptions;
    the Java text and the Python spec are built by the benchmark's own code from these fields."""

    def __init__(self, seed: int, index: int) -> None:
        rnd = _stream(seed, index)
        self.case = shape = _shape(rnd, index)
        names = [f"topic-{i}" for i in range(shape.topics)]
        self.ids = [topic_id_for(n) for n in names]
        big = shape.topics <= 5 and shape.members < 40
        self.counts = {
            t: rnd.randrange(500, 5001)
            if big
            else rnd.choice(_COUNTS)
            if rnd.random() < 0.9
            else rnd.randrange(1, 401)
            for t in self.ids
        }
        count = shape.members - 1 if shape.assignment == "INCREMENTAL" else shape.members
        self.member_topics = {}
        self.racks = {}
        everyone = list(range(shape.topics))
        for i in range(count):
            if shape.subscription == "HOMOGENEOUS":
                chosen = names
            else:
                k = rnd.choice((0, 1, 1, 2, 3, shape.topics, rnd.randrange(shape.topics + 1)))
                chosen = [names[t] for t in rnd.sample(everyone, min(k, shape.topics))]
            # a member's topics iterate as its HashSet of names does (TopicIds)
            ordered = java_hashmap_order(chosen, copy_capacity(len(chosen)))
            self.member_topics[f"member{i}"] = [int(n.split("-")[1]) for n in ordered]
            self.racks[f"member{i}"] = None
        if shape.subscription == "HETEROGENEOUS":
            self.new_topics = self.member_topics[f"member{shape.members - 2}"]
        else:
            self.new_topics = [
                int(n.split("-")[1]) for n in java_hashmap_order(names, copy_capacity(len(names)))
            ]
        self.new_rack = None
