"""ClassicGroupState's table of valid previous states, every row legal and illegal; diagrams."""

import itertools

import pytest

from coordinator.state_machine import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    MACHINE,
    PREPARING_REBALANCE,
    STABLE,
    STATES,
    GroupStateModel,
    IllegalStateTransition,
    attach,
    detach,
    is_valid_transition,
    state_diagram,
)

# Written out independently of the module's table, from ClassicGroupState.
LEGAL = {
    (PREPARING_REBALANCE, EMPTY),
    (STABLE, PREPARING_REBALANCE),
    (COMPLETING_REBALANCE, PREPARING_REBALANCE),
    (EMPTY, PREPARING_REBALANCE),
    (PREPARING_REBALANCE, COMPLETING_REBALANCE),
    (COMPLETING_REBALANCE, STABLE),
    (STABLE, DEAD),
    (PREPARING_REBALANCE, DEAD),
    (COMPLETING_REBALANCE, DEAD),
    (EMPTY, DEAD),
    (DEAD, DEAD),
}
ALL_PAIRS = list(itertools.product(STATES, STATES))


def model_in(state: str) -> GroupStateModel:
    return attach(GroupStateModel("g"), initial=state)


@pytest.mark.parametrize(("source", "target"), sorted(LEGAL))
def test_legal_transition(source, target):
    model = model_in(source)
    try:
        assert model.transition_to(target) == source
        assert model.state == target
        assert model.previous_state == source
    finally:
        detach(model)


@pytest.mark.parametrize(("source", "target"), sorted(set(ALL_PAIRS) - LEGAL))
def test_illegal_transition_raises_and_keeps_state(source, target):
    model = model_in(source)
    try:
        with pytest.raises(IllegalStateTransition):
            model.transition_to(target)
        assert model.state == source
    finally:
        detach(model)


def test_table_helper_matches():
    for source, target in ALL_PAIRS:
        assert is_valid_transition(source, target) == ((source, target) in LEGAL)


def test_named_illegal_examples_from_classic_group_test():
    for source, target in [
        (EMPTY, EMPTY),
        (EMPTY, STABLE),
        (EMPTY, COMPLETING_REBALANCE),
        (PREPARING_REBALANCE, PREPARING_REBALANCE),
        (PREPARING_REBALANCE, STABLE),
        (COMPLETING_REBALANCE, COMPLETING_REBALANCE),
        (STABLE, STABLE),
        (DEAD, EMPTY),
        (DEAD, STABLE),
    ]:
        assert (source, target) not in LEGAL


def test_dead_is_absorbing():
    model = model_in(STABLE)
    model.transition_to(DEAD)
    for target in STATES:
        if target == DEAD:
            model.transition_to(DEAD)
        else:
            with pytest.raises(IllegalStateTransition):
                model.transition_to(target)
    detach(model)


def test_one_shared_machine_for_many_groups():
    before = len(MACHINE.models)
    models = [attach(GroupStateModel(f"g{i}")) for i in range(200)]
    assert len(MACHINE.models) == before  # nothing registered per group
    models[0].transition_to(PREPARING_REBALANCE)
    assert models[1].state == EMPTY  # state is per model
    assert models[0].previous_state == EMPTY


def test_unknown_target_or_initial_state():
    model = GroupStateModel("g")
    with pytest.raises(IllegalStateTransition):
        model.transition_to("Rebalancing")
    with pytest.raises(ValueError):
        GroupStateModel("g", initial="Nope")


def test_mermaid_diagram_lists_every_edge():
    text = state_diagram("mermaid")
    assert text.startswith("stateDiagram-v2")
    edges = {tuple(line.strip().split(" --> ")) for line in text.splitlines()[2:]}
    assert edges == LEGAL
    assert "[*] --> Empty" in text


def test_dot_diagram_lists_every_edge():
    text = state_diagram("dot")
    assert text.startswith("digraph")
    for source, target in LEGAL:
        assert f'"{source}" -> "{target}";' in text
    assert text.count("->") == len(LEGAL)


def test_unknown_diagram_format():
    with pytest.raises(ValueError, match="unknown diagram format"):
        state_diagram("svg")
