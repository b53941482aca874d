// groupsim html: the page's viewer. Hand-written, no dependencies, no network.
// It only looks up, per step, values that groupsim computed in Python from the event log
// (scenarios/html.py documents the data); there is no protocol logic here.
(function () {
  'use strict';
  var t0 = performance.now();
  var D = JSON.parse(document.getElementById('groupsim-data').textContent);
  var N = D.steps.length;
  var cur = 0;
  var playing = null;
  var $ = function (id) { return document.getElementById(id); };
  var SVGNS = 'http://www.w3.org/2000/svg';

  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c];
    });
  }
  function fmtT(ms) { return (ms / 1000).toFixed(3) + ' s'; }
  function clamp(s) { return Math.max(0, Math.min(N - 1, s)); }
  // the last row of a step-sorted list at or before step s (-1: none)
  function lastAt(rows, s) {
    var lo = 0, hi = rows.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (rows[mid][0] <= s) lo = mid + 1; else hi = mid; }
    return lo - 1;
  }
  function el(tag, attrs, text) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  var memberColor = function (i) { return i < 0 ? '#fff' : 'hsl(' + ((i * 137.508) % 360).toFixed(1) + ',65%,86%)'; };

  // ---- replay of step-indexed change lists (values were computed by groupsim) ----
  function Replay(rows, reset, apply) { this.rows = rows; this.reset = reset; this.apply = apply; this.i = 0; this.at = -1; reset(); }
  Replay.prototype.seek = function (s) {
    if (s < this.at) { this.reset(); this.i = 0; }
    var rows = this.rows;
    while (this.i < rows.length && rows[this.i][0] <= s) this.apply(rows[this.i++]);
    this.at = s;
  };

  var P = D.partitions.length, M = D.members.length;
  var owner = new Int32Array(P), status = new Int8Array(P);
  var cells = new Replay(D.cells, function () { owner.fill(-1); status.fill(0); },
    function (r) { owner[r[1]] = r[2]; status[r[1]] = r[3]; });
  var mstate = [];
  var members = new Replay(D.member_rows, function () {
    mstate = D.members.map(function () { return { state: '-', inGroup: 0, owned: 0, leader: 0 }; });
  }, function (r) { mstate[r[1]] = { state: r[2], inGroup: r[3], owned: r[4], leader: r[5] }; });
  var info = {};
  var infos = new Replay(D.info, function () { info = {}; }, function (r) { info[r[1]] = r[2]; });

  // ---- header ----
  $('title').textContent = D.scenario;
  $('group-name').textContent = D.group_id || '-';
  var v = $('verdict');
  v.textContent = D.passed ? 'expectations passed' : (D.error ? 'run failed' : 'an expectation FAILED');
  v.className = 'badge ' + (D.passed ? 'pass' : 'fail');
  $('meta').textContent = 'seed ' + D.seed + ' \u00b7 ' + N + ' steps \u00b7 ends at ' + fmtT(D.end_ms) +
    ' \u00b7 ' + D.source + (D.verbose ? ' \u00b7 every event' : '');
  $('description').textContent = D.description || '';
  $('slider').max = String(Math.max(N, 1));

  // ---- state machine (Kafka's ClassicGroupState and its legal transitions) ----
  var SM = { Empty: [70, 60], PreparingRebalance: [210, 60], CompletingRebalance: [350, 60], Stable: [490, 60], Dead: [280, 195] };
  var EDGES = [
    ['Empty', 'PreparingRebalance', 'M 120 55 L 145 55'],
    ['PreparingRebalance', 'CompletingRebalance', 'M 275 55 L 285 55'],
    ['CompletingRebalance', 'Stable', 'M 415 55 L 435 55'],
    ['Stable', 'PreparingRebalance', 'M 490 40 C 490 0, 210 0, 210 38'],
    ['CompletingRebalance', 'PreparingRebalance', 'M 335 82 C 320 110, 240 110, 225 84'],
    ['PreparingRebalance', 'Empty', 'M 190 84 C 170 120, 90 120, 75 84'],
    ['Empty', 'Dead', 'M 70 84 L 222 186'],
    ['PreparingRebalance', 'Dead', 'M 215 84 L 255 176'],
    ['CompletingRebalance', 'Dead', 'M 345 84 L 305 176'],
    ['Stable', 'Dead', 'M 490 84 L 340 186'],
  ];
  (function buildStateMachine() {
    var svg = $('state-machine');
    var defs = el('defs', {});
    ['sm-arrow', 'sm-arrow-last'].forEach(function (id) {
      var m = el('marker', { id: id, viewBox: '0 0 10 10', refX: '9', refY: '5', markerWidth: '9', markerHeight: '9', markerUnits: 'userSpaceOnUse', orient: 'auto-start-reverse' });
      m.appendChild(el('path', { d: 'M 0 0 L 10 5 L 0 10 z' }));
      defs.appendChild(m);
    });
    svg.appendChild(defs);
    EDGES.forEach(function (e) {
      svg.appendChild(el('path', { d: e[2], 'class': 'edge' + (e[1] === 'Dead' ? ' to-dead' : ''), 'data-from': e[0], 'data-to': e[1], 'marker-end': 'url(#sm-arrow)' }));
    });
    Object.keys(SM).forEach(function (name) {
      var xy = SM[name], w = name.length > 12 ? 130 : 100;
      var g = el('g', { 'class': 'state', 'data-state': name });
      g.appendChild(el('rect', { x: xy[0] - w / 2, y: xy[1] - 22, width: w, height: 44, rx: 8 }));
      var words = name.replace('Rebalance', '\u00a0Rebalance').split('\u00a0');
      if (words.length === 2) {
        g.appendChild(el('text', { x: xy[0], y: xy[1] - 7 }, words[0]));
        g.appendChild(el('text', { x: xy[0], y: xy[1] + 9 }, words[1]));
      } else {
        g.appendChild(el('text', { x: xy[0], y: xy[1] }, name));
      }
      svg.appendChild(g);
    });
  })();

  function renderGroup() {
    var i = lastAt(D.group, cur);
    var state = i >= 0 ? D.group[i][2] : null;
    document.querySelectorAll('#state-machine .state').forEach(function (g) {
      g.classList.toggle('lit', g.getAttribute('data-state') === state);
    });
    document.querySelectorAll('#state-machine .edge').forEach(function (p) {
      var last = i >= 0 && p.getAttribute('data-from') === D.group[i][1] && p.getAttribute('data-to') === state;
      p.classList.toggle('last', last);
      p.setAttribute('marker-end', last ? 'url(#sm-arrow-last)' : 'url(#sm-arrow)');
    });
    var tr = $('transition');
    if (i < 0) {
      tr.innerHTML = 'No group yet: the coordinator creates it on the first JoinGroup.';
      tr.removeAttribute('data-state');
    } else {
      var c = D.group[i];
      var when = c[0] === cur ? '<strong>just now</strong>' : '<a href="#step=' + (c[0] + 1) + '">at step ' + (c[0] + 1) + '</a>';
      tr.innerHTML = esc(c[1]) + ' \u2192 <strong>' + esc(c[2]) + '</strong> (generation ' + esc(c[3]) + ') ' + when +
        (c[4] ? ': <span class="cause">' + esc(c[4]) + '</span>' : '');
      tr.setAttribute('data-state', c[2]);
    }
    var dl = $('group-info');
    var inGroup = 0;
    for (var m = 0; m < M; m++) if (mstate[m].inGroup) inGroup++;
    dl.innerHTML = ['generation', 'leader', 'protocol'].map(function (k) {
      return '<dt>' + k + '</dt><dd id="info-' + k + '">' + esc(info[k] === undefined ? '-' : info[k]) + '</dd>';
    }).join('') + '<dt>members</dt><dd id="info-members">' + inGroup + '</dd>';
  }

  // ---- lanes: a space-time diagram of a window of steps around the current one ----
  var LANE_H = 22, COL_W = 22, LABEL_W = 96, TOP = 26, BEFORE = 24, AFTER = 12;
  function fitColumns() {  // as many step columns as the panel is wide, 14 to 26 px each
    var w = $('lanes-scroll').clientWidth || 800;
    COL_W = Math.max(14, Math.min(26, (w - LABEL_W - 24) / (BEFORE + AFTER + 1)));
  }
  window.addEventListener('resize', function () { fitColumns(); renderLanes(); });
  var hidden = {};
  var laneActive = D.lanes.map(function () { return false; });
  $('active-only').checked = D.lanes.length > 24;
  function laneHiddenByFilter(id) {
    var f = $('lane-filter').value.split(',').map(function (s) { return s.trim(); }).filter(Boolean);
    return f.some(function (x) { return id === x || (x.length > 1 && id.indexOf(x) === 0 && x.slice(-1) === '*') || id === x; });
  }
  function renderHidden() {
    var ids = Object.keys(hidden).filter(function (k) { return hidden[k]; });
    $('hidden-lanes').innerHTML = ids.length ? 'hidden: ' + ids.map(function (id) {
      return '<button data-lane="' + esc(id) + '" title="show again">' + esc(id) + ' \u00d7</button>';
    }).join('') : '';
  }
  $('hidden-lanes').addEventListener('click', function (ev) {
    var id = ev.target.getAttribute('data-lane');
    if (id) { hidden[id] = false; renderHidden(); renderLanes(); }
  });
  function arrowStart(ws) {  // first arrow ending at or after ws (arrows are sorted by end)
    var a = D.arrows, lo = 0, hi = a.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (a[mid][3] < ws) lo = mid + 1; else hi = mid; }
    return lo;
  }
  function renderLanes() {
    var svg = $('lanes');
    if (!renderLanes.fitted) { fitColumns(); renderLanes.fitted = true; }
    var ws = Math.max(0, cur - BEFORE), we = Math.min(N - 1, cur + AFTER);
    var onlyActive = $('active-only').checked;
    laneActive.fill(false);
    var s, a, i;
    for (s = ws; s <= we; s++) if (D.steps[s][2] >= 0) laneActive[D.steps[s][2]] = true;
    var a0 = arrowStart(ws);
    for (i = a0; i < D.arrows.length && D.arrows[i][1] <= we + 0.5; i++) { a = D.arrows[i]; laneActive[a[0]] = laneActive[a[2]] = true; }
    var rows = [], y = {};
    D.lanes.forEach(function (lane, li) {
      if (hidden[lane.id] || laneHiddenByFilter(lane.id)) return;
      if (onlyActive && !laneActive[li] && lane.kind !== 'broker') return;
      y[li] = TOP + 12 + rows.length * LANE_H + LANE_H;
      rows.push(li);
    });
    var ySc = TOP + 12;  // the scenario's own row (notes, by-hand steps without a lane)
    var width = LABEL_W + (BEFORE + AFTER + 1) * COL_W + 20;
    var height = TOP + 12 + (rows.length + 1) * LANE_H + 10;
    var x = function (pos) { return LABEL_W + (pos - ws + 0.5) * COL_W; };
    var frag = document.createDocumentFragment();
    frag.appendChild(el('rect', { 'class': 'cur-band', x: x(cur) - COL_W / 2, y: 0, width: COL_W, height: height }));
    for (s = ws; s <= we; s++) {
      if ((s + 1) % 5 === 0 || s === cur) frag.appendChild(el('text', { 'class': 'tick', x: x(s), y: 12, 'text-anchor': 'middle' }, String(s + 1)));
    }
    frag.appendChild(el('text', { x: 4, y: ySc + 4, 'class': 'lane-name' }, 'scenario'));
    frag.appendChild(el('line', { 'class': 'lane-line', x1: LABEL_W, x2: width, y1: ySc, y2: ySc }));
    rows.forEach(function (li) {
      var lane = D.lanes[li];
      frag.appendChild(el('line', { 'class': 'lane-line ' + lane.kind, x1: LABEL_W, x2: width, y1: y[li], y2: y[li], 'data-lane': lane.id }));
      var label = el('text', { 'class': 'lane-label', x: 4, y: y[li] + 4, 'data-lane': lane.id }, lane.id);
      label.appendChild(el('title', {}, 'click to hide ' + lane.id));
      frag.appendChild(label);
    });
    for (i = a0; i < D.arrows.length && D.arrows[i][1] <= we + 0.5; i++) {
      a = D.arrows[i];
      if (y[a[0]] === undefined || y[a[2]] === undefined) continue;
      var cls = 'arrow k-' + a[5] + (a[1] > cur ? ' future' : '');
      var x1 = x(Math.max(a[1], ws - 0.5)), x2 = x(a[3]);
      var line = el('line', { 'class': cls, x1: x1, y1: y[a[0]], x2: x2, y2: y[a[2]], 'marker-end': 'url(#ln-' + a[5] + ')' });
      line.appendChild(el('title', {}, D.lanes[a[0]].id + ' \u2192 ' + D.lanes[a[2]].id + ': ' + a[4]));
      frag.appendChild(line);
      if (Math.abs(a[3] - cur) <= 2 || Math.abs(a[1] - cur) <= 2) {
        frag.appendChild(el('text', { 'class': 'arrow-label' + (a[1] > cur ? ' future' : ''), x: (x1 + x2) / 2 + 3, y: (y[a[0]] + y[a[2]]) / 2 - 2 }, a[4]));
      }
    }
    for (s = ws; s <= we; s++) {
      var st = D.steps[s], ly = st[2] < 0 ? ySc : y[st[2]];
      if (ly === undefined) continue;
      var kind = st[3], fut = s > cur ? ' future' : '', shape;
      if (kind === 'callback') shape = el('circle', { 'class': 'k-callback' + fut, cx: x(s), cy: ly, r: 5 });
      else if (kind === 'client') shape = el('rect', { 'class': 'k-client' + fut, x: x(s) - 4, y: ly - 4, width: 8, height: 8 });
      else if (kind === 'group') shape = el('rect', { 'class': 'k-group' + fut, x: x(s) - 5, y: ly - 5, width: 10, height: 10, transform: 'rotate(45 ' + x(s) + ' ' + ly + ')' });
      else shape = el('circle', { 'class': 'dot k-' + kind + fut, cx: x(s), cy: ly, r: kind === 'request' || kind === 'response' ? 2.5 : 4 });
      shape.appendChild(el('title', {}, 'step ' + (s + 1) + ' (' + fmtT(st[0]) + '): ' + st[4]));
      frag.appendChild(shape);
      var hit = el('rect', { 'class': 'step-hit', x: x(s) - COL_W / 2, y: ly - 8, width: COL_W, height: 16, 'data-step': s + 1 });
      hit.appendChild(el('title', {}, 'step ' + (s + 1) + ' (' + fmtT(st[0]) + '): ' + st[4]));
      frag.appendChild(hit);
    }
    svg.textContent = '';
    var defs = el('defs', {});
    ['request', 'response', 'error'].forEach(function (k) {
      var m = el('marker', { id: 'ln-' + k, viewBox: '0 0 10 10', refX: '9', refY: '5', markerWidth: '6', markerHeight: '6', orient: 'auto-start-reverse', 'class': 'k-' + k });
      m.appendChild(el('path', { d: 'M 0 0 L 10 5 L 0 10 z' }));
      defs.appendChild(m);
    });
    svg.appendChild(defs);
    svg.appendChild(frag);
    svg.setAttribute('width', width);
    svg.setAttribute('height', height);
    svg.setAttribute('data-window', (ws + 1) + '-' + (we + 1));
  }
  $('lanes').addEventListener('click', function (ev) {
    var t = ev.target, lane = t.getAttribute && t.getAttribute('data-lane'), step = t.getAttribute && t.getAttribute('data-step');
    if (lane && t.classList.contains('lane-label')) { hidden[lane] = true; renderHidden(); renderLanes(); }
    else if (step) seek(Number(step) - 1);
  });
  $('lane-filter').addEventListener('input', renderLanes);
  $('active-only').addEventListener('change', renderLanes);

  // ---- partition grid (virtualised rows: only the visible ones are in the DOM) ----
  var ROW_H = 21, MAX_GENS = 10;
  var gridRows = [];
  function visibleGenerations() {
    var k = lastAt(D.generations, cur);
    return D.generations.slice(Math.max(0, k - MAX_GENS + 1), k + 1);
  }
  function renderGrid() {
    var gens = visibleGenerations();
    var head = '<tr><th>partition</th><th>now</th>' + gens.map(function (g) {
      return '<th title="assignment computed at step ' + (g[0] + 1) + '">gen ' + esc(g[1]) + '</th>';
    }).join('') + '</tr>';
    if (renderGrid.head !== head) { $('grid').tHead.innerHTML = head; renderGrid.head = head; }
    var filter = $('grid-filter').value;
    gridRows = [];
    var counts = [0, 0, 0, 0, 0];
    for (var p = 0; p < P; p++) {
      counts[status[p]]++;
      if (filter === 'all' || status[p] !== 1) gridRows.push(p);
    }
    $('grid-summary').innerHTML = D.status_names.map(function (n, i) {
      return '<span class="sum-' + n + '">' + n + ': <b>' + counts[i] + '</b></span>';
    }).join('');
    // the scroll position and height are cached: reading them here would force a layout per step
    var first = Math.max(0, Math.floor(gridScroll.top / ROW_H) - 5);
    var count = Math.ceil((gridScroll.height || 420) / ROW_H) + 10;
    var last = Math.min(gridRows.length, first + count);
    var html = '<tr class="spacer"><td colspan="' + (gens.length + 2) + '" style="height:' + (first * ROW_H) + 'px"></td></tr>';
    for (var r = first; r < last; r++) {
      p = gridRows[r];
      var o = owner[p], sn = D.status_names[status[p]];
      html += '<tr data-partition="' + esc(D.partitions[p]) + '"><th>' + esc(D.partitions[p]) + '</th>' +
        '<td class="now s-' + sn + '" data-owner="' + (o >= 0 ? esc(D.members[o]) : '') + '" data-status="' + sn +
        '" style="background:' + memberColor(o) + '" title="' + sn + '">' + (o >= 0 ? esc(D.members[o]) : '\u2014') +
        (sn === 'owned' || sn === 'unowned' ? '' : ' <small>(' + sn + ')</small>') + '</td>';
      var prev = null;
      for (var g = 0; g < gens.length; g++) {
        var go = gens[g][2][p];
        var moved = prev !== null && go !== prev;
        html += '<td class="' + (moved ? 'moved' : '') + '" style="background:' + memberColor(go) + '">' + (go >= 0 ? esc(D.members[go]) : '\u2014') + '</td>';
        prev = go;
      }
      html += '</tr>';
    }
    html += '<tr class="spacer"><td colspan="' + (gens.length + 2) + '" style="height:' + ((gridRows.length - last) * ROW_H) + 'px"></td></tr>';
    $('grid').tBodies[0].innerHTML = html;
  }
  var gridScroll = { top: 0, height: $('grid-scroll').clientHeight };
  $('grid-scroll').addEventListener('scroll', function () {
    gridScroll.top = this.scrollTop;
    requestAnimationFrame(renderGrid);
  });
  window.addEventListener('resize', function () { gridScroll.height = $('grid-scroll').clientHeight; });
  $('grid-filter').addEventListener('change', renderGrid);

  // ---- members ----
  var memberRows = null, memberShown = [];
  function renderMembers() {  // one row per member, rewritten only when its values changed
    if (!memberRows) {
      var tb = $('members').tBodies[0];
      tb.innerHTML = D.members.map(function (name, m) {
        return '<tr data-member="' + esc(name) + '"><td class="name" style="background:' + memberColor(m) + '">' + esc(name) +
          '</td><td class="state"></td><td class="in-group"></td><td class="owned"></td></tr>';
      }).join('');
      memberRows = Array.prototype.slice.call(tb.rows);
    }
    for (var m = 0; m < M; m++) {
      var st = mstate[m];
      if (memberShown[m] === st) continue;
      memberShown[m] = st;
      var tr = memberRows[m];
      tr.className = st.inGroup ? '' : 'gone';
      tr.cells[0].className = 'name' + (st.leader ? ' leader' : '');
      tr.cells[1].textContent = st.state;
      tr.cells[2].textContent = st.inGroup ? 'yes' : 'no';
      tr.cells[3].textContent = String(st.owned);
    }
  }

  // ---- callouts, narration, timeline ----
  (function buildCallouts() {
    $('callouts').innerHTML = D.callouts.map(function (c, i) {
      var mark = c.kind === 'expect' ? (c.passed ? '\u2714 ' : '\u2718 ') : c.kind === 'violation' ? '\u26a0 ' : '';
      var cls = 'c-' + c.kind + (c.kind === 'expect' ? (c.passed ? ' pass' : ' fail') : '');
      return '<li class="' + cls + '" data-step="' + (c.step + 1) + '" data-index="' + i + '"><button><span class="c-step">step ' + (c.step + 1) +
        '</span>' + mark + esc(c.text) + '</button></li>';
    }).join('') || '<li>No narration, expectations or violations in this run.</li>';
  })();
  $('callouts').addEventListener('click', function (ev) {
    var li = ev.target.closest('li[data-step]');
    if (li) seek(Number(li.getAttribute('data-step')) - 1);
  });
  function renderCallouts() {
    document.querySelectorAll('#callouts li[data-step]').forEach(function (li) {
      var s = Number(li.getAttribute('data-step')) - 1;
      li.classList.toggle('reached', s <= cur);
      li.classList.toggle('here', s === cur);
    });
    var note = null;
    for (var i = 0; i < D.callouts.length && D.callouts[i].step <= cur; i++) if (D.callouts[i].kind === 'note') note = D.callouts[i];
    $('narration').textContent = note ? note.text : '';
  }
  function renderLog() {
    var from = Math.max(0, cur - 8), to = Math.min(N, cur + 9), html = '';
    for (var s = from; s < to; s++) {
      var st = D.steps[s];
      html += '<li data-step="' + (s + 1) + '" class="' + (s === cur ? 'here' : s > cur ? 'after' : '') + '"><span class="t">' + fmtT(st[0]) +
        '</span><span class="k-' + st[3] + '">' + esc(st[4]) + '</span></li>';
    }
    $('log').innerHTML = html;
  }
  $('log').addEventListener('click', function (ev) {
    var li = ev.target.closest('li[data-step]');
    if (li) seek(Number(li.getAttribute('data-step')) - 1);
  });

  // ---- the current step ----
  var timings = {};  // per view, total ms spent rendering (for measurements: groupsim.timings)
  function timed(name, f) { var t = performance.now(); f(); timings[name] = (timings[name] || 0) + performance.now() - t; }
  var hashTimer = null;
  function render() {
    if (!N) { $('counter').textContent = 'no steps'; return; }
    cells.seek(cur); members.seek(cur); infos.seek(cur);
    var st = D.steps[cur];
    $('counter').textContent = 'step ' + (cur + 1) + ' of ' + N + ', t = ' + fmtT(st[0]);
    $('slider').value = String(cur + 1);
    $('now').textContent = fmtT(st[0]) + '  ' + st[4];
    $('now').className = 'now k-' + st[3];
    timed('group', renderGroup); timed('lanes', renderLanes); timed('grid', renderGrid);
    timed('members', renderMembers); timed('callouts', renderCallouts); timed('log', renderLog);
    clearTimeout(hashTimer);
    hashTimer = setTimeout(function () {
      if (location.hash !== '#step=' + (cur + 1)) history.replaceState(null, '', '#step=' + (cur + 1));
    }, playing ? 300 : 0);
  }
  function seek(s) { cur = clamp(s); render(); }
  function stop() { if (playing) { clearInterval(playing); playing = null; } $('btn-play').textContent = 'play'; }
  function play() {
    if (playing) { stop(); return; }
    if (cur >= N - 1) seek(0);
    $('btn-play').textContent = 'pause';
    playing = setInterval(function () { if (cur >= N - 1) stop(); else seek(cur + 1); }, 1000 / Number($('speed').value));
  }
  $('speed').addEventListener('change', function () { if (playing) { stop(); play(); } });
  function callout(dir) {
    var steps = D.callouts.map(function (c) { return c.step; });
    var target = dir > 0 ? steps.find(function (s) { return s > cur; }) : steps.filter(function (s) { return s < cur; }).pop();
    if (target !== undefined) seek(target);
  }
  // a clicked button gives the focus back, so that Space plays instead of clicking it again
  document.querySelectorAll('#controls button').forEach(function (b) {
    b.addEventListener('click', function () { b.blur(); });
  });
  $('btn-first').onclick = function () { seek(0); };
  $('btn-prev').onclick = function () { seek(cur - 1); };
  $('btn-next').onclick = function () { seek(cur + 1); };
  $('btn-last').onclick = function () { seek(N - 1); };
  $('btn-play').onclick = play;
  $('btn-prev-callout').onclick = function () { callout(-1); };
  $('btn-next-callout').onclick = function () { callout(1); };
  $('slider').addEventListener('input', function () { seek(Number($('slider').value) - 1); });
  document.addEventListener('keydown', function (ev) {
    var tag = (ev.target && ev.target.tagName) || '';
    // form fields keep their keys (the slider moves by itself: it seeks through its input event)
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA' || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    var k = ev.key, big = ev.shiftKey ? 10 : 1;
    if (k === 'ArrowRight') seek(cur + big);
    else if (k === 'ArrowLeft') seek(cur - big);
    else if (k === 'Home') seek(0);
    else if (k === 'End') seek(N - 1);
    else if (k === ' ' || k === 'Spacebar') play();
    else if (k === 'PageDown') callout(1);
    else if (k === 'PageUp') callout(-1);
    else return;
    ev.preventDefault();
  });
  function fromHash() {
    var m = /step=(\d+)/.exec(location.hash);
    if (m) { var s = clamp(Number(m[1]) - 1); if (s !== cur || !render.done) { cur = s; render(); render.done = true; } return true; }
    return false;
  }
  window.addEventListener('hashchange', fromHash);
  renderHidden();
  if (!fromHash()) render();
  render.done = true;
  // for tests and measurements: where we are, and how long the page took to start
  window.groupsim = { timings: timings, seek: seek, step: function () { return cur + 1; }, steps: N, loadMs: performance.now() - t0 };
  document.body.setAttribute('data-ready', 'true');
})();
