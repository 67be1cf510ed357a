import type { CompressOptions } from '../src/runtime/options.js';
import type { RequestExtras } from './budget.js';
import type { FuzzFormat } from './formats.js';
import { below, pick, type Rng } from './garble.js';

/** The options of one fuzzed call: what goes to `compressContext`, and whether it summarizes first. */
export interface DrawnOptions {
  readonly options: CompressOptions & RequestExtras;
  /** Run `compressWithSummary` with the extractive summarizer (a threshold is then set). */
  readonly summarize: boolean;
}

const NAMES = ['search', 'read_file', 'run_query', 'get_weather', 'list_items', 'send_mail'];

/** A tool definition in the OpenAI shape (every format's tools are counted as their JSON text). */
function toolDefinition(rng: Rng, k: number): unknown {
  const params: Record<string, unknown> = {};
  for (let p = 0; p < 1 + below(rng, 5); p++) params[`arg${p}`] = { type: pick(rng, ['string', 'integer', 'boolean']), description: 'a parameter '.repeat(1 + below(rng, 6)) };
  return { type: 'function', function: { name: `${pick(rng, NAMES)}_${k}`, description: 'Does one thing well. '.repeat(1 + below(rng, 10)), parameters: { type: 'object', properties: params } } };
}

/**
 * Random options for a history of `historyTokens` tokens (as ctxfold counts it, or undefined when
 * it cannot be counted): a budget from 2% to 120% of it (now and then none, or a small absolute
 * one), a reply reserve, tool definitions, a response format and instructions counted into the
 * request, head and tail sizes, fold steps, clearing of bulky results, a strict kept tail, repair
 * off now and then, a threshold, the summary's role; one call in ten summarizes first.
 */
export function drawOptions(rng: Rng, spec: FuzzFormat, historyTokens: number | undefined): DrawnOptions {
  const o: CompressOptions & RequestExtras & { -readonly [K in keyof RequestExtras]: RequestExtras[K] } = {};
  const whole = historyTokens ?? 50 + below(rng, 5000);
  const r = rng();
  if (r < 0.9) o.maxContextTokens = Math.max(1, Math.floor((whole * (20 + below(rng, 1181))) / 1000));
  else if (r < 0.95) o.maxContextTokens = 1 + below(rng, 400);
  if (o.maxContextTokens !== undefined && o.maxContextTokens > 1 && rng() < 0.3) o.reserveOutputTokens = below(rng, Math.floor(o.maxContextTokens / 2));
  if (rng() < 0.4) o.tools = Array.from({ length: 1 + below(rng, 4) }, (_, k) => toolDefinition(rng, k));
  if (rng() < 0.1) o.responseFormat = { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object', properties: { answer: { type: 'string' } } } } };
  if (spec.instructions && rng() < 0.3) o.instructions = spec.instructions('Answer briefly. Cite the tool results you use. '.repeat(1 + below(rng, 8)), rng() < 0.5);
  if (rng() < 0.8) o.keepFirst = below(rng, 4);
  if (rng() < 0.8) o.keepLast = below(rng, 13);
  const mark = pick(rng, [undefined, 1, 0.7, 0.5, 0.3]);
  if (mark !== undefined) o.lowWaterMark = mark;
  const trim = pick(rng, [undefined, undefined, true, { minChars: 200 }]);
  if (trim !== undefined) o.toolOutputTrim = trim;
  if (rng() < 0.2) o.keepLastYields = false;
  if (rng() < 0.1) o.repair = false;
  if (rng() < 0.3) o.compressionThresholdTokens = Math.max(1, Math.floor(whole * (0.2 + rng() * 0.8)));
  if (rng() < 0.1) o.summaryRole = 'system';
  const summarize = rng() < 0.1;
  if (summarize && o.compressionThresholdTokens === undefined) o.compressionThresholdTokens = Math.max(1, Math.floor(whole * 0.5));
  return { options: o, summarize };
}
