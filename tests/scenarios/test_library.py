"""Every lesson of scenarios/library runs green: its expectations are facts about Kafka (see
each lesson's description), so a failure here means the simulator (or the lesson) is wrong."""

from __future__ import annotations

import pytest

from scenarios.loader import library_scenarios, load_scenario
from scenarios.runner import run_scenario

LESSONS = library_scenarios()
SEEDS_COVERED = ("seed000", "seed001", "seed002", "seed003", "seed004")
INCIDENTS = (
    "rolling-restart-dynamic",
    "rolling-restart-static",
    "rolling-restart-cooperative",
    "slow-consumer-max-poll-interval",
    "leader-never-syncs",
    "commit-during-rebalance",
    "range-skew-across-topics",
    "cooperative-two-rounds",
    "static-member-fenced",
    "coordinator-failover-mid-rebalance",
    "initial-rebalance-delay-join-storm",
    # KIP-848 (group.protocol: consumer)
    "rolling-restart-consumer-protocol",
    "duplicate-instance-id-consumer-protocol",
    "slow-reconciliation",
    "scale-out-1-to-10",
    "stale-member-epoch-commit",
    # lessons from real incidents (issue 19), each citing its report
    "incident-kafkajs-rebalance-loop",
    "incident-sarama-handler-outlives-rebalance",
    "incident-static-leave-on-close",
    "incident-cooperative-sticky-minimum",
    "incident-commit-races-cooperative-round",
    "incident-auto-commit-duplicates-eager",
    "incident-max-poll-stuck-consumer",
    "incident-rolling-restart-never-stable",
    "incident-static-fenced-by-own-join",
    "incident-franz-go-commit-retry",
    "incident-cooperative-sticky-librdkafka-1-6",
    # the exactly-once loop (issue 16: sendOffsetsToTransaction at the consumer)
    "exactly-once-zombie-fenced",
)


def test_the_library_covers_every_seed_and_incident():
    names = {p.stem for p in LESSONS}
    for seed in SEEDS_COVERED:
        assert any(n.startswith(seed) for n in names), seed
    for incident in INCIDENTS:
        assert incident in names


@pytest.mark.parametrize(
    "path", [p for p in LESSONS if p.stem.startswith("incident-")], ids=lambda p: p.stem
)
def test_incident_lessons_narrate_and_cite_their_source(path):
    text = load_scenario(path).description
    assert "Source: https://" in text, "an incident lesson links the report it reproduces"
    for part in ("What happened", "Why", "What people get wrong", "The fix"):
        assert part in text, f"an incident lesson says {part!r}"


@pytest.mark.parametrize(
    "path", [p for p in LESSONS if p.stem.startswith("seed")], ids=lambda p: p.stem
)
def test_seed_lessons_say_where_the_article_differs_or_agrees(path):
    assert load_scenario(path).seed_note, "a seed lesson states how the article compares with Kafka"


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_lesson_passes(path):
    scenario = load_scenario(path)
    assert scenario.description, "a lesson explains what to look at"
    assert scenario.expect or any(a.expect for a in scenario.timeline), "a lesson checks something"
    result = run_scenario(scenario)
    assert result.error is None, result.error
    failed = [
        (e.label, [(c.check, c.expected, c.actual) for c in e.checks if not c.passed])
        for e in result.expectations
        if not e.passed
    ]
    assert not failed, failed
    assert result.passed
