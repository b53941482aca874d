"""coordinator.java_hashmap against java.util.HashMap: every step of the sequences that
tools/hashmap-vectors recorded from OpenJDK 17 (tests/coordinator/data/hashmap_vectors.txt)."""

from __future__ import annotations

from collections import Counter

import pytest

from coordinator.java import hashmap_order_by_hash
from coordinator.java_hashmap import JavaHashMap, int_hashmap, int_set_order, uuid_hashmap
from tests.coordinator.hashmap_vectors import SEQUENCES, key_of


def _replay(kind: str, initial: int, keys: list, steps) -> JavaHashMap:  # type: ignore[no-untyped-def]
    factory = int_hashmap if kind == "int" else uuid_hashmap
    model = factory(None if initial < 0 else initial)
    index = {k: i for i, k in enumerate(keys)}
    for step, (op, i, expected) in enumerate(steps):
        if op == "p":
            model.put(keys[i])
        elif op == "c":
            model.compute_if_absent(keys[i])
        elif op == "r":
            model.remove(keys[i])
        else:
            model.clear()
        got = [index[k] for k in model]
        assert got == expected, f"step {step}: {op} {i}"
    return model


@pytest.mark.parametrize("sequence", SEQUENCES, ids=[s[0] for s in SEQUENCES])
def test_every_step_matches_the_jvm(sequence) -> None:  # type: ignore[no-untyped-def]
    _, kind, initial, key_texts, steps = sequence
    _replay(kind, initial, [key_of(kind, t) for t in key_texts], steps)


def test_the_recording_covers_every_tree_branch() -> None:
    events: Counter[str] = Counter()
    for _, kind, initial, key_texts, steps in SEQUENCES:
        events += _replay(kind, initial, [key_of(kind, t) for t in key_texts], steps).events
    for branch in (
        "early_resize",
        "treeify",
        "put_tree_val",
        "split_untreeify",
        "split_retreeify",
        "remove_tree_node",
        "remove_untreeify",
        "compute_if_absent_tree",
    ):
        assert events[branch] > 0, branch
    assert len(SEQUENCES) >= 30


def test_without_tree_bins_the_order_is_the_bucket_model() -> None:
    """When no bucket reaches 9 keys, the node model and coordinator.java's bucket-then-insertion
    rule agree (here on 2,000 spread-out ints, no tree bin made)."""
    values = [(i * 2654435761) & 0x7FFFFFFF for i in range(2000)]
    model = int_hashmap()
    for v in values:
        model.put(v)
    assert not model.events
    assert model.keys() == [values[i] for i in hashmap_order_by_hash(values)]
    assert int_set_order(values) == model.keys()
