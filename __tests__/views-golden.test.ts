/**
 * Byte-identical views: a fixed set of histories (every 10th conversation of the shared corpus,
 * generated conversations of every domain, each carried into every wire format, and the example
 * requests of examples/formats/), each folded at a few budgets by `compressContext` and by
 * `compressWithSummary` with the extractive summarizer. Each case keeps the sha256 of
 * `JSON.stringify(view)` and of `JSON.stringify(report.split)` in fixtures/views-golden.json;
 * the test recomputes them and names every case whose view or split differs.
 *
 * A refactor (moving code, renaming, splitting files) must not change this fixture. An intended
 * change of behaviour regenerates it in the same commit, and the commit message says so:
 *
 *   CTXFOLD_UPDATE_GOLDEN=1 NODE_OPTIONS=--experimental-vm-modules npx jest __tests__/views-golden.test.ts
 *
 * Without the shared corpus its cases are skipped (with a message) and the rest still compared;
 * regenerating then refuses, so the corpus cases are never dropped from the fixture by accident.
 */
import { describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compressContext, compressWithSummary, createExtractiveSummarizer, createTokenCounter } from '../src/index.js';
import type { FormatName } from '../src/formats/lens.js';
import { convertMessages } from '../src/formats/convert.js';
import { generateConversation } from '../bench/fixtures/conversation.js';
import { DOMAINS } from '../bench/fixtures/domains/index.js';
import { HAS_CORPUS, loadCorpus } from './helpers/corpus.js';

const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(here, 'fixtures', 'views-golden.json');
const EXAMPLES = join(here, '..', 'examples', 'formats');
const UPDATE = process.env.CTXFOLD_UPDATE_GOLDEN === '1';

/** The wire formats every generated history is carried into (OpenAI Chat is the source). */
const FORMATS: readonly FormatName[] = ['openai', 'anthropic', 'gemini', 'openai-responses', 'ai-sdk', 'qwen-agent', 'hermes'];

/** One input: its name, its messages (in `format`) and the budgets it is folded at. */
interface Input {
  readonly name: string;
  readonly format: FormatName;
  readonly messages: readonly unknown[];
  readonly budgets: readonly number[];
  readonly corpus: boolean;
}

/** The two fingerprints of one fold. */
interface Golden {
  readonly view: string;
  readonly split: string;
}

const sha = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex');

function inputs(): Input[] {
  const out: Input[] = [];
  loadCorpus().forEach((c, i) => {
    if (i % 10 === 0) out.push({ name: `corpus#${i} ${c.id}`, format: 'openai', messages: c.messages, budgets: [1500, 3000, 6000], corpus: true });
  });
  const generated = [
    { name: 'conversation seed 7', messages: generateConversation({ messages: 48, seed: 7 }) },
    { name: 'conversation seed 21 parallel 2', messages: generateConversation({ messages: 36, seed: 21, parallelMax: 2, bulkyEvery: 6 }) },
    ...DOMAINS.map((d) => ({ name: `${d.name} seed 3`, messages: d.generate({ messages: 40, seed: 3 }) })),
  ];
  for (const g of generated) {
    for (const format of FORMATS) {
      const messages = format === 'openai' ? g.messages : convertMessages(g.messages, { from: 'openai', to: format }).messages;
      out.push({ name: `${g.name} as ${format}`, format, messages, budgets: [2500, 8000, 20000], corpus: false });
    }
  }
  for (const format of FORMATS) {
    const body = JSON.parse(readFileSync(join(EXAMPLES, `${format}.json`), 'utf8')) as Record<string, unknown>;
    const messages = (body.messages ?? body.contents ?? body.input) as unknown[];
    out.push({ name: `examples/formats/${format}.json`, format, messages, budgets: [300, 700], corpus: false });
  }
  return out;
}

async function compute(list: readonly Input[]): Promise<Record<string, Golden>> {
  const counter = createTokenCounter();
  const summarizer = createExtractiveSummarizer({ countTokens: counter.text });
  const got: Record<string, Golden> = {};
  for (const input of list) {
    for (const maxContextTokens of input.budgets) {
      const options = { format: input.format, counter, maxContextTokens, keepFirst: 1, keepLast: 4 };
      const plain = compressContext(input.messages, options);
      got[`${input.name} @${maxContextTokens} compressContext`] = { view: sha(plain.messages), split: sha(plain.report.split) };
      const folded = await compressWithSummary(input.messages, { ...options, summarizer });
      got[`${input.name} @${maxContextTokens} compressWithSummary`] = { view: sha(folded.messages), split: sha(folded.report.split) };
    }
  }
  return got;
}

describe('views are byte-identical to the committed fixture', () => {
  test('every case gives the view and split it gave when the fixture was written', async () => {
    const list = inputs();
    const got = await compute(list);
    if (UPDATE) {
      if (!HAS_CORPUS) throw new Error('CTXFOLD_UPDATE_GOLDEN needs the shared corpus: without it its cases would be dropped from the fixture');
      writeFileSync(FIXTURE, `${JSON.stringify(got, null, 1)}\n`);
      return;
    }
    const want = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, Golden>;
    const corpusCase = (name: string) => name.startsWith('corpus#');
    if (!HAS_CORPUS) {
      // eslint-disable-next-line no-console
      console.warn('views-golden: corpus cases skipped (the shared corpus is absent); the generated and example cases are still compared');
    }
    const differing: string[] = [];
    for (const [name, golden] of Object.entries(want)) {
      if (!HAS_CORPUS && corpusCase(name)) continue;
      const now = got[name];
      if (now === undefined) differing.push(`${name}: no longer computed`);
      else if (now.view !== golden.view) differing.push(`${name}: view differs`);
      else if (now.split !== golden.split) differing.push(`${name}: report.split differs`);
    }
    for (const name of Object.keys(got)) if (!(name in want)) differing.push(`${name}: not in the fixture`);
    expect(differing).toEqual([]);
    expect(Object.keys(got).length).toBeGreaterThan(100);
  });
});
