"""Kafka's ``Uuid`` (org.apache.kafka.common.Uuid): 128 bits, shown as URL-safe base64 without
padding (``Uuid.toString``), with ``ZERO_UUID`` meaning "no id".

KIP-848 names topics by id in ``ConsumerGroupHeartbeat`` and in its records. Kafka draws topic
ids at random when a topic is created; groupsim derives them deterministically (see
:func:`topic_id_for`) so that the same scenario gives the same log.
"""

from __future__ import annotations

import base64
import hashlib

from attrs import frozen


@frozen(order=True, cache_hash=True)
class Uuid:
    """Two signed 64-bit halves, compared as Kafka's ``Uuid.compareTo`` does (most significant
    half first, each as a signed long). The hash is cached: topic ids key the assignors' maps."""

    most_significant_bits: int
    least_significant_bits: int

    def to_bytes(self) -> bytes:
        return (self.most_significant_bits & (2**64 - 1)).to_bytes(8, "big") + (
            self.least_significant_bits & (2**64 - 1)
        ).to_bytes(8, "big")

    def __str__(self) -> str:
        return base64.urlsafe_b64encode(self.to_bytes()).decode("ascii").rstrip("=")

    @classmethod
    def from_string(cls, text: str) -> Uuid:
        """``Uuid.fromString``: 22 characters of URL-safe base64."""
        raw = base64.urlsafe_b64decode(text + "==")
        if len(raw) != 16:
            raise ValueError(f"Unable to parse '{text}' as a Uuid: 16 bytes expected")
        return cls(_signed(raw[:8]), _signed(raw[8:]))


def _signed(raw: bytes) -> int:
    return int.from_bytes(raw, "big", signed=True)


ZERO_UUID = Uuid(0, 0)
#: Uuid.RESERVED: never returned by Uuid.randomUuid (ZERO_UUID, ONE_UUID = METADATA_TOPIC_ID)
RESERVED_UUIDS = frozenset({ZERO_UUID, Uuid(0, 1)})


def topic_id_for(name: str, incarnation: int = 0) -> Uuid:
    """The id groupsim gives topic ``name`` (its ``incarnation``-th creation: a deleted and
    recreated topic gets a new id, as in Kafka). A SHA-256 of both, never ``ZERO_UUID``."""
    digest = hashlib.sha256(f"{incarnation}:{name}".encode("utf-8", "surrogatepass")).digest()
    uuid = Uuid(_signed(digest[:8]), _signed(digest[8:16]))
    return uuid if uuid != ZERO_UUID else Uuid(0, 1)
