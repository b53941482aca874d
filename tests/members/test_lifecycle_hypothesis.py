"""Random member lifecycles against the real coordinator: the consumer never breaks Kafka's rules."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.members.test_integration import all_stable, build, covered

ACTIONS = st.lists(
    st.tuples(
        st.sampled_from(["start", "close", "crash", "restart", "stall", "commit"]),
        st.integers(0, 3),  # which consumer
        st.integers(500, 20_000),  # time until the next action
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(actions=ACTIONS, cooperative=st.booleans(), static=st.booleans())
def test_random_lifecycles_keep_ownership_exclusive_and_settle(
    actions, cooperative, static
) -> None:
    strategy = ("cooperative-sticky",) if cooperative else ("range",)
    loop, cluster, cs = build(
        4,
        strategy=strategy,
        static=static,
        session_timeout_ms=10_000,
        max_poll_interval_ms=15_000,
    )
    for c in cs[:2]:
        loop.start(c.node)
    loop.run_until(5_000)
    for action, index, wait in actions:
        node = f"C{index}"
        c = loop.consumers[node]
        if action == "start" and c.status.value in ("NEW", "CLOSED"):
            loop.start(node)
        elif action == "stall":
            loop.call(node, "stall", wait)
        elif action in ("close", "crash", "restart", "commit"):
            loop.call(node, action)
        loop.run_until(loop.now + wait)  # no_double_ownership runs after every event
    # Quiet period: crashed members expire, stalled ones come back, everything settles.
    loop.run_until(loop.now + 120_000)
    live = [c for c in cs if c.alive]
    assert not [c for c in cs if c.failed], [c.fatal_error for c in cs]
    if live:
        assert all_stable(cluster, cs), [(c.node, c.state, c.generation_id) for c in live]
        assert covered(live)
