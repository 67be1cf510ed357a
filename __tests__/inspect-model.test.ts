/**
 * The inspect page's model and its embedding, without a browser: the data survives the script
 * element whatever its text, every message gets the fate the report gives it, and a ledger line's
 * `@n` points at the n-th summarized message.
 */
import { describe, expect, test } from '@jest/globals';
import { embeddedJson, escapeHtml, renderPage } from '../src/inspect/html.js';
import { historyModel } from '../src/inspect/model.js';
import { analyzeContext } from '../src/runtime/compress.js';
import { compressWithSummary } from '../src/runtime/one-shot.js';
import { resolveCompressOptions } from '../src/runtime/options.js';
import { createExtractiveSummarizer } from '../src/summarize/extractive.js';
import { validateMessages } from '../src/formats/profiles.js';
import { generateConversation } from '../bench/fixtures/conversation.js';

interface RawMessage {
  role: string;
  tool_call_id?: string;
  tool_calls?: { id: string; function: { name: string } }[];
}

describe('embedding', () => {
  test('a text holding </script>, <!-- and line separators comes back equal and never closes the element', () => {
    const value = { text: '</script><script>alert(1)</script> <!-- \u2028\u2029 & "q"' };
    const json = embeddedJson(value);
    expect(json).not.toMatch(/<|\u2028|\u2029/);
    expect(JSON.parse(json)).toEqual(value);
  });

  test('escapeHtml writes the five characters as entities', () => {
    expect(escapeHtml('<a href="x">&\'</a>')).toBe('&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;');
  });

  test('the page loads nothing: a content security policy of default-src none, and no URL but data:', () => {
    const html = renderPage({ title: '<t>', histories: [] });
    expect(html).toContain("default-src 'none'");
    expect(html).toContain('<title>&lt;t&gt;</title>');
    expect(html.match(/(?:src|href)="([^"]*)"/g)).toEqual(['href="data:,"']);
  });
});

describe('historyModel', () => {
  const chat = generateConversation({ messages: 120, seed: 4 });

  test('every message has the fate the report gives it, the cut follows the last message left out, ledger lines point at their source', async () => {
    const options = { maxContextTokens: 4000, compressionThresholdTokens: 3000 };
    const { messages: view, report, coveredIds } = await compressWithSummary(chat, { ...options, summarizer: createExtractiveSummarizer() });
    const analysis = analyzeContext(chat, resolveCompressOptions(options));
    const model = historyModel({
      label: 'chat', original: chat, input: analysis.input, lens: analysis.lens, grouping: analysis.grouping, view, report, coveredIds,
      profile: 'openai', violations: validateMessages(view, 'openai'),
    });
    const left = new Map(report.dropped.map((d) => [d.index, d.reason]));
    model.messages.forEach((m, i) => {
      const expected = left.get(i) === 'summarized' ? 'summarized' : left.get(i) === 'budget' ? 'dropped' : i < report.headEnd ? 'head' : i >= report.protectedStart ? 'tail' : m.fate;
      expect({ i, fate: m.fate }).toEqual({ i, fate: expected });
    });
    expect(model.cut).toBe(Math.max(...report.dropped.map((d) => d.index)) + 1);
    expect(model.groups.map((g) => [g.start, g.end])).toEqual(analysis.grouping.groups.map((g) => [g.start, g.end]));
    expect(model.summary?.coveredIds).toEqual(coveredIds);
    expect(model.validation.issues).toEqual([]);
    const linked = model.summary!.ledger.filter((l) => l.target !== undefined);
    expect(linked.length).toBeGreaterThan(0);
    const raw = chat as RawMessage[];
    for (const l of linked) {
      const source = /^- \[(\S+?)(?:#\d+)? @/.exec(l.text)![1];
      const m = raw[l.target!];
      // A line names a turn by its role, or a tool: its call (the assistant message) or its result.
      let named = m.role;
      if (m.role === 'tool') named = raw.slice(0, l.target).flatMap((x) => x.tool_calls ?? []).reverse().find((c) => c.id === m.tool_call_id)?.function.name ?? '?';
      else if (m.tool_calls?.some((c) => c.function.name === source)) named = source;
      expect({ line: l.text, named }).toEqual({ line: l.text, named: source });
    }
  });
});
