import { describe, expect, test } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RuleId } from '../../src/core/validate/rules.js';
import type { Profile } from '../../src/core/validate/validate.js';
import { validateMessages, type ProfileName } from '../../src/formats/profiles.js';
import type { OpenAIChatMessage, OpenAIToolCall } from '../../src/formats/openai-chat/types.js';
import { dashscopeProfile } from '../../src/formats/openai-compatible/dashscope.js';
import { deepseekProfile } from '../../src/formats/openai-compatible/deepseek.js';
import { deepseekReasoningKept } from '../../src/formats/openai-compatible/deepseek-rules.js';
import { corpusDescribe, loadCorpus } from '../helpers/corpus.js';

/**
 * One row per documented error of the provider notes (../shared/provider-rules.md) for OpenAI Chat
 * and the OpenAI-compatible providers: a broken sequence, the profile that must reject it, the rule
 * id, the message index and call id of the violation, a distinctive piece of its wording, and the
 * fixed sequence that the same profile accepts.
 *
 * `quote` is the documented text (or, for the template rules, which raise nothing, the notes'
 * description) and must be found in the notes; where the violation carries the provider's own
 * words (`own` unset), `wording` must be part of `quote`.
 */
interface Row {
  readonly provider: string;
  readonly quote: string;
  readonly profile: ProfileName | Profile<OpenAIChatMessage>;
  readonly rule: RuleId;
  readonly index: number;
  readonly id?: string;
  readonly wording: string;
  /** The wording is ctxfold's, not the provider's (the provider has no text of its own for it, or another profile stands in). */
  readonly own?: string;
  readonly broken: OpenAIChatMessage[];
  readonly fixed: OpenAIChatMessage[];
}

const NOTES_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'shared', 'provider-rules.md');
/** The notes with Markdown's backslash escapes undone, so quotes compare as the provider sent them. */
const NOTES = existsSync(NOTES_PATH) ? readFileSync(NOTES_PATH, 'utf8').replace(/\\"/g, '"') : undefined;

const fn = (id: string, name = 'lookup'): OpenAIToolCall => ({ id, type: 'function', function: { name, arguments: '{"q":1}' } });
const calls = (...ids: string[]): OpenAIChatMessage => ({ role: 'assistant', content: null, tool_calls: ids.map((id) => fn(id)) });
const tool = (id: string, content = `result of ${id}`): OpenAIChatMessage => ({ role: 'tool', tool_call_id: id, content });
const user = (content: string): OpenAIChatMessage => ({ role: 'user', content });
const say = (content: string): OpenAIChatMessage => ({ role: 'assistant', content });
const system: OpenAIChatMessage = { role: 'system', content: 'be brief' };

/** The deepseek profile with the opt-in thinking-mode rule. */
const deepseekThinking: Profile<OpenAIChatMessage> = { ...deepseekProfile, name: 'deepseek-thinking', rules: [...deepseekProfile.rules, deepseekReasoningKept] };

/** Mistral-shaped ids: 9 characters of a-z, A-Z, 0-9. */
const A = 'abcDEF123';
const B = 'xyz987QRS';

const ROWS: readonly Row[] = [
  // OpenAI Chat Completions.
  {
    provider: 'OpenAI', profile: 'openai', rule: 'call-unanswered', index: 1, id: 'call_b',
    quote: "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages:",
    wording: 'The following tool_call_ids did not have response messages: call_b',
    own: 'the documented text with the real id',
    broken: [user('go'), calls('call_a', 'call_b'), tool('call_a'), user('and?')],
    fixed: [user('go'), calls('call_a', 'call_b'), tool('call_a'), tool('call_b'), user('and?')],
  },
  {
    provider: 'OpenAI', profile: 'openai', rule: 'result-orphan', index: 0, id: 'call_x',
    quote: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
    wording: "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'",
    broken: [tool('call_x'), user('hi')],
    fixed: [user('hi')],
  },
  {
    provider: 'OpenAI', profile: 'openai', rule: 'result-orphan', index: 3, id: 'call_zz',
    quote: "Invalid parameter: 'tool_call_id' of 'call_XXXXXXXXX' not found in 'tool_calls' of previous message.",
    wording: "Invalid parameter: 'tool_call_id' of 'call_zz' not found in 'tool_calls' of previous message.",
    own: 'the documented text with the real id in place of the placeholder',
    broken: [user('go'), calls('call_a'), tool('call_a'), tool('call_zz'), user('ok')],
    fixed: [user('go'), calls('call_a'), tool('call_a'), user('ok')],
  },
  {
    provider: 'OpenAI', profile: 'openai', rule: 'result-missing-id', index: 3,
    quote: "Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.",
    wording: "Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.",
    broken: [user('go'), calls('call_a'), tool('call_a'), { role: 'tool', content: 'lost' }, user('ok')],
    fixed: [user('go'), calls('call_a'), tool('call_a'), user('ok')],
  },
  {
    provider: 'OpenAI', profile: 'openai', rule: 'result-duplicate', index: 4, id: 'call_a',
    quote: "Invalid parameter: Duplicate value for 'tool_call_id' of '",
    wording: "Invalid parameter: Duplicate value for 'tool_call_id' of 'call_a', in messages[2] and messages[4].",
    own: 'the documented text with the real id and indexes',
    broken: [user('go'), calls('call_a', 'call_b'), tool('call_a'), tool('call_b'), tool('call_a', 'again'), user('ok')],
    fixed: [user('go'), calls('call_a', 'call_b'), tool('call_a'), tool('call_b'), user('ok')],
  },
  {
    provider: 'OpenAI (legacy)', profile: 'openai', rule: 'function-missing-name', index: 2,
    quote: "Missing parameter 'name': messages with role 'function' must have a 'name'.",
    wording: "Missing parameter 'name': messages with role 'function' must have a 'name'.",
    broken: [user('time?'), { role: 'assistant', content: null, function_call: { name: 'clock', arguments: '{}' } }, { role: 'function', content: '12:00' }],
    fixed: [user('time?'), { role: 'assistant', content: null, function_call: { name: 'clock', arguments: '{}' } }, { role: 'function', name: 'clock', content: '12:00' }],
  },
  {
    provider: 'OpenAI (legacy)', profile: 'openai', rule: 'function-call-not-assistant', index: 0,
    quote: "Invalid parameter: only messages with role 'assistant' can have a function call.",
    wording: "Invalid parameter: only messages with role 'assistant' can have a function call.",
    broken: [{ role: 'user', content: 'x', function_call: { name: 'f', arguments: '{}' } }],
    fixed: [user('x')],
  },
  {
    provider: 'OpenAI (user between calls and results)', profile: 'openai', rule: 'call-unanswered', index: 1, id: 'call_a',
    quote: "Interleaving user message between tool_calls and tool msgs => the \"must be followed by tool messages\" 400",
    wording: 'must be followed by tool messages',
    broken: [user('go'), calls('call_a'), user('hurry'), tool('call_a')],
    fixed: [user('go'), calls('call_a'), tool('call_a'), user('hurry')],
  },
  {
    provider: 'OpenAI (misc)', profile: 'openai', rule: 'content-null', index: 1,
    quote: "Invalid value for 'content': expected a string, got null.",
    wording: "Invalid value for 'content': expected a string, got null.",
    broken: [user('go'), { role: 'assistant', content: null }],
    fixed: [user('go'), say('')],
  },
  {
    provider: 'OpenAI (result sent as user text)', profile: 'openai', rule: 'result-as-user', index: 2, id: 'call_a',
    quote: 'Every call answered exactly once (before next non-result message).',
    wording: 'this user message looks like the output of tool call call_a (lookup) sent as a user message; send it as role `tool` with `tool_call_id` call_a',
    own: 'a diagnosis: no provider text; reported besides call-unanswered',
    broken: [user('go'), calls('call_a'), user('{"found":3}')],
    fixed: [user('go'), calls('call_a'), tool('call_a', '{"found":3}')],
  },

  // DeepSeek.
  {
    provider: 'DeepSeek', profile: 'deepseek', rule: 'result-orphan', index: 0, id: 'call_x',
    quote: "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
    wording: "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
    broken: [tool('call_x'), user('hi')],
    fixed: [user('hi')],
  },
  {
    provider: 'DeepSeek', profile: 'deepseek', rule: 'call-unanswered', index: 1, id: 'call_b',
    quote: "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. (insufficient tool messages following tool_calls message)",
    wording: "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. (insufficient tool messages following tool_calls message)",
    broken: [user('go'), calls('call_a', 'call_b'), tool('call_a'), user('and?')],
    fixed: [user('go'), calls('call_a', 'call_b'), tool('call_a'), tool('call_b'), user('and?')],
  },
  {
    provider: 'DeepSeek (parallel calls split over two assistant messages)', profile: 'deepseek', rule: 'call-unanswered', index: 1, id: 'call_a',
    quote: "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. (insufficient tool messages following tool_calls message)",
    wording: '(insufficient tool messages following tool_calls message)',
    broken: [user('go'), calls('call_a'), calls('call_b'), tool('call_a'), tool('call_b'), say('done')],
    fixed: [user('go'), calls('call_a', 'call_b'), tool('call_a'), tool('call_b'), say('done')],
  },
  {
    provider: 'DeepSeek (deepseek-reasoner, R1)', profile: 'deepseek-reasoner', rule: 'roles-alternate', index: 2,
    quote: 'deepseek-reasoner does not support successive user or assistant messages (messages[1] and messages[2] in your input). You should interleave the user/assistant messages in the message sequence.',
    wording: 'deepseek-reasoner does not support successive user or assistant messages (messages[1] and messages[2] in your input).',
    broken: [system, user('one'), user('two')],
    fixed: [system, user('one\ntwo')],
  },
  {
    provider: 'DeepSeek (thinking mode with tools; opt-in rule)', profile: deepseekThinking, rule: 'reasoning-content-missing', index: 3, id: 'call_b',
    quote: 'The `reasoning_content` in the thinking mode must be passed back to the API.',
    wording: 'The `reasoning_content` in the thinking mode must be passed back to the API.',
    broken: [user('go'), { ...calls('call_a'), reasoning_content: 'first step' }, tool('call_a'), calls('call_b'), tool('call_b')],
    fixed: [user('go'), { ...calls('call_a'), reasoning_content: 'first step' }, tool('call_a'), { ...calls('call_b'), reasoning_content: 'second step' }, tool('call_b')],
  },

  // Qwen on DashScope.
  {
    provider: 'Qwen DashScope', profile: dashscopeProfile, rule: 'call-unanswered', index: 1, id: 'call_b',
    quote: '<400> InternalError.Algo.InvalidParameter: An assistant message with "tool_calls" must be followed by tool messages responding to each "tool_call_id". The following tool_call_ids did not have response messages:',
    wording: '<400> InternalError.Algo.InvalidParameter: An assistant message with "tool_calls" must be followed by tool messages responding to each "tool_call_id". The following tool_call_ids did not have response messages:',
    broken: [user('go'), calls('call_a', 'call_b'), tool('call_a'), user('and?')],
    fixed: [user('go'), calls('call_a', 'call_b'), tool('call_a'), tool('call_b'), user('and?')],
  },
  {
    provider: 'Qwen DashScope', profile: dashscopeProfile, rule: 'result-orphan', index: 2, id: 'call_x',
    quote: '<400> InternalError.Algo.InvalidParameter: messages with role "tool" must be a response to a preceeding message with "tool_calls".',
    wording: '<400> InternalError.Algo.InvalidParameter: messages with role "tool" must be a response to a preceeding message with "tool_calls".',
    broken: [user('go'), say('thinking'), tool('call_x')],
    fixed: [user('go'), say('thinking')],
  },

  // MiniMax: checked with the openai profile (MiniMax answers the same faults with code 2013; its texts are not emitted).
  {
    provider: 'MiniMax (openai profile)', profile: 'openai', rule: 'result-orphan', index: 2, id: 'call_x',
    quote: 'invalid params, tool call result does not follow tool call (2013)',
    wording: "must be a response to a preceeding message with 'tool_calls'",
    own: "the openai profile's wording for the same fault",
    broken: [user('go'), say('thinking'), tool('call_x')],
    fixed: [user('go'), say('thinking')],
  },
  {
    provider: 'MiniMax (openai profile)', profile: 'openai', rule: 'call-id-duplicate', index: 1, id: 'call_function_1',
    quote: 'invalid params, duplicate tool_call id: call_function_..._1',
    wording: 'duplicate tool call id call_function_1 in one assistant turn',
    own: "the openai profile's wording for the same fault",
    broken: [user('go'), calls('call_function_1', 'call_function_1'), tool('call_function_1'), tool('call_function_1'), user('ok')],
    fixed: [user('go'), calls('call_function_1', 'call_function_2'), tool('call_function_1'), tool('call_function_2'), user('ok')],
  },

  // Mistral (mistral_common V13, serving mode).
  {
    provider: 'Mistral', profile: 'mistral', rule: 'result-count', index: 1, id: B,
    quote: 'Not the same number of function calls and responses',
    wording: 'Not the same number of function calls and responses',
    broken: [user('go'), calls(A, B), tool(A), say('partial'), user('next')],
    fixed: [user('go'), calls(A, B), tool(A), tool(B), say('done'), user('next')],
  },
  {
    provider: 'Mistral', profile: 'mistral', rule: 'role-order', index: 3, id: undefined,
    quote: "Unexpected role 'user' after role 'tool'",
    wording: "Unexpected role 'user' after role 'tool'",
    broken: [user('go'), calls(A), tool(A), user('next')],
    fixed: [user('go'), calls(A), tool(A), say('done'), user('next')],
  },
  {
    provider: 'Mistral', profile: 'mistral', rule: 'role-order', index: 3, id: A,
    quote: "Unexpected role 'tool' after role 'user'",
    wording: "Unexpected role 'tool' after role 'user'",
    broken: [user('go'), calls(A), user('hurry'), tool(A)],
    fixed: [user('go'), calls(A), tool(A), say('done'), user('hurry')],
  },
  {
    provider: 'Mistral (V13)', profile: 'mistral', rule: 'result-duplicate', index: 3, id: A,
    quote: 'Duplicate tool call id {id} in tool results',
    wording: `Duplicate tool call id ${A} in tool results`,
    own: 'the documented text with the real id',
    broken: [user('go'), calls(A, B), tool(A), tool(A), say('done'), user('next')],
    fixed: [user('go'), calls(A, B), tool(A), tool(B), say('done'), user('next')],
  },
  {
    provider: 'Mistral (V13)', profile: 'mistral', rule: 'result-orphan', index: 2, id: B,
    quote: 'Unexpected tool call id {id} in tool results',
    wording: `Unexpected tool call id ${B} in tool results`,
    own: 'the documented text with the real id',
    broken: [user('go'), calls(A), tool(B), say('done'), user('next')],
    fixed: [user('go'), calls(A), tool(A), say('done'), user('next')],
  },
  {
    provider: 'Mistral (V13)', profile: 'mistral', rule: 'call-id-duplicate', index: 1, id: A,
    quote: 'Duplicate tool call id {id} in assistant message',
    wording: `Duplicate tool call id ${A} in assistant message`,
    own: 'the documented text with the real id',
    broken: [user('go'), calls(A, A), tool(A), tool(B)],
    fixed: [user('go'), calls(A, B), tool(A), tool(B)],
  },
  {
    provider: 'Mistral (V3 ids)', profile: 'mistral', rule: 'call-id-format', index: 1, id: 'call_1',
    quote: 'Tool call id was {id} but must be a-z, A-Z, 0-9, with a length of 9.',
    wording: 'Tool call id was call_1 but must be a-z, A-Z, 0-9, with a length of 9.',
    own: 'the documented text with the real id',
    broken: [user('go'), calls('call_1'), tool('call_1')],
    fixed: [user('go'), calls(A), tool(A)],
  },
  {
    provider: 'Mistral (V3 ids)', profile: 'mistral', rule: 'result-missing-id', index: 2,
    quote: 'Tool call id has to be defined.',
    wording: 'Tool call id has to be defined.',
    broken: [user('go'), calls(A), { role: 'tool', content: 'lost' }],
    fixed: [user('go'), calls(A), tool(A)],
  },
  {
    provider: 'Mistral (names)', profile: 'mistral', rule: 'function-name-invalid', index: 1, id: A,
    quote: '"Function name was X but must be a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64."',
    wording: 'Function name was look up but must be a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64.',
    own: 'the documented text with the real name',
    broken: [user('go'), { role: 'assistant', content: null, tool_calls: [fn(A, 'look up')] }, tool(A)],
    fixed: [user('go'), { role: 'assistant', content: null, tool_calls: [fn(A, 'look_up')] }, tool(A)],
  },
  {
    provider: 'Mistral', profile: 'mistral', rule: 'first-role', index: 0,
    quote: 'Conversation must start with a user message or system message',
    wording: 'Conversation must start with a user message or system message',
    broken: [say('hello'), user('hi')],
    fixed: [system, say('hello'), user('hi')],
  },
  {
    provider: 'Mistral', profile: 'mistral', rule: 'first-role', index: 0,
    quote: 'Conversation must have at least one message',
    wording: 'Conversation must have at least one message',
    broken: [],
    fixed: [user('hi')],
  },
  {
    provider: 'Mistral (serving)', profile: 'mistral', rule: 'last-role', index: 1,
    quote: 'Expected last role User or Tool (or Assistant with prefix or continue_final_message set to True) for serving but got {role}',
    wording: 'Expected last role User or Tool (or Assistant with prefix or continue_final_message set to True) for serving but got assistant',
    own: 'the documented text with the role',
    broken: [user('go'), say('Once upon')],
    fixed: [user('go'), { role: 'assistant', content: 'Once upon', prefix: true }],
  },
  {
    provider: 'Mistral (OpenAI roles it lacks)', profile: 'mistral', rule: 'role-unsupported', index: 0,
    quote: 'some OpenAI-compatible backends do not accept developer',
    wording: "role 'developer' is not a Mistral role",
    own: 'no provider text is documented',
    broken: [{ role: 'developer', content: 'rules' }, user('hi')],
    fixed: [{ role: 'system', content: 'rules' }, user('hi')],
  },

  // The Qwen3 chat template (vLLM, llama.cpp, Ollama): positional pairing, no provider text but one.
  {
    provider: 'Qwen template', profile: 'qwen-template', rule: 'result-count', index: 1, id: 'call_b',
    quote: 'consecutive role:"tool" messages rendered into ONE "<|im_start|>user" turn of "<tool_response>',
    wording: 'pairs each <tool_response> with a <tool_call> by position',
    own: 'the template raises nothing; the model reads wrong pairs',
    broken: [user('go'), calls('call_a', 'call_b'), tool('call_a'), say('partial'), user('next')],
    fixed: [user('go'), calls('call_a', 'call_b'), tool('call_a'), tool('call_b'), say('done'), user('next')],
  },
  {
    provider: 'Qwen template', profile: 'qwen-template', rule: 'result-orphan', index: 2, id: 'call_x',
    quote: '(positional pairing with <tool_call>{"name","arguments"}</tool_call> in assistant)',
    wording: 'tool message follows no assistant message with tool_calls',
    own: 'the template raises nothing; the model reads wrong pairs',
    broken: [user('go'), say('thinking'), tool('call_x'), user('next')],
    fixed: [user('go'), say('thinking'), user('next')],
  },
  {
    provider: 'Qwen template', profile: 'qwen-template', rule: 'no-user-query', index: 0,
    quote: "Qwen3/3.5 templates raise 'No user query found in messages.'",
    wording: 'No user query found in messages.',
    broken: [system, calls('call_a'), tool('call_a'), say('done')],
    fixed: [system, user('go'), calls('call_a'), tool('call_a'), say('done')],
  },
  {
    provider: 'Qwen template (only <tool_response> user text)', profile: 'qwen-template', rule: 'no-user-query', index: 0,
    quote: 'Error rendering prompt with jinja template: "No user query found in messages."',
    wording: 'No user query found in messages.',
    broken: [system, user('<tool_response>\n{"found":3}\n</tool_response>'), say('done')],
    fixed: [system, user('what was found?'), say('done')],
  },
];

const profileName = (p: Row['profile']) => (typeof p === 'string' ? p : p.name);

describe('documented provider errors: each broken sequence is rejected with its rule and wording, its fix passes', () => {
  test.each(ROWS.map((r) => [`${r.provider} / ${profileName(r.profile)} / ${r.rule}: ${r.wording.slice(0, 60)}`, r] as const))('%s', (_name, row) => {
    const violations = validateMessages(row.broken, row.profile);
    const hit = violations.find((v) => v.rule === row.rule && v.index === row.index);
    expect({ rules: violations.map((v) => `${v.rule}@${v.index}`), found: hit !== undefined }).toEqual(expect.objectContaining({ found: true }));
    expect(hit!.message).toContain(row.wording);
    expect(hit!.message.startsWith(row.broken.length === 0 ? 'messages: ' : `messages[${row.index}]: `)).toBe(true);
    if ('id' in row) expect(hit!.id).toBe(row.id);
    expect(validateMessages(row.fixed, row.profile)).toEqual([]);
  });

  (NOTES ? test : test.skip)('every quote is in the provider notes, and every provider-worded row uses the notes\' words', () => {
    const missing = ROWS.filter((r) => !NOTES!.includes(r.quote)).map((r) => r.quote);
    expect(missing).toEqual([]);
    const reworded = ROWS.filter((r) => r.own === undefined && !r.quote.includes(r.wording)).map((r) => r.wording);
    expect(reworded).toEqual([]);
  });

  test('the table covers every profile here and every rule of the mistral and qwen-template profiles', () => {
    const byProfile = new Map<string, Set<RuleId>>();
    for (const r of ROWS) byProfile.set(profileName(r.profile), (byProfile.get(profileName(r.profile)) ?? new Set()).add(r.rule));
    expect([...byProfile.keys()].sort()).toEqual(['dashscope', 'deepseek', 'deepseek-reasoner', 'deepseek-thinking', 'mistral', 'openai', 'qwen-template']);
    expect([...byProfile.get('mistral')!].sort()).toEqual(['call-id-duplicate', 'call-id-format', 'first-role', 'function-name-invalid', 'last-role', 'result-count', 'result-duplicate', 'result-missing-id', 'result-orphan', 'role-order', 'role-unsupported']);
    expect([...byProfile.get('qwen-template')!].sort()).toEqual(['no-user-query', 'result-count', 'result-orphan']);
  });
});

/*
 * Documented errors no profile models, and why: listed so the table says what it leaves out.
 * - OpenAI o-series "Unsupported value: 'messages[59].role' does not support 'function' with this model." (per model, not per history).
 * - Mistral pre-V5 "Assistant message must have either content or tool_calls, but not both." (the API runs V13, which allows both).
 * - Mistral with continue_final_message (a request option, not in the messages).
 * - HF Jinja templates' "Conversation roles must alternate user/assistant/user/assistant/..." (a template profile not built here;
 *   deepseek-reasoner's `roles-alternate` is the same rule for user/assistant pairs).
 * - R1 "reasoning_content in input -> 400" (historic, no text documented).
 * The Qwen template's silent faults (positional pairing) have no provider text: those rows use ctxfold's
 * wording and quote the notes' description.
 */

corpusDescribe(describe)('real ids of the shared corpus and the mistral id rule', () => {
  test('every conversation with tool calls fails call-id-format for each of its call ids (they are not 9 alphanumerics)', () => {
    const conversations = loadCorpus();
    let checked = 0;
    for (const c of conversations) {
      const callIds = c.messages.flatMap((m) => (m.role === 'assistant' && Array.isArray(m.tool_calls) ? m.tool_calls.map((t) => t.id) : []));
      if (callIds.length === 0) continue;
      checked++;
      const bad = validateMessages(c.messages, 'mistral').filter((v) => v.rule === 'call-id-format');
      const named = new Set(bad.map((v) => v.id));
      expect(callIds.filter((id) => !named.has(id))).toEqual([]);
      expect(callIds.every((id) => !/^[a-zA-Z0-9]{9}$/.test(id))).toBe(true);
    }
    expect(checked).toBeGreaterThan(150);
  });

  test('with ids mapped to 9 alphanumerics (call and results alike), the id rule is silent: what the id-mapping repair must do', () => {
    const conversations = loadCorpus();
    for (const c of conversations.slice(0, 40)) {
      let n = 0;
      const mapped = c.messages.map((m) => {
        if (m.role === 'assistant' && Array.isArray(m.tool_calls)) {
          // One fresh id per call; its results follow it at once in this corpus (one call per turn).
          return { ...m, tool_calls: m.tool_calls.map((t) => ({ ...t, id: `id${String(++n).padStart(7, '0')}` })) };
        }
        if (m.role === 'tool') return { ...m, tool_call_id: `id${String(n).padStart(7, '0')}` };
        return m;
      });
      expect(validateMessages(mapped, 'mistral').filter((v) => v.rule === 'call-id-format' || v.rule === 'result-orphan')).toEqual([]);
    }
  });
});
