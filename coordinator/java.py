"""Java semantics that leak into Kafka's results, in one place for the coordinator and the assignors.

* **Strings are UTF-16.** ``String.length()`` counts UTF-16 code units, ``String.hashCode`` is
  ``h = 31*h + unit`` over them (signed 32-bit wrap-around), and ``String.compareTo`` compares them
  unit by unit. Python strings are code points, so a character outside the BMP is one Python
  character but two Java units (a surrogate pair), and sorts after U+E000..U+FFFF in Python but
  before them in Java. A Java string may also hold a *lone* surrogate (e.g. ``"t\\ud800"``); it is
  one unit, and every function here accepts it (UTF-16 with ``surrogatepass``) as Java does.
* **Utils.abs** maps ``Integer.MIN_VALUE`` to 0 (Java's ``Math.abs`` gives -2**31, Python's
  ``abs`` 2**31): ``"polygenelubricants"`` lands on offsets partition 0.
* **HashMap iteration order.** Kafka iterates ``HashMap``s (the classic group's members and
  protocol votes, range's topics, the sticky assignor's members, user data written with
  ``computeIfAbsent``), so which entry comes first is Java's bucket order: bucket
  ``(h ^ (h >>> 16)) & (capacity - 1)`` ascending, and within a bucket insertion order for
  ``put`` (resizes split buckets without reordering them), newest first for ``computeIfAbsent``.
  A ``new HashMap<>()`` starts at 16 buckets and doubles whenever the size exceeds 0.75 x
  capacity; removals never shrink it. Checked against OpenJDK 17 (tests/coordinator/data and
  the assignor vectors).
* **Tree bins.** That bucket-and-list rule holds until a bucket's list reaches 9 keys (8 through
  ``computeIfAbsent``): Java then doubles a table of fewer than 64 buckets early, or turns the
  bucket into a red-black tree whose ``next`` list (the iteration order) puts the tree's root
  first and links later keys after their tree parent. :mod:`coordinator.java_hashmap` models
  this exactly (put, computeIfAbsent, remove, resize splits, treeify/untreeify; checked step by
  step against OpenJDK 17, tools/hashmap-vectors), and the server-side assignors' collections
  fall back to it when a cheap detector says a bucket may get there
  (:mod:`coordinator.assignor.treeify`: ``IntHashSet``, ``TopicMap``, ``build_fresh_maps``,
  the heterogeneous builder's batch, ``ordering.uuid_order``). Kafka's own JMH grid gets there: a joining member's set of revoked
  partitions spaced by powers of two. The list-only helpers of this module still ignore tree
  bins; their keys are random-looking (member ids, topic names, ``TopicPartition`` hashes), where
  9 keys in one bucket of a table filled to at most 3/4 is rare (about 1e-7 per bucket and table
  size, so about one collection in 300 of 10,000 keys) but can be forced with chosen names:
  ``JavaHashMapOrder`` (the classic group's members), ``java_hashmap_order`` (member ids of the
  target-assignment builder, the protocol-name maps, range's topics on the client),
  ``compute_if_absent_order`` (sticky user data), ``hashmap_order_by_hash`` (the service's
  ``TopicPartition`` lists) and ``JavaHashSetOrder`` (the sticky general builder's movements).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence

import numpy as np

INT_MIN = -(1 << 31)
DEFAULT_CAPACITY = 16
LOAD_FACTOR = 0.75

# --- java.lang.String --------------------------------------------------------------------------


def utf16_units(text: str) -> bytes:
    """``text`` as Java holds it: big-endian UTF-16 code units (lone surrogates kept as units)."""
    return text.encode("utf-16-be", "surrogatepass")


def java_string_length(text: str) -> int:
    """``String.length()``: UTF-16 code units (a character outside the BMP counts twice)."""
    if text.isascii():
        return len(text)
    return len(utf16_units(text)) >> 1


def java_substring(text: str, begin: int, end: int) -> str:
    """``String.substring(begin, end)``: by UTF-16 units, so a cut inside a surrogate pair leaves
    its half as a lone surrogate, as Java does."""
    if text.isascii():
        return text[begin:end]
    return utf16_units(text)[2 * begin : 2 * end].decode("utf-16-be", "surrogatepass")


def java_utf8(text: str) -> bytes:
    """``String.getBytes(UTF_8)`` (Kafka's ``Utils.utf8``, how protocol strings are written): a
    lone surrogate becomes ``?``, and surrogate halves that pair up form their character."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        whole = utf16_units(text).decode("utf-16-be", "surrogatepass")  # pairs the halves
        return whole.encode("utf-8", "replace")  # what is left alone: "?"


@functools.lru_cache(maxsize=1 << 16)
def java_string_hashcode(s: str) -> int:
    """``String.hashCode``: ``h = 31*h + unit`` over UTF-16 code units, as a signed int32.

    Memoised: the coordinator re-sorts a group's member ids in HashMap order on every change.
    """
    data = utf16_units(s)
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def java_string_hashcodes(ids: Iterable[str]) -> np.ndarray:
    """Vectorised ``String.hashCode`` for many ids at once (int32 array).

    All ids are encoded to UTF-16 once, laid out as a padded (n, max_units) uint32 matrix, and
    hashed column by column: n-wide numpy operations instead of a Python loop per character.
    Rows are processed in chunks sorted by length so that one long id does not pad everything.
    """
    ids = list(ids)
    out = np.zeros(len(ids), dtype=np.int64)
    if not ids:
        return out.astype(np.int32)
    encoded = [utf16_units(s) for s in ids]
    lengths = np.fromiter((len(b) >> 1 for b in encoded), dtype=np.int64, count=len(encoded))
    order = np.argsort(lengths, kind="stable")
    chunk = 1 << 16
    for start in range(0, len(ids), chunk):
        idx = order[start : start + chunk]
        width = int(lengths[idx[-1]])
        if width == 0:
            continue
        buf = bytearray(len(idx) * width * 2)
        for row, i in enumerate(idx):
            b = encoded[i]
            # Right-align each id: leading zero units leave h = 31*0 + 0 = 0 unchanged.
            off = (row + 1) * width * 2 - len(b)
            buf[off : off + len(b)] = b
        units = np.frombuffer(bytes(buf), dtype=">u2").reshape(len(idx), width).astype(np.uint32)
        h = np.zeros(len(idx), dtype=np.uint32)
        for col in range(width):
            h = h * np.uint32(31) + units[:, col]  # uint32 arithmetic wraps modulo 2**32
        out[idx] = h.astype(np.int64)
    return np.where(out >= (1 << 31), out - (1 << 32), out).astype(np.int32)


def java_string_key(s: str) -> bytes:
    """A sort key that orders strings like ``String.compareTo`` (UTF-16 code units).

    Big-endian UTF-16 bytes compare unit by unit, and a proper prefix sorts first, exactly as
    ``compareTo`` does.
    """
    return utf16_units(s)


def needs_utf16_order(strings: Iterable[str]) -> bool:
    """True when Python's order may differ from Java's: some string leaves the BMP.

    A lone surrogate alone does not: as one unit it sorts among BMP characters by its value in
    both languages.
    """
    joined = "".join(strings)  # one C pass: usually all ASCII
    return not joined.isascii() and max(joined) > "\uffff"


def java_sorted(strings: Iterable[str]) -> list[str]:
    """Sort strings in Java ``String`` order; plain ``sorted`` when that gives the same result."""
    items = list(strings)
    if needs_utf16_order(items):
        return sorted(items, key=java_string_key)
    return sorted(items)


def kafka_abs(n: int) -> int:
    """Kafka's ``Utils.abs``: the absolute value, except that ``Integer.MIN_VALUE`` maps to 0."""
    return 0 if n == INT_MIN else abs(n)


def topic_partition_hashcode(topic_hashcode: int, partition: int) -> int:
    """``TopicPartition.hashCode`` (``31 * (31 + partition) + topic.hashCode()``), unwrapped:
    :func:`spread` masks it to 32 bits."""
    return 31 * (31 + partition) + topic_hashcode


# --- java.util.HashMap -------------------------------------------------------------------------


def spread(h: int) -> int:
    """``HashMap.hash``: ``h ^ (h >>> 16)`` on the unsigned 32-bit value."""
    u = h & 0xFFFFFFFF
    return u ^ (u >> 16)


@functools.lru_cache(maxsize=1 << 16)
def java_spread_hash(key: str) -> int:
    """``HashMap.hash(key)`` of a string key."""
    return spread(java_string_hashcode(key))


def table_size_for(cap: int) -> int:
    """``HashMap.tableSizeFor``: the smallest power of two >= ``cap`` (1 for 0 or 1)."""
    return 1 if cap <= 1 else 1 << (cap - 1).bit_length()


def sized_capacity(expected: int) -> int:
    """Buckets of ``new HashSet<>((int) (expected / 0.75f + 1))``, Kafka's pre-sizing idiom."""
    return table_size_for(int(expected / 0.75) + 1)


def copy_capacity(size: int) -> int:
    """Buckets of ``new HashSet<>(collection)`` for a collection of ``size`` elements."""
    return table_size_for(max(int(size / 0.75) + 1, 16))


def java_hashmap_capacity(n: int, capacity: int = DEFAULT_CAPACITY) -> int:
    """Table capacity of a ``HashMap`` of ``capacity`` buckets (a ``new HashMap<>()`` by default)
    after ``n`` distinct puts (it doubles when the size exceeds 0.75 x capacity)."""
    cap = capacity
    while n > LOAD_FACTOR * cap:
        cap <<= 1
    return cap


def java_hashmap_order(keys: Iterable[str], capacity: int = DEFAULT_CAPACITY) -> list[str]:
    """The iteration order of a ``HashMap``/``HashSet`` of ``capacity`` buckets (a default one
    unless given) filled by ``put`` with ``keys`` in order.

    Duplicates keep their first position (a repeated ``put`` does not move a key).
    """
    unique = list(dict.fromkeys(keys))
    mask = java_hashmap_capacity(len(unique), capacity) - 1
    buckets = [h & mask for h in map(java_spread_hash, unique)]
    # sorted() is stable, so keys sharing a bucket keep their insertion order.
    return [unique[i] for i in sorted(range(len(unique)), key=buckets.__getitem__)]


def java_hashmap_order_vectorised(keys: list[str]) -> list[str]:
    """:func:`java_hashmap_order` of distinct ``keys``, hashing large lists with numpy.

    For a first look at thousands of member ids (nothing memoised yet) this is several times
    faster; below 64 keys numpy's per-call cost dominates and the memoised path runs.
    """
    if len(keys) < 64:
        return java_hashmap_order(keys)
    h = java_string_hashcodes(keys).astype(np.int64) & 0xFFFFFFFF
    bucket = (h ^ (h >> 16)) & (java_hashmap_capacity(len(keys)) - 1)
    return [keys[i] for i in np.argsort(bucket, kind="stable").tolist()]


def hashmap_order_by_hash(hashes_in_insertion_order: Sequence[int]) -> list[int]:
    """Positions of distinct keys, given by their ``hashCode()`` in insertion order, in the
    iteration order of a fresh HashMap after putting them in this order (for keys that are not
    strings, e.g. Kafka's TopicPartition)."""
    mask = java_hashmap_capacity(len(hashes_in_insertion_order)) - 1
    return sorted(
        range(len(hashes_in_insertion_order)),
        key=lambda i: (spread(hashes_in_insertion_order[i]) & mask, i),
    )


def compute_if_absent_order(calls: Iterable[str]) -> list[str]:
    """Iteration order of a ``HashMap`` filled by ``computeIfAbsent`` calls on ``calls`` (keys,
    one call each; Kafka's ``groupPartitionsByTopic`` makes one call per partition).

    Two things differ from ``put``:

    * a new key is linked at the *head* of its bucket, so within a bucket the newest key comes
      first (resizing keeps each bucket's relative order);
    * the table grows at the *start* of a call once the size exceeds the threshold, not right
      after an insertion: a 13th key added by the very last call leaves the table at 16 buckets.

    Both were checked against the bytes Kafka writes (the sticky assignor's user data).
    """
    capacity = DEFAULT_CAPACITY
    first_seen: dict[str, int] = {}
    for key in calls:
        if len(first_seen) > LOAD_FACTOR * capacity:
            capacity <<= 1
        if key not in first_seen:
            first_seen[key] = len(first_seen)
    keys = list(first_seen)
    mask = capacity - 1
    return [
        keys[i]
        for i in sorted(range(len(keys)), key=lambda i: (java_spread_hash(keys[i]) & mask, -i))
    ]


class JavaHashMapOrder:
    """Tracks the keys of one ``HashMap<String, V>`` (puts, removals, growth) to give its
    iteration order at any time (the classic group's member map)."""

    __slots__ = ("_cache", "_next", "_seq", "capacity")

    def __init__(self) -> None:
        self._seq: dict[str, int] = {}
        self._next = 0
        self.capacity = DEFAULT_CAPACITY
        self._cache: list[str] | None = None

    def __len__(self) -> int:
        return len(self._seq)

    def __contains__(self, key: str) -> bool:
        return key in self._seq

    def put(self, key: str) -> None:
        """HashMap.put: a new key goes to the end of its bucket; an existing key keeps its place."""
        if key in self._seq:
            return
        self._seq[key] = self._next
        self._next += 1
        while len(self._seq) > self.capacity * LOAD_FACTOR:
            self.capacity *= 2
        self._cache = None

    def remove(self, key: str) -> None:
        if self._seq.pop(key, None) is not None:
            self._cache = None

    def clear(self) -> None:
        """HashMap.clear keeps the table's capacity."""
        self._seq.clear()
        self._cache = None

    def order(self) -> list[str]:
        if self._cache is None:
            mask = self.capacity - 1
            seq = self._seq
            self._cache = sorted(seq, key=lambda k: (java_spread_hash(k) & mask, seq[k]))
        return list(self._cache)

    def first(self, where: Callable[[str], bool] | None = None) -> str | None:
        for key in self.order():
            if where is None or where(key):
                return key
        return None


class JavaHashSetOrder:
    """A ``HashSet`` of int keys with their spread hashes (``add``, ``remove``, ``first``): the
    first key in iteration order, for sets that are mostly added to and drained from the front
    (the sticky assignor's ``PartitionMovements``, keyed by partition id)."""

    __slots__ = ("cap", "items", "seq")

    def __init__(self) -> None:
        self.items: dict[int, tuple[int, int]] = {}
        self.cap = DEFAULT_CAPACITY
        self.seq = 0

    def add(self, key: int, spread_hash: int) -> None:
        if key in self.items:
            return
        self.items[key] = (spread_hash, self.seq)
        self.seq += 1
        if len(self.items) > LOAD_FACTOR * self.cap:
            self.cap <<= 1

    def remove(self, key: int) -> None:
        del self.items[key]

    def __bool__(self) -> bool:
        return bool(self.items)

    def first(self) -> int:
        mask = self.cap - 1
        return min(self.items, key=lambda p: ((self.items[p][0] & mask), self.items[p][1]))


def first_max_by_count(counts_in_insertion_order: Iterable[tuple[str, int]]) -> str:
    """``map.entrySet().stream().max(comparingByValue())``: the first maximal entry in map order.

    ``BinaryOperator.maxBy`` keeps the earlier element when the comparator says equal, so among
    tied counts the key met first in HashMap iteration order wins.
    """
    counts = dict(counts_in_insertion_order)
    if not counts:
        raise ValueError("no entries")
    best: str | None = None
    for key in java_hashmap_order(counts):
        if best is None or counts[key] > counts[best]:
            best = key
    assert best is not None
    return best
