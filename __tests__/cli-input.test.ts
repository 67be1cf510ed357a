import { afterAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeLlmServer } from './helpers/fake-llm-server.js';

/** Input a user can send to the CLI, good and bad; every failure is exit 2 with one clear line, never 70. */
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(root, 'dist', 'src', 'cli', 'main.js');
const dir = mkdtempSync(join(tmpdir(), 'ctxfold-cli-input-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function ctxfold(args: readonly string[], content?: string | Uint8Array, env: Record<string, string> = {}) {
  const file = join(dir, `input-${files++}`);
  if (content !== undefined) writeFileSync(file, content);
  const r = spawnSync(process.execPath, [CLI, ...args, ...(content !== undefined ? [file] : [])], {
    encoding: 'utf8', cwd: root, env: { ...process.env, CTXFOLD_DEBUG: '', ...env }, maxBuffer: 256 * 1024 * 1024, timeout: 120_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, lines: r.stderr.trim().split('\n').filter(Boolean) };
}

const good = JSON.stringify([{ role: 'user', content: 'hello' }]);

describe('ctxfold on input it must refuse clearly', () => {
  test('a JSONL file whose first line is broken names line 1 and a column in it; the other lines are compressed', () => {
    const r = ctxfold(['compress'], `{"messages": [{"role": "user", "content": "hi"}\n${good}\n${good}\n`);
    expect(r.status).toBe(2);
    expect(r.lines).toHaveLength(2);
    expect(r.lines[0]).toMatch(/^ctxfold: input line 1: not valid JSON \(.*column \d+/);
    expect(r.lines[1]).toBe('ctxfold: 1 of 3 records could not be read (each is named above, and has no output line)');
    expect(r.stdout.trim().split('\n')).toHaveLength(2);
  });

  test('a JSON document broken on its third line names line 3', () => {
    const r = ctxfold(['compress'], '[\n  {"role": "user", "content": "hi"},\n  {"role": "user" "content": "x"}\n]\n');
    expect(r.status).toBe(2);
    expect(r.lines[0]).toMatch(/^ctxfold: input: not valid JSON \(.* at line 3, column \d+\)$/);
  });

  test('a message without a role says the field is missing', () => {
    const r = ctxfold(['compress'], JSON.stringify([{ content: 'hi' }]));
    expect(r.status).toBe(2);
    expect(r.lines).toEqual(['ctxfold: input line 1: messages[0].role: must be a string, got nothing (the field is missing)']);
  });

  test('Latin-1 bytes are refused with the byte offset, not decoded to replacement characters', () => {
    const bytes = Buffer.concat([Buffer.from('[{"role": "user", "content": "caf'), Buffer.from([0xe9]), Buffer.from('"}]')]);
    const r = ctxfold(['compress'], bytes);
    expect(r.status).toBe(2);
    expect(r.lines).toEqual(['ctxfold: input: not UTF-8 text at byte 33: byte 0xe9; convert the file to UTF-8']);
  });

  test('UTF-16 text is named as such', () => {
    const r = ctxfold(['compress'], Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(good, 'utf16le')]));
    expect(r.status).toBe(2);
    expect(r.lines[0]).toMatch(/^ctxfold: input: UTF-16 text/);
  });

  test('binary garbage gives one printable line', () => {
    const r = ctxfold(['compress'], Buffer.from([0x01, 0x02, 0x7b, 0x1b, 0x5b, 0x33, 0x31, 0x6d, 0x00, 0xff]));
    expect(r.status).toBe(2);
    expect(r.lines).toHaveLength(1);
    expect(r.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
  });

  test('--tool-output-trim -1 names the flag and the rule', () => {
    const r = ctxfold(['compress', '--tool-output-trim', '-1'], good);
    expect(r.status).toBe(2);
    expect(r.lines).toEqual(['ctxfold: --tool-output-trim must be a non-negative integer, got "-1"']);
  });

  test('JSON nested 100,000 levels deep: exit 2, one line', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const r = ctxfold(['compress'], `[{"role": "user", "content": "hi", "extra": ${deep}}]`);
    expect(r.status).toBe(2);
    expect(r.lines).toEqual(['ctxfold: input line 1: messages[0].extra[0][0][0][0][0][0][0]...: is nested more than 256 levels deep; ctxfold does not read values this deep']);
  });

  test('a 50 MB single-message line of letters without spaces is compressed (exit 0)', () => {
    const r = ctxfold(['compress', '--max-context-tokens', '1000'], `[{"role": "user", "content": "${'x'.repeat(50_000_000)}"}]`);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { messages: unknown[]; ctxfold: { overBudget: boolean; tokensBefore: number } };
    expect(out.ctxfold.overBudget).toBe(true);
    expect(out.ctxfold.tokensBefore).toBeGreaterThan(6_000_000);
  });
});

describe('ctxfold --summarizer llm against a dead endpoint', () => {
  test('gives up on the summarizer after the first refused connection, and says so once', async () => {
    const gone = await startFakeLlmServer();
    const url = gone.baseURL;
    await gone.close();
    const record = JSON.stringify({ messages: [
      { role: 'system', content: 'Be brief.' },
      ...Array.from({ length: 12 }, (_, k) => ({ role: k % 2 ? 'assistant' : 'user', content: `message ${k} ${'words '.repeat(40)}` })),
      { role: 'user', content: 'and now?' },
    ] });
    const r = ctxfold(['compress', '--compression-threshold-tokens', '100', '--keep-last', '2', '--summarizer', 'llm'], `${record}\n${record}\n${record}\n`, {
      CTXFOLD_LLM_BASE_URL: url, CTXFOLD_LLM_MODEL: 'm',
    });
    expect(r.status).toBe(0);
    expect(r.lines).toHaveLength(2);
    expect(r.lines[0]).toMatch(/^ctxfold: input line 1: warning: summarizer llm failed: .*ECONNREFUSED.*; sent the view without a summary$/);
    expect(r.lines[1]).toMatch(/^ctxfold: warning: the summarizer could not be reached \(.*\); the 2 later record\(s\) were sent without a summary, without trying it again$/);
    expect(r.stdout.trim().split('\n')).toHaveLength(3);
  });
});
