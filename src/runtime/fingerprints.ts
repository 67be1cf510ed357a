import { fingerprintMessage, fingerprintText, messageId } from '../core/ids.js';
import type { MessageLens } from '../formats/lens.js';
import { TextMemo } from '../tokens/text-memo.js';

const fingerprints = new WeakMap<object, string>();
const textFingerprints = new TextMemo<string>(64 * 1024 * 1024);

/** Fingerprint of a long string, hashed once per process per distinct text (bounded memo). */
function longStringFingerprint(text: string): string {
  let fp = textFingerprints.get(text);
  if (fp === undefined) {
    fp = fingerprintText(text);
    textFingerprints.set(text, fp);
  }
  return fp;
}

/**
 * Content fingerprint of a message, computed once per message object; a re-parsed copy of a
 * message seen before re-hashes only its structure, not its long texts.
 */
export function cachedFingerprint(message: unknown): string {
  if (typeof message !== 'object' || message === null) return fingerprintMessage(message, longStringFingerprint);
  let fp = fingerprints.get(message);
  if (fp === undefined) {
    fp = fingerprintMessage(message, longStringFingerprint);
    fingerprints.set(message, fp);
  }
  return fp;
}

/**
 * The id of the message at `position`: its own id where the format has one, else its content
 * fingerprint plus its position. The same history always yields the same ids.
 */
export function idAt<M>(messages: readonly M[], lens: MessageLens<M>, position: number): string {
  const m = messages[position];
  return messageId(lens.ownId(m), () => cachedFingerprint(m), position);
}

/** Ids of messages[start, end). */
export function idsOf<M>(messages: readonly M[], lens: MessageLens<M>, start = 0, end = messages.length): string[] {
  const out: string[] = [];
  for (let i = start; i < end; i++) out.push(idAt(messages, lens, i));
  return out;
}
