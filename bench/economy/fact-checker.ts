/**
 * The independent judge of "what the model still knows" after compression: it lists the facts an
 * original conversation holds and checks which of them a compressed view still carries.
 *
 * Written from first principles and sharing no code with `src/summarize` (it judges that code).
 * Every rule is about the SHAPE of a value, never about what a conversation is about: no word of
 * any domain appears below. Month names, measurement units and ISO 4217 currency codes are the
 * only word lists, and they belong to the shape of dates, quantities and amounts.
 *
 * Where facts come from (`extractFacts`):
 * - user messages (their text), assistant tool-call arguments, tool results;
 * - never the system / developer prompt, never assistant prose (what the model said is not a
 *   fact the user or a tool gave it).
 *
 * A text that parses as JSON (an object or an array) is walked: every string leaf is scanned with
 * the text rules, and so is every object key holding 3+ digits (a key that is data, such as
 * `voucher_6012358`, not a field name such as `address1`); a leaf under an id-shaped key
 * (`isIdKey`) is a fact whole; a number leaf of 3+ digits is a fact; a string leaf that is wholly
 * 3-8 upper-case letters is a code (`MCO`, `EUR`).
 * Any other text is scanned with the text rules. The rules run in the order of `TEXT_RULES`;
 * a span one rule took is masked, so a later, looser rule does not take pieces of it again
 * (the year of a date is not also a number).
 *
 * When a fact is kept (`retention`): its normalized value occurs in the normalized text of the
 * view (every message's content, tool-call names and arguments, results, summaries; the system
 * prompt included), and the occurrence is not glued to a letter or digit on a side where the
 * fact itself starts or ends with one ("523" is not kept by "15230"). Normalization, applied the
 * same way to facts and to the view:
 * 1. Unicode NFKC (full-width digits and letters become ASCII);
 * 2. JSON string escapes undone, twice (`\"`, `\\`, `\/`, `\uXXXX`; `\n`, `\t`, `\r` become a
 *    space), so a value is found inside JSON and inside JSON quoted in JSON;
 * 3. lower case (ids and codes are compared without case);
 * 4. thousands separators removed (`1,234.50` -> `1234.50`) in a number that starts on its own
 *    (not glued to a letter, digit or point before it) with a first group of 1-3 digits not led
 *    by 0: the comma between two table cells (`b07,732`, `0,732`) stays;
 * 5. whitespace runs collapsed to one space, ends trimmed.
 */
import type { OpenAIChatMessage } from '../../src/index.js';

/** What shape a fact has (the rule that found it). */
export type FactKind =
  | 'url' | 'email' | 'uuid' | 'line-ref' | 'path' | 'date' | 'version' | 'phone' | 'amount'
  | 'quantity' | 'hash' | 'keyed' | 'code' | 'number';

/** Where in the original conversation a fact was first found. */
export type FactSource = 'user' | 'tool-call' | 'tool-result';

/** One fact of a conversation. */
export interface Fact {
  /** The value as written where it was first found. */
  readonly value: string;
  /** The value after normalization: what is searched for in a view, and what facts are deduplicated by. */
  readonly key: string;
  readonly kind: FactKind;
  readonly source: FactSource;
  /** Index of the message it was first found in. */
  readonly message: number;
}

/** Result of checking a view against an original. */
export interface Retention {
  /** Distinct facts in the original. */
  readonly facts: number;
  /** Facts the view still carries. */
  readonly kept: number;
  /** kept / facts (1 when the original has no fact). */
  readonly share: number;
  /** Values of the facts the view lost, in the order they appear in the original. */
  readonly missing: string[];
}

// ---------------------------------------------------------------------------------------------
// Normalization

/** Undoes JSON string escapes once. */
function unescapeJson(s: string): string {
  if (!s.includes('\\')) return s;
  return s.replace(/\\(?:u([0-9a-fA-F]{4})|(["\\/])|[nrtbf])/g, (_m, hex: string | undefined, ch: string | undefined) =>
    hex !== undefined ? String.fromCharCode(parseInt(hex, 16)) : ch !== undefined ? ch : ' ');
}

/** The normalization facts and views are compared under (see the file header, steps 1-5). */
export function normalize(text: string): string {
  let s = text.normalize('NFKC');
  s = unescapeJson(unescapeJson(s));
  s = s.toLowerCase();
  s = s.replace(/(?<![\p{L}\p{N}.])[1-9]\d{0,2}(?:,\d{3})+(?!\d)/gu, (n) => n.replaceAll(',', ''));
  return s.replace(/\s+/g, ' ').trim();
}

// ---------------------------------------------------------------------------------------------
// Rules

/** Counts the digits of a string. */
function digits(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) n++;
  }
  return n;
}

const MONTH = '(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\\.?';
const DAY = '(?:[12]\\d|3[01]|0?[1-9])(?:st|nd|rd|th)?';
/** ISO 4217 codes of widely used currencies (shape of an amount, not a domain). */
const CURRENCY_CODE = '(?:USD|EUR|GBP|JPY|CNY|RMB|CHF|CAD|AUD|NZD|INR|KRW|BRL|MXN|SEK|NOK|DKK|PLN|CZK|HUF|RUB|TRY|ZAR|SGD|HKD|TWD|THB|IDR|MYR|PHP|AED|SAR|ILS|ARS|CLP|COP|VND|NGN|EGP|UAH)';
const CURRENCY_WORD = '(?:dollars?|euros?|pounds?|yen|yuan|renminbi|rupees?|francs?|pesos?|won|cents?|pence)';
const CURRENCY_SYMBOL = '(?:[A-Z]{1,2}\\$|[$€£¥₹₩₽₺₪₫฿₦₴])';
const NUMBER = '\\d[\\d,]*(?:[.,]\\d+)?';
/** Measurement units: time, data size, rate, length, mass, volume, temperature, frequency, percent. */
const UNIT = '(?:%|ms|µs|μs|ns|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?|weeks?|months?|years?|yrs?|[KMGTP]i?B|[kKMGT]b|bytes?|[kMG]bps|req/s|rps|qps|km|cm|mm|m|mi|miles?|ft|kg|mg|g|lbs?|oz|ml|L|°[CF]|[kMG]?Hz|px)';

/** A text rule: a one-line description (the documentation), a kind and a global regex; `accept` filters or rewrites a match. */
interface TextRule {
  readonly kind: FactKind;
  readonly rule: string;
  readonly re: RegExp;
  /** Returns the fact values a match gives ([] rejects it). Default: the whole match. */
  readonly accept?: (match: RegExpExecArray) => string[];
}

/** Trailing sentence punctuation is not part of a URL. */
function trimUrl(m: RegExpExecArray): string[] {
  return [m[0].replace(/[.,;:!?]+$/, '')];
}

/** The text rules, in the order they run. Their `rule` strings are the checker's documentation. */
export const TEXT_RULES: readonly TextRule[] = [
  { kind: 'url', rule: 'URL: scheme://... (http, https, ftp, ws, wss) or www.host..., without trailing punctuation', re: /\b(?:(?:https?|ftp|wss?):\/\/|www\.)[^\s"'<>`()[\]{}]+/g, accept: trimUrl },
  { kind: 'email', rule: 'email: local@domain.tld', re: /(?<![\w.+%-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w-])/g },
  { kind: 'uuid', rule: 'UUID: 8-4-4-4-12 hex digits', re: /(?<![\w-])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![\w-])/g },
  {
    kind: 'line-ref',
    rule: 'line reference: a file path or name.ext followed by :line or :line:column (src/x.ts:42); its path is a fact too',
    re: /(?<![\w.\/~-])(?:~|\.{1,2})?\/?(?:[\w.@-]+\/)*[\w@-][\w.@-]*\.[A-Za-z][\w]{0,9}:\d+(?::\d+)?(?![\w.:])/g,
    accept: (m) => {
      const path = m[0].replace(/(?::\d+){1,2}$/, '');
      return path.includes('/') ? [m[0], path] : [m[0]];
    },
  },
  {
    kind: 'path',
    rule: 'file path: segments joined by /, starting with / ~/ ./ ../ or ending in name.ext, with a letter in it (bare names without a / are not paths)',
    re: /(?<![\w.\/~:-])(?:~|\.{1,2})?\/?(?:[\w.@-]+\/)+[\w.@-]+\/?/g,
    accept: (m) => {
      const v = m[0].replace(/[.,;:]+$/, '');
      if (!/[A-Za-z]/.test(v)) return [];
      const rooted = /^(?:~|\.{1,2})?\//.test(v);
      const withExtension = /\.[A-Za-z][\w]{0,9}$/.test(v);
      return rooted || withExtension ? [v] : [];
    },
  },
  { kind: 'date', rule: 'ISO date or date-time: YYYY-MM-DD, optionally THH:MM[:SS[.fff]][Z|±HH:MM] (T or a space)', re: /(?<![\w-])\d{4}-[01]\d-[0-3]\d(?:[T ][0-2]\d:[0-5]\d(?::[0-5]\d(?:\.\d+)?)?(?:Z|[+-][0-2]\d:?[0-5]\d)?)?(?![\w-])/g },
  { kind: 'date', rule: 'numeric date: D/M/YYYY, M/D/YY, YYYY/MM/DD, D.M.YYYY', re: /(?<![\w\/.-])(?:\d{1,2}[\/.]\d{1,2}[\/.](?:\d{4}|\d{2})|\d{4}\/\d{1,2}\/\d{1,2})(?![\w\/]|\.\d)/g },
  { kind: 'date', rule: 'written date: Month D[, YYYY], D Month [YYYY], Month YYYY (English month names, capitalized)', re: new RegExp(`(?<![\\w])(?:${MONTH} ${DAY}(?:,? \\d{4})?|${DAY} (?:of )?${MONTH}(?:,? \\d{4})?|${MONTH},? \\d{4})(?![\\w])`, 'g') },
  { kind: 'version', rule: 'version: 1.2.3[.4][-pre][+build], or v1.2 / v1 with a v', re: /(?<![\w.])(?:v?\d+\.\d+\.\d+(?:\.\d+)*|v\d+(?:\.\d+)*)(?:-[0-9A-Za-z][0-9A-Za-z.-]*)?(?:\+[0-9A-Za-z.-]+)?(?![\w]|\.\d)/g },
  {
    kind: 'phone',
    rule: 'phone number: 8-15 digits in groups, written with a leading +, an area code in parentheses, or at least two - or . separators',
    re: /(?<![\w+.\/-])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,5}\)[\s.-]?)?\d{1,5}(?:[\s.-]\d{1,5}){0,5}(?![\w]|[.-]\d)/g,
    accept: (m) => {
      const v = m[0].trim();
      const n = digits(v);
      if (n < 8 || n > 15) return [];
      const plus = v.startsWith('+');
      const parens = v.includes('(');
      const marks = (v.match(/\d[.-]\d/g) ?? []).length;
      return plus || parens || marks >= 2 ? [v] : [];
    },
  },
  {
    kind: 'amount',
    rule: 'money: a currency symbol or ISO 4217 code before or after a number ($12, 12 €, EUR 149.90, 1,200 JPY), or a number with a currency word (20 dollars)',
    re: new RegExp(`(?<![\\w.])(?:${CURRENCY_SYMBOL}\\s?-?${NUMBER}(?:\\s?(?:k|K|M|bn|million|billion))?|${CURRENCY_CODE}\\s?-?${NUMBER}|-?${NUMBER}\\s?(?:${CURRENCY_SYMBOL}|${CURRENCY_CODE}(?![A-Za-z])|${CURRENCY_WORD}(?![A-Za-z])))`, 'g'),
  },
  { kind: 'quantity', rule: 'number with a measurement unit (time, data size, rate, length, mass, volume, temperature, frequency, %): 30s, 250 ms, 1.5 GB, 12%', re: new RegExp(`(?<![\\w.])\\d[\\d,]*(?:\\.\\d+)?\\s?${UNIT}(?![\\w])`, 'g') },
  { kind: 'hash', rule: 'hash: 7-64 hex digits with at least one digit and one letter a-f, all one case (commit, sha256)', re: /(?<![\w-])(?:(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,64}|(?=[0-9A-F]*[A-F])(?=[0-9A-F]*\d)[0-9A-F]{7,64})(?![\w-])/g },
  {
    kind: 'keyed',
    rule: 'key: value or key=value in text, with an id-shaped key (see isIdKey): the value is a fact',
    re: /(?<![\w])([A-Za-z][\w-]*)["']?\s*[:=]\s*["']?([^\s"',;{}[\]()<>]+)/g,
    accept: (m) => (isIdKey(m[1]) ? keyedValue(m[2].replace(/[.:]+$/, '')) : []),
  },
  {
    kind: 'code',
    rule: 'identifier or code: a token of 3+ letters, digits, _ or - holding both a letter and a digit (QMX017, abc_123, ORD-2024-0042), ordinals (21st) excepted',
    re: /(?<![\w\/@-])(?=[\w-]*[A-Za-z])(?=[\w-]*\d)[A-Za-z0-9][\w-]*[A-Za-z0-9](?![\w\/@-])(?!\.\w)/g,
    accept: (m) => (m[0].length < 3 || /^\d+(?:st|nd|rd|th)$/i.test(m[0]) ? [] : [m[0]]),
  },
  {
    kind: 'number',
    rule: 'number of 3+ digits (1,250 / 0.375 / 77243); numbers of one or two digits are not facts',
    re: /(?<![\w.,\/])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w]|[.,]\d)/g,
    accept: (m) => (digits(m[0]) >= 3 ? [m[0].replace(/^-/, '')] : []),
  },
];

/** Last word of a key split at _, -, . and camelCase humps, lower-cased. */
function lastWord(key: string): string {
  const words = key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').split(/[\s_.\-]+/).filter(Boolean);
  return (words[words.length - 1] ?? '').toLowerCase();
}

/** Last words that make a key id-shaped (its value is an identifier, a code or a reference number). */
const ID_KEY_WORDS = new Set(['id', 'ids', 'uuid', 'uuids', 'guid', 'code', 'codes', 'number', 'numbers', 'num', 'no', 'nr', 'ref', 'refs', 'reference', 'hash', 'sha', 'checksum', 'digest', 'serial']);

/**
 * Key shape rule: the key is `id`, or ends in one of ID_KEY_WORDS as its last snake_case,
 * kebab-case or camelCase word (`user_id`, `userId`, `ID`, `invoice_number`, `errorCode`, `sha`).
 */
export function isIdKey(key: string): boolean {
  return ID_KEY_WORDS.has(lastWord(key));
}

/** A value under an id-shaped key: any string of 2..120 characters, a number of 3+ digits; never true/false/null. */
function keyedValue(v: string): string[] {
  const s = v.trim();
  if (s.length < 2 || s.length > 120 || /^(?:true|false|null|undefined|none)$/i.test(s)) return [];
  if (/^-?\d+(?:\.\d+)?$/.test(s) && digits(s) < 3) return [];
  return [s];
}

/** Whole JSON string leaf that is an upper-case code of 3-8 letters (MCO, USD, BXRTLM): a code. */
const WHOLE_UPPER_CODE = /^[A-Z]{3,8}$/;

// ---------------------------------------------------------------------------------------------
// Extraction

type Sink = (value: string, kind: FactKind) => void;

/** Runs the text rules over a text, masking what each rule took; emits the facts in text order. */
function scanText(text: string, add: Sink): void {
  if (!/[\d@\/:=]|www\./.test(text)) return; // nothing any rule could take
  const hits: { at: number; value: string; kind: FactKind }[] = [];
  let work = text;
  for (const r of TEXT_RULES) {
    r.re.lastIndex = 0;
    const spans: [number, number][] = [];
    for (let m = r.re.exec(work); m !== null; m = r.re.exec(work)) {
      if (m[0].length === 0) {
        r.re.lastIndex++;
        continue;
      }
      const values = r.accept ? r.accept(m) : [m[0]];
      if (values.length === 0) continue;
      const at = r.kind === 'keyed' ? m.index + m[0].length - m[2].length : m.index;
      for (let k = 0; k < values.length; k++) hits.push({ at: at + k / values.length, value: values[k], kind: k === 0 ? r.kind : 'path' });
      // The keyed rule leaves its match to the later rules as well (the value may be a code too).
      if (r.kind !== 'keyed') spans.push([m.index, m.index + m[0].length]);
    }
    if (spans.length > 0) {
      let out = '';
      let at = 0;
      for (const [a, b] of spans) {
        out += work.slice(at, a) + ' '.repeat(b - a);
        at = b;
      }
      work = out + work.slice(at);
    }
  }
  hits.sort((a, b) => a.at - b.at);
  for (const h of hits) add(h.value, h.kind);
}

/** Walks a parsed JSON value: keys and string leaves through the text rules, id-keyed leaves whole. */
function walkJson(value: unknown, key: string | undefined, add: Sink): void {
  if (typeof value === 'string') {
    if (key !== undefined && isIdKey(key)) for (const v of keyedValue(value)) add(v, 'keyed');
    const t = value.trim();
    if (WHOLE_UPPER_CODE.test(t)) add(t, 'code');
    else scanText(value, add);
    return;
  }
  if (typeof value === 'number') {
    const s = String(value);
    if (key !== undefined && isIdKey(key)) for (const v of keyedValue(s)) add(v, 'keyed');
    else if (Number.isFinite(value) && digits(s) >= 3 && !/e/i.test(s)) add(s.replace(/^-/, ''), 'number');
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) walkJson(item, key, add);
    return;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      // A key is data only when it holds 3+ digits (`voucher_6012358`), not a field name (`address1`).
      if (digits(k) >= 3) scanText(k, add);
      walkJson(v, k, add);
    }
  }
}

/** Scans one text: walked as JSON when it is a JSON object or array, else through the text rules. */
function scan(text: string, add: Sink): void {
  const t = text.trim();
  if ((t.startsWith('{') && t.endsWith('}')) || (t.startsWith('[') && t.endsWith(']'))) {
    try {
      walkJson(JSON.parse(t), undefined, add);
      return;
    } catch {
      // Not JSON after all: plain text.
    }
  }
  scanText(text, add);
}

/** The text of a message's content (a string, or the text of its parts). */
function contentText(content: OpenAIChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (typeof p.text === 'string' ? p.text : typeof p.refusal === 'string' ? p.refusal : '')).join('\n');
}

/**
 * Every fact of a conversation's user messages, assistant tool-call arguments and tool results,
 * deduplicated by normalized value (the first occurrence is kept), in order of first appearance.
 */
export function extractFacts(messages: readonly OpenAIChatMessage[]): Fact[] {
  const facts: Fact[] = [];
  const seen = new Set<string>();
  messages.forEach((m, index) => {
    const add = (source: FactSource): Sink => (value, kind) => {
      const key = normalize(value);
      if (key.length < 2 || seen.has(key)) return;
      seen.add(key);
      facts.push({ value, key, kind, source, message: index });
    };
    if (m.role === 'user') scan(contentText(m.content), add('user'));
    else if (m.role === 'tool' || m.role === 'function') scan(contentText(m.content), add('tool-result'));
    else if (m.role === 'assistant') {
      for (const call of m.tool_calls ?? []) scan(call.function?.arguments ?? '', add('tool-call'));
      if (m.function_call) scan(m.function_call.arguments ?? '', add('tool-call'));
    }
  });
  return facts;
}

// ---------------------------------------------------------------------------------------------
// Checking a view

/** All text a view sends, normalized: contents, tool-call names and arguments, results, summaries. */
export function viewText(view: readonly OpenAIChatMessage[]): string {
  const parts: string[] = [];
  for (const m of view) {
    if (!m) continue;
    parts.push(contentText(m.content));
    for (const call of m.tool_calls ?? []) parts.push(call.function?.name ?? '', call.function?.arguments ?? '');
    if (m.function_call) parts.push(m.function_call.name ?? '', m.function_call.arguments ?? '');
  }
  return normalize(parts.join('\n'));
}

/** A lower-case ASCII letter or digit (the checker compares normalized, lower-cased text): what a fact may not be glued to. */
export function isAlnum(c: string | undefined): boolean {
  return c !== undefined && /[a-z0-9]/.test(c);
}

/** True when `key` occurs in `haystack` (from index `from` on) with no letter or digit glued to an alphanumeric edge of it. */
export function occursIn(haystack: string, key: string, from = 0): boolean {
  const guardStart = isAlnum(key[0]);
  const guardEnd = isAlnum(key[key.length - 1]);
  for (let at = haystack.indexOf(key, from); at >= 0; at = haystack.indexOf(key, at + 1)) {
    if (guardStart && isAlnum(haystack[at - 1])) continue;
    if (guardEnd && isAlnum(haystack[at + key.length])) continue;
    return true;
  }
  return false;
}

/** Retention of already extracted facts in a view (what `retention` does after `extractFacts`). */
export function retentionOfFacts(facts: readonly Fact[], view: readonly OpenAIChatMessage[]): Retention {
  const haystack = viewText(view);
  const missing: string[] = [];
  for (const f of facts) if (!occursIn(haystack, f.key)) missing.push(f.value);
  const kept = facts.length - missing.length;
  return { facts: facts.length, kept, share: facts.length === 0 ? 1 : kept / facts.length, missing };
}

/** How many of the original's facts the view still carries. */
export function retention(original: readonly OpenAIChatMessage[], view: readonly OpenAIChatMessage[]): Retention {
  return retentionOfFacts(extractFacts(original), view);
}
