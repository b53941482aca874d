"""The java.util.HashMap orders recorded by tools/hashmap-vectors (tests/coordinator/data/
hashmap_vectors.txt): per sequence its name, key type, initial capacity (-1: the default), keys,
and steps (operation, key index, key indices in iteration order after the step)."""

from __future__ import annotations

from pathlib import Path

from coordinator.kafka_uuid import Uuid

DATA = Path(__file__).parent / "data" / "hashmap_vectors.txt"


def _sequences() -> list[tuple[str, str, int, list[str], list[tuple[str, int, list[int]]]]]:
    sequences = []
    current: list = []
    for line in DATA.read_text().splitlines():
        if line.startswith("#"):
            continue
        if line.startswith("seq "):
            _, name, kind, initial = line.split()
            current = [name, kind, int(initial), [], []]
        elif line.startswith("keys "):
            current[3] = line.split()[1:]
        elif line == "end":
            sequences.append(tuple(current))
        else:
            op, orders = line.split("|")
            kind, index = op.split()
            current[4].append((kind, int(index), [int(i) for i in orders.split()]))
    return sequences


SEQUENCES = _sequences()


def key_of(kind: str, text: str) -> object:
    if kind == "int":
        return int(text)
    msb, lsb = text.split(":")
    return Uuid(int(msb), int(lsb))


def sequence(name: str):  # type: ignore[no-untyped-def]
    """One recorded sequence by name."""
    for recorded in SEQUENCES:
        if recorded[0] == name:
            return recorded
    raise KeyError(name)
