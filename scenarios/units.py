"""Durations and sizes as scenario files write them.

Durations: ``300ms``, ``5s``, ``1.5s``, ``2m``, ``1h``, or a plain integer meaning milliseconds
(Kafka's ``*.ms`` configs are milliseconds, so ``session.timeout.ms: 10000`` reads naturally).
Sizes: ``512``, ``4KiB``, ``1MB``... (bytes). Both return ints and raise ``ValueError`` with a
message that says what was expected.
"""

from __future__ import annotations

import re

_DURATION_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000}
_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
}
_NUMBER_UNIT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def parse_duration_ms(value: object) -> int:
    """``"5s"`` -> 5000; ``250`` -> 250; rejects negatives, bools and unknown units."""
    if isinstance(value, bool) or value is None:
        raise ValueError(f"expected a duration like 300ms, 5s or 2m, got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"a duration cannot be negative, got {value}")
        return value
    if isinstance(value, float):
        raise ValueError(f"a plain number is milliseconds and must be whole, got {value}")
    if not isinstance(value, str):
        raise ValueError(f"expected a duration like 300ms, 5s or 2m, got {value!r}")
    m = _NUMBER_UNIT.match(value)
    if m is None:
        if value.strip().startswith("-"):
            raise ValueError(f"a duration cannot be negative, got {value!r}")
        raise ValueError(f"expected a duration like 300ms, 5s or 2m, got {value!r}")
    number, unit = m.group(1), m.group(2).lower()
    if unit == "":
        unit = "ms"
    if unit not in _DURATION_UNITS:
        raise ValueError(f"unknown duration unit {m.group(2)!r} in {value!r} (use ms, s, m or h)")
    ms = float(number) * _DURATION_UNITS[unit]
    if ms != int(ms):
        raise ValueError(f"{value!r} is not a whole number of milliseconds")
    return int(ms)


def parse_size_bytes(value: object) -> int:
    """``"4KiB"`` -> 4096; ``100`` -> 100."""
    if isinstance(value, bool) or value is None:
        raise ValueError(f"expected a size like 512, 4KiB or 1MB, got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"a size cannot be negative, got {value}")
        return value
    if not isinstance(value, str):
        raise ValueError(f"expected a size like 512, 4KiB or 1MB, got {value!r}")
    m = _NUMBER_UNIT.match(value)
    if m is None or m.group(2).lower() not in _SIZE_UNITS:
        raise ValueError(f"expected a size like 512, 4KiB or 1MB, got {value!r}")
    size = float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()]
    if size != int(size):
        raise ValueError(f"{value!r} is not a whole number of bytes")
    return int(size)


def format_ms(ms: int) -> str:
    """A compact human duration for timelines: ``1500`` -> ``1.500s``."""
    if ms < 1000:
        return f"{ms}ms"
    return f"{ms / 1000:.3f}s"
