import { describe, expect, test } from '@jest/globals';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compressContext, createTokenCounter, validateMessages } from '../../src/index.js';
import { convertMessages } from '../../src/core/index.js';
import { SUPPORTED_FORMATS } from '../../src/formats/registry.js';
import type { FormatName } from '../../src/formats/lens.js';
import { HAS_CORPUS, loadCorpus } from '../helpers/corpus.js';
import { pairingProblems } from '../helpers/oracle.js';

/**
 * Every format together: the converters carry the shared corpus into each format and back, each
 * converted conversation compresses to views its provider accepts (also with ids and alternation
 * fitted to a provider, `provider`), and the CLI reads and writes each format's request body.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const OTHERS = SUPPORTED_FORMATS.filter((f) => f !== 'openai');
/** Which field of a request body holds the list, by format. */
const LIST_FIELD: Record<string, string> = { gemini: 'contents', 'openai-responses': 'input' };

describe('convertMessages', () => {
  (HAS_CORPUS ? test : test.skip)('the corpus goes to every format and back; what does not come back is named in lost', () => {
    const corpus = loadCorpus().slice(0, 60);
    for (const to of OTHERS) {
      let exact = 0;
      for (const conv of corpus) {
        const there = convertMessages(conv.messages, { from: 'openai', to });
        const back = convertMessages(there.messages, { from: to, to: 'openai', instructions: there.instructions });
        if (there.lost.length === 0 && back.lost.length === 0) {
          // Nothing reported lost: the round trip gives the input back.
          expect(back.messages).toEqual(conv.messages);
          exact++;
        }
        // Whatever was lost, the pairs survive the trip.
        expect(pairingProblems(back.messages as never)).toEqual([]);
      }
      expect({ to, exact: exact > 0 || to === 'hermes' }).toEqual({ to, exact: true });
    }
  });

  test('from one format to another directly, through the hub, gives a history that format\'s profile accepts', () => {
    const chat = JSON.parse(readFileSync(join(root, 'examples', 'formats', 'openai.json'), 'utf8')).messages as unknown[];
    for (const from of OTHERS) {
      const source = convertMessages(chat, { from: 'openai', to: from });
      for (const to of OTHERS) {
        const r = convertMessages(source.messages, { from, to, instructions: source.instructions });
        expect({ from, to, violations: validateMessages(r.messages, to as never) }).toEqual({ from, to, violations: [] });
      }
    }
  });

  test('an unknown format is an InputError naming the option', () => {
    expect(() => convertMessages([], { from: 'palm' as FormatName, to: 'openai' })).toThrow(/^options\.from: must be one of openai, /);
  });
});

describe('providers on converted corpus histories', () => {
  const cases: [FormatName, string][] = [['anthropic', 'anthropic'], ['anthropic', 'bedrock'], ['openai', 'mistral'], ['openai-responses', 'openai-responses'], ['gemini', 'gemini']];
  (HAS_CORPUS ? test : test.skip).each(cases)('%s histories compressed with provider %s at 25/50/75%%: every view passes that provider, ids and roles fitted', (format, provider) => {
    const counter = createTokenCounter();
    let views = 0;
    for (const conv of loadCorpus().slice(0, 50)) {
      const converted = convertMessages(conv.messages, { from: 'openai', to: format });
      const full = compressContext(converted.messages, { counter, format, instructions: converted.instructions, keepFirst: 0 });
      for (const share of [0.25, 0.5, 0.75]) {
        const { report } = compressContext(converted.messages, {
          counter, format, provider, instructions: converted.instructions, keepFirst: format === 'anthropic' ? 1 : 0, maxContextTokens: Math.max(1, Math.floor(full.report.tokensBefore * share)),
        });
        expect({ id: conv.id, share, violations: report.violations }).toEqual({ id: conv.id, share, violations: [] });
        views++;
      }
    }
    expect(views).toBe(150);
  });
});

describe('repair in the format\'s own shape', () => {
  test('Gemini responses split over two contents are merged into one by compressContext, the caller\'s objects untouched', () => {
    const contents = [
      { role: 'user', parts: [{ text: 'Weather in Paris and Rome?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'weather', args: { city: 'Paris' } }, thoughtSignature: 'c2ln' }, { functionCall: { name: 'weather', args: { city: 'Rome' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'weather', response: { sky: 'sun' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'weather', response: { sky: 'rain' } } }] },
      { role: 'model', parts: [{ text: 'Sun in Paris, rain in Rome.' }] },
    ];
    const before = JSON.stringify(contents);
    const { messages, report } = compressContext(contents, { provider: 'gemini' });
    expect(report.repaired.map((a) => a.action)).toEqual(['merged-results']);
    expect(report.violations).toEqual([]);
    expect(messages).toHaveLength(4);
    expect((messages[2] as { parts: unknown[] }).parts).toEqual([contents[2].parts[0], contents[3].parts[0]]);
    expect(messages[1]).toBe(contents[1]);
    expect(JSON.stringify(contents)).toBe(before);
  });
});

describe('the CLI reads and writes each format\'s request body', () => {
  const cli = join(root, 'dist', 'src', 'cli', 'main.js');
  test.each(SUPPORTED_FORMATS)('examples/formats/%s.json: compress with --format and with auto keeps the body\'s shape, and the view is valid', (format) => {
    const file = join(root, 'examples', 'formats', `${format}.json`);
    const body = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    const field = LIST_FIELD[format] ?? 'messages';
    for (const flags of [['--format', format], []]) {
      const out = JSON.parse(execFileSync(process.execPath, [cli, 'compress', '--max-context-tokens', '200', '--keep-last', '2', ...flags, file], { encoding: 'utf8' })) as Record<string, unknown>;
      expect(Object.keys(out)).toEqual([...Object.keys(body), 'ctxfold']);
      for (const key of Object.keys(body)) if (key !== field) expect(out[key]).toEqual(body[key]);
      const report = out.ctxfold as { format: string; tokensAfter: number; droppedCounts: { budget: number } };
      expect(report.format).toBe(format);
      expect(report.tokensAfter).toBeLessThanOrEqual(200);
      expect(report.droppedCounts.budget).toBeGreaterThan(0);
      expect(validateMessages(out[field] as unknown[], format as never)).toEqual([]);
    }
  });

  test('--provider checks the view and fits it: bedrock bridges a seam, mistral maps ids; a view that breaks a rule exits 1', () => {
    const run = (args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
    const bedrock = run(['compress', '--max-context-tokens', '200', '--keep-last', '2', '--provider', 'bedrock', join(root, 'examples', 'formats', 'anthropic.json')]);
    expect(bedrock.status).toBe(0);
    expect((JSON.parse(bedrock.stdout).ctxfold as { violations: unknown[] }).violations).toEqual([]);
    const mistral = run(['compress', '--max-context-tokens', '200', '--keep-last', '2', '--provider', 'mistral', join(root, 'examples', 'formats', 'openai.json')]);
    expect(mistral.status).toBe(0);
    expect(mistral.stderr).toMatch(/renamed-id: call id call_b1 does not fit the provider's id pattern/);
    // Without repair the ids stay, and the view breaks Mistral's id rule: said on stderr, exit 1.
    const broken = run(['compress', '--no-repair', '--provider', 'mistral', join(root, 'examples', 'formats', 'openai.json')]);
    expect(broken.status).toBe(1);
    expect(broken.stderr).toMatch(/the view breaks call-id-format: messages\[2\]: Tool call id was call_a1 but must be a-z, A-Z, 0-9, with a length of 9\./);
    expect(run(['compress', '--provider', 'palm', join(root, 'examples', 'formats', 'openai.json')]).stderr).toMatch(/^ctxfold: --provider must be one of openai, /);
    expect(run(['compress', '--provider', 'gemini', join(root, 'examples', 'formats', 'openai.json')]).stderr).toMatch(/format gemini keeps its list in "contents", but this request body has "messages"/);
  });
});
