// The inspector's script (inspector.html puts it inline): the list, one transaction, the live feed.
'use strict';
(function () {
  var ORDER = ['SDK', 'Browser', '3DS Server', 'DS', 'ACS'];
  var CHANNELS = { '01': 'app', '02': 'browser', '03': '3RI' };
  var MAX_ROWS = 500;
  var SVGNS = 'http://www.w3.org/2000/svg';
  // A harness with an admin token: the page was opened as /inspector?access_token=..., and passes it on.
  var TOKEN = new URLSearchParams(location.search).get('access_token');
  function withToken(url) { return TOKEN ? url + (url.indexOf('?') < 0 ? '?' : '&') + 'access_token=' + encodeURIComponent(TOKEN) : url; }

  var rows = [];            // summaries, newest first
  var rowNodes = new Map(); // dsTransID -> <tr>
  var filters = { pan: '', scenario: '', status: '', run: '' };
  var listSeq = 0, txSeq = 0;
  var source = null, retryTimer = null, quietTimer = null, lastCursor = null, failures = [];
  var view = 'list', txID = null, tx = null, selected = -1, onlyProblems = false, txRefreshTimer = null;

  var $ = function (id) { return document.getElementById(id); };

  // ---- DOM helpers: text always goes through textContent / setAttribute ----
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function svg(tag, attrs, text) {
    var node = document.createElementNS(SVGNS, tag);
    if (attrs) Object.keys(attrs).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function str(v) { return (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') ? String(v) : ''; }
  function txLink(id) { return '#/transactions/' + encodeURIComponent(id); }

  function timeParts(iso) {
    var m = /^(\d{4})-(\d\d)-(\d\d)T(\d\d:\d\d:\d\d)(\.\d+)?Z$/.exec(str(iso));
    if (!m) return { date: '', time: str(iso) };
    return { date: m[2] + '-' + m[3], time: m[4] + (m[5] ? m[5].slice(0, 4) : '') };
  }
  function fullTime(iso) {
    var m = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d(\.\d+)?)Z$/.exec(str(iso));
    return m ? m[1] + ' ' + m[2] + ' UTC' : str(iso);
  }
  function verdictBadge(verdict, failed) {
    var v = str(verdict);
    var span = el('span', 'badge ' + (v === 'pass' ? 'b-pass' : v === 'fail' ? 'b-fail' : v === 'warning' ? 'b-warning' : 'b-none'), v || '—');
    var n = Number(failed);
    if (v === 'fail' && n > 0) span.textContent = 'fail · ' + n;
    if (!v) span.title = 'no checks recorded';
    return span;
  }
  function stateBadge(state, because) {
    var s = str(state);
    var span = el('span', 'badge ' + (s === 'open' ? 'b-open' : s === 'ended' ? 'b-ended' : 'b-none'), s || '—');
    if (because) span.title = 'ended because: ' + str(because);
    return span;
  }
  function transStatusChip(ts) {
    var t = str(ts);
    if (!t) return el('span', 'muted', '—');
    return el('span', 'ts ts-' + t.replace(/[^A-Za-z]/g, ''), t);
  }

  async function errorText(response) {
    var text = '';
    try { text = await response.text(); } catch (e) { /* ignore */ }
    try {
      var body = JSON.parse(text);
      if (body && typeof body === 'object') text = str(body.error) || str(body.message) || str(body.reason) || text;
    } catch (e) { /* not JSON */ }
    if (response.status === 401) text = 'The inspector needs the admin token (Authorization: Bearer …): ' + text;
    return 'HTTP ' + response.status + (text ? ': ' + text.slice(0, 400) : '');
  }
  function banner(message) {
    var b = $('banner');
    if (message) { b.textContent = message; b.hidden = false; } else { b.hidden = true; b.textContent = ''; }
  }

  // ---- Live indicator ----
  function setLive(kind, text) {
    var node = $('live');
    node.className = 'live' + (kind ? ' ' + kind : '');
    $('live-text').textContent = text;
  }

  // ---- Filters (the server's rules, for rows that arrive live) ----
  function maskPAN(pan) {
    return pan.length > 10 ? pan.slice(0, 6) + '*'.repeat(pan.length - 10) + pan.slice(-4) : '*'.repeat(pan.length);
  }
  function accepts(s) {
    var f = filters;
    if (f.pan) {
      var masked = str(s.acctNumber);
      if (!(f.pan === masked || maskPAN(f.pan) === masked || (f.pan.length === 4 && masked.slice(-4) === f.pan))) return false;
    }
    if (f.scenario && str(s.scenario) !== f.scenario) return false;
    if (f.run && str(s.run) !== f.run) return false;
    if (f.status && !['transStatus', 'state', 'verdict'].some(function (k) { return str(s[k]) === f.status; })) return false;
    return true;
  }
  function readFilters() {
    var form = $('filters');
    ['pan', 'scenario', 'status', 'run'].forEach(function (k) { filters[k] = form.elements[k].value.trim(); });
  }

  // ---- The list ----
  function rowFor(s) {
    var id = str(s.dsTransID);
    var tr = el('tr');
    tr.tabIndex = 0;
    tr.dataset.id = id;
    if (str(s.verdict) === 'fail') tr.className = 'failed';
    var tp = timeParts(s.startedAt);
    var time = el('td', 'time mono');
    time.title = str(s.startedAt) + (id ? '\ndsTransID ' + id : '');
    if (tp.date) time.appendChild(el('span', 'd', tp.date));
    time.appendChild(document.createTextNode(tp.time));
    tr.appendChild(time);
    tr.appendChild(el('td', 'mono', str(s.acctNumber) || '—'));
    tr.appendChild(el('td', 'mono', str(s.messageVersion) || '—'));
    var ch = str(s.deviceChannel);
    var chCell = el('td', '', CHANNELS[ch] || ch || '—');
    if (ch) chCell.title = 'deviceChannel ' + ch;
    tr.appendChild(chCell);
    var sc = el('td', 'trunc', str(s.scenario) || '—');
    sc.title = str(s.scenario);
    tr.appendChild(sc);
    var ts = el('td'); ts.appendChild(transStatusChip(s.transStatus)); tr.appendChild(ts);
    var st = el('td'); st.appendChild(stateBadge(s.state, s.endedBecause)); tr.appendChild(st);
    var vd = el('td'); vd.appendChild(verdictBadge(s.verdict, s.failedChecks)); tr.appendChild(vd);
    var run = el('td', 'run mono', str(s.run) ? str(s.run).slice(0, 8) : '');
    if (str(s.run)) run.title = 'run ' + str(s.run) + (str(s.case) ? '\ncase ' + str(s.case) : '');
    tr.appendChild(run);
    tr.addEventListener('click', function () { if (id) location.hash = txLink(id); });
    tr.addEventListener('keydown', function (e) { if (e.key === 'Enter' && id) location.hash = txLink(id); });
    return tr;
  }

  function renderList() {
    var body = $('rows');
    rowNodes = new Map();
    var frag = document.createDocumentFragment();
    var shown = 0;
    rows.forEach(function (s) {
      if (!accepts(s)) return;
      var tr = rowFor(s);
      rowNodes.set(str(s.dsTransID), tr);
      frag.appendChild(tr);
      shown++;
    });
    body.replaceChildren(frag);
    updateCount(shown);
  }

  function updateCount(shown) {
    if (shown === undefined) shown = rowNodes.size;
    var active = Object.keys(filters).some(function (k) { return filters[k]; });
    $('count').textContent = shown + (shown === 1 ? ' transaction' : ' transactions') + (active ? ' matching' : '') + ' · newest first';
    var empty = $('empty');
    if (shown > 0) { empty.hidden = true; return; }
    empty.replaceChildren();
    if (active) {
      empty.appendChild(document.createTextNode('No transaction matches these filters.'));
    } else {
      empty.appendChild(document.createTextNode('No transactions yet. Drive one, for example with '));
      empty.appendChild(el('code', '', 'threeds-harness simulate --url ' + location.origin + ' --pan 4000000000001000'));
      empty.appendChild(document.createTextNode(' — it appears here as it happens.'));
    }
    empty.hidden = false;
  }

  function upsert(s) {
    var id = str(s.dsTransID);
    if (!id) return;
    var index = rows.findIndex(function (r) { return str(r.dsTransID) === id; });
    if (index >= 0) rows[index] = s; else rows.unshift(s);
    if (rows.length > MAX_ROWS) rows.length = MAX_ROWS;
    var old = rowNodes.get(id);
    var ok = accepts(s);
    if (old && ok) {
      var tr = rowFor(s);
      tr.classList.add('flash');
      old.replaceWith(tr);
      rowNodes.set(id, tr);
    } else if (!old && ok && index < 0) {
      var fresh = rowFor(s);
      fresh.classList.add('flash');
      $('rows').insertBefore(fresh, $('rows').firstChild);
      rowNodes.set(id, fresh);
      var body = $('rows');
      while (body.children.length > MAX_ROWS) { rowNodes.delete(body.lastChild.dataset.id); body.removeChild(body.lastChild); }
      updateCount();
    } else if (old || ok) {
      renderList();
      var again = rowNodes.get(id);
      if (again) again.classList.add('flash');
    }
    if (view === 'tx' && txID === id) scheduleTxRefresh();
  }

  async function loadList() {
    var seq = ++listSeq;
    clearTimeout(retryTimer);
    var query = new URLSearchParams({ limit: '100' });
    Object.keys(filters).forEach(function (k) { if (filters[k]) query.set(k, filters[k]); });
    try {
      var response = await fetch(withToken('/inspector/transactions?' + query.toString()), { headers: { Accept: 'application/json' }, cache: 'no-store' });
      if (!response.ok) throw new Error(await errorText(response));
      var body = await response.json();
      if (seq !== listSeq) return;
      rows = Array.isArray(body && body.transactions) ? body.transactions.filter(function (s) { return s && typeof s === 'object'; }) : [];
      renderList();
      if (view === 'list') banner('');
      var cursor = body ? body.cursor : null;
      startEvents(cursor === undefined || cursor === null ? null : String(cursor));
    } catch (e) {
      if (seq !== listSeq) return;
      banner('Could not load the transactions: ' + (e && e.message ? e.message : String(e)) + ' — retrying.');
      setLive('off', 'offline');
      retryTimer = setTimeout(loadList, 5000);
    }
  }

  // ---- Live feed: one batch per request; EventSource reconnects with Last-Event-ID ----
  function startEvents(cursor) {
    if (source) { source.close(); source = null; }
    clearTimeout(quietTimer);
    // ?live=0: a still picture (the list as loaded), for a page printed or rendered by a headless browser.
    if (cursor === null || typeof EventSource === 'undefined' || new URLSearchParams(location.search).get('live') === '0') {
      setLive('off', 'not live'); return;
    }
    lastCursor = cursor;
    failures = [];
    var es = new EventSource(withToken('/inspector/events?cursor=' + encodeURIComponent(cursor)));
    source = es;
    // Each request is a long poll: it opens only when the server answers (a change, or ~10 s
    // of nothing), then ends, and EventSource asks again. So a pending request is live.
    setLive('on', 'live');
    es.onopen = function () {
      if (source !== es) return;
      failures = [];
      setLive('on', 'live');
    };
    es.onmessage = function (event) {
      if (source !== es) return;
      failures = [];
      setLive('on', 'live');
      if (event.lastEventId) lastCursor = event.lastEventId;
      var summary;
      try { summary = JSON.parse(event.data); } catch (e) { return; }
      if (summary && typeof summary === 'object' && !Array.isArray(summary)) upsert(summary);
    };
    es.addEventListener('reset', function () {
      if (source !== es) return;
      es.close();
      loadList();
    });
    es.onerror = function () {
      if (source !== es) return;
      if (es.readyState === EventSource.CLOSED) {
        // Refused (an HTTP error): start again from a fresh list and cursor.
        setLive('off', 'offline');
        es.close();
        source = null;
        clearTimeout(retryTimer);
        retryTimer = setTimeout(loadList, 5000);
        return;
      }
      // The server ends each long poll, so one error between answers is normal; errors in a
      // row with no answer between them mean the server cannot be reached.
      var now = Date.now();
      failures.push(now);
      failures = failures.filter(function (t) { return now - t < 8000; });
      if (failures.length >= 3) setLive('wait', 'reconnecting');
      // A request the server holds (no new error for a while) is a long poll waiting: live again.
      clearTimeout(quietTimer);
      quietTimer = setTimeout(function () {
        if (source === es && es.readyState !== EventSource.CLOSED) { failures = []; setLive('on', 'live'); }
      }, 2500);
    };
  }

  // ---- One transaction ----
  function scheduleTxRefresh() {
    clearTimeout(txRefreshTimer);
    txRefreshTimer = setTimeout(function () { if (view === 'tx' && txID) loadTx(txID, true); }, 250);
  }

  async function loadTx(id, keep) {
    var seq = ++txSeq;
    var box = $('tx');
    if (!keep) {
      tx = null; selected = -1;
      box.replaceChildren(el('div', 'card loading', 'Loading transaction ' + id + '…'));
    }
    try {
      var response = await fetch(withToken('/inspector/transactions/' + encodeURIComponent(id)), { headers: { Accept: 'application/json' }, cache: 'no-store' });
      if (seq !== txSeq) return;
      if (response.status === 404) {
        var gone = el('div', 'card empty');
        gone.appendChild(el('p', '', 'No transaction with dsTransID ' + id + ' in the journal.'));
        gone.appendChild(el('p', '', 'It may not have happened on this harness, or it is older than what the harness keeps.'));
        box.replaceChildren(gone);
        return;
      }
      if (!response.ok) throw new Error(await errorText(response));
      var entry = await response.json();
      if (seq !== txSeq) return;
      if (!entry || typeof entry !== 'object') throw new Error('the answer is not a transaction');
      var messages = Array.isArray(entry.messages) ? entry.messages : [];
      if (!keep || selected < 0 || selected >= messages.length) {
        var firstErro = messages.findIndex(function (m) { return m && str(m.type) === 'Erro'; });
        selected = firstErro >= 0 ? firstErro : (messages.length ? 0 : -1);
      }
      tx = entry;
      renderTx();
    } catch (e) {
      if (seq !== txSeq) return;
      box.replaceChildren(el('div', 'banner', 'Could not load transaction ' + id + ': ' + (e && e.message ? e.message : String(e))));
    }
  }

  function fact(list, label, value, mono) {
    var v = str(value);
    if (!v) return;
    var div = el('div');
    div.appendChild(el('dt', '', label));
    div.appendChild(el('dd', mono ? 'mono' : '', v));
    list.appendChild(div);
  }

  function renderTx() {
    var t = tx;
    var box = $('tx');
    var frag = document.createDocumentFragment();
    document.title = 'Transaction ' + str(t.dsTransID).slice(0, 8) + ' · 3DS Inspector';

    var head = el('section', 'card tx-head');
    var line = el('div', 'line');
    var h1 = el('h1', '', 'Transaction ');
    h1.appendChild(el('span', 'mono', str(t.dsTransID) || '(no dsTransID)'));
    line.appendChild(h1);
    line.appendChild(transStatusChip(t.transStatus));
    line.appendChild(stateBadge(t.state, t.endedBecause));
    line.appendChild(verdictBadge(t.verdict, t.failedChecks));
    head.appendChild(line);
    var facts = el('dl', 'facts');
    fact(facts, 'dsTransID', t.dsTransID, true);
    fact(facts, 'threeDSServerTransID', t.threeDSServerTransID, true);
    fact(facts, 'acsTransID', t.acsTransID, true);
    fact(facts, 'sdkTransID', t.sdkTransID, true);
    fact(facts, 'Started', fullTime(t.startedAt));
    fact(facts, 'PAN', t.acctNumber, true);
    fact(facts, 'Message version', t.messageVersion);
    var ch = str(t.deviceChannel);
    fact(facts, 'Channel', ch ? (CHANNELS[ch] ? CHANNELS[ch] + ' (' + ch + ')' : ch) : '');
    fact(facts, 'Scenario', t.scenario);
    fact(facts, 'Ended because', t.endedBecause);
    if (str(t.run)) {
      var runDiv = el('div');
      runDiv.appendChild(el('dt', '', 'Run'));
      var dd = el('dd', 'mono');
      var a = el('a', '', str(t.run));
      a.href = withToken('/admin/runs/' + encodeURIComponent(str(t.run)) + '/report.html');
      a.title = 'the run report';
      dd.appendChild(a);
      runDiv.appendChild(dd);
      facts.appendChild(runDiv);
    }
    fact(facts, 'Case', t.case, true);
    head.appendChild(facts);
    var checks = Array.isArray(t.checks) ? t.checks.filter(function (c) { return c && typeof c === 'object'; }) : [];
    var bad = checks.filter(function (c) { return str(c.verdict) === 'fail'; });
    var warn = checks.filter(function (c) { return str(c.verdict) === 'warning'; });
    if (bad.length || warn.length) {
      // What went wrong, at the top: the checks table is below the diagram.
      var strip = el('div', 'problems' + (bad.length ? '' : ' warn'));
      var shown = bad.length ? bad : warn;
      strip.appendChild(el('b', '', shown.length + (bad.length ? ' failed' : ' warning') + (shown.length === 1 ? ' check:' : ' checks:')));
      shown.forEach(function (c) {
        var chip = el('span', 'id', str(c.id) || '?');
        chip.title = str(c.text) + (str(c.detail) ? '\n' + str(c.detail) : '');
        strip.appendChild(chip);
      });
      if (bad.length && warn.length) strip.appendChild(el('span', 'tally', '+ ' + warn.length + (warn.length === 1 ? ' warning' : ' warnings')));
      var jump = el('button', '', 'See the checks ↓');
      jump.type = 'button';
      jump.addEventListener('click', function () { var card = document.querySelector('.checks-card'); if (card) card.scrollIntoView({ behavior: 'smooth' }); });
      strip.appendChild(jump);
      head.appendChild(strip);
    }
    frag.appendChild(head);

    var messages = Array.isArray(t.messages) ? t.messages.filter(function (m) { return m && typeof m === 'object'; }) : [];
    var split = el('div', 'split');
    var flow = el('section', 'card');
    var flowHead = el('div', 'card-head');
    flowHead.appendChild(el('h2', '', 'Message flow'));
    flowHead.appendChild(el('span', 'tally', messages.length + (messages.length === 1 ? ' message' : ' messages')));
    if (messages.length) flowHead.appendChild(el('span', 'hint', 'click an arrow · ↑ ↓ to step'));
    flow.appendChild(flowHead);
    var diagram = el('div', 'diagram');
    if (messages.length) diagram.appendChild(sequenceDiagram(messages)); else diagram.appendChild(el('div', 'empty', 'No messages recorded yet.'));
    flow.appendChild(diagram);
    if (messages.length) {
      var legend = el('div', 'legend');
      var l1 = el('span'); l1.appendChild(el('i')); l1.appendChild(document.createTextNode('plain JSON')); legend.appendChild(l1);
      var l2 = el('span'); l2.appendChild(el('i', 'dash')); l2.appendChild(lockIcon()); l2.appendChild(document.createTextNode('JWE on the wire, shown decrypted')); legend.appendChild(l2);
      var l3 = el('span'); l3.appendChild(el('i', 'red')); l3.appendChild(document.createTextNode('Erro')); legend.appendChild(l3);
      flow.appendChild(legend);
    }
    split.appendChild(flow);
    var panel = el('section', 'card panel');
    panel.id = 'panel';
    split.appendChild(panel);
    frag.appendChild(split);

    frag.appendChild(checksCard(checks));
    box.replaceChildren(frag);
    placeLocks();
    renderPanel(messages);
  }

  function placeLocks() {
    document.querySelectorAll('svg .msg.dec').forEach(function (g) {
      var label = g.querySelector('.lbl'), lock = g.querySelector('.lock');
      if (!label || !lock) return;
      try {
        var b = label.getBBox();
        if (b.width > 0) lock.setAttribute('transform', 'translate(' + (b.x - 15) + ',' + (b.y + b.height / 2 - 6.5) + ')');
      } catch (e) { /* not laid out: keep it under the arrow */ }
    });
  }

  // Notes say "decrypted by the ACS (…)" or "plaintext, encrypted to the SDK (…)": a JWE on the wire.
  function isDecrypted(m) { return /decrypted|encrypted/i.test(str(m.note)); }

  function lockIcon() {
    var s = svg('svg', { width: 12, height: 14, viewBox: '0 0 12 14', 'class': 'lock', 'aria-hidden': 'true' });
    s.appendChild(svg('path', { d: 'M3 6.5V4.5a3 3 0 0 1 6 0v2' }));
    s.appendChild(svg('rect', { x: 1, y: 6.5, width: 10, height: 7, rx: 1.5 }));
    return s;
  }

  function sequenceDiagram(messages) {
    var used = [];
    messages.forEach(function (m) {
      [str(m.from), str(m.to)].forEach(function (p) { if (p && used.indexOf(p) < 0) used.push(p); });
    });
    var parts = ORDER.filter(function (p) { return used.indexOf(p) >= 0; });
    used.forEach(function (p) { if (parts.indexOf(p) < 0) parts.push(p); });
    if (!parts.length) parts.push('?');
    var W = 640, margin = 72, boxW = 104, boxH = 30, top = 8, rowH = 48, firstY = top + boxH + 40;
    var spacing = parts.length > 1 ? (W - 2 * margin) / (parts.length - 1) : 0;
    var xOf = {};
    parts.forEach(function (p, i) { xOf[p] = parts.length > 1 ? margin + i * spacing : W / 2; });
    var H = firstY + (messages.length - 1) * rowH + 30;
    var root = svg('svg', { viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img', 'aria-label': 'Sequence diagram of the messages' });
    parts.forEach(function (p) {
      var x = xOf[p];
      root.appendChild(svg('line', { 'class': 'lifeline', x1: x, y1: top + boxH, x2: x, y2: H - 4 }));
    });
    parts.forEach(function (p) {
      var x = xOf[p];
      var g = svg('g');
      g.appendChild(svg('rect', { 'class': 'pbox', x: x - boxW / 2, y: top, width: boxW, height: boxH, rx: 6 }));
      g.appendChild(svg('text', { 'class': 'pname', x: x, y: top + boxH / 2 }, p));
      root.appendChild(g);
    });
    messages.forEach(function (m, i) {
      var y = firstY + i * rowH;
      var from = str(m.from) || '?', to = str(m.to) || '?';
      var x1 = xOf[from] !== undefined ? xOf[from] : xOf[parts[0]];
      var x2 = xOf[to] !== undefined ? xOf[to] : xOf[parts[0]];
      var type = str(m.type) || '(message)';
      var erro = type === 'Erro';
      var dec = isDecrypted(m);
      var g = svg('g', { 'class': 'msg' + (erro ? ' erro' : '') + (dec ? ' dec' : '') + (i === selected ? ' sel' : ''), tabindex: 0, 'data-index': i });
      g.appendChild(svg('title', null, type + ': ' + from + ' → ' + to + offsetText(m) + (str(m.note) ? '\n' + str(m.note) : '')));
      g.appendChild(svg('rect', { 'class': 'hit', x: 2, y: y - 30, width: W - 4, height: rowH - 2, rx: 4 }));
      g.appendChild(svg('text', { 'class': 'num', x: 6, y: y + 4 }, String(i + 1)));
      var mid;
      if (x1 === x2) {
        // A message a participant records of itself: a small loop.
        var loop = 34;
        g.appendChild(svg('path', { 'class': 'shaft', d: 'M' + x1 + ' ' + (y - 8) + ' h' + loop + ' v16 h-' + (loop - 9) }));
        g.appendChild(svg('polygon', { 'class': 'head', points: (x1 + 1) + ',' + (y + 8) + ' ' + (x1 + 10) + ',' + (y + 3) + ' ' + (x1 + 10) + ',' + (y + 13) }));
        mid = Math.min(x1 + loop + 60, W - 60);
      } else {
        var d = x2 > x1 ? 1 : -1;
        var tip = x2 - d * 2;
        g.appendChild(svg('line', { 'class': 'shaft', x1: x1 + d * 2, y1: y, x2: tip - d * 8, y2: y }));
        g.appendChild(svg('polygon', { 'class': 'head', points: tip + ',' + y + ' ' + (tip - d * 10) + ',' + (y - 5) + ' ' + (tip - d * 10) + ',' + (y + 5) }));
        mid = (x1 + x2) / 2;
      }
      var label = svg('text', { 'class': 'lbl', x: mid, y: y - 8 });
      label.appendChild(svg('tspan', { 'class': 't' }, type));
      var off = offsetText(m);
      if (off) label.appendChild(svg('tspan', { 'class': 'o', dx: 6 }, off.trim()));
      g.appendChild(label);
      if (dec) {
        // Placed left of the label once it is laid out (placeLocks); until then under the arrow.
        var lock = svg('g', { 'class': 'lock', transform: 'translate(' + (mid - 5) + ',' + (y + 3) + ')' });
        lock.appendChild(svg('path', { d: 'M2.5 5V3.5a2.5 2.5 0 0 1 5 0V5' }));
        lock.appendChild(svg('rect', { x: 0.5, y: 5, width: 9, height: 7, rx: 1.2 }));
        g.appendChild(lock);
      }
      g.addEventListener('click', function () { select(i); });
      g.addEventListener('keydown', function (e) { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); select(i); } });
      root.appendChild(g);
    });
    return root;
  }

  function offsetText(m) {
    var n = Number(m.offsetMs);
    if (m.offsetMs === undefined || m.offsetMs === null || !isFinite(n)) return '';
    return ' +' + n + ' ms';
  }

  function select(i) {
    if (!tx) return;
    var messages = Array.isArray(tx.messages) ? tx.messages.filter(function (m) { return m && typeof m === 'object'; }) : [];
    if (i < 0 || i >= messages.length) return;
    selected = i;
    document.querySelectorAll('svg .msg').forEach(function (g) {
      g.classList.toggle('sel', Number(g.getAttribute('data-index')) === i);
    });
    renderPanel(messages);
  }

  function renderPanel(messages) {
    var panel = $('panel');
    if (!panel) return;
    panel.replaceChildren();
    var headRow = el('div', 'card-head');
    if (selected < 0 || !messages[selected]) {
      headRow.appendChild(el('h2', '', 'Message'));
      panel.appendChild(headRow);
      panel.appendChild(el('div', 'empty', messages.length ? 'Click an arrow to see its message.' : 'No messages.'));
      return;
    }
    var m = messages[selected];
    var title = el('h2', '', (selected + 1) + '. ' + (str(m.type) || '(message)'));
    headRow.appendChild(title);
    headRow.appendChild(el('span', 'tally', (str(m.from) || '?') + ' → ' + (str(m.to) || '?')));
    var copy = el('button', '', 'Copy');
    copy.type = 'button';
    copy.style.marginLeft = 'auto';
    copy.title = 'Copy the message';
    var body = m.message;
    var textForm = typeof body === 'string' ? body : JSON.stringify(body === undefined ? null : body, null, 2);
    copy.addEventListener('click', function () {
      if (navigator.clipboard) navigator.clipboard.writeText(textForm).then(function () { copy.textContent = 'Copied'; setTimeout(function () { copy.textContent = 'Copy'; }, 1200); }, function () { copy.textContent = 'Copy failed'; });
    });
    headRow.appendChild(copy);
    panel.appendChild(headRow);

    var meta = el('div', 'meta');
    var off = offsetText(m);
    if (off) { var o = el('span'); o.appendChild(el('b', '', off.trim())); o.appendChild(document.createTextNode(' after the start')); meta.appendChild(o); }
    if (str(m.at)) meta.appendChild(el('span', 'mono', fullTime(m.at)));
    if (meta.childNodes.length) panel.appendChild(meta);
    if (str(m.note)) {
      var note = el('p', 'note');
      if (isDecrypted(m)) note.appendChild(lockIcon());
      note.appendChild(document.createTextNode(str(m.note)));
      panel.appendChild(note);
    }
    var pre = el('pre');
    if (typeof body === 'string') {
      panel.appendChild(el('div', 'raw', 'Not JSON: shown as received.'));
      pre.textContent = body;
    } else {
      var tokens = [];
      jsonTokens(body === undefined ? null : body, '', tokens);
      tokens.forEach(function (t) {
        if (t[0]) pre.appendChild(el('span', t[0], t[1])); else pre.appendChild(document.createTextNode(t[1]));
      });
    }
    panel.appendChild(pre);
  }

  function jsonTokens(v, ind, out) {
    if (v === null) { out.push(['l', 'null']); return; }
    if (Array.isArray(v)) {
      if (!v.length) { out.push(['p', '[]']); return; }
      out.push(['p', '[']); out.push(['', '\n']);
      v.forEach(function (x, i) {
        out.push(['', ind + '  ']);
        jsonTokens(x, ind + '  ', out);
        out.push(['p', i < v.length - 1 ? ',' : '']); out.push(['', '\n']);
      });
      out.push(['', ind]); out.push(['p', ']']);
      return;
    }
    if (typeof v === 'object') {
      var keys = Object.keys(v);
      if (!keys.length) { out.push(['p', '{}']); return; }
      out.push(['p', '{']); out.push(['', '\n']);
      keys.forEach(function (k, i) {
        out.push(['', ind + '  ']);
        out.push(['k', JSON.stringify(k)]);
        out.push(['p', ': ']);
        jsonTokens(v[k], ind + '  ', out);
        out.push(['p', i < keys.length - 1 ? ',' : '']); out.push(['', '\n']);
      });
      out.push(['', ind]); out.push(['p', '}']);
      return;
    }
    if (typeof v === 'string') { out.push(['s', JSON.stringify(v)]); return; }
    if (typeof v === 'number') { out.push(['n', String(v)]); return; }
    if (typeof v === 'boolean') { out.push(['b', String(v)]); return; }
    out.push(['', String(v)]);
  }

  function checksCard(checks) {
    var card = el('section', 'card checks-card');
    var head = el('div', 'card-head');
    head.appendChild(el('h2', '', 'Checks'));
    var failed = 0, warned = 0, passed = 0;
    checks.forEach(function (c) { var v = str(c.verdict); if (v === 'fail') failed++; else if (v === 'warning') warned++; else if (v === 'pass') passed++; });
    var tally = el('span', 'tally');
    [[failed, ' failed', 'f'], [warned, warned === 1 ? ' warning' : ' warnings', 'w'], [passed, ' passed', 'p']].forEach(function (x, i) {
      if (i) tally.appendChild(document.createTextNode(' · '));
      tally.appendChild(el('b', x[0] ? x[2] : '', String(x[0])));
      tally.appendChild(document.createTextNode(x[1]));
    });
    head.appendChild(tally);
    if (checks.length) {
      var toggle = el('label');
      var box = el('input'); box.type = 'checkbox'; box.checked = onlyProblems;
      toggle.appendChild(box);
      toggle.appendChild(document.createTextNode('only failures and warnings'));
      box.addEventListener('change', function () { onlyProblems = box.checked; applyToggle(); });
      head.appendChild(toggle);
    }
    card.appendChild(head);
    if (!checks.length) {
      card.appendChild(el('div', 'empty', 'No checks recorded for this transaction.'));
      return card;
    }
    var table = el('table', 'checks');
    var thead = el('thead');
    var hr = el('tr');
    ['Verdict', 'Check', 'What', 'Reference', 'Detail'].forEach(function (h) { hr.appendChild(el('th', '', h)); });
    thead.appendChild(hr);
    table.appendChild(thead);
    var tbody = el('tbody');
    checks.forEach(function (c) {
      var v = str(c.verdict);
      var tr = el('tr', v === 'fail' ? 'fail' : v === 'warning' ? 'warning' : 'pass');
      var vd = el('td'); vd.appendChild(verdictBadge(v)); tr.appendChild(vd);
      tr.appendChild(el('td', 'id', str(c.id)));
      var what = el('td', '', str(c.text));
      if (str(c.party)) what.appendChild(el('span', 'party', str(c.party)));
      tr.appendChild(what);
      tr.appendChild(el('td', 'ref', str(c.reference)));
      var detail = el('td', 'detail', str(c.detail));
      // A failed check says how to fix it, as the run reports do.
      if (str(c.fix)) { var fix = el('p', 'fix', 'How to fix: ' + str(c.fix)); detail.appendChild(fix); }
      tr.appendChild(detail);
      tbody.appendChild(tr);
    });
    table.appendChild(tbody);
    card.appendChild(table);
    function applyToggle() { tbody.querySelectorAll('tr.pass').forEach(function (tr) { tr.hidden = onlyProblems; }); }
    applyToggle();
    return card;
  }

  // ---- Routing ----
  function route() {
    var m = /^#\/transactions\/(.+)$/.exec(location.hash);
    var id = null;
    if (m) { try { id = decodeURIComponent(m[1]); } catch (e) { id = m[1]; } }
    if (id) {
      var same = view === 'tx' && txID === id;
      view = 'tx'; txID = id;
      $('list-view').hidden = true;
      $('tx-view').hidden = false;
      banner('');
      if (!same) { window.scrollTo(0, 0); loadTx(id, false); }
    } else {
      view = 'list'; txID = null; tx = null;
      clearTimeout(txRefreshTimer);
      $('tx-view').hidden = true;
      $('list-view').hidden = false;
      document.title = '3DS Inspector';
    }
  }

  document.addEventListener('keydown', function (e) {
    if (view !== 'tx' || !tx) return;
    var target = e.target;
    if (target && (target.tagName === 'INPUT' || target.tagName === 'TEXTAREA')) return;
    if (e.key === 'ArrowDown' || e.key === 'j') { e.preventDefault(); select(selected + 1); }
    else if (e.key === 'ArrowUp' || e.key === 'k') { e.preventDefault(); select(selected - 1); }
    else if (e.key === 'Escape') { location.hash = '#/'; }
  });

  var filterTimer = null;
  $('filters').addEventListener('input', function () {
    clearTimeout(filterTimer);
    filterTimer = setTimeout(function () { readFilters(); renderList(); loadList(); }, 300);
  });
  $('filters').addEventListener('submit', function (e) { e.preventDefault(); readFilters(); loadList(); });
  $('clear').addEventListener('click', function () {
    $('filters').reset();
    readFilters(); renderList(); loadList();
  });
  window.addEventListener('hashchange', route);

  readFilters();
  route();
  setLive('', 'connecting');
  loadList();
})();
