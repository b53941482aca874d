"""The page's KIP-848 and ZooKeeper views in a real browser (headless Chromium): step, seek and
assert the DOM (epochs, the lit consumer-group state, the coordinator's grid column, each
ZooKeeper server's view, the measures) against the run's own data."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest

from scenarios.html import STATUS, build_view, run_for_page, write_html
from scenarios.loader import load_scenario
from tests.browser.test_html_page import _key, _lit, _open, _step, _text

pytestmark = pytest.mark.xdist_group("browser")

KIP848 = "rolling-restart-consumer-protocol"
SPLIT_BRAIN = "seed004-design1-split-brain-retry"


@cache
def _page(name: str, folder: Path) -> tuple[str, dict[str, Any]]:
    scenario = load_scenario(name)
    result, snapshots = run_for_page(scenario)
    path = write_html(scenario, result, folder / f"{name}.html", snapshots=snapshots)
    return path.as_uri(), build_view(scenario, result, snapshots=snapshots)


def _fold(rows: list[list[Any]], step: int) -> dict[int, list[Any]]:
    out: dict[int, list[Any]] = {}
    for row in rows:
        if row[0] > step:
            break
        out[row[1]] = row[2:]
    return out


def _info(rows: list[list[Any]], step: int) -> dict[str, Any]:
    return {r[1]: r[2] for r in rows if r[0] <= step}


def _members(browser: Any) -> dict[str, list[str]]:
    return {
        tr.get_attribute("data-member"): [td.text for td in tr.find_elements("css selector", "td")]
        for tr in browser.find_elements("css selector", "#members tbody tr")
    }


def _grid(browser: Any) -> dict[str, dict[str, str | None]]:
    out = {}
    for row in browser.find_elements("css selector", "#grid tbody tr[data-partition]"):
        now = row.find_element("css selector", "td.now")
        cells = {
            "owner": now.get_attribute("data-owner"),
            "status": now.get_attribute("data-status"),
        }
        coord = row.find_elements("css selector", "td.coord")
        if coord:
            for key in ("assigned", "pending", "target"):
                cells[key] = coord[0].get_attribute(f"data-{key}")
        for zk in row.find_elements("css selector", "td.zk"):
            cells[zk.get_attribute("data-server")] = zk.text
        out[row.get_attribute("data-partition")] = cells
    return out


def test_kip848_states_are_lit_with_their_epochs(browser, pages):
    url, view = _page(KIP848, pages)
    _open(browser, url, step=1)
    assert browser.execute_script("return document.body.getAttribute('data-mode')") == "consumer"
    assert "consumer group (KIP-848)" in _text(browser, "group-title")
    states = [
        g.get_attribute("data-state")
        for g in browser.find_elements("css selector", "#state-machine .state")
    ]
    assert sorted(states) == ["Assigning", "Dead", "Empty", "Reconciling", "Stable"]
    assert {row[2] for row in view["group"]} >= {"Assigning", "Reconciling", "Stable"}
    for step, state_from, state_to, epoch, _cause in view["group"]:
        browser.execute_script(f"groupsim.seek({step})")
        assert _lit(browser) == [state_to]
        assert f"{state_from} → {state_to} (group epoch {epoch}) just now" in _text(
            browser, "transition"
        )
        info = _info(view["info"], step)
        assert _text(browser, "info-group-epoch") == str(info["group epoch"])
        assert _text(browser, "info-target-epoch") == str(info["target epoch"])
    headers = [th.text for th in browser.find_elements("css selector", "#members thead th")]
    assert headers[4:] == [
        "epoch",
        "coordinator epoch",
        "member state",
        "assigned",
        "pending revocation",
    ]


def test_kip848_members_and_grid_follow_steps_and_seeks(browser, pages):
    url, view = _page(KIP848, pages)
    revoking = next(c[0] for c in view["cells"] if STATUS[c[3]] == "revoking")
    unreleased = next(c[0] for c in view["cells"] if STATUS[c[3]] == "unreleased")
    _open(browser, url, step=revoking + 1)
    # step by step from the first revocation through the first unreleased partition, then seek
    # back (the replay restarts) and forward again: the DOM is the data's fold at each step
    forward = range(revoking, min(unreleased + 2, len(view["steps"])))
    targets = [*forward, revoking, unreleased, 3]
    for i, target in enumerate(targets):
        if i and target == targets[i - 1] + 1:
            _key(browser, "right")
        else:
            browser.execute_script(
                "var s = document.getElementById('slider'); s.value = arguments[0];"
                "s.dispatchEvent(new Event('input', {bubbles: true}));",
                target + 1,
            )
        assert _step(browser) == target + 1
        cells = _fold(view["cells"], target)
        coords = _fold(view["coord_cells"], target)
        grid = _grid(browser)
        for p, tp in enumerate(view["partitions"]):
            owner, status = cells.get(p, [-1, 0])
            name = view["members"]
            assert grid[tp]["status"] == STATUS[status], (target, tp)
            assert grid[tp]["owner"] == (name[owner] if owner >= 0 else "")
            a, pending, tgt = coords.get(p, [-1, -1, -1])
            assert grid[tp]["assigned"] == (name[a] if a >= 0 else "")
            assert grid[tp]["pending"] == (name[pending] if pending >= 0 else "")
            assert grid[tp]["target"] == (name[tgt] if tgt >= 0 else "")
        rows = _fold(view["member_rows"], target)
        shown = _members(browser)
        for m, values in rows.items():
            client_state, _in, owned, _leader, epoch, c_epoch, c_state, *_ = values
            assert shown[view["members"][m]][1] == client_state
            assert shown[view["members"][m]][3] == str(owned)
            assert shown[view["members"][m]][4:7] == [str(epoch), str(c_epoch), str(c_state)]
    # the revoking and unreleased statuses were on screen, and counted in the summary
    browser.execute_script(f"groupsim.seek({revoking})")
    assert "revoking:" in _text(browser, "grid-summary")
    assert any(c["status"] == "revoking" for c in _grid(browser).values())
    browser.execute_script(f"groupsim.seek({unreleased})")
    assert any(c["status"] == "unreleased" for c in _grid(browser).values())
    # epoch columns, not generations
    heads = [th.text for th in browser.find_elements("css selector", "#grid thead th")]
    assert heads[:3] == ["partition", "now", "coordinator"]
    assert all(h.startswith("epoch ") for h in heads[3:]) and heads[3:]
    # heartbeats are drawn in the member lanes with their epochs
    labels = [
        t.get_attribute("textContent")
        for t in browser.find_elements("css selector", "#lanes line.arrow title")
    ]
    assert any("ConsumerGroupHeartbeat epoch" in t for t in labels)


def test_zookeeper_servers_views_and_measures(browser, pages):
    url, view = _page(SPLIT_BRAIN, pages)
    conflict = next(i for i, s in enumerate(view["steps"]) if "zk_ownership_conflict" in s[4])
    _open(browser, url, step=conflict + 1)
    assert browser.execute_script("return document.body.getAttribute('data-mode')") == "zookeeper"
    assert not browser.find_element("id", "state-machine").is_displayed()
    lanes = [t.text for t in browser.find_elements("css selector", "#lanes .lane-label")]
    assert lanes[:3] == ["zk-0", "zk-1", "zk-2"] and not any("broker" in n for n in lanes)
    title = _text(browser, "lanes-title")
    assert "ZooKeeper server and consumer" in title and "broker" not in title
    for target in (conflict, conflict + 3, 2, len(view["steps"]) - 1):
        browser.execute_script(f"groupsim.seek({target})")
        rows = _fold(view["zk_rows"], target)
        for tr in browser.find_elements("css selector", "#zk-servers tbody tr"):
            si = view["zk_servers"].index(tr.get_attribute("data-server"))
            zxid, behind, ids, owners = rows[si]
            assert tr.find_element("css selector", ".zxid").text == str(zxid)
            lag = tr.find_element("css selector", ".behind").text
            assert lag == (f"{behind} behind" if behind else "up to date")
            assert ("lagging" in (tr.get_attribute("class") or "")) == (behind > 0)
            assert tr.find_element("css selector", ".ids").text == (", ".join(ids) or "—")
            assert tr.find_element("css selector", ".owners").text == str(owners)
        folded: dict[tuple[int, int], int] = {}  # (partition, server) -> owner
        for at, p, s, o in view["zk_cells"]:
            if at <= target:
                folded[(p, s)] = o
        grid = _grid(browser)
        for (p, s), o in folded.items():
            expect = view["members"][o] if o >= 0 else "—"
            assert grid[view["partitions"][p]][view["zk_servers"][s]] == expect
    # at the conflict, zk-2 is behind the leader and C3's claim was refused: a red arrow
    browser.execute_script(f"groupsim.seek({conflict})")
    assert (
        "behind"
        in browser.find_element("css selector", "#zk-servers tr[data-server='zk-2'] .behind").text
    )
    titles = [
        t.get_attribute("textContent")
        for t in browser.find_elements("css selector", "#lanes line.arrow.k-error title")
    ]
    assert "zk-0 → C3: NodeExists owners/T/4" in titles
    measures = dict(
        zip(
            [dt.text for dt in browser.find_elements("css selector", "#measures dt")],
            [dd.text for dd in browser.find_elements("css selector", "#measures dd")],
            strict=True,
        )
    )
    assert measures == dict(view["measures"])
    assert measures["design"] == "zookeeper" and measures["conflicts"] == "3"


def test_migration_draws_the_machine_of_the_group_type_at_each_step(browser, pages):
    url, view = _page("online-upgrade-and-downgrade", pages)
    at = view["machine_at"]
    assert [m for _, m in at] == ["classic", "consumer", "classic"]
    upgrade, downgrade = at[1][0], at[2][0]
    classic = {"Empty", "PreparingRebalance", "CompletingRebalance", "Stable"}
    consumer = {"Empty", "Assigning", "Reconciling", "Stable"}
    _open(browser, url)
    for step, states, machine in (
        (next(r[0] for r in view["group"] if r[2] == "CompletingRebalance"), classic, "classic"),
        (upgrade + 1, consumer, "consumer"),
        (len(view["steps"]) - 1, classic, "classic"),
    ):
        browser.execute_script(f"groupsim.seek({step})")
        drawn = {
            g.get_attribute("data-state")
            for g in browser.find_elements("css selector", "#state-machine .state")
        }
        assert drawn == set(view["machines"][machine]["states"])
        lit = _lit(browser)
        expect = next(r[2] for r in reversed(view["group"]) if r[0] <= step)
        assert lit == [expect] and expect in states, (step, lit, expect)
    assert 0 < upgrade < downgrade
    # before the upgrade a classic-only state is lit, after it a consumer-group-only one
    first = next(r for r in view["group"] if r[2] == "CompletingRebalance")
    assert first[0] < upgrade
    browser.execute_script(f"groupsim.seek({first[0]})")
    assert _lit(browser) == ["CompletingRebalance"]
    reconciling = next(r for r in view["group"] if r[2] == "Reconciling")
    assert upgrade <= reconciling[0] < downgrade
    browser.execute_script(f"groupsim.seek({reconciling[0]})")
    assert _lit(browser) == ["Reconciling"]
