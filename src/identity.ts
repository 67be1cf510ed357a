import { fingerprintMessage, messageId } from './core/fingerprint.js';
import type { MessageLens } from './formats/lens.js';

const fingerprints = new WeakMap<object, string>();

/** Content fingerprint of a message, computed once per message object. */
export function cachedFingerprint(message: unknown): string {
  if (typeof message !== 'object' || message === null) return fingerprintMessage(message);
  let fp = fingerprints.get(message);
  if (fp === undefined) {
    fp = fingerprintMessage(message);
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
