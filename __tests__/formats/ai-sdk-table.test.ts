import { describe, expect, test } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InvalidToolApprovalError, MissingToolResultsError } from 'ai';
import type { RuleId } from '../../src/core/validate/rules.js';
import { validateMessages } from '../../src/formats/profiles.js';
import { repairHistory } from '../../src/index.js';
import type { AiSdkMessage } from '../../src/formats/ai-sdk/types.js';
import { checkAiSdk } from '../helpers/ai-sdk-checker.js';

/**
 * One row per documented way an AI SDK history breaks: what the AI SDK itself throws (its error
 * classes, built here from the installed `ai` package, give the exact text) and what the providers
 * behind it reject (../shared/provider-rules.md, I1-I4). Each broken sequence is rejected by the
 * `ai-sdk` profile with the rule id, the message index, the id and the wording; the fixed sequence
 * passes the profile and the independent checker, and repairing the broken one gives a valid history.
 */
interface Row {
  readonly name: string;
  /** Where the wording comes from: the AI SDK's error text, or a quote of the provider notes. */
  readonly source: { readonly sdk: string } | { readonly quote: string };
  readonly rule: RuleId;
  readonly index: number;
  readonly id: string;
  /** A piece of the violation's text that must come from `source` (absent: the wording is ctxfold's own). */
  readonly wording?: string;
  readonly broken: AiSdkMessage[];
  readonly fixed: AiSdkMessage[];
}

const NOTES_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'shared', 'provider-rules.md');
const NOTES = existsSync(NOTES_PATH) ? readFileSync(NOTES_PATH, 'utf8').replace(/\\"/g, '"') : undefined;

const tc = (id: string, name = 'lookup') => ({ type: 'tool-call', toolCallId: id, toolName: name, input: { q: 1 } });
const tr = (id: string, name = 'lookup') => ({ type: 'tool-result', toolCallId: id, toolName: name, output: { type: 'text', value: `result of ${id}` } });
const calls = (...ids: string[]): AiSdkMessage => ({ role: 'assistant', content: ids.map((id) => tc(id)) });
const tool = (...ids: string[]): AiSdkMessage => ({ role: 'tool', content: ids.map((id) => tr(id)) });
const user = (content: string): AiSdkMessage => ({ role: 'user', content });
const say = (content: string): AiSdkMessage => ({ role: 'assistant', content });

const sdkMissing = (...ids: string[]) => new MissingToolResultsError({ toolCallIds: ids }).message;

const ROWS: readonly Row[] = [
  {
    name: 'AI SDK: a call without a result before the next user message (MissingToolResultsError)',
    source: { sdk: sdkMissing('c1') }, rule: 'call-unanswered', index: 1, id: 'c1', wording: sdkMissing('c1'),
    broken: [user('u'), calls('c1'), user('again')],
    fixed: [user('u'), calls('c1'), tool('c1'), user('again')],
  },
  {
    name: 'AI SDK: two calls without results (plural wording)',
    source: { sdk: sdkMissing('c1', 'c2') }, rule: 'call-unanswered', index: 1, id: 'c1', wording: sdkMissing('c1', 'c2'),
    broken: [user('u'), calls('c1', 'c2'), { role: 'system', content: 'late instructions' }],
    fixed: [user('u'), calls('c1', 'c2'), tool('c2', 'c1'), { role: 'system', content: 'late instructions' }],
  },
  {
    name: 'AI SDK: a call without a result at the end of the history',
    source: { sdk: sdkMissing('c2') }, rule: 'call-unanswered', index: 1, id: 'c2', wording: sdkMissing('c2'),
    broken: [user('u'), calls('c1', 'c2'), tool('c1')],
    fixed: [user('u'), calls('c1', 'c2'), tool('c1'), tool('c2')],
  },
  {
    name: 'AI SDK: approved in a message that is not the last, so never run (MissingToolResultsError)',
    source: { sdk: sdkMissing('c1') }, rule: 'call-unanswered', index: 1, id: 'c1', wording: sdkMissing('c1'),
    broken: [user('u'), { role: 'assistant', content: [tc('c1'), { type: 'tool-approval-request', approvalId: 'a1', toolCallId: 'c1' }] }, { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'a1', approved: true }] }, say('waiting')],
    fixed: [user('u'), { role: 'assistant', content: [tc('c1'), { type: 'tool-approval-request', approvalId: 'a1', toolCallId: 'c1' }] }, { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'a1', approved: true }] }, tool('c1'), say('done')],
  },
  {
    name: 'AI SDK: an approval response for no request (InvalidToolApprovalError)',
    source: { sdk: new InvalidToolApprovalError({ approvalId: 'a9' }).message }, rule: 'result-orphan', index: 2, id: 'a9', wording: new InvalidToolApprovalError({ approvalId: 'a9' }).message,
    broken: [user('u'), calls('c1'), { role: 'tool', content: [tr('c1'), { type: 'tool-approval-response', approvalId: 'a9', approved: true }] }],
    fixed: [user('u'), calls('c1'), tool('c1')],
  },
  {
    name: 'OpenAI (I3): assistant text between a call and its result',
    source: { quote: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'." }, rule: 'result-orphan', index: 3, id: 'c1',
    wording: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
    broken: [user('u'), calls('c1'), say('thinking out loud'), tool('c1')],
    fixed: [user('u'), calls('c1'), tool('c1'), say('thinking out loud')],
  },
  {
    name: 'OpenAI (I2): a result with no call before it (history cut after the call)',
    source: { quote: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'." }, rule: 'result-orphan', index: 0, id: 'c1',
    wording: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
    broken: [tool('c1'), say('done'), user('next')],
    fixed: [say('done'), user('next')],
  },
  {
    name: 'OpenAI (I2): a result for a call of an earlier turn',
    source: { quote: "Invalid parameter: 'tool_call_id' of 'call_XXXXXXXXX' not found in 'tool_calls' of previous message." }, rule: 'result-orphan', index: 5, id: 'c1',
    wording: "not found in 'tool_calls' of previous message.",
    broken: [user('u'), calls('c1'), tool('c1'), user('more'), calls('c2'), { role: 'tool', content: [tr('c2'), tr('c1')] }],
    fixed: [user('u'), calls('c1'), tool('c1'), user('more'), calls('c2'), tool('c2')],
  },
  {
    name: 'OpenAI (I4): a call answered twice',
    source: { quote: "Invalid parameter: Duplicate value for 'tool_call_id' of 'call_gmd4tanjXcwOxfPawOnDmq6R', in messages[7] and messages[8]." }, rule: 'result-duplicate', index: 3, id: 'c1',
    wording: "Invalid parameter: Duplicate value for 'tool_call_id' of",
    broken: [user('u'), calls('c1'), tool('c1'), tool('c1')],
    fixed: [user('u'), calls('c1'), tool('c1')],
  },
  {
    name: 'Mistral V13 / MiniMax (I4): one id on two calls of an assistant message',
    source: { quote: 'Duplicate tool call id {id} in assistant message' }, rule: 'call-id-duplicate', index: 1, id: 'c1',
    wording: 'in assistant message',
    broken: [user('u'), calls('c1', 'c1'), tool('c1')],
    fixed: [user('u'), calls('c1', 'c2'), tool('c1', 'c2')],
  },
  {
    name: 'Anthropic server tools: a provider-executed result with no call before it',
    source: { quote: 'Each `advisor_tool_result` block must have a corresponding `server_tool_use` block before it.' }, rule: 'provider-result-orphan', index: 1, id: 's1',
    broken: [user('u'), { role: 'assistant', content: [tr('s1'), { type: 'text', text: 'found' }] }],
    fixed: [user('u'), { role: 'assistant', content: [{ ...tc('s1'), providerExecuted: true }, tr('s1'), { type: 'text', text: 'found' }] }],
  },
];

describe('ai-sdk profile: documented broken sequences', () => {
  test.each(ROWS.map((r) => [r.name, r] as const))('%s', (_name, row) => {
    const violations = validateMessages(row.broken, 'ai-sdk');
    const hit = violations.find((v) => v.rule === row.rule && v.index === row.index);
    expect(hit).toBeDefined();
    expect(hit!.id).toBe(row.id);
    expect(hit!.message).toMatch(new RegExp(`^messages\\[${row.index}\\]`));
    if (row.wording !== undefined) expect(hit!.message).toContain(row.wording);
    if ('quote' in row.source && NOTES !== undefined) expect(NOTES).toContain(row.source.quote);
    if ('quote' in row.source && row.wording !== undefined) expect(row.source.quote.replace('{id} ', '')).toContain(row.wording);
    if ('sdk' in row.source) expect(hit!.message.endsWith(`]: ${row.source.sdk}`)).toBe(true);
    expect(checkAiSdk(row.broken).length).toBeGreaterThan(0);

    expect(validateMessages(row.fixed, 'ai-sdk')).toEqual([]);
    expect(checkAiSdk(row.fixed)).toEqual([]);

    // Repair makes every pairing row valid (a provider result without its call is not a pairing problem: it is left alone).
    if (row.rule !== 'call-id-duplicate' && row.rule !== 'provider-result-orphan') {
      const repaired = repairHistory(row.broken, { format: 'ai-sdk' }).messages;
      expect(validateMessages(repaired, 'ai-sdk')).toEqual([]);
      expect(checkAiSdk(repaired)).toEqual([]);
    }
  });

  test('the AI SDK wording is its own: MissingToolResultsError text for one and for several calls', () => {
    expect(sdkMissing('x')).toBe('Tool result is missing for tool call x.');
    expect(sdkMissing('x', 'y')).toBe('Tool results are missing for tool calls x, y.');
  });
});
