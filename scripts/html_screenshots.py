"""Take the docs' screenshots of the ``groupsim html`` page with headless Chromium.

    python scripts/html_screenshots.py [OUT_DIR]      # default docs/img

One whole page and one picture per view, at moments that show what each view is for (the
cooperative lesson's first round, when two partitions are moving or revoked); then the KIP-848
views (the consumer-protocol rolling restart, while partitions are pending revocation) and seed
004's designs (the ZooKeeper split brain at its first conflict, design 2's JoinGroup).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from scenarios.browser import start_browser
from scenarios.html import STATUS, build_view, run_for_page, write_html
from scenarios.loader import load_scenario


def _page(lesson: str, folder: Path) -> tuple[str, dict]:
    scenario = load_scenario(lesson)
    result, snapshots = run_for_page(scenario)
    path = write_html(scenario, result, folder / f"{lesson}.html", snapshots=snapshots)
    return path.as_uri(), build_view(scenario, result, snapshots=snapshots)


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        coop, view = _page("cooperative-two-rounds", Path(tmp))
        demo, demo_view = _page("demo-what-is-a-rebalance", Path(tmp))
        # the moment C2 revokes in round 1: one partition revoked, one still moving
        revoke = next(
            i
            for i, s in enumerate(view["steps"])
            if "onPartitionsRevoked(T1-" in s[4] and i > view["group"][3][0]
        )
        kip, kip_view = _page("rolling-restart-consumer-protocol", Path(tmp))
        zk, zk_view = _page("seed004-design1-split-brain-retry", Path(tmp))
        d2, d2_view = _page("seed004-design2-herd", Path(tmp))
        # the first moment a partition is pending revocation (its owner still consumes it)
        pending = next(c[0] for c in kip_view["cells"] if STATUS[c[3]] == "revoking")
        conflict = next(
            i for i, s in enumerate(zk_view["steps"]) if "zk_ownership_conflict" in s[4]
        )
        join = next(  # the first JoinGroup response carrying an assignment
            i
            for i, s in enumerate(d2_view["steps"])
            if "JoinGroup response" in s[4] and "NONE" in s[4]
        )
        browser = start_browser(1400, 1150)
        try:
            shots = [
                (kip, pending + 1, None, "html-kip848-page.png"),
                (kip, pending + 1, "group-view", "html-kip848-state.png"),
                (kip, pending + 1, "grid-view", "html-kip848-grid.png"),
                (kip, pending + 1, "members-view", "html-kip848-members.png"),
                (zk, conflict + 2, None, "html-zookeeper-page.png"),
                (zk, conflict + 2, "group-view", "html-zookeeper-servers.png"),
                (zk, conflict + 2, "lanes-view", "html-zookeeper-lanes.png"),
                (zk, conflict + 2, "grid-view", "html-zookeeper-grid.png"),
                (zk, conflict + 2, "measures-view", "html-measures.png"),
                (d2, join + 1, "lanes-view", "html-design2-lanes.png"),
                (coop, revoke + 1, None, "html-page.png"),
                (coop, revoke + 1, "lanes-view", "html-lanes.png"),
                (coop, view["group"][3][0] + 1, "group-view", "html-state-machine.png"),
                (coop, revoke + 1, "grid-view", "html-grid.png"),
                (coop, revoke + 1, "members-view", "html-members.png"),
                (demo, demo_view["callouts"][-2]["step"] + 1, "callouts-view", "html-callouts.png"),
            ]
            for url, step, element, name in shots:  # the static page
                browser.get("about:blank")
                browser.get(f"{url}#step={step}")
                target = out / name
                if element is None:
                    browser.save_screenshot(str(target))
                else:
                    browser.find_element("id", element).screenshot(str(target))
                print(f"wrote {target}")
            _serve_shots(browser, out, Path(tmp) / "forks")
        finally:
            browser.quit()


def _serve_shots(browser, out: Path, forks: Path) -> None:
    """groupsim serve: the editor showing a validation error, and a page with its fork panel."""
    import threading

    from scenarios.serve import App, make_server

    httpd = make_server(App(forks), "127.0.0.1", 0)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    base = "http://{}:{}".format(*httpd.server_address[:2])
    try:
        browser.get(f"{base}/edit?lesson=demo-what-is-a-rebalance")
        box = browser.find_element("id", "yaml")
        text = box.get_attribute("value").replace(
            "session.timeout.ms: 10s", "session.timeout.ms: 10q"
        )
        browser.execute_script("arguments[0].value = arguments[1]", box, text)
        browser.find_element("id", "validate").click()
        browser.execute_script("return new Promise(r => setTimeout(r, 500))")
        browser.save_screenshot(str(out / "serve-editor.png"))
        print(f"wrote {out / 'serve-editor.png'}")
        browser.get(f"{base}/view?lesson=cooperative-two-rounds#step=68")
        shot = out / "serve-fork.png"
        browser.set_window_size(1400, 330)
        browser.save_screenshot(str(shot))
        browser.set_window_size(1400, 1150)
        print(f"wrote {shot}")
    finally:
        httpd.shutdown()
        httpd.server_close()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/img"))
