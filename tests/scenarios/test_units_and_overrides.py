from __future__ import annotations

import pytest

from scenarios.overrides import apply_overrides, split_path
from scenarios.units import parse_duration_ms, parse_size_bytes


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("300ms", 300),
        ("5s", 5000),
        ("1.5s", 1500),
        ("2m", 120_000),
        ("1h", 3_600_000),
        (250, 250),
        ("42", 42),
    ],
)
def test_durations(text, ms):
    assert parse_duration_ms(text) == ms


@pytest.mark.parametrize("bad", ["5x", "-1s", "1.5", 1.5, True, None, "s", "0.0001s", -3])
def test_bad_durations_say_what_is_expected(bad):
    with pytest.raises(ValueError):
        parse_duration_ms(bad)


def test_sizes():
    assert parse_size_bytes("4KiB") == 4096
    assert parse_size_bytes("1MB") == 1_000_000
    assert parse_size_bytes(512) == 512
    with pytest.raises(ValueError):
        parse_size_bytes("4XB")


def test_split_path():
    assert split_path("timeline[1].at") == ["timeline", 1, "at"]
    assert split_path("consumers.0.id") == ["consumers", 0, "id"]


def test_overrides_reach_dotted_config_keys_and_templates():
    data = {
        "defaults": {"session.timeout.ms": 10000},
        "consumers": [{"count": 3, "id": "C{i}", "group": "g", "topics": ["T"]}],
        "cluster": {"topics": {"T": 4}},
        "timeline": [{"at": "0s", "start": "all"}],
    }
    out = apply_overrides(
        data,
        {
            "defaults.partition.assignment.strategy": ["sticky"],
            "defaults.session.timeout.ms": 20000,
            "consumers.count": 10,
            "cluster.topics.T": 24,
            "timeline[0].at": "1s",
        },
    )
    assert out["defaults"] == {
        "session.timeout.ms": 20000,
        "partition.assignment.strategy": ["sticky"],
    }
    assert out["consumers"][0]["count"] == 10
    assert out["cluster"]["topics"]["T"] == 24
    assert out["timeline"][0]["at"] == "1s"
    assert data["consumers"][0]["count"] == 3, "the input is not modified"


def test_override_errors_are_clear():
    with pytest.raises(ValueError, match="out of range"):
        apply_overrides({"timeline": []}, {"timeline[3].at": "1s"})
    with pytest.raises(ValueError, match="give an index"):
        apply_overrides({"consumers": [{}, {}]}, {"consumers.count": 2})
