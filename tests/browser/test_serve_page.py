"""``groupsim serve`` in a real browser: the editor shows the validator's errors, a page reruns
with another seed, and a fork at the current step writes a new scenario and shows its run."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
import yaml

from scenarios.serve import App, make_server

pytestmark = pytest.mark.xdist_group("browser")


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[tuple[str, App]]:
    app = App(tmp_path_factory.mktemp("forks"))
    httpd = make_server(app, "127.0.0.1", 0)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    host, port = httpd.server_address[:2]
    yield f"http://{host}:{port}", app
    httpd.shutdown()
    httpd.server_close()
    thread.join(5)


def test_editor_shows_the_validators_errors(browser, server):
    base, _ = server
    browser.get(f"{base}/edit?lesson=seed003-range")
    box = browser.find_element("id", "yaml")
    text = box.get_attribute("value")
    assert "name: seed003-range" in text
    browser.find_element("id", "validate").click()
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 10).until(lambda b: b.find_element("id", "errors").text == "valid")
    broken = text.replace("group:", "grop:", 1)
    browser.execute_script("arguments[0].value = arguments[1]", box, broken)
    browser.find_element("id", "validate").click()
    WebDriverWait(browser, 10).until(
        lambda b: b.find_elements("css selector", "#errors li[data-line]")
    )
    errors = [li.text for li in browser.find_elements("css selector", "#errors li")]
    line = next(n + 1 for n, row in enumerate(broken.splitlines()) if "grop:" in row)
    assert any(e.startswith(f"line {line}:") for e in errors), errors
    # running the broken text shows the editor again, errors inline
    browser.find_element("id", "run").click()
    WebDriverWait(browser, 20).until(
        lambda b: b.current_url.endswith("/run") and "grop" in b.find_element("id", "errors").text
    )


def test_rerun_with_another_seed_and_fork_at_a_step(browser, server):
    base, app = server
    browser.get(f"{base}/view?lesson=cooperative-two-rounds#step=68")
    assert "step 68 of" in browser.find_element("id", "counter").text
    seed = browser.find_element("css selector", "#rerun input[name=seed]")
    assert seed.get_attribute("value") == "6"
    seed.clear()
    seed.send_keys("9")
    browser.find_element("css selector", "#rerun button").click()
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 20).until(lambda b: "seed=9" in b.current_url)
    WebDriverWait(browser, 20).until(lambda b: "seed 9 ·" in b.find_element("id", "meta").text)
    # fork the original at step 68 (t = 21.014 s): crash C2 there
    browser.get(f"{base}/view?lesson=cooperative-two-rounds#step=68")
    button = browser.find_element("id", "fork-button")
    assert button.text == "fork at t = 21.014 s"
    from selenium.webdriver.support.select import Select

    Select(browser.find_element("id", "fork-action")).select_by_value("crash")
    Select(browser.find_element("id", "fork-target")).select_by_value("C2")
    button.click()
    WebDriverWait(browser, 30).until(lambda b: "fork-1.yaml" in b.current_url)
    assert browser.current_url.startswith(f"{base}/view?file=cooperative-two-rounds-fork-1.yaml")
    WebDriverWait(browser, 20).until(
        lambda b: b.find_element("id", "title").text == "cooperative-two-rounds-fork-1"
    )
    notes = [li.text for li in browser.find_elements("css selector", "#callouts li.c-note")]
    assert any("fork: crash C2" in n for n in notes)
    written = yaml.safe_load((app.forks / "cooperative-two-rounds-fork-1.yaml").read_text())
    assert written["timeline"][-1]["crash"] == "C2"
    assert written["timeline"][-1]["at"] == "21014ms"
