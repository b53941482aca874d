"""``groupsim serve``: a local web app around the html page: the lesson library, a YAML editor
with the validator's errors, rerun with another seed, and fork.

Standard library only (``http.server``), bound to 127.0.0.1 by default. ``App.handle`` is a plain
function of (method, path, query, body) -> ``Reply``, so the routes are tested without a socket;
``serve()`` puts it behind a ``ThreadingHTTPServer``. Routes:

* ``GET /``: the library (every lesson, and the forks written so far);
* ``GET /view?lesson=NAME`` (or ``file=FORK.yaml``) ``&seed=N``: run it, show the page, with a
  panel to rerun with another seed, edit, or fork;
* ``GET /edit?lesson=NAME``: the YAML in an editor; ``POST /api/validate`` (the YAML as the body)
  answers the validator's errors as JSON (line, column, field, message, hint); ``POST /run``
  (form: ``yaml``, ``seed``) shows the run, or the editor with the errors;
* ``POST /fork`` (form: ``source``, ``seed``, ``at_ms``, ``action``, ``target``, ``value``): the
  scenario plus one timeline step at that time (crash, close or restart a member, stall it, cut
  it off the network, add a member, add partitions), written as a new scenario file in the forks
  folder, then shown.

A fork is a new scenario that replays the original deterministically up to the chosen instant and
then does something else: the simulator has no snapshots to resume from, and needs none.
"""

from __future__ import annotations

import html as htmlmod
import json
import re
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import parse_qs, quote, urlsplit

import typer
import yaml
from attrs import frozen

from scenarios.errors import Issue, ScenarioError

FORK_ACTIONS = (
    "crash",
    "close",
    "restart",
    "stall",
    "isolate",
    "add_member",
    "add_partitions",
)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@frozen
class Reply:
    status: int
    content_type: str
    body: bytes
    location: str | None = None


def _page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{htmlmod.escape(title)}</title><style>{_STYLE}</style></head>"
        f"<body>{body}</body></html>"
    )


_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1rem 2rem; color: #1d232b; background: #fbfbf8; }
h1 { font-size: 1.3rem; } table { border-collapse: collapse; } td, th { padding: .2rem .6rem;
border-bottom: 1px solid #e5e7eb; text-align: left; vertical-align: top; } a { color: #1d4ed8; }
textarea { width: 100%; height: 32rem; font: 13px/1.4 ui-monospace, monospace; }
#errors li { color: #991b1b; cursor: pointer; font-family: ui-monospace, monospace; }
#errors.ok { color: #065f46; } .bar { display: flex; gap: .6rem; align-items: center; margin: .5rem 0; }
"""


class App:
    """The routes of ``groupsim serve``; ``forks`` is where forked scenarios are written."""

    def __init__(self, forks: Path):
        self.forks = forks
        self._lock = threading.Lock()

    # -- dispatch -------------------------------------------------------------------------

    def handle(self, method: str, path: str, query: str = "", body: bytes = b"") -> Reply:
        params = {k: v[-1] for k, v in parse_qs(query, keep_blank_values=True).items()}
        text = body.decode("utf-8", errors="replace")
        form = {k: v[-1] for k, v in parse_qs(text, keep_blank_values=True).items()}
        routes = {
            ("GET", "/"): lambda: self.library(),
            ("GET", "/view"): lambda: self.view(params),
            ("GET", "/edit"): lambda: self.edit(params),
            ("POST", "/api/validate"): lambda: self.validate(text),
            ("POST", "/run"): lambda: self.run(form),
            ("POST", "/fork"): lambda: self.fork(form),
        }
        route = routes.get((method, path))
        if route is None:
            return _text(HTTPStatus.NOT_FOUND, f"no such page: {method} {path}")
        try:
            return route()
        except ScenarioError as err:
            return _text(HTTPStatus.BAD_REQUEST, err.format())
        except ValueError as err:
            return _text(HTTPStatus.BAD_REQUEST, str(err))

    # -- sources --------------------------------------------------------------------------

    def _source(self, params: dict[str, str]) -> tuple[str, str]:
        """(label for links, YAML text) of ``lesson=NAME`` or ``file=NAME.yaml`` (a fork)."""
        from scenarios.loader import library_path

        if params.get("lesson"):
            name = params["lesson"]
            path = library_path() / f"{name}.yaml"
            if not _NAME.match(name) or not path.is_file():
                raise ValueError(f"no lesson named {name!r}")
            return f"lesson={quote(name)}", path.read_text(encoding="utf-8")
        if params.get("file"):
            name = params["file"]
            path = self.forks / name
            if not _NAME.match(name) or not name.endswith(".yaml") or not path.is_file():
                raise ValueError(f"no fork named {name!r} in {self.forks}")
            return f"file={quote(name)}", path.read_text(encoding="utf-8")
        raise ValueError("say which scenario: ?lesson=NAME or ?file=FORK.yaml")

    # -- pages ----------------------------------------------------------------------------

    def library(self) -> Reply:
        from scenarios.cli_tools import first_sentence
        from scenarios.loader import library_scenarios, load_scenario

        rows = []
        for path in library_scenarios():
            try:
                about = first_sentence(load_scenario(path).description)
            except ScenarioError:
                about = "(invalid)"
            rows.append(_row(f"lesson={quote(path.stem)}", path.stem, about))
        forks = sorted(self.forks.glob("*.yaml")) if self.forks.is_dir() else []
        fork_rows = [_row(f"file={quote(p.name)}", p.stem, "") for p in forks]
        body = (
            "<h1>groupsim: the lesson library</h1><p>Open a lesson to step through it, edit it, "
            "rerun it with another seed, or fork it at any step.</p>"
            f"<table id='lessons'><tr><th>lesson</th><th>what it shows</th><th></th></tr>"
            f"{''.join(rows)}</table>"
            + (
                f"<h2>Forks (in {htmlmod.escape(str(self.forks))})</h2>"
                f"<table id='forks'>{''.join(fork_rows)}</table>"
                if fork_rows
                else ""
            )
        )
        return _html(_page("groupsim: lessons", body))

    def view(self, params: dict[str, str]) -> Reply:
        source, text = self._source(params)
        seed = _seed(params.get("seed"))
        return self._show(text, seed, source)

    def _show(self, text: str, seed: int | None, source: str | None) -> Reply:
        from scenarios.html import build_view, render_html, run_for_page
        from scenarios.loader import load_scenario

        scenario = load_scenario(text)
        result, snapshots = run_for_page(scenario, seed=seed)
        view = build_view(scenario, result, snapshots=snapshots)
        view["source"] = source.replace("=", " ", 1) if source else "edited text"
        view["serve"] = {
            "source": source,
            "seed": result.seed,
            "actions": list(FORK_ACTIONS),
            "topics": sorted({t.name for t in scenario.cluster.topics}),
        }
        return _html(render_html(view))

    def edit(self, params: dict[str, str]) -> Reply:
        source, text = self._source(params)
        return _html(self._editor(text, source, []))

    def _editor(self, text: str, source: str | None, issues: list[Issue]) -> str:
        errors = "".join(_issue_li(i) for i in issues)
        back = f" · <a href='/view?{source}'>view the original</a>" if source else ""
        body = f"""<h1>groupsim: edit a scenario</h1>
<p><a href='/'>library</a>{back} · the format: docs/scenarios.md</p>
<form method='post' action='/run' id='editor'>
<textarea name='yaml' id='yaml' spellcheck='false'>{htmlmod.escape(text)}</textarea>
<div class='bar'><button type='button' id='validate'>validate</button>
<label>seed <input name='seed' id='seed' type='number' placeholder='the file\u2019s'></label>
<button type='submit' id='run'>run</button></div></form>
<ol id='errors'>{errors}</ol>
<script>{_EDITOR_JS}</script>"""
        return _page("groupsim: edit", body)

    # -- actions --------------------------------------------------------------------------

    def validate(self, text: str) -> Reply:
        from scenarios.loader import load_scenario

        try:
            load_scenario(text if "\n" in text else text + "\n")
        except ScenarioError as err:
            return _json({"ok": False, "errors": [i.as_dict() for i in err.issues]})
        return _json({"ok": True, "errors": []})

    def run(self, form: dict[str, str]) -> Reply:
        from scenarios.loader import load_scenario

        text = form.get("yaml", "")
        try:
            load_scenario(text if "\n" in text else text + "\n")
        except ScenarioError as err:
            page = self._editor(text, None, err.issues)
            return Reply(HTTPStatus.BAD_REQUEST, "text/html; charset=utf-8", page.encode())
        return self._show(text if "\n" in text else text + "\n", _seed(form.get("seed")), None)

    def fork(self, form: dict[str, str]) -> Reply:
        from scenarios.loader import load_scenario

        source = form.get("source", "")
        params = {k: v[-1] for k, v in parse_qs(source).items()}
        _, text = self._source(params)
        scenario = load_scenario(text)
        data = yaml.safe_load(text)
        at_ms = int(form.get("at_ms") or 0)
        action, target, value = form.get("action", ""), form.get("target", ""), form.get("value")
        step, what = _fork_step(scenario, data, action, target, value)
        step = {"at": f"{at_ms}ms", **step, "note": f"fork: {what}"}
        data.setdefault("timeline", []).append(step)
        with self._lock:
            self.forks.mkdir(parents=True, exist_ok=True)
            k = 1
            while (self.forks / f"{scenario.name}-fork-{k}.yaml").exists():
                k += 1
            name = f"{scenario.name}-fork-{k}"
            data["name"] = name
            data["description"] = (
                f"Forked from {scenario.name} at t={at_ms}ms: {what}.\n\n"
                + str(data.get("description") or "")
            ).rstrip() + "\n"
            if form.get("seed"):
                data["seed"] = _seed(form["seed"])
            new_text = yaml.dump(
                data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100
            )
            load_scenario(new_text)  # the fork must be a valid scenario before it is written
            (self.forks / f"{name}.yaml").write_text(new_text, encoding="utf-8")
        target_url = f"/view?file={quote(name)}.yaml"
        return Reply(HTTPStatus.SEE_OTHER, "text/plain; charset=utf-8", b"", location=target_url)


class _Dumper(yaml.SafeDumper):
    """Writes multi-line strings (descriptions) as YAML block scalars, as people write them."""


_Dumper.add_representer(
    str,
    lambda dumper, text: dumper.represent_scalar(
        "tag:yaml.org,2002:str", text, style="|" if "\n" in text else None
    ),
)


def _fork_step(
    scenario: Any, data: dict[str, Any], action: str, target: str, value: str | None
) -> tuple[dict[str, Any], str]:
    """The timeline step a fork adds (and, for a new member, its consumer entry)."""
    members = {c.id for c in scenario.consumers}
    if action in ("crash", "close", "restart", "stall", "isolate") and target not in members:
        raise ValueError(f"fork: {target!r} is not a consumer of this scenario")
    seconds = value.strip() if value and value.strip() else "30"
    if not re.fullmatch(r"\d+(\.\d+)?", seconds):
        raise ValueError(f"fork: {value!r} is not a number of seconds")
    if action in ("crash", "close", "restart"):
        return {action: target}, f"{action} {target}"
    if action == "stall":
        return {"stall": {target: f"{seconds}s"}}, f"{target} stalls for {seconds}s"
    if action == "isolate":
        return (
            {"network": {"isolate": target, "for": f"{seconds}s"}},
            f"{target} is cut off for {seconds}s",
        )
    if action == "add_member":
        like = next((c for c in scenario.consumers if c.id == target), None) or (
            scenario.consumers[0] if scenario.consumers else None
        )
        if like is None:
            raise ValueError("fork: no consumer to copy the new member from")
        k = 1
        while f"F{k}" in members:
            k += 1
        new = {"id": f"F{k}", "group": like.group}
        new.update({"pattern": like.pattern} if like.pattern else {"topics": list(like.topics)})
        data.setdefault("consumers", []).append(new)
        return {"start": f"F{k}"}, f"a new member F{k} joins {like.group}"
    if action == "add_partitions":
        topics = {t.name for t in scenario.cluster.topics}
        if target not in topics:
            raise ValueError(f"fork: {target!r} is not a topic of this scenario")
        count = int(float(seconds))
        return {"add_partitions": {target: count}}, f"{count} partitions added to {target}"
    raise ValueError(f"fork: unknown action {action!r} (one of {', '.join(FORK_ACTIONS)})")


def _seed(value: str | None) -> int | None:
    if value is None or value.strip() == "":
        return None
    if not re.fullmatch(r"-?\d+", value.strip()):
        raise ValueError(f"seed {value!r} is not an integer")
    return int(value)


def _row(query: str, name: str, about: str) -> str:
    return (
        f"<tr data-name='{htmlmod.escape(name)}'><td><a href='/view?{query}'>"
        f"{htmlmod.escape(name)}</a></td><td>{htmlmod.escape(about)}</td>"
        f"<td><a href='/edit?{query}'>edit</a></td></tr>"
    )


def _issue_li(issue: Issue) -> str:
    return f"<li data-line='{issue.line or ''}'>{htmlmod.escape(issue.format())}</li>"


def _html(text: str) -> Reply:
    return Reply(HTTPStatus.OK, "text/html; charset=utf-8", text.encode("utf-8"))


def _json(value: Any) -> Reply:
    return Reply(HTTPStatus.OK, "application/json", json.dumps(value).encode("utf-8"))


def _text(status: int, text: str) -> Reply:
    return Reply(status, "text/plain; charset=utf-8", text.encode("utf-8"))


_EDITOR_JS = """
(function () {
  var box = document.getElementById('yaml'), list = document.getElementById('errors');
  function show(errors) {
    list.className = errors.length ? '' : 'ok';
    list.innerHTML = '';
    if (!errors.length) { list.textContent = 'valid'; return; }
    errors.forEach(function (e) {
      var li = document.createElement('li');
      li.setAttribute('data-line', e.line || '');
      li.textContent = (e.line ? 'line ' + e.line + ':' + e.column + ': ' : '') +
        (e.path ? e.path + ': ' : '') + e.message + (e.hint ? ' (' + e.hint + ')' : '');
      list.appendChild(li);
    });
  }
  list.addEventListener('click', function (ev) {  // select the line the error is on
    var line = Number(ev.target.getAttribute('data-line'));
    if (!line) return;
    var lines = box.value.split('\\n'), start = 0;
    for (var i = 0; i < line - 1; i++) start += lines[i].length + 1;
    box.focus(); box.setSelectionRange(start, start + (lines[line - 1] || '').length);
  });
  document.getElementById('validate').addEventListener('click', function () {
    fetch('/api/validate', {method: 'POST', body: box.value}).then(function (r) { return r.json(); })
      .then(function (d) { show(d.errors); });
  });
})();
"""


class _Handler(BaseHTTPRequestHandler):
    app: App

    def _reply(self, method: str) -> None:
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        reply = self.app.handle(method, url.path, url.query, body)
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(reply.body)))
        if reply.location:
            self.send_header("Location", reply.location)
        self.end_headers()
        self.wfile.write(reply.body)

    def do_GET(self) -> None:
        self._reply("GET")

    def do_POST(self) -> None:
        self._reply("POST")

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the console stays readable
        return


def make_server(app: App, host: str = "127.0.0.1", port: int = 8019) -> ThreadingHTTPServer:
    """A server for ``app`` (port 0: any free port; ``server.server_address`` says which)."""
    handler = type("Handler", (_Handler,), {"app": app})
    return ThreadingHTTPServer((host, port), handler)


def serve(
    host: Annotated[str, typer.Option("--host", help="The address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="The port (0: any free one).")] = 8019,
    forks: Annotated[
        Path, typer.Option("--forks", help="Where forked scenarios are written.")
    ] = Path("groupsim-forks"),
) -> None:
    """A local web app: the lesson library, a YAML editor with the validator's errors, rerun
    with another seed, and fork a run at any step (a new scenario file in --forks).

    Bound to 127.0.0.1 unless --host says otherwise. Ctrl-C stops it.

    Example: groupsim serve --port 8019
    """
    from scenarios.console import console

    server = make_server(App(forks), host, port)
    address, port = server.server_address[:2]
    host = address.decode() if isinstance(address, (bytes, bytearray)) else address
    console().print(f"groupsim serve: http://{host}:{port}/  (Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def register(app: typer.Typer) -> None:
    app.command()(serve)
