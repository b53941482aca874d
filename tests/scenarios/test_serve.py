"""``groupsim serve``'s routes (scenarios/serve.py), called directly and once over a socket."""

from __future__ import annotations

import json
import re
import threading
import urllib.error
import urllib.request
from urllib.parse import urlencode

import pytest
import yaml

from scenarios.loader import load_scenario
from scenarios.runner import run_scenario
from scenarios.serve import App, make_server


@pytest.fixture
def app(tmp_path):
    return App(tmp_path / "forks")


def _data(page: bytes) -> dict:
    m = re.search(rb'id="groupsim-data">(.*?)</script>', page, re.S)
    assert m
    return json.loads(m.group(1))


def test_library_lists_every_lesson_with_view_and_edit_links(app):
    reply = app.handle("GET", "/")
    assert reply.status == 200
    page = reply.body.decode()
    for lesson in ("cooperative-two-rounds", "demo-what-is-a-rebalance", "seed003-range"):
        assert f"href='/view?lesson={lesson}'" in page
        assert f"href='/edit?lesson={lesson}'" in page


def test_view_runs_the_lesson_with_the_seed_asked_for(app):
    default = _data(app.handle("GET", "/view", "lesson=cooperative-two-rounds").body)
    other = _data(app.handle("GET", "/view", "lesson=cooperative-two-rounds&seed=11").body)
    assert default["seed"] == 6 and other["seed"] == 11
    assert other["serve"]["source"] == "lesson=cooperative-two-rounds"
    # the member ids (and so the log) depend on the seed: a different run, same story
    assert default["steps"] != other["steps"]
    assert [c[2] for c in default["group"]] == [c[2] for c in other["group"]]


def test_validate_answers_the_validators_errors_with_lines(app):
    bad = b"version: 1\nname: x\ncluster: {topics: {T1: 2}}\nconsumers: [{id: C1, topics: [T9]}]\n"
    answer = json.loads(app.handle("POST", "/api/validate", body=bad).body)
    assert answer["ok"] is False
    assert {(e["line"], e["path"]) for e in answer["errors"]} >= {(4, "consumers[0]")}
    good = app.handle("GET", "/edit", "lesson=seed003-range").body.decode()
    text = re.search(r"<textarea[^>]*>(.*?)</textarea>", good, re.S).group(1)
    import html

    answer = json.loads(app.handle("POST", "/api/validate", body=html.unescape(text).encode()).body)
    assert answer == {"ok": True, "errors": []}


def test_run_shows_the_editor_again_with_the_errors(app):
    body = urlencode({"yaml": "version: 1\nname: x\nconsumers: [{id: C1}]\n", "seed": ""}).encode()
    reply = app.handle("POST", "/run", body=body)
    assert reply.status == 400
    assert "consumers[0]: a consumer needs a `group`" in reply.body.decode()
    good = "version: 1\nname: ok\ncluster: {topics: {T1: 2}}\nconsumers: [{id: C1, group: g, topics: [T1]}]\ntimeline: [{at: 0s, start: C1}]\n"
    reply = app.handle("POST", "/run", body=urlencode({"yaml": good, "seed": "3"}).encode())
    assert reply.status == 200 and _data(reply.body)["seed"] == 3


def test_fork_writes_a_new_scenario_that_replays_then_diverges(app):
    form = {
        "source": "lesson=cooperative-two-rounds",
        "seed": "6",
        "at_ms": "21014",
        "action": "crash",
        "target": "C2",
    }
    reply = app.handle("POST", "/fork", body=urlencode(form).encode())
    assert reply.status == 303 and reply.location == "/view?file=cooperative-two-rounds-fork-1.yaml"
    path = app.forks / "cooperative-two-rounds-fork-1.yaml"
    data = yaml.safe_load(path.read_text())
    assert data["name"] == "cooperative-two-rounds-fork-1"
    assert data["timeline"][-1] == {"at": "21014ms", "crash": "C2", "note": "fork: crash C2"}
    assert data["description"].startswith("Forked from cooperative-two-rounds at t=21014ms")
    original = run_scenario(load_scenario("cooperative-two-rounds"))
    forked = run_scenario(load_scenario(path))
    # the same run up to the fork (same seed), then C2 crashes
    before = [e for e in original.events if e["t_ms"] < 21014]
    assert forked.events[: len(before)] == before
    assert any(e["event"] == "sim_consumer_crashed" and e["node"] == "C2" for e in forked.events)
    # the page of the fork is served, and a second fork gets the next name
    assert app.handle("GET", "/view", "file=cooperative-two-rounds-fork-1.yaml").status == 200
    again = app.handle("POST", "/fork", body=urlencode(form).encode())
    assert again.location.endswith("fork-2.yaml")


@pytest.mark.parametrize(
    ("action", "target", "value", "expected"),
    [
        ("add_member", "C1", "", {"start": "F1"}),
        ("add_partitions", "T1", "2", {"add_partitions": {"T1": 2}}),
        ("isolate", "C1", "15", {"network": {"isolate": "C1", "for": "15s"}}),
        ("stall", "C3", "40", {"stall": {"C3": "40s"}}),
    ],
)
def test_fork_actions(app, action, target, value, expected):
    form = {"source": "lesson=cooperative-two-rounds", "at_ms": "25000", "action": action}
    reply = app.handle(
        "POST", "/fork", body=urlencode(dict(form, target=target, value=value)).encode()
    )
    assert reply.status == 303, reply.body
    data = yaml.safe_load((app.forks / "cooperative-two-rounds-fork-1.yaml").read_text())
    step = {k: v for k, v in data["timeline"][-1].items() if k not in ("at", "note")}
    assert step == expected
    if action == "add_member":
        assert data["consumers"][-1] == {"id": "F1", "group": "g1", "topics": ["T1"]}
    assert (
        run_scenario(load_scenario(app.forks / "cooperative-two-rounds-fork-1.yaml")).error is None
    )


@pytest.mark.parametrize(
    ("method", "path", "query", "body", "status", "says"),
    [
        ("GET", "/view", "lesson=../../etc/passwd", b"", 400, "no lesson named"),
        ("GET", "/view", "file=../x.yaml", b"", 400, "no fork named"),
        ("GET", "/view", "lesson=seed003-range&seed=x", b"", 400, "not an integer"),
        ("GET", "/nope", "", b"", 404, "no such page"),
        (
            "POST",
            "/fork",
            "",
            b"source=lesson%3Dseed003-range&action=crash&target=ZZ",
            400,
            "not a consumer",
        ),
        (
            "POST",
            "/fork",
            "",
            b"source=lesson%3Dseed003-range&action=explode&target=C0",
            400,
            "unknown action",
        ),
    ],
)
def test_bad_requests_are_answered_not_raised(app, method, path, query, body, status, says):
    reply = app.handle(method, path, query, body)
    assert reply.status == status and says in reply.body.decode()
    assert not app.forks.exists() or not list(app.forks.iterdir())


def test_the_server_answers_on_loopback(app):
    server = make_server(app, "127.0.0.1", 0)
    host, port = server.server_address[:2]
    assert host == "127.0.0.1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with urllib.request.urlopen(f"http://{host}:{port}/", timeout=10) as r:
            assert r.status == 200 and b"cooperative-two-rounds" in r.read()
        req = urllib.request.Request(
            f"http://{host}:{port}/api/validate", data=b"version: 1\n", method="POST"
        )
        with urllib.request.urlopen(req, timeout=10) as r:
            assert json.loads(r.read())["ok"] is False
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"http://{host}:{port}/nope", timeout=10)
        assert err.value.code == 404
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
