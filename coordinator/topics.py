"""Kafka's rule for legal topic names (org.apache.kafka.common.internals.Topic).

A name is legal when it is not empty, not ``.`` or ``..``, at most 249 characters long (Java
``String.length()``: UTF-16 code units) and made of ASCII letters, digits, ``.``, ``_`` and
``-`` only. The broker answers a Metadata request for an illegal name with
INVALID_TOPIC_EXCEPTION instead of UNKNOWN_TOPIC_OR_PARTITION (KafkaApis.getTopicMetadata), and
its CreateTopics refuses one with the same error.
"""

from __future__ import annotations

import re

from coordinator.java import java_string_length

MAX_TOPIC_NAME_LENGTH = 249
_LEGAL = re.compile(r"[a-zA-Z0-9._-]*")


def invalid_topic_reason(name: str) -> str | None:
    """Why ``name`` is not a legal topic name, in Kafka's words (Topic.detectInvalidTopic, with
    Topic.validate's "Topic name is invalid: " prefix), or None for a legal one."""
    if name == "":
        reason = "the empty string is not allowed"
    elif name == ".":
        reason = "'.' is not allowed"
    elif name == "..":
        reason = "'..' is not allowed"
    elif java_string_length(name) > MAX_TOPIC_NAME_LENGTH:
        reason = (
            f"the length of '{name}' is longer than the max allowed length {MAX_TOPIC_NAME_LENGTH}"
        )
    elif _LEGAL.fullmatch(name) is None:
        reason = f"'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    else:
        return None
    return f"Topic name is invalid: {reason}"
