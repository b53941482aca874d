"""Take the docs' screenshots of the ``groupsim html`` page with headless Chromium.

    python scripts/html_screenshots.py [OUT_DIR]      # default docs/img

One whole page and one picture per view, at moments that show what each view is for (the
cooperative lesson's first round, when two partitions are moving or revoked).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from scenarios.browser import start_browser
from scenarios.html import build_view, write_html
from scenarios.loader import load_scenario
from scenarios.runner import run_scenario


def _page(lesson: str, folder: Path) -> tuple[str, dict]:
    scenario = load_scenario(lesson)
    result = run_scenario(scenario)
    path = write_html(scenario, result, folder / f"{lesson}.html")
    return path.as_uri(), build_view(scenario, result)


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
        browser = start_browser(1400, 1150)
        try:
            shots = [
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
