"""Kafka's ExponentialBackoff (org.apache.kafka.common.utils), with a seeded random source.

backoff(attempts) = initial * 2**min(attempts, exp_max) * uniform(1 - 0.2, 1 + 0.2), capped at
max. Kafka draws the jitter from ThreadLocalRandom; the simulator draws it from the consumer's
seeded ``random.Random`` so that a run is reproducible.
"""

from __future__ import annotations

import math
import random

RETRY_BACKOFF_EXP_BASE = 2
RETRY_BACKOFF_JITTER = 0.2


class ExponentialBackoff:
    def __init__(
        self,
        initial_ms: int,
        max_ms: int,
        rng: random.Random,
        multiplier: int = RETRY_BACKOFF_EXP_BASE,
        jitter: float = RETRY_BACKOFF_JITTER,
    ) -> None:
        self.initial_ms = min(initial_ms, max_ms)
        self.max_ms = max_ms
        self.multiplier = multiplier
        self.jitter = jitter
        self.rng = rng
        self.exp_max = (
            math.log(max_ms / max(self.initial_ms, 1)) / math.log(multiplier)
            if max_ms > self.initial_ms
            else 0.0
        )

    def backoff(self, attempts: int) -> int:
        if self.exp_max == 0:
            return self.initial_ms
        term = self.initial_ms * self.multiplier ** min(attempts, self.exp_max)
        factor = self.rng.uniform(1 - self.jitter, 1 + self.jitter) if self.jitter > 0 else 1.0
        return min(int(factor * term), self.max_ms)

    def bounds(self, attempts: int) -> tuple[int, int]:
        """The least and the greatest value ``backoff(attempts)`` can return (equal when it
        draws nothing), without drawing."""
        if self.exp_max == 0:
            return self.initial_ms, self.initial_ms
        term = self.initial_ms * self.multiplier ** min(attempts, self.exp_max)
        return (
            min(int((1 - self.jitter) * term), self.max_ms),
            min(int((1 + self.jitter) * term), self.max_ms),
        )
