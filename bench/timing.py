"""CPU time per call as the server-side benches take it on both sides of a same-run comparison.

Java's drivers (tools/server-assignor-bench, tools/target-assignment-bench) time the same way:
after a warm-up, ``BATCHES`` batches each lasting about ``seconds / BATCHES`` (at least 0.1 s), every batch's
process CPU time divided by its calls, and the median batch reported. One batch that meets a JIT
compilation, a full GC or a noisy neighbour then does not decide the number, which a single mean
over the whole budget let happen (stop 20: Java's TargetAssignmentBuilder at 1,000 members read
2.17 ms in one run and 0.87 ms minutes later).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

BATCHES = 5
MAX_CALLS = 100_000
"""Calls per batch at most (the Java drivers use the same bound)."""
MIN_BATCH_SECONDS = 0.1
"""A batch lasts at least this long (as in the Java drivers, whose process CPU clock ticks in
10 ms steps: a shorter batch could read 0 ms)."""


def median_batch_ms(call: Callable[[], object], seconds: float, min_calls: int = 3) -> float:
    """CPU ms per ``call()``: the median over ``BATCHES`` batches of the batch's
    ``time.process_time`` divided by its calls; each batch makes at least ``min_calls`` calls and
    lasts about ``seconds / BATCHES`` by the wall clock, at least ``MIN_BATCH_SECONDS``."""
    if seconds <= 0 or min_calls < 1:
        raise ValueError(f"need seconds > 0 and min_calls >= 1, got {seconds}, {min_calls}")
    means = []
    for _ in range(BATCHES):
        calls = 0
        deadline = time.perf_counter() + max(seconds / BATCHES, MIN_BATCH_SECONDS)
        start = time.process_time()
        while calls < min_calls or (time.perf_counter() < deadline and calls < MAX_CALLS):
            call()
            calls += 1
        means.append((time.process_time() - start) * 1e3 / calls)
    return statistics.median(means)


def ratio_text(ours: float, theirs: float) -> str:
    """``ours / theirs`` to two places, or ``-`` when the peer's time read 0 (below its clock's
    tick): never a division error in the middle of a table."""
    return f"{ours / theirs:.2f}" if theirs > 0 else "-"
