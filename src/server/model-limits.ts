import { readFile } from 'node:fs/promises';
import { contextWindowOf, normalizeModelId } from '../runtime/context-windows.js';
import { InputError } from '../errors.js';

/** The limits of one model, from the config file. */
export interface ModelLimits {
  /** The model's context window in tokens (input and output together). */
  readonly maxContextTokens: number;
  /** Summarize in the background from this many tokens (default: 75% of the window, or `--threshold`). */
  readonly compressionThresholdTokens?: number;
}

/** The config file: `{ "models": { "<model>": { "maxContextTokens": N, "compressionThresholdTokens"?: N } } }`. */
export interface ProxyConfig {
  readonly models?: Readonly<Record<string, ModelLimits>>;
}

/** Where a model's budget came from. */
export type LimitSource = 'config' | 'known-model' | 'max-tokens' | 'none';

/** The budget a request to a model is planned with. */
export interface ResolvedLimits {
  /** Undefined when no window is known: the history is then repaired, never cut. */
  readonly maxContextTokens?: number;
  readonly compressionThresholdTokens?: number;
  readonly source: LimitSource;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1;

/**
 * Checks a parsed config value; every mistake is an `InputError` naming the field
 * (`config.models["gpt-4o"].maxContextTokens`) and the rule. `where` names the file in messages.
 */
export function checkConfig(value: unknown, where = 'config'): ProxyConfig {
  if (!isObject(value)) throw new InputError(where, `must be a JSON object like {"models": {"gpt-4o": {"maxContextTokens": 128000}}}`);
  for (const key of Object.keys(value)) {
    if (key !== 'models') throw new InputError(`${where}.${key}`, 'unknown field; the config file has only "models"');
  }
  if (value.models === undefined) return {};
  if (!isObject(value.models)) throw new InputError(`${where}.models`, 'must be an object whose keys are model names');
  const models: Record<string, ModelLimits> = {};
  for (const [name, limits] of Object.entries(value.models)) {
    const at = `${where}.models[${JSON.stringify(name)}]`;
    if (!isObject(limits)) throw new InputError(at, 'must be an object like {"maxContextTokens": 128000}');
    for (const key of Object.keys(limits)) {
      if (key !== 'maxContextTokens' && key !== 'compressionThresholdTokens') throw new InputError(`${at}.${key}`, 'unknown field; known: maxContextTokens, compressionThresholdTokens');
    }
    if (!isCount(limits.maxContextTokens)) throw new InputError(`${at}.maxContextTokens`, `must be an integer >= 1 (the model's context window in tokens), got ${JSON.stringify(limits.maxContextTokens)}`);
    if (limits.compressionThresholdTokens !== undefined && !isCount(limits.compressionThresholdTokens)) {
      throw new InputError(`${at}.compressionThresholdTokens`, `must be an integer >= 1, got ${JSON.stringify(limits.compressionThresholdTokens)}`);
    }
    models[name] = Object.freeze({ maxContextTokens: limits.maxContextTokens, ...(limits.compressionThresholdTokens !== undefined ? { compressionThresholdTokens: limits.compressionThresholdTokens } : {}) });
  }
  return { models: Object.freeze(models) };
}

/** Reads and checks a config file; a missing file or bad JSON is an `InputError` naming the file. */
export async function readConfigFile(path: string): Promise<ProxyConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new InputError('--config', `cannot read ${JSON.stringify(path)}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InputError(`--config ${path}`, `is not valid JSON: ${(error as Error).message}`);
  }
  return checkConfig(value, `--config ${path}`);
}

/**
 * The budget for `model`: the config file's entry (the model's exact name, else its normalized
 * family: `gpt-4o-2024-08-06` finds `gpt-4o`; more specific than the flag, so it wins), else an
 * explicit `fallback` (`--max-tokens`, the server's `maxContextTokens`: it wins over the table),
 * else ctxfold's table of published windows, else none. The threshold is the entry's, else `threshold`. Pure.
 */
export function limitsFor(model: string | undefined, config: ProxyConfig, fallback: number | undefined, threshold: number | undefined): ResolvedLimits {
  const models = config.models ?? {};
  if (model !== undefined) {
    const key = Object.hasOwn(models, model) ? model : Object.keys(models).find((name) => normalizeModelId(name) === normalizeModelId(model));
    if (key !== undefined) {
      const entry = models[key];
      return { maxContextTokens: entry.maxContextTokens, compressionThresholdTokens: entry.compressionThresholdTokens ?? threshold, source: 'config' };
    }
  }
  // An explicit limit is the caller's word: it wins over the table of published windows.
  if (fallback !== undefined) return { maxContextTokens: fallback, compressionThresholdTokens: threshold, source: 'max-tokens' };
  const known = model === undefined ? undefined : contextWindowOf(model);
  if (known !== undefined) return { maxContextTokens: known, compressionThresholdTokens: threshold, source: 'known-model' };
  return { compressionThresholdTokens: threshold, source: 'none' };
}
