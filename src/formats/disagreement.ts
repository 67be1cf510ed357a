import type { FormatName } from './lens.js';
import { evidenceIn, LEGACY_CALL, type Evidence } from './evidence.js';

/**
 * The evidence in `messages` that they are in a format other than `format`: for each other format
 * the messages point to, its first pieces (see `evidenceIn`), in the order first seen; empty when
 * nothing points elsewhere (plain text points nowhere). A legacy `function_call` alone does not
 * contradict `qwen-agent`, which writes its calls the same way. Pure: reads the messages only.
 */
export function evidenceAgainst(messages: readonly unknown[], format: FormatName): readonly (readonly Evidence[])[] {
  const found = evidenceIn(messages);
  const against: Evidence[][] = [];
  for (const [other, pieces] of found) {
    if (other === format) continue;
    if (format === 'qwen-agent' && other === 'openai' && pieces.every((p) => p.what === LEGACY_CALL)) continue;
    against.push(pieces);
  }
  return against;
}
