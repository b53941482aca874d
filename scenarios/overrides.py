"""Dotted-path overrides of a scenario's plain data, for sweeps.

``apply_overrides(data, {"defaults.partition.assignment.strategy": ["sticky"],
"consumers.count": 10, "cluster.topics.T1": 24, "timeline[1].at": "7s"})`` returns a new dict
(the input is not modified). Paths are dotted; list items are ``[i]`` or ``.i``. Kafka config
keys contain dots themselves, so at each mapping the longest existing key wins, and inside a
config mapping (``defaults``, ``cluster.config``, ``consumers[i].config``) the whole rest of the
path is one key. ``consumers.count`` reaches into the single consumer template when
``consumers`` is a list holding exactly one item. The result is validated again by the loader, so
a bad override is reported like a bad file (with the override's path).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

_CONFIG_MAPPINGS = {"defaults", "config"}
_INDEX = re.compile(r"\[(\d+)\]")


def split_path(path: str) -> list[str | int]:
    """``"timeline[1].at"`` -> ``["timeline", 1, "at"]``; numeric segments become indexes."""
    parts: list[str | int] = []
    for raw in _INDEX.sub(r".\1", path).split("."):
        if raw == "":
            raise ValueError(f"empty segment in override path {path!r}")
        parts.append(int(raw) if raw.isdigit() else raw)
    return parts


def apply_overrides(data: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(dict(data))
    for path, value in overrides.items():
        _set(out, split_path(path), copy.deepcopy(value), path)
    return out


def _set(node: Any, parts: list[str | int], value: Any, full: str) -> None:
    parent_key: str | int | None = None
    while True:
        if isinstance(node, list):
            head = parts[0]
            if not isinstance(head, int):
                if len(node) != 1:
                    raise ValueError(
                        f"override {full!r}: {parent_key!r} is a list of {len(node)} items; "
                        "give an index such as [0]"
                    )
                node = node[0]
                continue
            if head >= len(node):
                raise ValueError(
                    f"override {full!r}: index {head} is out of range ({len(node)} items)"
                )
            if len(parts) == 1:
                node[head] = value
                return
            parent_key, node, parts = head, node[head], parts[1:]
            continue
        if not isinstance(node, dict):
            raise ValueError(f"override {full!r}: {parent_key!r} is not a mapping or a list")
        words = [str(p) for p in parts]
        key: str | None = None
        for n in range(len(words), 0, -1):  # the longest existing key wins
            if ".".join(words[:n]) in node:
                key, rest = ".".join(words[:n]), parts[n:]
                break
        if key is None:
            if parent_key in _CONFIG_MAPPINGS:
                key, rest = ".".join(words), []
            else:
                key, rest = words[0], parts[1:]
        if not rest:
            node[key] = value
            return
        if key not in node or node[key] is None:
            node[key] = {}
        parent_key, node, parts = key, node[key], rest
