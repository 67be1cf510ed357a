import { describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FUZZ_FORMATS } from '../fuzz/formats.js';
import { fuzzMain, parseFuzzArgs, tallyLines } from '../fuzz/main.js';
import { failuresOf, runFuzz, type FormatTally } from '../fuzz/run-fuzz.js';
import { PROPERTY_SEED } from './helpers/property-runs.js';

/**
 * The fuzz run (`npm run fuzz`) on a few hundred histories per format: no failure in any format
 * (every view valid by the format's independent checker, within its budget and counted right, the
 * input unchanged, no error but an `InputError` on malformed input), and the run reached what it
 * is for: valid, broken and malformed histories, views over budget, summaries, refusals.
 */
const root = join(dirname(fileURLToPath(import.meta.url)), '..');

describe('the fuzz run', () => {
  test('a few hundred histories of every format: no failure, every shape and outcome reached', async () => {
    const histories = 300;
    const tallies = await runFuzz({ histories, formats: FUZZ_FORMATS, seed: PROPERTY_SEED });
    expect(tallies.map((t) => t.format)).toEqual(['openai', 'openai-responses', 'anthropic', 'gemini', 'ai-sdk', 'qwen-agent', 'hermes']);
    for (const t of tallies) {
      // The lines name the failures with what replays them, should there be any.
      expect({ format: t.format, failures: failuresOf(t), lines: failuresOf(t) > 0 ? tallyLines(t) : [] }).toEqual({ format: t.format, failures: 0, lines: [] });
      expect(t.histories).toBe(histories);
      for (const shape of ['valid', 'broken', 'malformed'] as const) expect({ format: t.format, shape, reached: t.shapes[shape] > histories / 20 }).toEqual({ format: t.format, shape, reached: true });
      expect(t.summarized).toBeGreaterThan(0);
      expect(t.reportedOverBudget).toBeGreaterThan(0);
      expect(Object.keys(t.exceptions)).toEqual(['InputError']);
    }
  });

  test('the counts are printed per format; a failure line names its seed and index and how to replay it', () => {
    const tally: FormatTally = {
      format: 'gemini', histories: 3, shapes: { valid: 1, broken: 1, malformed: 1 }, summarized: 0, reportedOverBudget: 1, unchecked: 0, passedThrough: 0, notes: [],
      failures: { invalid: 0, 'over-budget': 0, miscounted: 0, 'changed-input': 0, 'refused-valid': 0, exception: 1 },
      exceptions: { InputError: 1, TypeError: 1 },
      failed: [{ format: 'gemini', seed: 9, index: 2, outcome: { shape: 'malformed', fault: '[1].parts deleted', summarize: false, kind: 'failed', errorClass: 'TypeError', failure: { class: 'exception', detail: 'TypeError: x is undefined' } } }],
      seconds: 0.5,
    };
    expect(failuresOf(tally)).toBe(1);
    const lines = tallyLines(tally);
    expect(lines[0]).toBe('gemini: 3 histories (1 valid, 1 broken pairing, 1 malformed; 0 summarized first) in 0.5 s');
    expect(lines[1]).toMatch(/invalid 0, over budget 0, miscounted 0, .* other exceptions 1$/);
    expect(lines[2]).toMatch(/^ {2}exceptions by class: InputError 1 \(allowed on malformed input\), TypeError 1;/);
    expect(lines.slice(3)).toEqual([
      '  FAIL gemini seed 9 index 2 (malformed: [1].parts deleted): exception: TypeError: x is undefined',
      '    replay: npm run fuzz -- --format gemini --seed 9 --replay 2',
    ]);
  });

  test('flags: defaults, one format or all, and a bad flag refused with the usage (exit 2)', async () => {
    expect(parseFuzzArgs([])).toMatchObject({ histories: 1000, seed: 1 });
    expect(parseFuzzArgs(['--histories', '5', '--format', 'hermes', '--seed', '7']).formats.map((f) => f.format)).toEqual(['hermes']);
    expect(parseFuzzArgs(['--format', 'all']).formats).toHaveLength(7);
    const out: string[] = [];
    for (const bad of [['--format', 'cobol'], ['--histories', '0'], ['--seed', '-1'], ['--replay', '3'], ['--what']]) {
      expect(await fuzzMain(bad, (l) => out.push(l))).toBe(2);
    }
    expect(out.filter((l) => l.includes('usage: npm run fuzz')).length).toBeGreaterThanOrEqual(4);
  });

  test('the compiled script: prints the counts and exits 0 on a clean run; --replay shows one history as JSON', () => {
    const cli = join(root, 'dist', 'fuzz', 'cli.js');
    const r = spawnSync(process.execPath, [cli, '--histories', '40', '--format', 'qwen-agent', '--seed', '3'], { encoding: 'utf8', cwd: root });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    expect(r.stdout).toMatch(/^fuzz: 40 histories per format, seed 3\nqwen-agent: 40 histories \(/);
    expect(r.stdout).toMatch(/\n {2}invalid 0, over budget 0, miscounted 0, input changed 0, valid history refused 0, other exceptions 0\n/);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('fuzz: no failures');
    const replay = spawnSync(process.execPath, [cli, '--format', 'qwen-agent', '--seed', '3', '--replay', '5'], { encoding: 'utf8', cwd: root });
    expect(replay.status).toBe(0);
    const shown = JSON.parse(replay.stdout) as { outcome: { kind: string }; history: unknown[]; view: unknown[] };
    expect(shown.outcome.kind).toMatch(/^(ok|refused)$/);
    expect(Array.isArray(shown.history) || shown.history === null || typeof shown.history === 'object').toBe(true);
  });
});
