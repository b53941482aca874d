"""Hypothesis strategies for small groups: topics with partition counts, members with subscriptions."""

from __future__ import annotations

from hypothesis import strategies as st

from assignors.api import Subscription

TOPICS = [f"t{i}" for i in range(6)] + ["orders", "ghost"]


@st.composite
def groups(draw, *, max_members: int = 8, statics: bool = True, uniform: bool | None = None):
    """``(counts, subscriptions)``; "ghost" and some others may be missing or have 0 partitions."""
    topic_names = draw(st.lists(st.sampled_from(TOPICS), min_size=1, max_size=6, unique=True))
    counts = {t: draw(st.integers(0, 12)) for t in topic_names if t != "ghost"}
    n = draw(st.integers(1, max_members))
    member_ids = draw(
        st.lists(
            st.text(alphabet="abcC0129-", min_size=1, max_size=4),
            min_size=n,
            max_size=n,
            unique=True,
        )
    )
    is_uniform = draw(st.booleans()) if uniform is None else uniform
    shared = draw(
        st.lists(st.sampled_from(topic_names), min_size=1, max_size=len(topic_names), unique=True)
    )
    subs = {}
    for i, m in enumerate(member_ids):
        topics = shared if is_uniform else draw(st.lists(st.sampled_from(topic_names), max_size=5))
        instance = (
            f"inst-{draw(st.integers(0, 99)):02d}-{i}" if statics and draw(st.booleans()) else None
        )
        subs[m] = Subscription(topics, group_instance_id=instance)
    return counts, subs
