/**
 * Peak memory of `ctxfold compress` streaming a large JSONL, the CLI in a process of its own:
 * `node dist/bench/cli-memory.js [MB] [--keep]` writes a JSONL of about MB megabytes (default
 * 200) from the shared corpus (each record's texts made unique, so no count is memoized across
 * records by accident) or, without it, from the bench's generated conversations, runs
 * `compress --max-context-tokens 2000 --quiet` on it with standard output to /dev/null, and prints
 * the process's peak RSS (VmHWM, Linux) against the goal (under 200 MB whatever the file's size).
 */
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateConversation } from './fixtures/conversation.js';

const GOAL_MB = 200;
const corpus = fileURLToPath(new URL('../../../shared/corpus/tau-bench-airline-gpt4o.jsonl', import.meta.url));

async function writeInput(path: string, megabytes: number): Promise<number> {
  const records = existsSync(corpus)
    ? readFileSync(corpus, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { messages: Array<{ content?: unknown }> })
    : Array.from({ length: 20 }, (_, k) => ({ messages: generateConversation({ messages: 60, seed: k + 1 }) as Array<{ content?: unknown }> }));
  const out = createWriteStream(path);
  let bytes = 0;
  let n = 0;
  while (bytes < megabytes * 1024 * 1024) {
    const record = structuredClone(records[n % records.length]);
    n++;
    for (const m of record.messages) if (typeof m.content === 'string') m.content = `${m.content} [record ${n}]`;
    const line = `${JSON.stringify(record)}\n`;
    bytes += Buffer.byteLength(line);
    if (!out.write(line)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve) => out.end(() => resolve()));
  return n;
}

/** Runs the CLI and samples its VmHWM until it exits. */
function peakRss(input: string): Promise<{ peakMb: number; seconds: number; code: number | null }> {
  const main = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
  const started = performance.now();
  const child = spawn(process.execPath, [main, 'compress', '--max-context-tokens', '2000', '--quiet', input], { stdio: ['ignore', 'ignore', 'inherit'] });
  let peak = 0;
  const look = () => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) peak = Math.max(peak, Number(m[1]) / 1024);
    } catch { /* exited */ }
  };
  const timer = setInterval(look, 50);
  return new Promise((resolve) => {
    child.on('exit', (code) => {
      clearInterval(timer);
      resolve({ peakMb: peak, seconds: (performance.now() - started) / 1000, code });
    });
  });
}

const megabytes = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 200);
const dir = mkdtempSync(join(tmpdir(), 'ctxfold-cli-memory-'));
try {
  const input = join(dir, 'chats.jsonl');
  const records = await writeInput(input, megabytes);
  const size = statSync(input).size / 1024 / 1024;
  const { peakMb, seconds, code } = await peakRss(input);
  console.log(`ctxfold compress on ${size.toFixed(0)} MB of JSONL (${records} records): peak RSS ${peakMb.toFixed(0)} MB in ${seconds.toFixed(1)} s, exit ${code} [${peakMb < GOAL_MB ? 'met' : 'missed'}] goal < ${GOAL_MB} MB whatever the size`);
} finally {
  if (!process.argv.includes('--keep')) rmSync(dir, { recursive: true, force: true });
}
