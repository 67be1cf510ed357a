import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';

/** Path of the shared corpus of real conversations, beside the project root. */
export const CORPUS_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'shared', 'corpus', 'tau-bench-airline-gpt4o.jsonl');

/** One real conversation of the corpus. */
export interface CorpusConversation {
  id: string;
  source?: string;
  messages: OpenAIChatMessage[];
}

/** True when ../shared/corpus is present; tests that need it skip with a message otherwise. */
export const HAS_CORPUS = existsSync(CORPUS_PATH);

if (!HAS_CORPUS) {
  // eslint-disable-next-line no-console
  console.warn(`corpus tests skipped: ${CORPUS_PATH} not found (the shared folder must sit beside the project)`);
}

let cached: CorpusConversation[] | undefined;

/**
 * Loads the corpus once per test file (a fresh parse, so tests cannot share mutated objects).
 * Without it, none: the tests that read it are skipped (`corpusDescribe`), but a skipped
 * `describe` still runs its body to list its tests, and that must not throw.
 */
export function loadCorpus(): CorpusConversation[] {
  if (!HAS_CORPUS) return [];
  cached ??= readFileSync(CORPUS_PATH, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as CorpusConversation);
  return cached;
}

/** `describe` when the corpus is present, `describe.skip` (with the warning above) otherwise. */
export function corpusDescribe(d: { (name: string, fn: () => void): void; skip: (name: string, fn: () => void) => void }) {
  return HAS_CORPUS ? d : d.skip;
}
