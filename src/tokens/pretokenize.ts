/**
 * tiktoken's pre-tokenizer in JavaScript. tiktoken splits a text into pieces with one regular
 * expression per encoding and byte-pair encodes each piece on its own, so the token count of a
 * text is the sum of its pieces' counts. Splitting with V8's regex engine and encoding only pieces
 * not seen before gives tiktoken's exact count several times faster than encoding the whole text
 * in WASM (whose regex engine is most of its cost).
 *
 * The patterns are the encodings' own `pat_str` (tiktoken 1.0.22), rewritten for JavaScript:
 * - `(?i:'s|'t|...)` becomes explicit case classes; Unicode simple case folding makes `s` match
 *   `S` and `ſ` (U+017F) too, as the Rust engine does;
 * - `\s` / `\S` become Unicode `White_Space` (the Rust meaning): JavaScript's own `\s` adds U+FEFF
 *   and lacks U+0085.
 * Only o200k_base and cl100k_base are rewritten; other encodings, and texts with characters whose
 * Unicode category may differ between the two engines (`splitsLikeTiktoken`), are encoded whole.
 */

/** Unicode White_Space, as Rust's `\s` (JavaScript's `\s` differs on U+0085 and U+FEFF). */
const WS = '\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const S = `[${WS}]`;
const NOT_S = `[^${WS}]`;
/** `(?i:'s|'t|'re|'ve|'m|'ll|'d)` with Unicode simple case folding spelled out. */
const CONTRACTION = "(?:'[sSſ]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";

const UPPERISH = '[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]';
const LOWERISH = '[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]';

/** o200k_base's `pat_str`, for JavaScript (see the module comment). */
const O200K_SOURCE = [
  `[^\\r\\n\\p{L}\\p{N}]?${UPPERISH}*${LOWERISH}+${CONTRACTION}?`,
  `[^\\r\\n\\p{L}\\p{N}]?${UPPERISH}+${LOWERISH}*${CONTRACTION}?`,
  '\\p{N}{1,3}',
  ` ?[^${WS}\\p{L}\\p{N}]+[\\r\\n/]*`,
  `${S}*[\\r\\n]+`,
  `${S}+(?!${NOT_S})`,
  `${S}+`,
].join('|');

/** cl100k_base's `pat_str`, for JavaScript (see the module comment). */
const CL100K_SOURCE = [
  CONTRACTION,
  '[^\\r\\n\\p{L}\\p{N}]?\\p{L}+',
  '\\p{N}{1,3}',
  ` ?[^${WS}\\p{L}\\p{N}]+[\\r\\n]*`,
  `${S}*[\\r\\n]+`,
  `${S}+(?!${NOT_S})`,
  `${S}+`,
].join('|');

/** The pattern sources by encoding name; an encoding not listed is encoded whole. */
const SOURCES: Readonly<Record<string, string>> = Object.freeze({ o200k_base: O200K_SOURCE, cl100k_base: CL100K_SOURCE });

/**
 * True when every character of `text` is in ranges whose Unicode categories have been settled for
 * years: Latin to Mandaic, Latin and Greek extended, punctuation and symbols, CJK symbols and kana,
 * CJK ideographs, Hangul syllables, CJK compatibility and fullwidth forms, and the emoji blocks
 * (U+1F000-U+1FAFF). V8 and tiktoken's Rust regex engine ship different Unicode versions, so a
 * letter assigned only in the newer one is split differently: a text with any other character is
 * encoded whole by tiktoken instead. A loop, not a regex, so a text of any length is safe.
 */
export function splitsLikeTiktoken(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x085f || (c >= 0x1e00 && c <= 0x2bff)) continue;
    if (c >= 0xd800 && c <= 0xdbff) {
      // U+1F000-U+1FAFF: high surrogates D83C-D83E, the last one only up to low surrogate DEFF.
      const low = text.charCodeAt(i + 1);
      if (c < 0xd83c || c > 0xd83e || !(low >= 0xdc00 && low <= 0xdfff) || (c === 0xd83e && low > 0xdeff)) return false;
      i++;
      continue;
    }
    if ((c >= 0x3000 && c <= 0x30ff) || (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x4e00 && c <= 0x9fff) || (c >= 0xac00 && c <= 0xd7a3)) continue;
    if ((c >= 0xf900 && c <= 0xfaff) || (c >= 0xfe30 && c <= 0xfe4f) || (c >= 0xff00 && c <= 0xffef)) continue;
    return false;
  }
  return true;
}

/**
 * A fresh splitter for `encoding` (its own RegExps, since a RegExp carries its position), or
 * undefined when the encoding's pre-tokenizer is not rewritten here. `split(text, each)` calls
 * `each` with every match in order, as tiktoken's own split does. Each piece is matched with a
 * sticky `test` where the previous one ended (no match array is made); where no piece starts
 * there, a global `exec` finds the next one, as a plain global search would. No alternative of
 * the patterns matches the empty string, so the two searches give the same pieces.
 */
export function piecesSplitter(encoding: string): ((text: string, each: (piece: string) => void) => void) | undefined {
  const source = SOURCES[encoding];
  if (source === undefined) return undefined;
  const sticky = new RegExp(source, 'uy');
  const search = new RegExp(source, 'gu');
  return (text, each) => {
    let at = 0;
    while (at < text.length) {
      sticky.lastIndex = at;
      if (sticky.test(text)) {
        const end = sticky.lastIndex;
        each(text.slice(at, end));
        at = end;
        continue;
      }
      search.lastIndex = at;
      const match = search.exec(text);
      if (match === null) return;
      each(match[0]);
      at = search.lastIndex;
    }
  };
}
