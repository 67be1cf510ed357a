import { InputError } from '../errors.js';
import type { CompressOptions } from './options.js';

/** The valves of Open WebUI's async-context-compression filter that have a ctxfold equivalent. */
export interface OpenWebUIValves {
  readonly keep_first?: number;
  readonly keep_last?: number;
  readonly max_context_tokens?: number;
  readonly compression_threshold_tokens?: number;
  /**
   * Per-model overrides: `"model:threshold:max, ..."` (the filter's text form) or
   * `{ [model]: { compression_threshold_tokens?, max_context_tokens? } }`.
   */
  readonly model_thresholds?: string | Readonly<Record<string, { readonly compression_threshold_tokens?: number; readonly max_context_tokens?: number }>>;
  readonly [other: string]: unknown;
}

const MAPPED = ['keep_first', 'keep_last', 'max_context_tokens', 'compression_threshold_tokens', 'model_thresholds'];

function count(name: string, value: unknown, zeroMeansOff: boolean): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw new InputError(`valves.${name}`, `must be an integer >= 0, got ${JSON.stringify(value)}`);
  return zeroMeansOff && n === 0 ? undefined : n;
}

function modelOverride(thresholds: OpenWebUIValves['model_thresholds'], model: string): { compression_threshold_tokens?: unknown; max_context_tokens?: unknown } | undefined {
  if (thresholds === undefined || thresholds === null || thresholds === '') return undefined;
  if (typeof thresholds === 'string') {
    for (const entry of thresholds.split(',')) {
      const parts = entry.trim().split(':');
      if (parts.length < 3) continue;
      // Model ids may hold colons themselves (`qwen3:8b`): the last two fields are the numbers.
      const max = parts.pop()!;
      const threshold = parts.pop()!;
      if (parts.join(':').trim() === model) return { compression_threshold_tokens: threshold.trim(), max_context_tokens: max.trim() };
    }
    return undefined;
  }
  if (typeof thresholds !== 'object') throw new InputError('valves.model_thresholds', `must be a "model:threshold:max, ..." string or an object by model, got ${typeof thresholds}`);
  return thresholds[model];
}

/**
 * ctxfold options from the valves of Open WebUI's async-context-compression filter, so a
 * configuration written for it carries over: `keep_first`, `keep_last`, `max_context_tokens`,
 * `compression_threshold_tokens`, and the `model_thresholds` entry for `model` when one is given.
 * A token valve of 0 means "no limit". Valves with no ctxfold equivalent (the summary model,
 * priority, debug switches) are listed in `ignored` rather than silently dropped.
 */
export function fromOpenWebUIValves(valves: OpenWebUIValves, model?: string): { options: CompressOptions; ignored: string[] } {
  if (valves === null || typeof valves !== 'object' || Array.isArray(valves)) {
    throw new InputError('valves', `must be the filter's valves object, got ${valves === null ? 'null' : typeof valves}`);
  }
  const override = model !== undefined ? modelOverride(valves.model_thresholds, model) : undefined;
  const options: CompressOptions = {};
  const keepFirst = count('keep_first', valves.keep_first, false);
  const keepLast = count('keep_last', valves.keep_last, false);
  const max = count('max_context_tokens', override?.max_context_tokens ?? valves.max_context_tokens, true);
  const threshold = count('compression_threshold_tokens', override?.compression_threshold_tokens ?? valves.compression_threshold_tokens, true);
  if (keepFirst !== undefined) options.keepFirst = keepFirst;
  if (keepLast !== undefined) options.keepLast = keepLast;
  if (max !== undefined) options.maxContextTokens = max;
  if (threshold !== undefined) options.compressionThresholdTokens = threshold;
  const ignored = Object.keys(valves).filter((k) => !MAPPED.includes(k));
  return { options, ignored };
}
