"""Which ``__consumer_offsets`` partition, and so which broker, coordinates a group.

Kafka computes ``Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions``
(GroupCoordinatorService.partitionFor). Two details make naive ports wrong:

* ``String.hashCode`` runs over UTF-16 code units with 32-bit signed wrap-around, so a character
  outside the BMP counts as two units (a surrogate pair);
* ``Utils.abs`` maps ``Integer.MIN_VALUE`` to 0, where Java's ``Math.abs`` gives -2**31 and
  Python's ``abs`` gives 2**31 ("polygenelubricants" lands on partition 0, not 48).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

import numpy as np

INT_MIN = -(1 << 31)
DEFAULT_OFFSETS_PARTITIONS = 50


def java_string_length(text: str) -> int:
    """Java's ``String.length()``: UTF-16 code units (a character outside the BMP counts twice)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


@functools.lru_cache(maxsize=1 << 16)
def java_string_hashcode(s: str) -> int:
    """Java's ``String.hashCode``: ``h = 31*h + unit`` over UTF-16 code units, as a signed int32.

    Memoised: the coordinator re-sorts a group's member ids in HashMap order on every change.
    """
    data = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def kafka_abs(n: int) -> int:
    """Kafka's ``Utils.abs``: the absolute value, except that ``Integer.MIN_VALUE`` maps to 0."""
    return 0 if n == INT_MIN else abs(n)


def partition_for(group_id: str, num_partitions: int = DEFAULT_OFFSETS_PARTITIONS) -> int:
    """The ``__consumer_offsets`` partition whose leader coordinates ``group_id``."""
    if num_partitions <= 0:
        raise ValueError(f"num_partitions must be positive, got {num_partitions}")
    return kafka_abs(java_string_hashcode(group_id)) % num_partitions


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
    encoded = [s.encode("utf-16-be", "surrogatepass") for s in ids]
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


def partitions_for(
    ids: Iterable[str], num_partitions: int = DEFAULT_OFFSETS_PARTITIONS
) -> np.ndarray:
    """Vectorised ``partition_for`` (int32 array), with Kafka's ``Utils.abs``."""
    if num_partitions <= 0:
        raise ValueError(f"num_partitions must be positive, got {num_partitions}")
    h = java_string_hashcodes(ids).astype(np.int64)
    return (np.where(h == INT_MIN, 0, np.abs(h)) % num_partitions).astype(np.int32)
