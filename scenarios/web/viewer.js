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
  }, function (r) { mstate[r[1]] = { state: r[2], inGroup: r[3], owned: r[4], leader: r[5], more: r.slice(6) }; });
  var info = {};
  var infos = new Replay(D.info, function () { info = {}; }, function (r) { info[r[1]] = r[2]; });
  var MODE = D.mode || 'classic', S = (D.status_names || []).length;
  // KIP-848: per partition, the coordinator's member it is assigned to, pending revocation from, and
  // its target owner (snapshots taken by groupsim while the run played)
  var cAssigned = new Int32Array(P), cPending = new Int32Array(P), cTarget = new Int32Array(P);
  var coordCells = new Replay(D.coord_cells || [], function () { cAssigned.fill(-1); cPending.fill(-1); cTarget.fill(-1); },
    function (r) { cAssigned[r[1]] = r[2]; cPending[r[1]] = r[3]; cTarget[r[1]] = r[4]; });
  // ZooKeeper: each server's view (applied zxid, how far behind the leader, registry, owner znodes)
  var ZS = (D.zk_servers || []).length;
  var zkOwner = new Int32Array(Math.max(1, P * ZS)), zkRow = [];
  var zkCells = new Replay(D.zk_cells || [], function () { zkOwner.fill(-1); }, function (r) { zkOwner[r[1] * ZS + r[2]] = r[3]; });
  var zkRows = new Replay(D.zk_rows || [], function () { zkRow = (D.zk_servers || []).map(function () { return null; }); },
    function (r) { zkRow[r[1]] = r.slice(2); });

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
  // the states and their legal transitions come with the data (groupsim's, per kind of group)
  var SM = D.machine ? D.machine.states : {}, EDGES = D.machine ? D.machine.edges : [];
  document.body.setAttribute('data-mode', MODE);
  if (MODE === 'consumer') {
    $('group-what').textContent = 'consumer group (KIP-848) state';
    $('grid-title').textContent = 'Partitions: owner now, the coordinator\u2019s view, and the target assignment of each epoch';
  } else if (MODE === 'zookeeper') {
    $('group-what').textContent = 'no coordinator; the ZooKeeper servers\u2019 views';
    $('lanes-title').textContent = 'Messages and callbacks, one lane per ZooKeeper server and consumer';
    $('grid-title').textContent = 'Partitions: who fetches now, the owner znode on each ZooKeeper server, and the assignment each consumer computed (per try)';
  } else if (MODE === 'coordinator-assigns') {
    $('group-what').textContent = 'state machine (the coordinator assigns)';
    $('grid-title').textContent = 'Partitions: owner now and the assignment the coordinator computed each generation';
  }
  // a group that changes type mid-run (online upgrade / downgrade) draws, at each step, the
  // machine the data names for it (machine_at); otherwise the one machine of the mode
  var drawnMachine = null;
  function machineAt(s) {
    var rows = D.machine_at || [], i = lastAt(rows, s);
    return i >= 0 ? rows[i][1] : null;
  }
  function buildStateMachine(name) {
    var m = name ? D.machines[name] : D.machine;
    SM = m ? m.states : {}; EDGES = m ? m.edges : [];
    drawnMachine = name;
    var svg = $('state-machine');
    while (svg.firstChild) svg.removeChild(svg.firstChild);
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
  }
  buildStateMachine(machineAt(0));

  function renderGroup() {
    if (machineAt(cur) !== drawnMachine) buildStateMachine(machineAt(cur));
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
    if (MODE === 'zookeeper') {
      tr.innerHTML = 'No coordinator: each consumer rebalances itself when a ZooKeeper watch fires.';
      tr.removeAttribute('data-state');
    } else if (i < 0) {
      tr.innerHTML = MODE === 'consumer' ? 'No group yet: the coordinator creates it on the first ConsumerGroupHeartbeat.' :
        'No group yet: the coordinator creates it on the first JoinGroup.';
      tr.removeAttribute('data-state');
    } else {
      var c = D.group[i];
      var when = c[0] === cur ? '<strong>just now</strong>' : '<a href="#step=' + (c[0] + 1) + '">at step ' + (c[0] + 1) + '</a>';
      tr.innerHTML = esc(c[1]) + ' \u2192 <strong>' + esc(c[2]) + '</strong> (' + (MODE === 'consumer' ? 'group epoch ' : 'generation ') + esc(c[3]) + ') ' + when +
        (c[4] ? ': <span class="cause">' + esc(c[4]) + '</span>' : '');
      tr.setAttribute('data-state', c[2]);
    }
    var dl = $('group-info');
    var inGroup = 0;
    for (var m = 0; m < M; m++) if (mstate[m].inGroup) inGroup++;
    dl.innerHTML = (D.info_keys || ['generation', 'leader', 'protocol']).map(function (k) {
      return '<dt>' + k + '</dt><dd id="info-' + k.replace(/ /g, '-') + '">' + esc(info[k] === undefined ? '-' : info[k]) + '</dd>';
    }).join('') + '<dt>' + (MODE === 'zookeeper' ? 'consumers' : 'members') + '</dt><dd id="info-members">' + inGroup + '</dd>';
    if (MODE === 'zookeeper') renderZk();
  }
  function renderZk() {  // one row per ZooKeeper server: what it has applied, and what it shows
    var tb = $('zk-servers').tBodies[0], html = '';
    (D.zk_servers || []).forEach(function (name, si) {
      var r = zkRow[si];
      if (!r) { html += '<tr data-server="' + esc(name) + '"><th>' + esc(name) + '</th><td colspan="4">-</td></tr>'; return; }
      html += '<tr data-server="' + esc(name) + '" class="' + (r[1] > 0 ? 'lagging' : '') + '"><th>' + esc(name) + (si === 0 ? ' (leader)' : '') +
        '</th><td class="zxid">' + r[0] + '</td><td class="behind">' + (r[1] > 0 ? r[1] + ' behind' : 'up to date') +
        '</td><td class="ids">' + esc(r[2].join(', ') || '\u2014') + '</td><td class="owners">' + r[3] + '</td></tr>';
    });
    tb.innerHTML = html;
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
  function laneFilter() { return $('lane-filter').value.split(',').map(function (s) { return s.trim(); }).filter(Boolean); }
  function laneHiddenByFilter(id, f) {  // f: laneFilter(), read once per drawing
    return f.some(function (x) { return id === x || (x.length > 1 && x.slice(-1) === '*' && id.indexOf(x.slice(0, -1)) === 0); });
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
    // an arrow makes its lanes active when it ends in the window; one ending later only its
    // sender's (a 200-member group's answers, spread over hundreds of steps, would keep every
    // member's lane)
    for (i = a0; i < D.arrows.length && D.arrows[i][1] <= we + 0.5; i++) {
      a = D.arrows[i];
      if (a[3] <= we + 0.5) laneActive[a[0]] = laneActive[a[2]] = true;
      else if (a[1] >= ws - 0.5) laneActive[a[0]] = true;
    }
    var rows = [], y = {}, filter = laneFilter();
    D.lanes.forEach(function (lane, li) {
      if (hidden[lane.id] || (filter.length && laneHiddenByFilter(lane.id, filter))) return;
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
    ['request', 'response', 'error', 'watch', 'revoke'].forEach(function (k) {
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
    var extra = MODE === 'consumer' ? '<th title="at the coordinator: assigned to, pending revocation from, and target">coordinator</th>' :
      MODE === 'zookeeper' ? (D.zk_servers || []).map(function (z) { return '<th title="the owner znode as this server shows it">' + esc(z) + ' sees</th>'; }).join('') : '';
    var colName = MODE === 'consumer' ? 'epoch ' : MODE === 'zookeeper' ? '' : 'gen ';
    var head = '<tr><th>partition</th><th>now</th>' + extra + gens.map(function (g) {
      return '<th title="assignment computed at step ' + (g[0] + 1) + '">' + colName + esc(g[1]) + '</th>';
    }).join('') + '</tr>';
    if (renderGrid.head !== head) { $('grid').tHead.innerHTML = head; renderGrid.head = head; }
    var filter = $('grid-filter').value;
    gridRows = [];
    var counts = [];
    for (var k = 0; k < S; k++) counts.push(0);
    for (var p = 0; p < P; p++) {
      counts[status[p]]++;
      if (filter === 'all' || status[p] !== 1) gridRows.push(p);
    }
    $('grid-summary').innerHTML = D.status_names.map(function (n, i) {
      // the KIP-848 statuses only where they can occur
      if (i >= 5 && MODE !== 'consumer') return '';
      return '<span class="sum-' + n + '">' + n + ': <b>' + counts[i] + '</b></span>';
    }).join('');
    var ncols = gens.length + 2 + (MODE === 'consumer' ? 1 : MODE === 'zookeeper' ? ZS : 0);
    // the scroll position and height are cached: reading them here would force a layout per step
    var first = Math.max(0, Math.floor(gridScroll.top / ROW_H) - 5);
    var count = Math.ceil((gridScroll.height || 420) / ROW_H) + 10;
    var last = Math.min(gridRows.length, first + count);
    var html = '<tr class="spacer"><td colspan="' + ncols + '" style="height:' + (first * ROW_H) + 'px"></td></tr>';
    for (var r = first; r < last; r++) {
      p = gridRows[r];
      var o = owner[p], sn = D.status_names[status[p]];
      html += '<tr data-partition="' + esc(D.partitions[p]) + '"><th>' + esc(D.partitions[p]) + '</th>' +
        '<td class="now s-' + sn + '" data-owner="' + (o >= 0 ? esc(D.members[o]) : '') + '" data-status="' + sn +
        '" style="background:' + memberColor(o) + '" title="' + sn + '">' + (o >= 0 ? esc(D.members[o]) : '\u2014') +
        (sn === 'owned' || sn === 'unowned' ? '' : ' <small>(' + sn + ')</small>') + '</td>';
      if (MODE === 'consumer') html += coordCell(p);
      else if (MODE === 'zookeeper') {
        for (var z = 0; z < ZS; z++) {
          var zo = zkOwner[p * ZS + z];
          html += '<td class="zk" data-server="' + esc(D.zk_servers[z]) + '"' + (zo !== o ? ' data-stale="true"' : '') + ' style="background:' + memberColor(zo) + '">' +
            (zo >= 0 ? esc(D.members[zo]) : '\u2014') + '</td>';
        }
      }
      var prev = null;
      for (var g = 0; g < gens.length; g++) {
        var go = gens[g][2][p];
        var moved = prev !== null && go !== prev;
        html += '<td class="' + (moved ? 'moved' : '') + '" style="background:' + memberColor(go) + '">' + (go >= 0 ? esc(D.members[go]) : '\u2014') + '</td>';
        prev = go;
      }
      html += '</tr>';
    }
    html += '<tr class="spacer"><td colspan="' + ncols + '" style="height:' + ((gridRows.length - last) * ROW_H) + 'px"></td></tr>';
    $('grid').tBodies[0].innerHTML = html;
  }
  function coordCell(p) {  // KIP-848: the coordinator's view of partition p, as groupsim read it
    var a = cAssigned[p], pd = cPending[p], tg = cTarget[p], name = function (i) { return esc(D.members[i]); };
    var text = a >= 0 ? name(a) : pd >= 0 ? name(pd) + ' <small>(pending revocation)</small>' : '\u2014';
    var wait = tg >= 0 && tg !== a ? ' \u2192 ' + name(tg) : '';
    return '<td class="coord' + (pd >= 0 ? ' pending' : '') + '" data-assigned="' + (a >= 0 ? name(a) : '') + '" data-pending="' + (pd >= 0 ? name(pd) : '') +
      '" data-target="' + (tg >= 0 ? name(tg) : '') + '" style="background:' + memberColor(a >= 0 ? a : pd) + '">' + text + wait + '</td>';
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
      var more = MODE === 'consumer' ? ['epoch', 'coordinator epoch', 'member state', 'assigned', 'pending revocation'] : [];
      if (more.length) {
        $('members').tHead.rows[0].innerHTML += more.map(function (h) { return '<th>' + h + '</th>'; }).join('');
      }
      if (MODE === 'zookeeper') $('members').tHead.rows[0].cells[2].textContent = 'registered';
      tb.innerHTML = D.members.map(function (name, m) {
        return '<tr data-member="' + esc(name) + '"><td class="name" style="background:' + memberColor(m) + '">' + esc(name) +
          '</td><td class="state"></td><td class="in-group"></td><td class="owned"></td>' +
          (more.length ? '<td class="epoch"></td><td class="coord-epoch"></td><td class="member-state"></td><td class="assigned"></td><td class="pending"></td>' : '') + '</tr>';
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
      if (st.more && st.more.length) {
        for (var c = 0; c < st.more.length; c++) tr.cells[4 + c].textContent = st.more[c] === null ? '-' : String(st.more[c]);
        tr.cells[6].className = 'member-state ms-' + st.more[2];
      }
    }
  }

  // ---- the run's measures (seed 004's, computed by groupsim) ----
  (function buildMeasures() {
    var rows = D.measures || [];
    $('measures-view').hidden = !rows.length;
    $('measures').innerHTML = rows.map(function (r) { return '<dt>' + esc(r[0]) + '</dt><dd>' + esc(r[1]) + '</dd>'; }).join('');
  })();

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

  // ---- groupsim serve: rerun with another seed, edit, fork at this step ----
  function buildServe() {
    var S = D.serve, box = $('serve');
    if (!S) return;
    box.hidden = false;
    if (!S.source) { box.innerHTML = '<a href="/">library</a> \u00b7 a run of edited text: save it as a file to fork it'; return; }
    var kv = S.source.split('='), hidden = '<input type="hidden" name="' + esc(kv[0]) + '" value="' + esc(decodeURIComponent(kv[1])) + '">';
    var targets = D.members.map(function (m) { return '<option value="' + esc(m) + '">' + esc(m) + '</option>'; }).join('') +
      (S.topics || []).map(function (t) { return '<option value="' + esc(t) + '">topic ' + esc(t) + '</option>'; }).join('');
    box.innerHTML = '<a href="/">library</a><a href="/edit?' + esc(S.source) + '">edit</a>' +
      '<form method="get" action="/view" id="rerun">' + hidden + '<label>seed <input type="number" name="seed" value="' + esc(S.seed) + '"></label><button>rerun</button></form>' +
      '<form method="post" action="/fork" id="fork"><input type="hidden" name="source" value="' + esc(S.source) + '">' +
      '<input type="hidden" name="seed" value="' + esc(S.seed) + '"><input type="hidden" name="at_ms" id="fork-at" value="0">' +
      '<select name="action" id="fork-action">' + S.actions.map(function (a) { return '<option value="' + esc(a) + '">' + esc(a.replace('_', ' ')) + '</option>'; }).join('') + '</select>' +
      '<select name="target" id="fork-target">' + targets + '</select>' +
      '<label title="seconds for stall and isolate; a count for add_partitions">value <input name="value" value="30"></label>' +
      '<button id="fork-button">fork here</button></form>';
  }
  function renderServe() {
    if (!D.serve || !D.serve.source) return;
    var t = D.steps[cur][0];
    $('fork-at').value = String(t);
    $('fork-button').textContent = 'fork at t = ' + fmtT(t);
  }
  buildServe();

  // ---- the current step ----
  var timings = {};  // per view, total ms spent rendering (for measurements: groupsim.timings)
  function timed(name, f) { var t = performance.now(); f(); timings[name] = (timings[name] || 0) + performance.now() - t; }
  var hashTimer = null;
  function render() {
    if (!N) { $('counter').textContent = 'no steps'; return; }
    cells.seek(cur); members.seek(cur); infos.seek(cur); coordCells.seek(cur); zkCells.seek(cur); zkRows.seek(cur);
    var st = D.steps[cur];
    $('counter').textContent = 'step ' + (cur + 1) + ' of ' + N + ', t = ' + fmtT(st[0]);
    $('slider').value = String(cur + 1);
    $('now').textContent = fmtT(st[0]) + '  ' + st[4];
    $('now').className = 'now k-' + st[3];
    timed('group', renderGroup); timed('lanes', renderLanes); timed('grid', renderGrid);
    timed('members', renderMembers); timed('callouts', renderCallouts); timed('log', renderLog);
    renderServe();
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
