"""The ``groupsim html`` page in a real browser (headless Chromium): stepping, seeking, keys,
links to a step, the state machine, the lanes, the owner grid and the callouts, asserted on the
DOM against the run's own data."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from scenarios.html import build_view, write_html
from scenarios.loader import load_scenario
from scenarios.runner import run_scenario

pytestmark = pytest.mark.xdist_group("browser")


@cache
def _lesson(name: str, folder: Path, source: str | None = None) -> tuple[str, dict[str, Any]]:
    scenario = load_scenario(source or name)
    result = run_scenario(scenario)
    path = folder / f"{name}.html"
    write_html(scenario, result, path)
    return path.as_uri(), build_view(scenario, result)


def _open(browser: Any, url: str, step: int | None = None) -> None:
    browser.get("about:blank")  # a new document even when only the #step changes
    browser.get(url + (f"#step={step}" if step else ""))
    assert browser.execute_script("return document.body.getAttribute('data-ready')") == "true"


def _text(browser: Any, element_id: str) -> str:
    return browser.find_element("id", element_id).text


def _step(browser: Any) -> int:
    m = re.match(r"step (\d+) of (\d+), t = ([\d.]+) s", _text(browser, "counter"))
    assert m, _text(browser, "counter")
    return int(m.group(1))


def _key(browser: Any, key: str, shift: bool = False) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    actions = ActionChains(browser)
    if shift:
        actions.key_down(Keys.SHIFT)
    actions.send_keys(
        {
            "right": Keys.ARROW_RIGHT,
            "left": Keys.ARROW_LEFT,
            "home": Keys.HOME,
            "end": Keys.END,
            "space": Keys.SPACE,
            "pgdn": Keys.PAGE_DOWN,
        }[key]
    )
    if shift:
        actions.key_up(Keys.SHIFT)
    actions.perform()


def _lit(browser: Any) -> list[str]:
    return [
        g.get_attribute("data-state")
        for g in browser.find_elements("css selector", "#state-machine .state.lit")
    ]


def _grid_now(browser: Any) -> dict[str, tuple[str, str]]:
    return {
        row.get_attribute("data-partition"): (
            row.find_element("css selector", "td.now").get_attribute("data-owner"),
            row.find_element("css selector", "td.now").get_attribute("data-status"),
        )
        for row in browser.find_elements("css selector", "#grid tbody tr[data-partition]")
    }


def test_buttons_keys_and_the_counter(browser, pages):
    url, view = _lesson("cooperative-two-rounds", pages)
    n = len(view["steps"])
    _open(browser, url)
    assert _text(browser, "counter") == f"step 1 of {n}, t = 0.000 s"
    for _ in range(3):
        browser.find_element("id", "btn-next").click()
    assert _step(browser) == 4
    browser.find_element("id", "btn-prev").click()
    assert _step(browser) == 3
    _key(browser, "right", shift=True)
    assert _step(browser) == 13
    _key(browser, "left")
    assert _step(browser) == 12
    _key(browser, "end")
    t_end = view["steps"][-1][0] / 1000
    assert _text(browser, "counter") == f"step {n} of {n}, t = {t_end:.3f} s"
    _key(browser, "right")  # past the end stays at the end
    assert _step(browser) == n
    _key(browser, "home")
    assert _step(browser) == 1
    # the current step's line is the one lit in the timeline and shown above the views
    _key(browser, "right")
    assert view["steps"][1][4] in _text(browser, "now")
    here = browser.find_element("css selector", "#log li.here")
    assert here.get_attribute("data-step") == "2" and view["steps"][1][4] in here.text


def test_slider_seeks_and_the_url_restores_the_step(browser, pages):
    url = _lesson("cooperative-two-rounds", pages)[0]
    _open(browser, url)
    browser.execute_script(
        "var s = document.getElementById('slider'); s.value = 40;"
        "s.dispatchEvent(new Event('input', {bubbles: true}));"
    )
    assert _step(browser) == 40
    assert browser.execute_script("return location.hash") == "#step=40"
    _open(browser, url, step=77)
    assert _step(browser) == 77
    assert browser.find_element("id", "slider").get_attribute("value") == "77"
    # a link to another moment in the same page (the transition's "at step N")
    browser.execute_script("location.hash = '#step=5'")
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 10, poll_frequency=0.05).until(lambda b: _step(b) == 5)


@pytest.mark.parametrize("lesson", ["cooperative-two-rounds", "demo-what-is-a-rebalance"])
def test_state_machine_lights_the_state_and_the_transition(browser, pages, lesson):
    url, view = _lesson(lesson, pages)
    _open(browser, url, step=1)
    assert _lit(browser) == []
    for step, state_from, state_to, generation, cause in view["group"]:
        browser.execute_script(f"groupsim.seek({step})")
        assert _lit(browser) == [state_to]
        edge = browser.find_elements("css selector", "#state-machine .edge.last")
        assert [(e.get_attribute("data-from"), e.get_attribute("data-to")) for e in edge] == [
            (state_from, state_to)
        ]
        text = _text(browser, "transition")
        assert f"{state_from} → {state_to} (generation {generation}) just now" in text
        assert cause in text
        assert _text(browser, "info-generation") == str(generation)
    # one step later the transition is still shown, now as a link back to its step
    last = view["group"][-1][0]
    if last + 1 < len(view["steps"]):
        browser.execute_script(f"groupsim.seek({last + 1})")
        link = browser.find_element("css selector", "#transition a")
        assert link.text == f"at step {last + 1}"


def test_owner_grid_follows_the_cooperative_rebalance(browser, pages):
    url, view = _lesson("cooperative-two-rounds", pages)
    gen2 = next(g for g in view["generations"] if g[1] == 2)
    moving = {view["partitions"][p] for p, o in enumerate(gen2[2]) if o < 0}
    _open(browser, url, step=gen2[0] + 1)
    now = _grid_now(browser)
    assert {tp for tp, (_, s) in now.items() if s == "moving"} == moving
    assert all(now[tp][0] in ("C1", "C2") for tp in moving)
    assert "moving: 2" in _text(browser, "grid-summary")
    headers = [th.text for th in browser.find_elements("css selector", "#grid thead th")]
    assert headers == ["partition", "now", "gen 1", "gen 2"]
    # the filter keeps only the partitions that are not settled
    from selenium.webdriver.support.select import Select

    Select(browser.find_element("id", "grid-filter")).select_by_value("unsettled")
    assert set(_grid_now(browser)) == moving
    Select(browser.find_element("id", "grid-filter")).select_by_value("all")
    browser.find_element("id", "btn-last").click()
    final = _grid_now(browser)
    assert {final[tp] for tp in moving} == {("C3", "owned")}
    assert {s for _, s in final.values()} == {"owned"}
    rows = browser.find_elements("css selector", "#members tbody tr")
    owns = {
        r.get_attribute("data-member"): r.find_element("css selector", ".owned").text for r in rows
    }
    assert owns == {"C1": "2", "C2": "2", "C3": "2"}


def test_callouts_jump_to_their_step(browser, pages):
    url, view = _lesson("demo-what-is-a-rebalance", pages)
    _open(browser, url)
    items = browser.find_elements("css selector", "#callouts li[data-step]")
    assert len(items) == len(view["callouts"])
    note = next(c for c in view["callouts"] if c["kind"] == "note" and c["step"] > 0)
    item = next(i for i in items if note["text"] in i.text)
    item.find_element("css selector", "button").click()
    assert _step(browser) == note["step"] + 1
    assert _text(browser, "narration") == note["text"]
    assert "here" in item.get_attribute("class")
    expect = next(c for c in view["callouts"] if c["kind"] == "expect")
    _key(browser, "home")
    while _step(browser) < expect["step"] + 1:
        _key(browser, "pgdn")
    assert _step(browser) == expect["step"] + 1
    passed = browser.find_elements("css selector", "#callouts li.c-expect.pass.reached")
    assert passed and "✔" in passed[0].text


def test_lanes_can_be_hidden_and_filtered(browser, pages):
    url, view = _lesson("demo-what-is-a-rebalance", pages)
    _open(browser, url, step=40)

    def labels() -> list[str]:
        return [t.text for t in browser.find_elements("css selector", "#lanes .lane-label")]

    assert labels() == [lane["id"] for lane in view["lanes"]]
    assert _text(browser, "lanes-title").endswith("one lane per broker and member")
    assert browser.find_elements("css selector", "#lanes line.arrow")  # messages are drawn
    browser.find_element("css selector", "#lanes .lane-label[data-lane='C2']").click()
    assert "C2" not in labels()
    restore = browser.find_element("css selector", "#hidden-lanes button[data-lane='C2']")
    restore.click()
    assert "C2" in labels()
    browser.find_element("id", "lane-filter").send_keys("C1, broker-1")
    assert "C1" not in labels() and "broker-1" not in labels() and "C3" in labels()


def test_the_prefix_filter_hides_the_lanes_it_names(browser, pages):
    url, view = _lesson("demo-what-is-a-rebalance", pages)
    _open(browser, url, step=40)
    ids = [lane["id"] for lane in view["lanes"]]
    members = [i for i in ids if i.startswith("C")]
    assert "C1" in members and len(members) > 1
    browser.find_element("id", "lane-filter").send_keys("C1*")
    labels = [t.text for t in browser.find_elements("css selector", "#lanes .lane-label")]
    assert labels == [i for i in ids if not i.startswith("C1")]
    assert all(m in labels for m in members if not m.startswith("C1"))


def test_play_advances_and_pauses(browser, pages):
    url = _lesson("cooperative-two-rounds", pages)[0]
    _open(browser, url)
    from selenium.webdriver.support.select import Select
    from selenium.webdriver.support.ui import WebDriverWait

    Select(browser.find_element("id", "speed")).select_by_value("100")
    browser.find_element("id", "btn-play").click()
    WebDriverWait(browser, 10, poll_frequency=0.05).until(lambda b: _step(b) > 5)
    _key(browser, "space")  # Space pauses (the button gave the focus back)
    assert _text(browser, "btn-play") == "play"
    paused_at = _step(browser)
    browser.execute_script("return new Promise(r => setTimeout(r, 100))")
    assert _step(browser) == paused_at


def test_a_large_grid_is_virtualised(browser, pages):
    source = (
        "version: 1\nname: wide\ncluster: {topics: {T: 300}}\n"
        "defaults: {partition.assignment.strategy: [range]}\n"
        "consumers: [{count: 3, first: 1, id: 'C{i}', group: g, topics: [T]}]\n"
        "timeline: [{at: 0s, start: all}]\nuntil: 10s\n"
    )
    url = _lesson("wide", pages, source)[0]
    _open(browser, url)
    _key(browser, "end")
    rows = _grid_now(browser)
    assert 10 < len(rows) < 100  # only the rows in sight are in the DOM
    assert "owned: 300" in _text(browser, "grid-summary")
    assert rows["T-0"] == ("C1", "owned")
    browser.execute_script(
        "var g = document.getElementById('grid-scroll'); g.scrollTop = 21 * 200;"
    )
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(
        browser, 10, poll_frequency=0.05, ignored_exceptions=(StaleElementReferenceException,)
    ).until(lambda b: "T-200" in _grid_now(b))
    rows = _grid_now(browser)
    assert "T-200" in rows and "T-0" not in rows
    assert rows["T-200"] == ("C3", "owned")  # range: C3 owns the last 100


def test_a_fixture_built_simulations_page_opens_with_its_failure(browser, pages):
    """The pytest plugin's page for a simulation built in Python: it loads, steps, and its last
    callout is the test's failure, which jumps to the last step."""
    from scenarios.html import simulation_view, write_simulation_html
    from scenarios.simulation import Simulation

    sim = Simulation(topics={"orders": 3}, seed=2, check_invariants=True)
    sim.add_consumers(2, group_id="g", topics=["orders"], start=True)
    assert sim.run_until_stable("g")
    failure = "test_x failed: AssertionError: wrong generation"
    path = write_simulation_html(sim, pages / "fixture.html", name="test_x", failure=failure)
    view = simulation_view(sim, name="test_x", failure=failure)
    _open(browser, path.as_uri())
    assert browser.title == "groupsim: test_x"
    lanes = [
        e.get_attribute("data-lane") for e in browser.find_elements("css selector", "[data-lane]")
    ]
    assert {"C1", "C2"} <= set(lanes)
    [item] = [
        i
        for i in browser.find_elements("css selector", "#callouts li[data-step]")
        if failure in i.text
    ]
    item.find_element("css selector", "button").click()
    assert _step(browser) == len(view["steps"])  # the counter is 1-based: the last step
    assert "Stable" in _lit(browser)
