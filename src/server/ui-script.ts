/**
 * The script of the proxy's `/ui` page, as text. It asks for the caller's API key (and, optionally,
 * the tenant header's value), keeps it in a variable (in `sessionStorage` too, only when the user
 * ticks "keep for this tab"), sends it as `Authorization: Bearer` on its own requests to
 * `v1/ctxfold/chats` (relative to the page: the same origin), never writes it into the page, and
 * empties the key field once read. Every text of an answer reaches the page through
 * `textContent`, never as markup. Hooks for tests: `data-count` on the list once drawn,
 * `data-chat` on the chat section once drawn, `data-ready` on the root once the script ran.
 * Plain ES2017, no template literals, and no `</` sequence (it is inlined in a script element).
 */
export const UI_SCRIPT = String.raw`(function () {
  'use strict';
  var root = document.documentElement;
  var tenantHeader = root.getAttribute('data-tenant-header');
  var KEPT = 'ctxfold-ui-caller';
  var SPLIT = [['head', 'head'], ['summary', 'summary'], ['middle', 'verbatim middle'], ['tail', 'kept tail'], ['notes', 'notes'], ['tools', 'tools'], ['overhead', 'overhead']];
  var caller = null;
  var form = document.getElementById('login');
  var keyInput = document.getElementById('key');
  var tenantInput = document.getElementById('tenant');
  var remember = document.getElementById('remember');
  var status = document.getElementById('status');
  var list = document.getElementById('chat-list');
  var chatBox = document.getElementById('chat');

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function num(n) { return Number(n).toLocaleString('en-US'); }
  function when(iso) { return iso ? new Date(iso).toLocaleString() : 'never'; }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function say(text, bad) {
    status.textContent = text;
    status.className = bad ? 'bad' : 'hint';
  }

  function headers() {
    var h = { authorization: 'Bearer ' + caller.key };
    if (caller.tenant) h[tenantHeader] = caller.tenant;
    return h;
  }
  function ask(path) {
    return fetch(path, { headers: headers(), cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer' }).then(function (res) {
      return res.json().then(function (body) {
        if (res.ok) return body;
        var message = body && body.error && body.error.message ? body.error.message : 'HTTP ' + res.status;
        throw { message: message + ' (HTTP ' + res.status + ')' };
      });
    });
  }

  function row(table, cells, tag) {
    var tr = el('tr');
    cells.forEach(function (c, i) { tr.appendChild(el(tag || 'td', i > 0 && tag !== 'th' ? 'n' : null, c)); });
    table.appendChild(tr);
  }

  function drawList(answer) {
    clear(list);
    answer.data.forEach(function (c) {
      var li = el('li');
      var b = el('button', 'chat-pick', c.id);
      b.type = 'button';
      b.setAttribute('data-id', c.id);
      b.addEventListener('click', function () { openChat(c.id); });
      li.appendChild(b);
      li.appendChild(el('span', 'where', ' summary v' + c.summaryVersion + ', job ' + c.job + ', last active ' + when(c.lastActivity)));
      list.appendChild(li);
    });
    if (answer.data.length === 0) list.appendChild(el('li', 'hint', 'No chats for this key yet.'));
    list.setAttribute('data-count', String(answer.data.length));
    var notes = [];
    if (answer.truncated) notes.push('only the ' + answer.data.length + ' most recent are listed');
    if (!answer.fromStore) notes.push('this store cannot list chats: only those this proxy served since it started are listed');
    say(answer.data.length + ' chat(s)' + (notes.length ? ' (' + notes.join('; ') + ')' : '') + '.', false);
  }

  function loadList() {
    say('Loading your chats...', false);
    return ask('v1/ctxfold/chats').then(drawList, function (e) { list.removeAttribute('data-count'); say(e.message, true); });
  }

  function splitPart(v) {
    var box = el('div', 'tokens');
    box.appendChild(el('h3', null, 'Last view (this proxy, ' + when(v.at) + ')'));
    var used = 0;
    SPLIT.forEach(function (s) { used += v.split[s[0]]; });
    var total = Math.max(v.maxContextTokens || 0, used + v.reservedOutputTokens, 1);
    box.appendChild(el('p', null, 'The view: ' + num(v.tokensAfter) + ' tokens of ' + num(v.messagesAfter) + ' messages (the history: ' + num(v.tokensBefore) +
      ' tokens, ' + num(v.messagesBefore) + ' messages)' + (v.maxContextTokens ? '; window ' + num(v.maxContextTokens) : '; no window') +
      '; summary ' + (v.summaryApplied ? 'applied' : 'not applied') + '.'));
    var rows = SPLIT.map(function (s) { return [s[0], s[1], v.split[s[0]]]; }).concat([['reserved', 'reply reserve', v.reservedOutputTokens]]);
    var bar = el('div', 'bar');
    bar.setAttribute('role', 'img');
    var parts = [];
    rows.forEach(function (r) {
      if (r[2] <= 0) return;
      var seg = el('span', 'seg seg-' + r[0]);
      seg.style.width = (100 * r[2] / total) + '%';
      seg.title = r[1] + ': ' + num(r[2]) + ' tokens';
      bar.appendChild(seg);
      parts.push(r[1] + ' ' + num(r[2]));
    });
    bar.setAttribute('aria-label', 'Token split of ' + num(total) + ': ' + parts.join(', '));
    box.appendChild(bar);
    var table = el('table', 'legend split');
    row(table, ['part', 'tokens', 'share of the bar'], 'th');
    rows.forEach(function (r) {
      var tr = el('tr');
      tr.setAttribute('data-part', r[0]);
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

  function drawChat(c) {
    clear(chatBox);
    chatBox.appendChild(el('h2', null, 'Chat ' + c.id));
    var job = el('p', 'job', 'Summary job: ' + c.job.state + (c.job.lastError ? '; last error ' + c.job.lastError.code + ' at ' + when(c.job.lastError.at) : '') + '. Last active ' + when(c.lastActivity) + '.');
    chatBox.appendChild(job);
    var s = c.summary;
    var sum = el('div', 'summary');
    sum.appendChild(el('h3', null, 'Summary in force'));
    if (s) {
      sum.appendChild(el('p', 'summary-facts', 'Version ' + s.version + ', by the ' + s.summarizer + ' summarizer' + (s.model ? ' (' + s.model + ')' : '') +
        ': covers ' + num(s.coveredMessages) + ' messages, ' + num(s.tokensBefore) + ' tokens folded into ' + num(s.tokensAfter) + '; updated ' + when(s.updatedAt) + '.'));
      var ids = el('details');
      ids.appendChild(el('summary', null, 'The ' + num(s.coveredIds.length) + ' message ids it covers'));
      ids.appendChild(el('pre', 'ids', s.coveredIds.join('\n')));
      sum.appendChild(ids);
      var text = el('details');
      text.appendChild(el('summary', null, 'Its text'));
      text.appendChild(el('pre', 'summary-text', s.text));
      sum.appendChild(text);
    } else {
      sum.appendChild(el('p', null, 'None yet: the chat has not reached its summary threshold, or its first summary is still being made.'));
    }
    chatBox.appendChild(sum);
    var versions = el('div', 'versions');
    versions.appendChild(el('h3', null, 'Versions this proxy committed'));
    if (c.versions.length === 0) versions.appendChild(el('p', 'hint', 'None since this proxy started.'));
    else {
      var table = el('table', 'legend');
      row(table, ['version', 'messages covered', 'added', 'tokens folded', 'summary tokens', 'when'], 'th');
      c.versions.forEach(function (v) {
        row(table, ['v' + v.version, num(v.coveredMessages), num(v.added.messages) + (v.added.firstId ? ' (' + v.added.firstId + ' to ' + v.added.lastId + ')' : ''), num(v.tokensBefore), num(v.tokensAfter), when(v.at)]);
      });
      versions.appendChild(table);
    }
    chatBox.appendChild(versions);
    if (c.lastView) chatBox.appendChild(splitPart(c.lastView));
    else chatBox.appendChild(el('p', 'hint', 'No view made by this proxy since it started.'));
    chatBox.setAttribute('data-chat', c.id);
  }

  function openChat(id) {
    say('Loading ' + id + '...', false);
    return ask('v1/ctxfold/chats/' + encodeURIComponent(id)).then(function (c) { drawChat(c); say('Chat ' + id + '.', false); }, function (e) { say(e.message, true); });
  }

  form.addEventListener('submit', function (e) {
    e.preventDefault();
    var key = keyInput.value.trim();
    keyInput.value = '';
    if (key === '') { say('Enter the API key your chats were made with.', true); return; }
    caller = { key: key, tenant: tenantInput.value.trim() };
    try {
      if (remember.checked) sessionStorage.setItem(KEPT, JSON.stringify(caller));
      else sessionStorage.removeItem(KEPT);
    } catch (ignored) { /* storage may be off: the key stays in memory */ }
    loadList();
  });
  document.getElementById('refresh').addEventListener('click', function () { if (caller) loadList(); });
  document.getElementById('forget').addEventListener('click', function () {
    caller = null;
    try { sessionStorage.removeItem(KEPT); } catch (ignored) { /* nothing kept */ }
    clear(list);
    list.removeAttribute('data-count');
    clear(chatBox);
    chatBox.removeAttribute('data-chat');
    say('The key is forgotten.', false);
  });
  try {
    var kept = JSON.parse(sessionStorage.getItem(KEPT) || 'null');
    if (kept && typeof kept.key === 'string') {
      caller = { key: kept.key, tenant: typeof kept.tenant === 'string' ? kept.tenant : '' };
      remember.checked = true;
      loadList();
    }
  } catch (ignored) { /* nothing kept */ }
  root.setAttribute('data-ready', String(Math.round(performance.now())));
})();
`;
