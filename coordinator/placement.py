"""Which ``__consumer_offsets`` partition, and so which broker, coordinates a group.

Kafka computes ``Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions``
(GroupCoordinatorService.partitionFor). ``String.hashCode`` over UTF-16 code units and
``Utils.abs`` are Java's, from :mod:`coordinator.java` ("polygenelubricants" lands on partition 0,
not 48).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from coordinator.java import INT_MIN, java_string_hashcode, java_string_hashcodes, kafka_abs

DEFAULT_OFFSETS_PARTITIONS = 50


def partition_for(group_id: str, num_partitions: int = DEFAULT_OFFSETS_PARTITIONS) -> int:
    """The ``__consumer_offsets`` partition whose leader coordinates ``group_id``."""
    if num_partitions <= 0:
        raise ValueError(f"num_partitions must be positive, got {num_partitions}")
    return kafka_abs(java_string_hashcode(group_id)) % num_partitions


def partitions_for(
    ids: Iterable[str], num_partitions: int = DEFAULT_OFFSETS_PARTITIONS
) -> np.ndarray:
    """Vectorised ``partition_for`` (int32 array), with Kafka's ``Utils.abs``."""
    if num_partitions <= 0:
        raise ValueError(f"num_partitions must be positive, got {num_partitions}")
    h = java_string_hashcodes(ids).astype(np.int64)
    return (np.where(h == INT_MIN, 0, np.abs(h)) % num_partitions).astype(np.int32)
