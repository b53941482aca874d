"""Java's orderings, reproduced in Python: ``String.compareTo`` and ``HashMap`` iteration order.

Kafka's assignors are deterministic functions of their inputs, but two of Java's orderings leak
into their results:

* **String order.** Members and topics are sorted with ``String.compareTo``, which compares UTF-16
  code units. Python compares code points. The two agree unless a string holds a character outside
  the Basic Multilingual Plane: Java sees its surrogate pair (0xD800-0xDFFF) and so sorts it
  *before* U+E000..U+FFFF, Python sorts it after.
* **HashMap order.** Where Kafka iterates a ``HashMap<String, ...>`` (range's topics, the sticky
  assignor's owned-partition pass), the iteration order is bucket order: the spread hash
  ``h ^ (h >>> 16)`` masked by the table capacity, ascending, and insertion order inside a bucket.
  :func:`java_hashmap_order` reproduces it for a map filled by ``put`` from an empty
  ``new HashMap<>()`` (capacity 16, doubled while ``n > 0.75 * capacity``). Buckets of 8+ keys in
  tables of 64+ are tree-ified by Java and then ordered differently; that needs thousands of
  colliding keys and is not emulated.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from coordinator.placement import java_string_hashcode

__all__ = [
    "java_hashmap_capacity",
    "java_hashmap_order",
    "java_sorted",
    "java_spread_hash",
    "java_string_hashcode",
    "java_string_key",
    "needs_utf16_order",
]

_DEFAULT_CAPACITY = 16
_LOAD_FACTOR = 0.75


def java_string_key(s: str) -> bytes:
    """A sort key that orders strings like Java's ``String.compareTo`` (UTF-16 code units).

    Big-endian UTF-16 bytes compare unit by unit, and a proper prefix sorts first, exactly as
    ``compareTo`` does.
    """
    return s.encode("utf-16-be", "surrogatepass")


def needs_utf16_order(strings: Iterable[str]) -> bool:
    """True when Python's order may differ from Java's: some string leaves the BMP."""
    return any(not s.isascii() and max(s) > "\uffff" for s in strings)


def java_sorted(strings: Iterable[str]) -> list[str]:
    """Sort strings in Java ``String`` order; plain ``sorted`` when that gives the same result."""
    items = list(strings)
    if needs_utf16_order(items):
        return sorted(items, key=java_string_key)
    return sorted(items)


@lru_cache(maxsize=1 << 16)
def java_spread_hash(key: str) -> int:
    """``HashMap.hash(key)``: ``h ^ (h >>> 16)`` of ``String.hashCode``, as an unsigned int32."""
    h = java_string_hashcode(key) & 0xFFFFFFFF
    return h ^ (h >> 16)


def java_hashmap_capacity(n: int) -> int:
    """Table capacity of a ``new HashMap<>()`` after ``n`` distinct puts (resize when size > 0.75 cap)."""
    cap = _DEFAULT_CAPACITY
    while n > _LOAD_FACTOR * cap:
        cap <<= 1
    return cap


def java_hashmap_order(keys: Sequence[str] | Iterable[str]) -> list[str]:
    """The iteration order of a Java ``HashMap``/``HashSet`` filled with ``keys`` in this order.

    Duplicates keep their first position (a repeated ``put`` does not move a key). Resizing splits
    each bucket preserving relative order, so the final order is: bucket index under the final
    capacity ascending, insertion order within a bucket.
    """
    unique = list(dict.fromkeys(keys))
    mask = java_hashmap_capacity(len(unique)) - 1
    # sorted() is stable, so keys sharing a bucket keep their insertion order.
    return sorted(unique, key=lambda k: java_spread_hash(k) & mask)
