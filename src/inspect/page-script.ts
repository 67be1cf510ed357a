/**
 * The script of the `ctxfold inspect` page, as text: it reads the embedded model (`InspectPage`,
 * the `ctxfold-data` JSON script tag) and builds the page with DOM calls, every text through
 * `textContent` (never parsed as HTML). Long runs of groups with one fate are one block, rendered
 * when opened; long bodies show their start and a button that shows the rest. When done it sets
 * `data-ready` on the root element (milliseconds since navigation started). Plain ES2017, no
 * template literals, and no `</` sequence anywhere (it is inlined in a script element).
 */
export const PAGE_SCRIPT = String.raw`(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('ctxfold-data').textContent);
  var BODY_SHOWN = 400;
  var RUN_SHOWN = 40;
  var FATE = { head: 'head', summarized: 'summarized', dropped: 'dropped for room', middle: 'sent verbatim', tail: 'kept tail', held: 'held user turn' };
  var SPLIT = [['head', 'head'], ['summary', 'summary'], ['middle', 'verbatim middle'], ['tail', 'kept tail'], ['notes', 'notes'], ['tools', 'tools'], ['overhead', 'overhead']];
  var app = document.getElementById('app');
  var opened = [];

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function num(n) { return Number(n).toLocaleString('en-US'); }
  function msgId(k, i) { return 'h' + k + '-m' + i; }
  function link(k, i, text) {
    var a = el('a', 'msg-link', text);
    a.href = '#' + msgId(k, i);
    a.setAttribute('data-h', String(k));
    a.setAttribute('data-target', String(i));
    return a;
  }
  function heading(level, text) { return el('h' + level, null, text); }
  function span(a, b) { return b - a === 1 ? 'message ' + a : 'messages ' + a + ' to ' + (b - 1); }

  function groupAt(h, i) {
    var lo = 0, hi = h.groups.length - 1;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (h.groups[mid].start <= i) lo = mid; else hi = mid - 1;
    }
    return lo;
  }

  function tokenBar(h) {
    var t = h.tokens;
    var box = el('div', 'tokens');
    box.appendChild(heading(3, 'Tokens'));
    var used = 0;
    SPLIT.forEach(function (s) { used += t.split[s[0]]; });
    var total = Math.max(t.window || 0, used + t.reserved, t.threshold || 0, 1);
    var summary = 'The view: ' + num(t.after) + ' tokens (the history: ' + (t.beforeExact ? '' : 'about ') + num(t.before) + ')' +
      (t.window ? '; window ' + num(t.window) + ', ' + num(t.reserved) + ' of it kept for the reply' : '; no window') +
      (t.threshold ? '; summary threshold ' + num(t.threshold) : '') + '.';
    box.appendChild(el('p', null, summary));
    var bar = el('div', 'bar');
    bar.setAttribute('role', 'img');
    var parts = [];
    var rows = SPLIT.map(function (s) { return [s[0], s[1], t.split[s[0]]]; }).concat([['reserved', 'reserved for the reply', t.reserved]]);
    rows.forEach(function (r) {
      if (r[2] <= 0) return;
      var seg = el('span', 'seg seg-' + r[0]);
      seg.style.width = (100 * r[2] / total) + '%';
      seg.title = r[1] + ': ' + num(r[2]) + ' tokens';
      bar.appendChild(seg);
      parts.push(r[1] + ' ' + num(r[2]));
    });
    if (t.threshold) {
      var mark = el('span', 'mark mark-threshold');
      mark.style.left = (100 * t.threshold / total) + '%';
      mark.title = 'threshold ' + num(t.threshold);
      bar.appendChild(mark);
    }
    bar.setAttribute('aria-label', 'Token split of ' + num(total) + ': ' + parts.join(', ') + (t.window ? '; the bar is the window' : ''));
    box.appendChild(bar);
    var table = el('table', 'legend');
    var head = el('tr');
    ['part', 'tokens', 'share of the bar'].forEach(function (c) { head.appendChild(el('th', null, c)); });
    table.appendChild(head);
    rows.concat(t.threshold ? [['threshold', 'summary threshold (line)', t.threshold]] : []).forEach(function (r) {
      var tr = el('tr');
      var name = el('td');
      name.appendChild(el('span', 'swatch seg-' + r[0]));
      name.appendChild(document.createTextNode(' ' + r[1]));
      tr.appendChild(name);
      tr.appendChild(el('td', 'n', num(r[2])));
      tr.appendChild(el('td', 'n', (100 * r[2] / total).toFixed(1) + '%'));
      table.appendChild(tr);
    });
    box.appendChild(table);
    return box;
  }

  function summaryPart(h, k) {
    var s = h.summary;
    var box = el('div', 'summary');
    box.appendChild(heading(3, 'Summary'));
    box.appendChild(el('p', null, 'Stands for ' + span(s.start, s.end) + (s.summarizer ? ', written by the ' + s.summarizer + ' summarizer' : '') +
      '. Each ledger line links to the message it came from.'));
    if (s.coveredIds.length > 0) {
      var d = el('details');
      d.appendChild(el('summary', null, 'The ' + num(s.coveredIds.length) + ' message ids it covers'));
      d.appendChild(el('pre', 'ids', s.coveredIds.join('\n')));
      box.appendChild(d);
    }
    var text = el('div', 'summary-text');
    var ledger = {};
    s.ledger.forEach(function (l) { if (l.target !== undefined) ledger[l.text] = l.target; });
    s.text.split('\n').forEach(function (line) {
      var row = ledger[line] !== undefined ? link(k, ledger[line], line) : el('span', null, line);
      if (ledger[line] !== undefined) row.className = 'msg-link ledger';
      text.appendChild(row);
      text.appendChild(document.createTextNode('\n'));
    });
    box.appendChild(text);
    return box;
  }

  function factList(k, title, facts, open) {
    var box = el('details', 'facts-side');
    box.open = open;
    box.appendChild(el('summary', null, title + ' (' + num(facts.length) + ')'));
    var ul = el('ul');
    facts.forEach(function (f) {
      var li = el('li');
      li.appendChild(el('code', null, f.label + '=' + f.value));
      li.appendChild(document.createTextNode(' from '));
      li.appendChild(link(k, f.from, 'message ' + f.from));
      ul.appendChild(li);
    });
    box.appendChild(ul);
    return box;
  }

  function factsPart(h, k) {
    var box = el('div', 'facts');
    box.appendChild(heading(3, 'Facts of the messages the view leaves out'));
    box.appendChild(el('p', null, num(h.facts.messagesRead) + ' messages read' + (h.facts.capped ? ' (the first ones; the lists are full)' : '') +
      '. A fact is kept when its value occurs in the text of the view (the summary included).'));
    var sides = el('div', 'facts-sides');
    sides.appendChild(factList(k, 'Kept in the view', h.facts.kept, false));
    sides.appendChild(factList(k, 'Left out', h.facts.left, true));
    box.appendChild(sides);
    return box;
  }

  function checkPart(h, k) {
    var box = el('div', 'check');
    var v = h.validation;
    box.appendChild(heading(3, 'Provider check (' + v.profile + ')'));
    if (v.issues.length === 0) {
      box.appendChild(el('p', 'ok', '0 issues: the ' + v.profile + ' rules accept the view.'));
      return box;
    }
    box.appendChild(el('p', 'bad', v.issues.length + ' issue(s) in the view:'));
    var ul = el('ul');
    v.issues.forEach(function (x) {
      var li = el('li', null, x.rule + ': ' + x.message + ' (view message ' + x.viewIndex + ') ');
      if (x.at !== undefined) li.appendChild(link(k, x.at, 'history message ' + x.at));
      ul.appendChild(li);
    });
    box.appendChild(ul);
    return box;
  }

  function listPart(title, items, each) {
    var box = el('div', 'list');
    box.appendChild(heading(3, title));
    var ul = el('ul');
    items.forEach(function (x) { ul.appendChild(each(x)); });
    box.appendChild(ul);
    return box;
  }

  function messageEl(h, k, i, removedBefore) {
    var m = h.messages[i];
    var box = el('div', 'msg fate-' + m.fate);
    box.id = msgId(k, i);
    box.tabIndex = -1;
    box.setAttribute('data-index', String(i));
    box.setAttribute('data-fate', m.fate);
    (removedBefore[i] || []).forEach(function (r) { box.appendChild(el('p', 'repair-note', 'Repair: ' + r.action + ' of input message ' + r.index + ': ' + r.detail)); });
    var top = el('div', 'msg-head');
    top.appendChild(el('strong', null, m.role));
    top.appendChild(el('span', 'where', ' message ' + i + ' '));
    if (m.fate === 'summarized') top.appendChild(el('span', 'badge badge-covered', 'in the summary'));
    if (m.cleared) top.appendChild(el('span', 'badge badge-cleared', 'result cleared: ' + num(m.cleared.before) + ' to ' + num(m.cleared.after) + ' tokens'));
    if (m.repaired) top.appendChild(el('span', 'badge badge-repaired', 'repaired'));
    box.appendChild(top);
    h.validation.issues.forEach(function (x) {
      if (x.at === i) box.appendChild(el('p', 'issue', 'Provider issue (' + h.validation.profile + '): ' + x.rule + ': ' + x.message));
    });
    var long = m.body.length > BODY_SHOWN;
    var pre = el('pre', 'body', long ? m.body.slice(0, BODY_SHOWN) + '…' : m.body);
    box.appendChild(pre);
    if (long) {
      var more = el('button', 'more', 'Show all (' + num(m.body.length) + ' characters)');
      more.type = 'button';
      more.addEventListener('click', function () { pre.textContent = h.messages[i].body; more.remove(); });
      box.appendChild(more);
    }
    return box;
  }

  function groupEl(h, k, g, removedBefore) {
    var gr = h.groups[g];
    var cleared = 0, repaired = false;
    for (var i = gr.start; i < gr.end; i++) {
      if (h.messages[i].cleared) cleared++;
      if (h.messages[i].repaired || removedBefore[i]) repaired = true;
    }
    var box = el('article', 'group fate-' + gr.fate);
    box.tabIndex = 0;
    box.setAttribute('data-nav', '');
    box.setAttribute('data-group', String(g));
    box.setAttribute('data-start', String(gr.start));
    box.setAttribute('data-fate', gr.fate);
    box.setAttribute('aria-label', 'Group ' + (g + 1) + ' of ' + h.groups.length + ': ' + gr.kind + ', ' + FATE[gr.fate] +
      (cleared ? ', ' + cleared + ' tool result(s) cleared' : '') + (repaired ? ', repaired' : '') + '; ' + span(gr.start, gr.end));
    var top = el('div', 'group-head');
    top.appendChild(el('span', 'badge badge-' + gr.fate, FATE[gr.fate]));
    top.appendChild(el('span', 'kind', ' ' + gr.kind + ' '));
    top.appendChild(el('span', 'where', span(gr.start, gr.end)));
    if (cleared) top.appendChild(el('span', 'badge badge-cleared', cleared + ' cleared'));
    if (repaired) top.appendChild(el('span', 'badge badge-repaired', 'repaired'));
    box.appendChild(top);
    for (var j = gr.start; j < gr.end; j++) box.appendChild(messageEl(h, k, j, removedBefore));
    return box;
  }

  function timeline(h, k) {
    var box = el('div', 'timeline-part');
    box.appendChild(heading(3, 'Timeline: ' + num(h.groups.length) + ' groups, ' + num(h.messages.length) + ' messages'));
    box.appendChild(el('p', 'hint', 'j or ↓: next group; k or ↑: previous; Enter on a block opens it.'));
    var all = el('button', 'expand-all', 'Open every block');
    all.type = 'button';
    var list = el('div', 'timeline');
    box.appendChild(list);
    var removedBefore = {};
    h.repairs.forEach(function (r) {
      if (r.at !== undefined && /^removed/.test(r.action)) (removedBefore[r.at] = removedBefore[r.at] || []).push(r);
    });
    var blocks = [];
    opened[k] = blocks;
    var g = 0;
    while (g < h.groups.length) {
      var fate = h.groups[g].fate;
      var end = g;
      while (end < h.groups.length && h.groups[end].fate === fate) end++;
      if (h.cut !== undefined && h.groups[g].start === h.cut) {
        var cut = el('div', 'cut', '✂ Cut: the view resumes here, at message ' + h.cut + ', after what it summarized or dropped');
        cut.setAttribute('role', 'separator');
        cut.setAttribute('data-cut', String(h.cut));
        list.appendChild(cut);
      }
      if (end - g <= RUN_SHOWN) {
        for (var x = g; x < end; x++) list.appendChild(groupEl(h, k, x, removedBefore));
      } else {
        blocks.push(block(h, k, g, end, removedBefore, list));
      }
      g = end;
    }
    all.addEventListener('click', function () { blocks.forEach(function (b) { b.open(); }); });
    if (blocks.length > 0) box.insertBefore(all, list);
    return box;
  }

  function block(h, k, from, to, removedBefore, list) {
    var fate = h.groups[from].fate;
    var kinds = {};
    for (var g = from; g < to; g++) kinds[h.groups[g].kind] = (kinds[h.groups[g].kind] || 0) + 1;
    var what = Object.keys(kinds).map(function (x) { return num(kinds[x]) + ' ' + x; }).join(', ');
    var box = el('div', 'block fate-' + fate);
    var toggle = el('button', 'block-toggle', 'Open ' + num(to - from) + ' groups, ' + FATE[fate] + ': ' + span(h.groups[from].start, h.groups[to - 1].end) + ' (' + what + ')');
    toggle.type = 'button';
    toggle.setAttribute('data-nav', '');
    toggle.setAttribute('aria-expanded', 'false');
    var inner = el('div', 'block-groups');
    box.appendChild(toggle);
    box.appendChild(inner);
    list.appendChild(box);
    var b = {
      from: from, to: to, done: false,
      open: function () {
        if (b.done) return;
        b.done = true;
        var frag = document.createDocumentFragment();
        for (var g = from; g < to; g++) frag.appendChild(groupEl(h, k, g, removedBefore));
        inner.appendChild(frag);
        toggle.setAttribute('aria-expanded', 'true');
        toggle.textContent = num(to - from) + ' groups, ' + FATE[fate] + ': ' + span(h.groups[from].start, h.groups[to - 1].end);
        toggle.removeAttribute('data-nav');
        toggle.disabled = true;
      },
    };
    toggle.addEventListener('click', function () { b.open(); });
    return b;
  }

  function show(k, i) {
    var h = data.histories[k];
    var g = groupAt(h, i);
    (opened[k] || []).forEach(function (b) { if (g >= b.from && g < b.to) b.open(); });
    var target = document.getElementById(msgId(k, i));
    if (!target) return;
    target.scrollIntoView({ block: 'center' });
    target.focus({ preventScroll: true });
  }

  function section(h, k) {
    var sec = el('section', 'history');
    sec.id = 'h' + k;
    sec.setAttribute('aria-labelledby', 'h' + k + '-title');
    sec.setAttribute('data-groups', String(h.groups.length));
    var title = heading(2, h.label + ': ' + h.format + ', ' + num(h.messages.length) + ' messages');
    title.id = 'h' + k + '-title';
    sec.appendChild(title);
    if (h.overBudget) sec.appendChild(el('p', 'bad', 'Over budget: even the smallest valid view is over the window.'));
    sec.appendChild(tokenBar(h));
    sec.appendChild(checkPart(h, k));
    if (h.summary) sec.appendChild(summaryPart(h, k));
    sec.appendChild(factsPart(h, k));
    if (h.repairs.length > 0) sec.appendChild(listPart('Repairs (input message indexes)', h.repairs, function (r) {
      var li = el('li', null, r.action + ' at input message ' + r.index + ': ' + r.detail + ' ');
      if (r.at !== undefined) li.appendChild(link(k, r.at, 'see message ' + r.at));
      return li;
    }));
    if (h.notes.length > 0) sec.appendChild(listPart('Notes', h.notes, function (n) { return el('li', null, n); }));
    sec.appendChild(timeline(h, k));
    return sec;
  }

  if (data.histories.length > 1) {
    var nav = el('nav', 'index');
    nav.setAttribute('aria-label', 'Histories');
    nav.appendChild(heading(2, num(data.histories.length) + ' histories'));
    var ol = el('ol');
    data.histories.forEach(function (h, k) {
      var li = el('li');
      var a = el('a', null, h.label);
      a.href = '#h' + k;
      li.appendChild(a);
      li.appendChild(document.createTextNode(': ' + h.format + ', ' + num(h.messages.length) + ' messages, ' + num(h.tokens.before) + ' to ' + num(h.tokens.after) + ' tokens' + (h.summary ? ', summarized' : '') + (h.validation.issues.length ? ', ' + h.validation.issues.length + ' issue(s)' : '')));
      ol.appendChild(li);
    });
    nav.appendChild(ol);
    app.appendChild(nav);
  }
  data.histories.forEach(function (h, k) { app.appendChild(section(h, k)); });

  document.addEventListener('click', function (e) {
    var a = e.target.closest ? e.target.closest('a.msg-link') : null;
    if (!a) return;
    e.preventDefault();
    show(Number(a.getAttribute('data-h')), Number(a.getAttribute('data-target')));
  });
  document.addEventListener('keydown', function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    var key = e.key;
    var active = document.activeElement;
    var inNav = active && active.closest && active.closest('[data-nav], .msg');
    var dir = key === 'j' || (key === 'ArrowDown' && inNav) ? 1 : key === 'k' || (key === 'ArrowUp' && inNav) ? -1 : 0;
    if (dir === 0) return;
    var items = Array.prototype.slice.call(document.querySelectorAll('[data-nav]'));
    if (items.length === 0) return;
    var here = active && active.closest ? active.closest('[data-nav]') : null;
    var at = here ? items.indexOf(here) : -1;
    var next = at < 0 ? (dir > 0 ? items[0] : items[items.length - 1]) : items[Math.min(items.length - 1, Math.max(0, at + dir))];
    e.preventDefault();
    next.focus();
  });
  document.documentElement.setAttribute('data-ready', String(Math.round(performance.now())));
})();
`;
