"""Measure the ``groupsim html`` page in headless Chromium: page load and time per step.

    python scripts/html_measure.py [SCENARIO]     # default bench/html-200x2000.yaml
    python scripts/html_measure.py bench/html-200x2000-consumer.yaml   # the KIP-848 views

Prints the simulation and page-building times (Python), the file size, the page load (navigation
to the ready page, wall clock, and the viewer's own start-up from performance.now()), and the time
per step forward, back and to a random step, each measured to the next painted frame.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from scenarios.browser import start_browser
from scenarios.html import build_view, render_html, run_for_page
from scenarios.loader import load_scenario

STEP_JS = """
const [kind, count, done] = arguments;
const g = window.groupsim, n = g.steps, mid = Math.floor(n / 2);
const frame = () => new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
(async () => {
  g.seek(mid); await frame();
  const times = [];
  for (let i = 0; i < count; i++) {
    const target = kind === 'forward' ? mid + i + 1 : kind === 'back' ? mid - i - 1
      : (i * 7919) % n;
    const t = performance.now(); g.seek(target); await frame();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  done({median: times[times.length >> 1], max: times[times.length - 1]});
})();
"""


def main(source: str) -> None:
    scenario = load_scenario(source)
    t = time.perf_counter()
    result, snapshots = run_for_page(scenario)  # with the snapshots a KIP-848 page reads
    run_s = time.perf_counter() - t
    t = time.perf_counter()
    view = build_view(scenario, result, snapshots=snapshots)
    page = render_html(view)
    build_s = time.perf_counter() - t
    members, partitions = len(view["members"]), len(view["partitions"])
    print(
        f"{scenario.name}: {members} members, {partitions} partitions, "
        f"{len(result.events)} events, {len(view['steps'])} steps, {len(snapshots)} snapshots"
    )
    print(
        f"simulation {run_s:.1f} s; page data + HTML {build_s:.2f} s; "
        f"file {len(page.encode()) / 1e6:.2f} MB"
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "page.html"
        path.write_text(page, encoding="utf-8")
        browser = start_browser(1400, 1000)
        try:
            browser.set_script_timeout(120)
            loads = []
            for _ in range(3):
                browser.get("about:blank")
                t = time.perf_counter()
                browser.get(path.as_uri())
                wall = time.perf_counter() - t
                loads.append((wall * 1000, browser.execute_script("return window.groupsim.loadMs")))
            best = min(loads)
            print(
                f"load: {best[0]:.0f} ms to a ready page (viewer start-up {best[1]:.0f} ms); "
                f"best of 3"
            )
            for kind in ("forward", "back", "random"):
                r = browser.execute_async_script(STEP_JS, kind, 40)
                print(
                    f"step {kind}: median {r['median']:.1f} ms, max {r['max']:.1f} ms "
                    f"(to the next painted frame, 40 steps)"
                )
        finally:
            browser.quit()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench/html-200x2000.yaml")
