"""``get_assignor``: short names, Kafka class names, user classes, and helpful errors."""

from __future__ import annotations

import sys
import textwrap

import pytest

from assignors import PartitionAssignor, available_assignors, get_assignor, register_assignor
from assignors.legacy import LegacyRangeAssignor, LegacyRoundRobinAssignor
from assignors.range import RangeAssignor
from assignors.registry import KAFKA_CLASS_NAMES, UnknownAssignorError
from assignors.roundrobin import RoundRobinAssignor


@pytest.mark.parametrize(
    ("name", "cls"),
    [
        ("range", RangeAssignor),
        ("roundrobin", RoundRobinAssignor),
        ("legacy-range", LegacyRangeAssignor),
        ("legacy-roundrobin", LegacyRoundRobinAssignor),
        ("org.apache.kafka.clients.consumer.RangeAssignor", RangeAssignor),
        ("org.apache.kafka.clients.consumer.RoundRobinAssignor", RoundRobinAssignor),
        ("assignors.range:RangeAssignor", RangeAssignor),
        ("  range ", RangeAssignor),
    ],
)
def test_names_resolve(name, cls):
    assignor = get_assignor(name)
    assert type(assignor) is cls
    assert assignor.name == cls.name


def test_each_call_returns_a_fresh_instance():
    assert get_assignor("range") is not get_assignor("range")


def test_options_reach_the_constructor():
    assert get_assignor("range", topic_order="sorted").topic_order == "sorted"
    with pytest.raises(TypeError, match="RoundRobinAssignor"):
        get_assignor("roundrobin", bogus=1)


def test_kafka_class_names_cover_the_four_modern_assignors():
    modern = {v for k, v in KAFKA_CLASS_NAMES.items() if k.startswith("org.apache.kafka")}
    assert modern == {"range", "roundrobin", "sticky", "cooperative-sticky"}


def test_available_assignors_lists_the_six_builtins():
    assert set(available_assignors()) >= {
        "range",
        "roundrobin",
        "sticky",
        "cooperative-sticky",
        "legacy-range",
        "legacy-roundrobin",
    }


def test_unknown_name_lists_what_exists_and_suggests():
    with pytest.raises(UnknownAssignorError) as info:
        get_assignor("rnage")
    message = str(info.value)
    assert "Did you mean 'range'?" in message
    for name in ("range", "roundrobin", "cooperative-sticky", "legacy-roundrobin"):
        assert name in message
    assert isinstance(info.value, ValueError)


def test_kafka_class_name_typo_suggests_the_class():
    with pytest.raises(
        UnknownAssignorError,
        match=r"Did you mean 'org\.apache\.kafka\.clients\.consumer\.RangeAssignor'",
    ):
        get_assignor("org.apache.kafka.clients.consumer.RangeAsignor")


@pytest.mark.parametrize("bad", ["", "   ", None, 3])
def test_empty_or_non_string_names(bad):
    with pytest.raises(UnknownAssignorError):
        get_assignor(bad)


def test_module_class_errors_are_clear():
    with pytest.raises(UnknownAssignorError, match="cannot be imported"):
        get_assignor("no_such_pkg.mod:Thing")
    with pytest.raises(UnknownAssignorError, match="has no 'Nope'"):
        get_assignor("assignors.range:Nope")
    with pytest.raises(UnknownAssignorError, match="not a PartitionAssignor"):
        get_assignor("assignors.api:TopicPartition")
    with pytest.raises(UnknownAssignorError, match=r"expected 'package\.module:ClassName'"):
        get_assignor("assignors.range:")


def test_missing_sticky_module_is_reported_not_raised_raw(monkeypatch):
    """The sticky assignors live in another module; if it cannot be imported, say so clearly."""
    monkeypatch.setitem(sys.modules, "assignors.sticky", None)  # import now fails
    with pytest.raises(UnknownAssignorError, match=r"assignors\.sticky"):
        get_assignor("sticky")


def test_user_class_from_a_module_path(tmp_path, monkeypatch):
    pkg = tmp_path / "userpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "mine.py").write_text(
        textwrap.dedent(
            """
            from assignors import PartitionAssignor

            class Everything(PartitionAssignor):
                name = "everything-to-first"

                def assign(self, cluster, subscriptions):
                    first = sorted(subscriptions)[0]
                    return {m: [] for m in subscriptions} | {first: ["all"]}
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assignor = get_assignor("userpkg.mine:Everything")
    assert assignor.name == "everything-to-first"
    assert assignor.assign({}, {"b": None, "a": None}) == {"a": ["all"], "b": []}


def test_register_assignor(monkeypatch):
    from assignors import registry

    monkeypatch.setattr(registry, "_registered", {})

    @register_assignor
    class Mine(PartitionAssignor):
        name = "mine"

        def assign(self, cluster, subscriptions):
            return {m: [] for m in subscriptions}

    assert "mine" in available_assignors()
    assert type(get_assignor("mine")) is Mine
    with pytest.raises(ValueError, match="built-in"):

        @register_assignor
        class Clash(PartitionAssignor):
            name = "range"

    with pytest.raises(ValueError, match="non-empty"):
        register_assignor(type("Nameless", (PartitionAssignor,), {}))
    with pytest.raises(TypeError):
        register_assignor(int)
