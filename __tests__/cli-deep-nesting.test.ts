import { afterAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A value nested 100,000 levels deep anywhere in a request (a tool call's argument object, a
 * message field, content parts, a field of the request body) is bad input for the built CLI:
 * exit 2 and one stderr line naming where (JSONL: and the count of such records), for compress and validate, JSON and JSONL, a file and
 * standard input. Before, a deep field the lens does not read (the body's `tools`, `metadata`)
 * reached `JSON.stringify` and the CLI exited 70 on a stack overflow.
 */
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(root, 'dist', 'src', 'cli', 'main.js');
const dir = mkdtempSync(join(tmpdir(), 'ctxfold-cli-deep-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DEPTH = 100_000;
const deepArrays = `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`;
const deepObjects = `${'{"a":'.repeat(DEPTH)}1${'}'.repeat(DEPTH)}`;

let files = 0;
/** Runs the CLI on `text`, from a file or from standard input. */
function ctxfold(args: readonly string[], text: string, via: 'file' | 'stdin') {
  const file = join(dir, `input-${files++}`);
  if (via === 'file') writeFileSync(file, text);
  const r = spawnSync(process.execPath, [CLI, ...args, ...(via === 'file' ? [file] : ['-'])], {
    input: via === 'stdin' ? text : undefined, encoding: 'utf8', cwd: root, env: { ...process.env, CTXFOLD_DEBUG: '' }, maxBuffer: 64 * 1024 * 1024,
  });
  return { status: r.status, stdout: r.stdout, lines: r.stderr.split('\n').filter(Boolean) };
}

/** One request with a deep value, and the field path the CLI's line must start with. */
interface Case {
  readonly name: string;
  readonly request: string;
  readonly path: string;
}

const hi = '{"role":"user","content":"hi"}';
const CASES: readonly Case[] = [
  {
    name: 'an OpenAI tool call whose arguments are an object',
    request: `{"messages":[${hi},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":${deepObjects}}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]}`,
    path: 'messages[1].tool_calls[0].function.arguments.a.a.a.a...',
  },
  {
    name: 'an Anthropic tool_use input',
    request: `{"messages":[${hi},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":${deepObjects}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}]}`,
    path: 'messages[1].content[0].input.a.a.a.a.a...',
  },
  {
    name: 'Gemini functionCall args',
    request: `{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"functionCall":{"name":"f","args":${deepObjects}}}]}]}`,
    path: 'contents[1].parts[0].functionCall.args.a.a.a.a...',
  },
  {
    name: 'an extra field of a message',
    request: `[{"role":"user","content":"hi","extra":${deepArrays}}]`,
    path: 'messages[0].extra[0][0][0][0][0][0][0]...',
  },
  {
    name: 'a content part',
    request: `[{"role":"user","content":[{"type":"text","text":"hi","x":${deepArrays}}]}]`,
    path: 'messages[0].content[0].x[0][0][0][0][0]...',
  },
  {
    name: 'an OpenAI Responses input item',
    request: `{"input":[${hi},{"type":"function_call","call_id":"c","name":"f","arguments":"{}","x":${deepArrays}}]}`,
    path: 'input[1].x[0][0][0][0][0][0][0]...',
  },
  {
    name: 'a top-level field of the request body the lens never reads',
    request: `{"messages":[${hi}],"metadata":${deepObjects}}`,
    path: 'metadata.a.a.a.a.a.a.a.a...',
  },
  {
    name: 'the request body\'s tools',
    request: `{"messages":[${hi}],"tools":[${deepObjects}]}`,
    path: 'tools[0].a.a.a.a.a.a.a.a...',
  },
  {
    name: 'the request body\'s system',
    request: `{"messages":[${hi}],"system":${deepArrays}}`,
    path: 'system[0][0][0][0][0][0][0][0][0]...',
  },
];

const line = (n: number, path: string) => `ctxfold: input line ${n}: ${path}: is nested more than 256 levels deep; ctxfold does not read values this deep`;

describe('the CLI on a request nested 100,000 levels deep', () => {
  for (const c of CASES) {
    test(`${c.name}: exit 2 and one line naming the field, for compress and validate, JSON and JSONL, file and stdin`, () => {
      for (const command of ['compress', 'validate']) {
        for (const via of ['file', 'stdin'] as const) {
          // One JSON document.
          expect({ command, via, ...ctxfold([command], c.request, via), stdout: undefined }).toEqual({ command, via, status: 2, lines: [line(1, c.path)], stdout: undefined });
          // JSONL: a good record on line 1 (written), the deep one on line 2 (named, no output line).
          const r = ctxfold([command], `[${hi}]\n${c.request}\n`, via);
          expect({ command, via, status: r.status, lines: r.lines, outputs: r.stdout.trim().split('\n').length }).toEqual({ command, via, status: 2, lines: [line(2, c.path), 'ctxfold: 1 of 2 records could not be read (each is named above, and has no output line)'], outputs: 1 });
        }
      }
    });
  }

  test('at the limit a request passes: a message and a body field 256 levels deep are compressed and validated (exit 0), kept as they were', () => {
    let at: unknown = 1;
    for (let k = 1; k < 256; k++) at = { a: at };
    const message = { role: 'user', content: 'hi', extra: at };
    const request = { messages: [message], metadata: at };
    for (const command of ['compress', 'validate']) {
      const r = ctxfold([command], JSON.stringify(request), 'stdin');
      expect({ status: r.status, lines: r.lines }).toEqual({ status: 0, lines: [] });
      const out = JSON.parse(r.stdout) as { messages: unknown[]; metadata: unknown };
      expect(out.messages).toEqual([message]);
      expect(out.metadata).toEqual(at);
    }
  });

  test('a deep JSON text inside a string (a tool call\'s arguments) is passed through, with and without a summarizer', () => {
    const messages = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: deepObjects } }] },
      { role: 'tool', tool_call_id: 'c1', content: deepArrays },
      { role: 'user', content: 'and?' },
    ];
    for (const args of [['compress'], ['compress', '--summarizer', 'extractive', '--compression-threshold-tokens', '1'], ['validate']]) {
      const r = ctxfold(args, JSON.stringify(messages), 'file');
      expect({ args, status: r.status }).toEqual({ args, status: 0 });
      const out = JSON.parse(r.stdout) as { messages: unknown[] };
      // Without a summary every message fits the default budget and is sent as it came.
      if (!args.includes('--summarizer')) expect(out.messages).toEqual(messages);
    }
  });
});
