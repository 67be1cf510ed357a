import { createHash } from 'node:crypto';
import { fingerprintMessage, messageId } from '../core/ids.js';
import type { MessageLens } from '../formats/lens.js';
import { TextMemo } from '../tokens/text-memo.js';

/** A stable content fingerprint (hex, 16 chars): sha1 of the text. Equal content, equal fingerprint. */
export function fingerprintText(text: string): string {
  return createHash('sha1').update(text).digest('hex').slice(0, 16);
}

/**
 * Fingerprints of messages, each computed once per message object (a weak map: it never keeps a
 * message alive), and of long strings, remembered by content within `maxBytes` (least recently
 * used first) so a re-parsed copy of a message seen before re-hashes only its structure. Owned by
 * whoever owns the histories (a `HistoryCache`); nothing is shared between owners.
 */
export class Fingerprints {
  readonly #byObject = new WeakMap<object, string>();
  readonly #longStrings: TextMemo<string>;
  readonly #longString = (text: string): string => {
    let fp = this.#longStrings.get(text);
    if (fp === undefined) {
      fp = fingerprintText(text);
      this.#longStrings.set(text, fp);
    }
    return fp;
  };

  constructor(maxBytes = 16 * 1024 * 1024) {
    this.#longStrings = new TextMemo<string>(maxBytes);
  }

  /** Content fingerprint of a message (position not included). */
  of(message: unknown): string {
    if (typeof message !== 'object' || message === null) return fingerprintMessage(message, fingerprintText, this.#longString);
    let fp = this.#byObject.get(message);
    if (fp === undefined) {
      fp = fingerprintMessage(message, fingerprintText, this.#longString);
      this.#byObject.set(message, fp);
    }
    return fp;
  }

  /**
   * The id of the message at `position`: its own id where the format has one, else its content
   * fingerprint plus its position. The same history always yields the same ids.
   */
  idAt<M>(messages: readonly M[], lens: MessageLens<M>, position: number): string {
    const m = messages[position];
    return messageId(lens.read(m).ownId, () => this.of(m), position);
  }

  /** Ids of messages[start, end). */
  idsOf<M>(messages: readonly M[], lens: MessageLens<M>, start = 0, end = messages.length): string[] {
    const out: string[] = [];
    for (let i = start; i < end; i++) out.push(this.idAt(messages, lens, i));
    return out;
  }
}
