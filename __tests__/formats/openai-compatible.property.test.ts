import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import type { Violation } from '../../src/core/validate/rules.js';
import { validateMessages } from '../../src/formats/profiles.js';
import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';
import { dashscopeProfile } from '../../src/formats/openai-compatible/dashscope.js';
import { anyHistory, brokenHistory, validHistory } from '../helpers/arbitraries.js';
import { mistralOrderAndCountProblems } from '../helpers/openai-compatible-checker.js';
import { formatPropertyParams } from '../helpers/property-runs.js';

/** The order and count faults of a violation list, as sorted `rule@index` strings. */
const orderAndCount = (v: readonly Violation[]) => v.filter((x) => x.rule === 'role-order' || x.rule === 'result-count').map((x) => `${x.rule}@${x.index}`).sort();
const checkerSays = (messages: readonly OpenAIChatMessage[]) => mistralOrderAndCountProblems(messages).map((p) => `${p.rule}@${p.index}`).sort();
const placed = (v: readonly Violation[]) => v.map((x) => `${x.rule}@${x.index}:${x.id ?? ''}`);

/**
 * A valid OpenAI history made to follow Mistral's order: an assistant message goes between a tool
 * (or function) message and a user, system or developer message after it, and a user message
 * between an assistant message and a system or developer message after it.
 */
function bridged(messages: readonly OpenAIChatMessage[]): OpenAIChatMessage[] {
  const out: OpenAIChatMessage[] = [];
  const isResult = (m: OpenAIChatMessage | undefined) => m?.role === 'tool' || m?.role === 'function';
  const isSystem = (m: OpenAIChatMessage) => m.role === 'system' || m.role === 'developer';
  for (const m of messages) {
    const last = out[out.length - 1];
    if (isResult(last) && (m.role === 'user' || isSystem(m))) out.push({ role: 'assistant', content: 'noted' });
    if (out[out.length - 1]?.role === 'assistant' && isSystem(m)) out.push({ role: 'user', content: 'go on' });
    out.push(m);
  }
  return out;
}

/** Mistral-specific faults on top of the generated ones: a tool message moved before a user message, an assistant message split. */
const mistralFaultArb = fc.tuple(validHistory({ maxMessages: 40 }), fc.nat(), fc.constantFrom('swap', 'split', 'drop-bridge', 'none'))
  .map(([history, at, kind]) => {
    const h = bridged(history);
    const i = h.length === 0 ? 0 : at % h.length;
    if (kind === 'swap' && i + 1 < h.length) [h[i], h[i + 1]] = [h[i + 1], h[i]];
    if (kind === 'split') {
      const m = h[i];
      if (m?.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 1) {
        h.splice(i, 1, { ...m, tool_calls: m.tool_calls.slice(0, 1) }, { ...m, content: null, tool_calls: m.tool_calls.slice(1) });
      }
    }
    if (kind === 'drop-bridge') {
      const k = h.findIndex((m, j) => j >= i && m.content === 'noted');
      if (k >= 0) h.splice(k, 1);
    }
    return h;
  });

describe('mistral profile and the independent checker agree on role order and call/response counts', () => {
  test('on random OpenAI histories, valid and broken: the same faults at the same messages', () => {
    let faulty = 0;
    fc.assert(fc.property(anyHistory({ maxMessages: 60 }), (history) => {
      const ours = orderAndCount(validateMessages(history, 'mistral'));
      expect(ours).toEqual(checkerSays(history));
      if (ours.length > 0) faulty++;
    }), formatPropertyParams());
    expect(faulty).toBeGreaterThan(formatPropertyParams().numRuns / 5);
  });

  test('on histories brought into Mistral order, then broken in Mistral\'s own ways (swap, split, a bridge removed)', () => {
    let faulty = 0;
    fc.assert(fc.property(mistralFaultArb, (history) => {
      const ours = orderAndCount(validateMessages(history, 'mistral'));
      expect(ours).toEqual(checkerSays(history));
      if (ours.length > 0) faulty++;
    }), formatPropertyParams());
    // The faults are common enough for agreement on them to mean something.
    expect(faulty).toBeGreaterThan(formatPropertyParams().numRuns / 5);
  });

  test('a valid OpenAI history brought into Mistral order has no order or count fault on either side', () => {
    fc.assert(fc.property(validHistory({ maxMessages: 60 }), (history) => {
      const h = bridged(history);
      expect(orderAndCount(validateMessages(h, 'mistral'))).toEqual([]);
      expect(checkerSays(h)).toEqual([]);
    }), formatPropertyParams());
  });
});

describe('the profiles built on the OpenAI rules find what the openai profile finds', () => {
  test('deepseek and dashscope: the same rules at the same messages with the same ids; every message starts with its index', () => {
    fc.assert(fc.property(anyHistory({ maxMessages: 60 }), (history) => {
      const openai = placed(validateMessages(history, 'openai'));
      for (const v of [validateMessages(history, 'deepseek'), validateMessages(history, dashscopeProfile)]) {
        expect(placed(v)).toEqual(openai);
        expect(v.filter((x) => !x.message.startsWith(`messages[${x.index}]: `))).toEqual([]);
      }
    }), formatPropertyParams());
  });

  test('result-as-user is only ever reported for a call that a call-unanswered violation before it names', () => {
    let seen = 0;
    fc.assert(fc.property(brokenHistory({ maxMessages: 60 }), (history) => {
      const v = validateMessages(history, 'openai');
      for (const r of v.filter((x) => x.rule === 'result-as-user')) {
        seen++;
        const named = v.some((u) => u.rule === 'call-unanswered' && u.index < r.index && (r.id === undefined || u.message.includes(r.id)));
        expect([r.message, named]).toEqual([r.message, true]);
      }
    }), formatPropertyParams());
    // The generator puts user text (JSON now and then) between calls and results: the rule does fire.
    expect(seen).toBeGreaterThan(0);
  });
});

/**
 * The Qwen3 template's pairing, read from the notes and written apart from src: the tool messages
 * right after an assistant message with tool_calls must be as many as its calls; a run of tool
 * messages right after anything else answers no call. Faults in message order.
 */
function positionalFaults(messages: readonly OpenAIChatMessage[]): string[] {
  const faults: string[] = [];
  let i = 0;
  while (i < messages.length) {
    if (messages[i].role === 'tool') {
      // Reached outside a call's run: the whole run follows no call.
      while (i < messages.length && messages[i].role === 'tool') faults.push(`result-orphan@${i++}`);
      continue;
    }
    const opener = i;
    const m = messages[i++];
    const calls = m.role === 'assistant' && Array.isArray(m.tool_calls) ? m.tool_calls.length : 0;
    if (calls === 0) continue;
    let answers = 0;
    while (i < messages.length && messages[i].role === 'tool') {
      answers++;
      i++;
    }
    if (answers !== calls) faults.push(`result-count@${opener}`);
  }
  return faults;
}

describe('qwen-template on generated histories', () => {
  test('a valid OpenAI history with a user message breaks no template rule (results in any order: the template counts, it does not read ids)', () => {
    fc.assert(fc.property(validHistory({ maxMessages: 60 }), (history) => {
      expect(validateMessages([{ role: 'user', content: 'go' }, ...history], 'qwen-template')).toEqual([]);
    }), formatPropertyParams());
  });

  test('on broken histories, the count and orphan faults are the ones a positional reading finds', () => {
    fc.assert(fc.property(brokenHistory({ maxMessages: 60 }), (history) => {
      const h: OpenAIChatMessage[] = [{ role: 'user', content: 'go' }, ...history];
      const qwen = validateMessages(h, 'qwen-template').filter((v) => v.rule !== 'no-user-query').map((v) => `${v.rule}@${v.index}`);
      expect(qwen).toEqual(positionalFaults(h));
    }), formatPropertyParams());
  });
});
