"""Whatever a user writes, loading ends in a Scenario or a ScenarioError with located issues,
never in another exception (the CLI promises exit code 2, not a traceback)."""

from __future__ import annotations

import copy
import pickle

from hypothesis import given, settings
from hypothesis import strategies as st

from scenarios.errors import ScenarioError
from scenarios.loader import load_scenario, load_scenario_dict

BASE = {
    "version": 1,
    "name": "base",
    "cluster": {"brokers": 3, "topics": {"T1": 4}, "config": {"group.max.size": 5}},
    "defaults": {"session.timeout.ms": "10s", "partition.assignment.strategy": ["range"]},
    "consumers": [{"count": 2, "id": "C{i}", "group": "g1", "topics": ["T1"]}],
    "timeline": [
        {"at": "0s", "start": "all"},
        {"at": "5s", "crash": "C1"},
        {"at": "6s", "send": {"api": "JoinGroup", "from": "app", "group_id": "g1"}, "as": "j"},
    ],
    "expect": [{"state": "Stable", "members": ["C0"], "assignment": {"C0": ["T1-0..3"]}}],
}

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-5, max_value=10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=12),
    st.sampled_from(["5s", "-1s", "T1-0", "C0", "all", "range", "$j.member_id", "broker-9", "end"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(max_size=8), inner, max_size=3),
    ),
    max_leaves=8,
)
PATHS = [
    ("version",),
    ("name",),
    ("seed",),
    ("until",),
    ("cluster",),
    ("cluster", "brokers"),
    ("cluster", "topics"),
    ("cluster", "topics", "T1"),
    ("cluster", "config"),
    ("cluster", "network"),
    ("defaults",),
    ("defaults", "session.timeout.ms"),
    ("defaults", "partition.assignment.strategy"),
    ("consumers",),
    ("consumers", 0),
    ("consumers", 0, "count"),
    ("consumers", 0, "topics"),
    ("timeline",),
    ("timeline", 1),
    ("timeline", 1, "at"),
    ("timeline", 2, "send"),
    ("expect",),
    ("expect", 0),
    ("expect", 0, "assignment"),
    ("expect", 0, "members"),
]


@settings(max_examples=50, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.sampled_from(PATHS), values), min_size=1, max_size=3))
def test_mutated_scenarios_load_or_fail_cleanly(mutations):
    data = copy.deepcopy(BASE)
    for path, value in mutations:
        node = data
        for part in path[:-1]:
            node = (
                node[part]
                if isinstance(node, dict)
                or (isinstance(part, int) and isinstance(node, list) and part < len(node))
                else None
            )
            if not isinstance(node, (dict, list)):
                break
        else:
            last = path[-1]
            if isinstance(node, dict) or (
                isinstance(node, list) and isinstance(last, int) and last < len(node)
            ):
                node[last] = value
    try:
        load_scenario_dict(data, source="<fuzz>")
    except ScenarioError as err:
        assert err.issues
        assert not any("internal validation error" in i.message for i in err.issues), err.format()


def test_a_scenario_pickles_for_spark_executors():
    s = load_scenario_dict(copy.deepcopy(BASE) | {"expect": []}, source="<p>")
    again = pickle.loads(pickle.dumps(s))
    assert again == s
    assert [c.id for c in again.consumers] == ["C0", "C1"]


def test_yaml_oddities_are_errors():
    for text in (
        "version: 1\nname: [unclosed\n",
        "version: 1\n? [a, b]\n: 1\n",
        "version: !!python/object:os.system x\n",
    ):
        try:
            load_scenario(text)
        except ScenarioError as err:
            assert err.issues[0].line is not None
        else:  # pragma: no cover
            raise AssertionError(text)
