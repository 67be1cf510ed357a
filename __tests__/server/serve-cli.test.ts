import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateConversation } from '../../bench/fixtures/conversation.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { tenantOf } from '../../src/server/tenant.js';
import { pageExchangesChat, toolRoundsChat } from '../helpers/tool-rounds.js';
import { json, startUpstream, type StandInUpstream } from '../helpers/upstream-server.js';
import { runWithoutPackages } from '../helpers/without-packages.js';

/**
 * `ctxfold serve` as users run it: the built binary (`npm run build` first), its help, its flag
 * errors, and a real run on a free port against a stand-in upstream, stopped with SIGTERM.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = join(root, 'dist', 'src', 'cli', 'main.js');

const run = (args: string[], env: Record<string, string> = {}) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 30_000 });

/** `run` without blocking, so independent runs overlap. */
function runAsync(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: process.env, timeout: 30_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d; });
    child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d; });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** A running `ctxfold serve`: its URL (read from the one stdout line), its stderr so far, and its exit. */
interface Serving {
  readonly child: ChildProcessWithoutNullStreams;
  readonly url: string;
  stderr(): string;
  readonly exited: Promise<number | null>;
}

function serve(args: string[], env: Record<string, string> = {}): Promise<Serving> {
  const child = spawn(process.execPath, [CLI, 'serve', ...args], { cwd: root, env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d; });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not print its URL within 15 s; stderr: ${stderr}`)), 15_000);
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      const match = /^ctxfold serve listening on (http:\/\/\S+)$/m.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1], stderr: () => stderr, exited });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code} before listening; stderr: ${stderr}`));
    });
  });
}

let upstream: StandInUpstream;
let dir: string;
beforeAll(async () => {
  upstream = await startUpstream();
  dir = mkdtempSync(join(tmpdir(), 'ctxfold-serve-'));
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('ctxfold serve', () => {
  test('--help lists its flags and what it does; it is in the general help too', () => {
    const r = run(['serve', '--help']);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    for (const flag of ['--upstream URL', '--port N', '--host ADDR', '--max-context-tokens N', '--compression-threshold-tokens N', '--keep-last N', '--keep-last-yields', '--low-water-mark X', '--store SPEC', '--config FILE', '--upstream-key-env NAME', '--tenant-header NAME', '--chat-id-header NAME', '--max-body-bytes N', '--upstream-timeout-ms N', '--upstream-keep-alive-ms N', '--max-queued-jobs N', '--log-level LEVEL', '--summarizer']) {
      expect(r.stdout).toContain(flag);
    }
    expect(r.stdout).toContain('ctxfold serve --upstream URL [options]');
    expect(r.stdout).toContain('[default: sqlite:./ctxfold.db]');
    expect(r.stdout).toMatch(/--upstream-keep-alive-ms N[^\n]*\n?[^\n]*\[default: 4000\]/);
    expect(r.stdout).toMatch(/--max-queued-jobs N[^\n]*\n?[^\n]*\[default: 32 \(16 per concurrent job\)\]/);
    expect(r.stdout).not.toContain('--pretty');
    expect(r.stdout).not.toContain('Input (FILE');
    // The earlier names still work, but help shows the new ones only.
    for (const old of ['--max-tokens', '--threshold', '--trim-tool-output']) expect(r.stdout).not.toContain(old);
    expect(r.stdout).toContain('--tool-output-trim [CHARS]');
    expect(run(['help', 'serve']).stdout).toBe(r.stdout);
    expect(run(['--help']).stdout).toContain('ctxfold serve --upstream URL [options]');
  });

  test('bad flags are refused with one line naming the flag (exit 2), nothing on standard output', async () => {
    const notADir = join(dir, 'a-file');
    writeFileSync(notADir, 'not a directory');
    const cases: [string[], string][] = [
      [['serve'], 'ctxfold: serve needs --upstream URL'],
      [['serve', '--upstream', 'http://x/v1', '--port', '70000'], 'ctxfold: --port must be an integer from 0 to 65535, got "70000"'],
      [['serve', '--upstream', 'http://x/v1', '--store', 'postgres://db'], 'ctxfold: --store must be sqlite:PATH, redis://HOST:PORT or memory, got "postgres://db"'],
      [['serve', '--upstream', 'http://x/v1', '--pretty'], 'ctxfold: --pretty is not an option of serve'],
      [['serve', '--upstream', 'http://x/v1', 'file.json'], 'ctxfold: serve reads no FILE, got "file.json"'],
      [['serve', '--upstream', 'http://x/v1', '--upstream-keep-alive-ms', '-1'], 'ctxfold: --upstream-keep-alive-ms must be a non-negative integer, got "-1"'],
      [['serve', '--upstream', 'http://x/v1', '--max-queued-jobs', 'many'], 'ctxfold: --max-queued-jobs must be a non-negative integer, got "many"'],
      [['serve', '--upstream', 'ftp://x'], 'ctxfold: --upstream must be an http:// or https:// base URL such as https://api.openai.com/v1, got "ftp://x"'],
      [['serve', '--upstream', 'http://x/v1', '--upstream-key-env', 'CTXFOLD_TEST_UNSET_KEY'], 'ctxfold: --upstream-key-env CTXFOLD_TEST_UNSET_KEY: that environment variable is not set or empty'],
      [['serve', '--upstream', 'http://x/v1', '--config', '/nonexistent/limits.json'], 'ctxfold: --config: cannot read "/nonexistent/limits.json"'],
      [['serve', '--upstream', 'http://x/v1', '--store', `sqlite:${notADir}/ctxfold.db`], `ctxfold: SqliteStore(${notADir}/ctxfold.db): cannot open the database`],
    ];
    // Run side by side: each is a fresh node.
    const runs = await Promise.all(cases.map(([args]) => runAsync(args)));
    for (const [k, [args, line]] of cases.entries()) {
      expect({ args, status: runs[k].status, stdout: runs[k].stdout }).toEqual({ args, status: 2, stdout: '' });
      expect({ args, line: runs[k].stderr.split('\n')[0] }).toEqual({ args, line: expect.stringContaining(line) });
    }
  });

  test('ctxfold/server needs neither node:sqlite nor ioredis unless its store does; the default SQLite store without node:sqlite fails naming the Node version', () => {
    const r = runWithoutPackages(['ioredis'], `const { startServer } = await import('ctxfold/server');
const p = await startServer({ upstream: 'http://127.0.0.1:9/v1', port: 0, store: 'memory', logLevel: 'silent' });
console.log((await fetch(p.url + '/healthz')).status);
await p.close();
try { await startServer({ upstream: 'http://127.0.0.1:9/v1', port: 0, logLevel: 'silent' }); } catch (e) { console.log(e.name + ': ' + e.message); }
`, { nodeArgs: ['--no-experimental-sqlite'] });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim().split('\n')).toEqual(['200', `StoreError: ctxfold/sqlite: needs the built-in module node:sqlite, which this Node (${process.version}) does not provide: use Node 22.13 or newer (22 and 24 are supported)`]);
  });

  test('a bad config file names the field and the rule', () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ models: { 'gpt-4o': { maxContextTokens: 'big' } } }));
    const r = run(['serve', '--upstream', 'http://127.0.0.1:9/v1', '--config', file, '--store', 'memory']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`--config ${file}.models["gpt-4o"].maxContextTokens: must be an integer >= 1`);
  });

  test('--keep-last-yields reaches the proxy: a kept tail over --max-context-tokens gives way, the last user message and the newest round stay', async () => {
    upstream.handle((_q, res) => json(res, 200, { id: 'c', object: 'chat.completion', model: 'yield-model', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] }));
    const history = toolRoundsChat('Read every page.');
    const serving = await serve(['--upstream', upstream.baseURL, '--port', '0', '--store', 'memory', '--max-context-tokens', '2000', '--keep-last', '8', '--keep-last-yields'], {});
    try {
      const r = await fetch(`${serving.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer sk-cli' }, body: JSON.stringify({ model: 'yield-model', messages: history }) });
      expect(r.status).toBe(200);
      await r.json();
      const sent = upstream.requests.filter((q) => q.body?.model === 'yield-model').at(-1)!.body!.messages as unknown[];
      expect(sent.length).toBeLessThan(history.length);
      expect([sent[0], ...sent.slice(-2)]).toEqual([history[0], ...history.slice(-2)]);
    } finally {
      serving.child.kill('SIGTERM');
      await serving.exited;
    }
  });

  test('the old flag names still work under serve, as the new ones do, and each prints one deprecation line', async () => {
    upstream.handle((_q, res) => json(res, 200, { id: 'c', object: 'chat.completion', model: 'renamed-model', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] }));
    const history = pageExchangesChat();
    const sentWith = async (flags: string[]): Promise<{ sent: unknown[]; stderr: string }> => {
      const serving = await serve(['--upstream', upstream.baseURL, '--port', '0', '--store', 'memory', '--summarizer', 'none', '--log-level', 'silent', ...flags], {});
      try {
        const r = await fetch(`${serving.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer sk-cli' }, body: JSON.stringify({ model: 'renamed-model', messages: history }) });
        expect(r.status).toBe(200);
        await r.json();
        return { sent: upstream.requests.filter((q) => q.body?.model === 'renamed-model').at(-1)!.body!.messages as unknown[], stderr: serving.stderr() };
      } finally {
        serving.child.kill('SIGTERM');
        await serving.exited;
      }
    };
    const fresh = await sentWith(['--max-context-tokens', '2000', '--compression-threshold-tokens', '1500', '--tool-output-trim', '100']);
    const old = await sentWith(['--max-tokens', '2000', '--max-tokens=2000', '--threshold', '1500', '--trim-tool-output', '100']);
    expect(fresh.stderr).toBe('');
    expect(fresh.sent).not.toEqual(history); // folded (tool results trimmed), so the flags reached the proxy
    expect(old.sent).toEqual(fresh.sent);
    expect(old.stderr.trimEnd().split('\n')).toEqual([
      'ctxfold: --max-tokens is deprecated; use --max-context-tokens',
      'ctxfold: --threshold is deprecated; use --compression-threshold-tokens',
      'ctxfold: --trim-tool-output is deprecated; use --tool-output-trim',
    ]);
  });

  test('--upstream-keep-alive-ms reaches the proxy: with 0, every request goes upstream on a new connection', async () => {
    const ports: number[] = [];
    upstream.handle((_q, res, req) => {
      ports.push(req.socket.remotePort!);
      json(res, 200, { id: 'c', object: 'chat.completion', model: 'fresh-model', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] });
    });
    const serving = await serve(['--upstream', upstream.baseURL, '--port', '0', '--store', 'memory', '--upstream-keep-alive-ms', '0'], {});
    try {
      for (let i = 0; i < 3; i++) {
        const r = await fetch(`${serving.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer sk-cli' }, body: JSON.stringify({ model: 'fresh-model', messages: [{ role: 'user', content: 'hi' }] }) });
        expect(r.status).toBe(200);
        await r.json();
      }
      expect(new Set(ports).size).toBe(3);
    } finally {
      serving.child.kill('SIGTERM');
      await serving.exited;
    }
  });

  test('--low-water-mark reaches the proxy: a lower mark folds an over-window history deeper', async () => {
    upstream.handle((_q, res) => json(res, 200, { id: 'c', object: 'chat.completion', model: 'mark-model', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] }));
    const history = pageExchangesChat();
    const sentWith = async (mark: string): Promise<unknown[]> => {
      const serving = await serve(['--upstream', upstream.baseURL, '--port', '0', '--store', 'memory', '--max-context-tokens', '2000', '--low-water-mark', mark], {});
      try {
        const r = await fetch(`${serving.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer sk-cli' }, body: JSON.stringify({ model: 'mark-model', messages: history }) });
        expect(r.status).toBe(200);
        await r.json();
        return upstream.requests.filter((q) => q.body?.model === 'mark-model').at(-1)!.body!.messages as unknown[];
      } finally {
        serving.child.kill('SIGTERM');
        await serving.exited;
      }
    };
    const whole = await sentWith('1');
    const deeper = await sentWith('0.5');
    expect(whole.length).toBeLessThan(history.length);
    expect(deeper.length).toBeLessThan(whole.length);
    // Both end with the same turns and begin with the system message: only the cut moved.
    expect([deeper[0], deeper.at(-1)]).toEqual([history[0], history.at(-1)]);
    expect(whole.slice(-deeper.length + 1)).toEqual(deeper.slice(1));
  });

  test('runs on a free port with a SQLite store: folds requests, and on SIGTERM finishes the running summary job and exits 0', async () => {
    const db = join(dir, 'state', 'ctxfold.db');
    const config = join(dir, 'limits.json');
    writeFileSync(config, JSON.stringify({ models: { 'cli-model': { maxContextTokens: 3_000 } } }));
    // The stand-in is also the LLM summarizer's endpoint, and takes 500 ms to summarize.
    upstream.handle((q, res) => {
      const summaryCall = q.body?.model === 'summary-model';
      const answer = () => json(res, 200, { id: 'c', object: 'chat.completion', model: 'cli-model', choices: [{ index: 0, message: { role: 'assistant', content: summaryCall ? 'SUMMARY FROM THE LLM' : 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 2_000, completion_tokens: 5, total_tokens: 2_005 } });
      if (summaryCall) setTimeout(answer, 500);
      else answer();
    });
    const serving = await serve(['--upstream', upstream.baseURL, '--port', '0', '--store', `sqlite:${db}`, '--config', config, '--keep-last', '4', '--summarizer', 'llm', '--max-queued-jobs', '8'], {
      CTXFOLD_LLM_BASE_URL: upstream.baseURL, CTXFOLD_LLM_MODEL: 'summary-model', CTXFOLD_LLM_API_KEY: 'sk-summary',
    });
    try {
      expect(serving.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const history = generateConversation({ messages: 100, seed: 3 });
      const r = await fetch(`${serving.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer sk-cli', 'x-ctxfold-chat-id': 'cli-chat' }, body: JSON.stringify({ model: 'cli-model', messages: history }) });
      expect(r.status).toBe(200);
      await r.json();
      const forwarded = upstream.requests.find((q) => q.body?.model === 'cli-model')!;
      expect((forwarded.body!.messages as unknown[]).length).toBeLessThan(history.length);
      // Stop while the summary is being written (the LLM answers after 500 ms).
      for (let waited = 0; !upstream.requests.some((q) => q.body?.model === 'summary-model') && waited < 5_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
      serving.child.kill('SIGTERM');
      expect(await serving.exited).toBe(0);
      const lines = serving.stderr().trim().split('\n').map((l) => JSON.parse(l) as { msg: string });
      expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['listening', 'request', 'shutting down: no new connections, finishing in-flight requests', 'draining summary jobs', 'stopped']));
      // One line says what became of the summary jobs.
      expect(lines.map((l) => l.msg)).toContain('summary jobs at shutdown: 1 finished, 0 abandoned (0 running, 0 waiting)');
      expect(serving.stderr()).not.toContain('sk-cli');
      // The summary job finished during the stop, and its state is in the file.
      const store = SqliteStore.open(db);
      try {
        const tenant = tenantOf({ authorization: 'Bearer sk-cli' }, { proxyHoldsKey: false, tenantHeader: 'x-ctxfold-tenant' });
        const state = await store.get(`${tenant}:cli-chat`);
        expect(state?.summary).toContain('SUMMARY FROM THE LLM');
      } finally {
        await store.close();
      }
    } finally {
      if (serving.child.exitCode === null) serving.child.kill('SIGKILL');
    }
  });
});
