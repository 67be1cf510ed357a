import { Buffer } from 'node:buffer';
import type { TextCounter } from './counter.js';

/**
 * Upper bounds of token counts from byte lengths, for encodings where every token is at least
 * one byte of text.
 *
 * tiktoken's byte-pair encodings are byte-level: encoding a text splits its UTF-8 bytes into
 * tokens, each a non-empty byte sequence of the vocabulary, and the tokens' bytes joined are the
 * text's bytes. Every rank of o200k_base (0..199997) and cl100k_base (0..100255) decodes to at
 * least one byte (checked by reading each with `decode_single_token_bytes`), and
 * `encode_ordinary` never emits a special token. So a text costs at most its UTF-8 length.
 *
 * The counter may count a long text in slices (runs of letters in 128-character slices, windows
 * of 32k characters): a slice seam can fall between the two halves of a surrogate pair, and each
 * half alone is encoded as U+FFFD (3 bytes), 6 bytes where the pair was 4. `utf8TokenBound`
 * therefore counts a surrogate pair as 6 bytes: a bound that holds however the text is sliced.
 */
export const BYTE_BOUNDED_ENCODINGS: ReadonlySet<string> = new Set(['o200k_base', 'cl100k_base']);

/**
 * At least the tokens of `text` under any encoding of `BYTE_BOUNDED_ENCODINGS`, however the
 * counter slices it: its UTF-8 length, a surrogate pair counted as 6 bytes.
 */
export const utf8TokenBound: TextCounter = (text) => {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes === text.length) return bytes; // ASCII only: no surrogate in it
  let pairs = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        pairs++;
        i++;
      }
    }
  }
  return bytes + 2 * pairs;
};

/**
 * A coarser bound that reads no character: 3 tokens per UTF-16 code unit (no code unit, paired
 * or alone, is more than 3 bytes of UTF-8 when encoded by itself). At least `utf8TokenBound`.
 */
export const codeUnitTokenBound: TextCounter = (text) => 3 * text.length;
