import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateMessages } from '../src/formats/profiles.js';
import { openaiProfile } from '../src/formats/openai-chat/profile.js';
import { generateConversation } from '../bench/fixtures/conversation.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { startFakeLlmServer, type FakeLlmServer } from './helpers/fake-llm-server.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist', 'src', 'cli', 'main.js');

function run(args: string[], stdin: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
    child.stdin!.end(stdin);
  });
}

const history = generateConversation({ messages: 120, seed: 31 });
const body = JSON.stringify({ id: 'chat-1', messages: history });

describe('ctxfold compress --summarizer', () => {
  let server: FakeLlmServer;
  beforeAll(async () => {
    server = await startFakeLlmServer({ reply: () => 'LLM SUMMARY: user wants items; ids ABC123.' });
  });
  afterAll(() => server.close());

  test('extractive: the view carries one summary message and the report lists the covered ids', async () => {
    const r = await run(['compress', '--compression-threshold-tokens', '1500', '--summarizer', 'extractive', '-'], body);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { messages: OpenAIChatMessage[]; ctxfold: { summary: { applied: boolean; coveredIds: string[]; summarizer: string } } };
    expect(out.ctxfold.summary).toMatchObject({ applied: true, summarizer: 'extractive' });
    expect(out.ctxfold.summary.coveredIds.length).toBeGreaterThan(10);
    expect(out.messages.length).toBe(history.length - out.ctxfold.summary.coveredIds.length + 1);
    expect(out.messages.filter((m) => String(m.content).startsWith('[Summary of'))).toHaveLength(1);
    expect(validateMessages(out.messages, openaiProfile)).toEqual([]);
  });

  test('llm: reads the endpoint from the environment and sends the tool calls to it', async () => {
    const before = server.requests.length;
    const r = await run(['compress', '--compression-threshold-tokens', '1500', '--summarizer', 'llm', '-'], body, {
      CTXFOLD_LLM_BASE_URL: server.baseURL, CTXFOLD_LLM_MODEL: 'summary-model', CTXFOLD_LLM_API_KEY: 'sk-test',
    });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { messages: OpenAIChatMessage[] };
    expect(out.messages.some((m) => String(m.content).includes('LLM SUMMARY'))).toBe(true);
    const sent = server.requests.slice(before);
    expect(sent.length).toBeGreaterThanOrEqual(1);
    expect((sent[0].body as { model: string }).model).toBe('summary-model');
    expect(sent[0].headers.authorization).toBe('Bearer sk-test');
    const firstCall = history.find((m) => m.tool_calls?.length)!.tool_calls![0].function.name;
    expect(sent[0].rawBody).toContain(firstCall);
  });

  test('llm failure: the view is sent without a summary, with a warning; nothing is lost', async () => {
    server.enqueue({ status: 400, body: { error: { message: 'bad model' } } }, 5);
    const r = await run(['compress', '--compression-threshold-tokens', '1500', '--summarizer', 'llm', '-'], body, {
      CTXFOLD_LLM_BASE_URL: server.baseURL, CTXFOLD_LLM_MODEL: 'summary-model',
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/warning: summarizer llm failed: .*400/);
    const out = JSON.parse(r.stdout) as { messages: OpenAIChatMessage[]; ctxfold: { summary: { applied: boolean } } };
    expect(out.ctxfold.summary.applied).toBe(false);
    expect(out.messages).toEqual(history);
  });

  test('usage errors name what is missing', async () => {
    const noThreshold = await run(['compress', '--summarizer', 'extractive', '-'], body);
    expect(noThreshold.code).toBe(2);
    expect(noThreshold.stderr).toMatch(/needs --compression-threshold-tokens/);
    const noEnv = await run(['compress', '--compression-threshold-tokens', '10', '--summarizer', 'llm', '-'], body, { CTXFOLD_LLM_BASE_URL: '' });
    expect(noEnv.code).toBe(2);
    expect(noEnv.stderr).toMatch(/CTXFOLD_LLM_BASE_URL/);
    const bad = await run(['compress', '--summarizer', 'magic', '-'], body);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--summarizer must be one of none, extractive, llm/);
  });
});
