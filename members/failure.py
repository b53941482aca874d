"""The fatal error a consumer's poll() throws (the simulated application then stops)."""

from __future__ import annotations


class ConsumerFatal(Exception):
    """An error Kafka throws from ``poll()`` to the application: ``error`` is the Errors name
    (or the client-side exception's), ``reason`` says why. Raised inside the consumer's parts
    and caught by the ``Consumer``, which fails (``consumer_fatal``)."""

    def __init__(self, error: str, reason: str) -> None:
        super().__init__(f"{error}: {reason}")
        self.error = error
        self.reason = reason
