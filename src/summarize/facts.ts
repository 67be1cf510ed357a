import { splitTextTables } from './text-tables.js';
import { truncateMiddle } from './truncate-middle.js';

/**
 * Finds the facts a later turn is likely to need (identifiers, codes, file paths, URLs, emails,
 * phone numbers, dates, amounts with their units, names) in tool results and messages. Every rule
 * is about the shape of a value or of the text around it, never about the words of one domain: the
 * same rules read a service desk's records, a code agent's logs and a shop's orders. Pure and
 * deterministic: same input, same facts, same order.
 */

/** What shape a fact has: the key a fact gets when neither a field nor its sentence names it. */
export type FactKind =
  | 'email' | 'url' | 'uuid' | 'date' | 'phone' | 'path' | 'hash' | 'version' | 'amount'
  | 'id' | 'code' | 'number' | 'ending' | 'name';

/** One fact: a value, and the field or words that name it when known. */
export interface Fact {
  /** The field it came from (`order_id`, `payment_methods.voucher_5820417.amount`) or the words before it in its sentence (`tracking number`). */
  readonly label?: string;
  /** `field` when a JSON key or a `Label:` names it, `sentence` when the words before it in its sentence do. */
  readonly labelFrom?: 'field' | 'sentence';
  readonly value: string;
  /** Its shape, for facts found in text (JSON facts are named by their field). */
  readonly kind?: FactKind;
  /**
   * For a fact of a JSON listing, the record it belongs to: the indexes of the arrays of records
   * around it (`3`, or `3/1` in a nested listing). Facts of one record share it; absent outside one.
   */
  readonly record?: string;
  /**
   * True when the value joins a number and the unit a sibling field gave it (`{ amount: 12.5,
   * currency: "EUR" }` -> `12.5 EUR`): no text held the two together, so a summary may write the
   * unit apart from the number (once in a table column's head). Absent for a value found as written.
   */
  readonly unitFromField?: boolean;
}

/**
 * Elements of one JSON array read for facts: a listing of a thousand records gives its first
 * records. Every one of them may be what a later turn asks about, and the ledger's room, not the
 * reading, decides which facts a summary keeps (most recent and most referenced first).
 */
export const ARRAY_ITEMS_READ = { records: 200, values: 200 } as const;

/** How many times `limit` a JSON text's facts may number, counting the values repeated per record (`factsFromJson`). */
const JSON_REPEAT_ALLOWANCE = 2;

/** Longest string a record's field may hold to be a fact whole when it holds a digit (`12 Harbour Street`, `Suite 400`). */
export const SHORT_FIELD_MAX_CHARS = 40;

/** Longest value kept for one fact; longer values are cut in the middle. */
export const FACT_VALUE_MAX_CHARS = 80;

/** Longest label kept for one fact. */
export const FACT_LABEL_MAX_CHARS = 48;

/**
 * Deepest level of a JSON value read for facts. Real data nests a few levels; a value nested
 * thousands deep (a crafted or broken tool output) would overflow the stack of a recursive reader
 * and fail every summary of its chat. Values deeper than this are not read.
 */
export const JSON_DEPTH_READ = 64;

/**
 * An email address. Its local part starts where a run of the characters it may hold starts, and holds
 * at most 64 of them (RFC 5321): a match is tried once per run, never at every character of it.
 */
const EMAIL = /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
const URL = /\b(?:https?:\/\/|www\.)[^\s<>"'`|]+/g;
const UUID = /\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b/g;
const ISO_DATE = /\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:\s?(?:Z|UTC|[+-]\d{2}:?\d{2}))?)?(?!\d)/g;
const MONTH = '(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)';
/** `27/05/2024`, `5/27/24`, `May 27`, `May 27, 2024`, `27 May 2024`. */
const OTHER_DATE = new RegExp(`\\b\\d{1,2}/\\d{1,2}/(?:\\d{4}|\\d{2})\\b|\\b${MONTH}\\.? \\d{1,2}(?:st|nd|rd|th)?(?:,? \\d{4})?\\b|\\b\\d{1,2}(?:st|nd|rd|th)? ${MONTH}\\.?(?:,? \\d{4})?\\b`, 'g');
/** `+44 20 7946 0958`, `(415) 555-0134`, `415-555-0134`: checked for 8 to 15 digits. */
const PHONE = /(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}(?![\w-])|(?<![\w(])\(\d{3}\) ?\d{3}[-. ]\d{4}\b|\b\d{3}[-.]\d{3}[-.]\d{4}\b/g;
/** `src/core/plan.ts:142`, `./lib/a.js`, `/etc/hosts`, `~/.config/x`: a slash-separated path, with its line and column. */
const PATH = /(?<![\w/.:@-])(?:~|\.{1,2})?\/?(?:[\w@.-]+\/)+[\w@.-]+(?::\d+){0,2}/g;
/** `router.ts:142`, `Button.tsx:12:5`: a file name (at most 255 characters) with a line number. */
const FILE_LINE = /\b[\w-]{1,255}\.[A-Za-z][A-Za-z0-9]{0,7}:\d+(?::\d+)?\b/g;
/** A git-style hash: 7 to 40 lowercase hex digits, with at least one digit and one letter. */
const HASH = /\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b/g;
/** `v1.2.3`, `1.2.3-rc.1`, `10.0.0.12`. */
const VERSION = /\bv?\d+\.\d+\.\d+(?:\.\d+)?(?:[-+][0-9A-Za-z.]+)?\b/g;
/** `#4821`: a number referred to by `#`. */
const HASH_NUMBER = /(?<![\w&#])#\d{2,}\b/g;
const CURRENCY_CODES = 'USD|EUR|GBP|JPY|CNY|RMB|CHF|CAD|AUD|NZD|INR|BRL|MXN|SEK|NOK|DKK|PLN|CZK|HUF|ZAR|SGD|HKD|KRW|TRY|RUB|AED|SAR|ILS|THB|PHP|IDR|MYR|TWD|VND|NGN|EGP|ARS|CLP|COP';
/** A number with its thousands separators, at most 24 characters before its decimals (no amount is longer). */
const NUMBER = '\\d[\\d,]{0,23}(?:\\.\\d+)?';
/** An amount with its currency: `$239`, `€ 12.50`, `49.95 GBP`, `CHF 120`, `12,50 €`, `30 dollars`. */
const AMOUNT = new RegExp(
  `(?:R\\$|[$€£¥₹₩₽₺₪₫฿₱₦])\\s?-?${NUMBER}|\\b(?:${CURRENCY_CODES})\\s?-?${NUMBER}|\\b${NUMBER}\\s?(?:(?:${CURRENCY_CODES})\\b|[€£¥₹₽]|(?:dollars?|euros?|pounds?|yen|cents?)\\b)`,
  'g',
);
/**
 * A quantity with its unit (`4.37 s`, `250 MB`, `15%`). A measured one (`isMeasured`: `2.72 s`,
 * `371 ms`) is a fact wherever it stands; a round small one (`20 minutes`, `2 days`) only where a
 * field names it (`Retry: 2 s`), not in prose.
 */
const UNIT_AMOUNT = /\b\d+(?:\.\d+)?\s?(?:%|(?:ms|s|sec|secs|seconds?|min|mins|minutes?|h|hrs?|hours?|days?|weeks?|months?|years?|kg|g|mg|lbs?|oz|km|m|cm|mm|mi|ft|KB|MB|GB|TB|KiB|MiB|GiB|bytes?|px|°[CF])\b)/g;
/**
 * `user_name_1234`, `card_2963108`, `pi_3Mtw9xQ`, `ORD-1003`: word parts joined by `_`/`-`; kept
 * when the match holds a digit and a letter (`joinedId`). Checked on the match, not looked ahead
 * for at each part: a long run of parts (`1-2-3-...`) is read once.
 */
const JOINED_ID = /\b[A-Za-z0-9]+(?:[_-][A-Za-z0-9]+)+\b/g;
/** `aB3xK9qZ`: a long token mixing upper case, lower case and digits (a generated key or id). */
const MIXED_ID = /\b(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[a-z])(?=[A-Za-z0-9]*[A-Z])[A-Za-z0-9]{8,}\b/g;
/** `XY123`, `7KPD28`, `QX7P2K`, `TS2345`: capitals mixed with digits, four characters or more. */
const CODE = /\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{4,}(?:-[A-Z0-9]+)*\b/g;
/** A code introduced as one (`id: QXPTKL`, `code is ABCDE`, `#RTYUI`), even when it has no digit. */
const CUED_CODE = /(?:\b(?:[Ii][Dd]|ID|[Cc]ode|CODE|[Nn]umber|NUMBER|[Nn]o\.|[Nn]um|[Rr]ef(?:erence)?)\b\s*(?:is\s+|:\s*|=\s*)?#?|(?<![\w&])#)([A-Z0-9]{5,12})\b/g;
/** Six to ten capitals with at most one vowel (`BXRTLM`, `QXPTKL`): a code, not a shouted word. */
const CONSONANT_CODE = /\b[A-Z]{6,10}\b/g;
/** The last digits of a masked number: `ending in 3816`, `last 4 digits: 1234`, `**** 4242`. */
const MASKED_TAIL = /(?:\b(?:ending|ends) (?:in|with) |\blast (?:4|four)(?: digits)?(?: (?:are|is))?:? ?|(?:[*•xX]{2,}[ -]?){1,3})(\d{4})\b/g;
/** A number of three digits or more, a fact where a field names it (`passed=457`, `Port: 8080`). */
const FIELD_NUMBER = /(?<![\w.,$€£¥#/-])\d{3,}(?:\.\d+)?(?![\w/-]|[.,]\d)/g;
/** A long number with the capitalised words naming it (`Store Credit 3149902`). */
const LONG_NUMBER = /(?:\b\p{Lu}\p{L}*\s+){0,2}(?<![\d.,$€£¥#-])\b\d{5,}\b(?![.,]\d)/gu;
const QUOTED_NAME = /(?<![\p{L}\p{N}'])["“'‘](\p{Lu}[\p{L}'’.-]*(?:\s+\p{Lu}[\p{L}'’.-]*){1,3})["”'’](?![\p{L}\p{N}])/gu;

/** Whole values that identify something on their own (compared exactly when deduplicating). */
const DISTINCTIVE = [
  /^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$/,
  /^(?:https?:\/\/|www\.)\S+$/,
  /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
  /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:\s?(?:Z|UTC|[+-]\d{2}:?\d{2}))?)?$/,
  /^(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9]+(?:[_-][A-Za-z0-9]+)+$/,
  /^(?=[A-Z0-9-]*[A-Z])[A-Z0-9][A-Z0-9-]{4,15}$/,
  /^(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9][A-Z0-9-]{2,15}$/,
  /^(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[a-z])(?=[A-Za-z0-9]*[A-Z])[A-Za-z0-9]{8,}$/,
  /^(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}$/,
  /^(?:~|\.{1,2})?\/?(?:[\w@.-]+\/)+[\w@.-]+(?::\d+){0,2}$/,
  /^[\w-]+\.[A-Za-z][A-Za-z0-9]{0,7}:\d+(?::\d+)?$/,
  /^\+\d[\d ().-]{6,}\d$/,
  /^v?\d+\.\d+\.\d+(?:\.\d+)?(?:[-+][0-9A-Za-z.]+)?$/,
  /^#\d{2,}$/,
  /^\d{5,}$/,
];

/** Keys whose values are worth keeping whatever they look like: ids, codes, names, dates, addresses of things. */
const ID_KEY = /(?:^|[_\-.])(?:id|ids|uuid|guid|code|number|no|num|email|phone|name|date|time|at|ref|reference|key|slug|sha|hash|url|uri|path|file)$|[a-z](?:Id|ID|Ids|Code|Number|Email|Phone|Name|Date|Time|At|Ref|Key|Url|Uri|Path|Sha|Hash)$/;
/** Keys whose numbers are amounts a later turn may quote (also read on the parent: `prices.economy`). */
const AMOUNT_KEY = /(?:^|[_\-.])(?:amount|amounts|total|subtotal|sum|price|prices|cost|costs|fee|fees|balance|tax|discount)$|[a-z](?:Amount|Total|Price|Cost|Fee|Balance)$|^(?:amount|total|price|cost|fee|balance)/i;
/** Keys that give the unit of a sibling amount (`{ amount: 49.95, currency: "GBP" }`). */
const UNIT_KEY = /^(?:currency|currency_code|currencyCode|unit|units)$/;
/** Keys never copied into a summary (`max_tokens` is not a secret; `access_token` and `authToken` are). */
const SECRET_KEY = /password|passwd|secret|api[_-]?key|apikey|authorization|cookie|credential|private[_-]?key|(?:^|[_-])token$/i;
const SECRET_CAMEL_KEY = /[a-z]Token$/;
/** Leaf keys too vague alone: they are labelled with their parent (`voucher_60123.amount`). */
const GENERIC_KEY = /^(?:id|name|amount|status|state|number|code|date|price|balance|type|value|email|total|time|url|path|key)$/i;
/** Shapes a sentence's words may name (others are named by a field, or by their shape). */
const SENTENCE_NAMED = /^(?:amount|id|code|number|ending)$/;
/** Words that say nothing alone: dropped from the ends of a label taken from a sentence. */
const FUNCTION_WORD = /^(?:a|an|the|my|your|our|their|his|her|its|this|that|these|those|is|are|was|were|be|been|being|am|it|it's|i|i'm|you|we|they|he|she|me|us|them|of|for|to|in|on|at|by|with|from|into|and|or|but|as|so|please|here|there|also|just|now|then|use|using|via|new|same|and|than|if|ok|okay|yes|no|sure|see|got|get|has|have|had|will|would|can|could|should|do|does|did|not|which|what|where|when|who|how|all|any|some|actually|only|about|around|approximately|roughly|still|already|currently|now|exactly|total of|than|after|before|up|down|out|over|under|per|each|every)$/i;

/**
 * A quantity that reads as measured, not as a manner of speaking: its number has a decimal part or
 * three digits or more (`2.72 s`, `371 ms`, `1024 MB`; not `20 minutes`, `2 days`, `10 km`).
 */
export function isMeasured(quantity: string): boolean {
  const m = /\d+(?:\.\d+)?/.exec(quantity);
  return m !== null && (m[0].includes('.') || m[0].length >= 3);
}

/** True when `value` identifies something on its own (an id, code, email, date, path...), not a common word or small number. */
export function isDistinctive(value: string): boolean {
  return DISTINCTIVE.some((p) => p.test(value));
}

/** A JSON string that is a code of capital letters alone. */
const WHOLE_CODE = /^[A-Z]{3,8}$/;

/** A calendar date without a time of day: records share one by chance (two payments on one day). */
const BARE_DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * True when a value names one thing alone (an id, an email, a path, a date-time): wherever it
 * occurs it is one fact. A bare date, an amount or a small number is not: it belongs to the field
 * of the record that holds it.
 */
export function identifiesAlone(value: string): boolean {
  return isDistinctive(value) && !BARE_DATE.test(value);
}

/** True for keys that name secrets (passwords, tokens, API keys): their values are never kept. */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key) || SECRET_CAMEL_KEY.test(key);
}

interface Span {
  readonly start: number;
  readonly end: number;
  readonly value: string;
  readonly kind: FactKind;
  /** A label the rule itself found (`Store Credit` before a long number). */
  readonly label?: string;
  /** Kept only where a field (`Label:` just before) names it. */
  readonly needsField?: boolean;
}

function spansOf(text: string, pattern: RegExp, kind: FactKind, accept: (value: string) => boolean = () => true): Span[] {
  const out: Span[] = [];
  for (const m of text.matchAll(pattern)) {
    const whole = m[0];
    const value = m[1] ?? whole;
    const start = (m.index ?? 0) + (m[1] === undefined ? 0 : whole.lastIndexOf(m[1]));
    if (accept(value)) out.push({ start, end: start + value.length, value, kind });
  }
  return out;
}

/** URLs and paths lose the punctuation that ends their sentence (`see https://x.io/a.`). */
function trimmedSpans(spans: Span[]): Span[] {
  return spans.map((s) => {
    const value = s.value.replace(/[.,;:!?)\]}'"]+$/, '');
    return value === s.value ? s : { ...s, value, end: s.start + value.length };
  });
}

function isPath(value: string): boolean {
  // A path has a letter, and either a file extension or a leading `/`, `./`, `~/` (not `and/or`, `24/7`, `km/h`).
  if (!/[A-Za-z]/.test(value) || /^\d+\/\d+/.test(value)) return false;
  const bare = value.replace(/(?::\d+){1,2}$/, '');
  return /\.[A-Za-z][A-Za-z0-9]{0,7}$/.test(bare) || /^(?:~|\.{1,2})?\//.test(bare);
}

function digitCount(value: string): number {
  return value.replace(/\D/g, '').length;
}

/** Positions of the text's line breaks, in order. */
function lineBreaks(text: string): number[] {
  const out: number[] = [];
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) out.push(at);
  return out;
}

/** How many of `breaks` (sorted) lie before `at`: the index of the line `at` is on. */
function breaksBefore(breaks: readonly number[], at: number): number {
  let lo = 0;
  let hi = breaks.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (breaks[mid] < at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A joined id worth keeping: five characters or more, with a digit and a letter. */
function joinedId(value: string): boolean {
  return value.length >= 5 && /\d/.test(value) && /[A-Za-z]/.test(value);
}

function fewVowels(value: string): boolean {
  return (value.match(/[AEIOUY]/g)?.length ?? 0) <= 1;
}

/** Long numbers keep the capitalised words before them as their label (`Store Credit: 3149902`). */
function longNumberSpans(text: string): Span[] {
  const out: Span[] = [];
  for (const m of text.matchAll(LONG_NUMBER)) {
    const number = /\d{5,}$/.exec(m[0])![0];
    const words = m[0].slice(0, -number.length).trim();
    const start = (m.index ?? 0) + m[0].length - number.length;
    out.push({ start, end: start + number.length, value: number, kind: 'number', label: words || undefined });
  }
  return out;
}

function isFunctionWord(word: string): boolean {
  return FUNCTION_WORD.test(word.replace(/’/g, "'"));
}

/** A word of a label: letters and digits, with `'`, `_`, `#`, `-` inside, and `.` or `/` between two such runs. */
const LABEL_WORD = /[\p{L}\p{N}][\p{L}\p{N}'’_#-]*(?:[./][\p{L}\p{N}][\p{L}\p{N}'’_#-]*)*/gu;

/** Index of the last `.` of `text` that ends a sentence (followed by white space, or the text's last character); -1 for none. */
function sentenceDot(text: string): number {
  for (let i = text.lastIndexOf('.'); i >= 0; i = i === 0 ? -1 : text.lastIndexOf('.', i - 1)) {
    const next = text[i + 1];
    if (next === undefined || /\s/.test(next)) return i;
  }
  return -1;
}

/**
 * The words naming a value, read just before it on its line: a field (`Total Cost: $239`,
 * `Part Number: QRM512`), or the last words of its sentence (`tracking number TRK1`, `PAY-12
 * captured €10`), function words dropped from both ends. Undefined when no such word is there.
 */
export function contextLabel(text: string, start: number): { label: string; from: 'field' | 'sentence' } | undefined {
  // The 80 characters before the value, from its line's start: a line break is looked for there
  // only (a long line is not searched back to its start for every value on it).
  const near = text.slice(Math.max(0, start - 80), start);
  let before = near.slice(near.lastIndexOf('\n') + 1).replace(/\*\*|__|`/g, '');
  before = before.replace(/[\s(]+$/, '');
  const field = /[:=]\s*$/.test(before);
  // `key=value` items run side by side (`suites=145 passed=457`): the key is the one word before `=`.
  const assigned = /\S=\s*$/.test(before);
  before = before.replace(/\s*[:=#]\s*$/, '');
  if (assigned) before = before.slice(before.search(/\S+$/));
  // Stop at the previous clause: sentence punctuation, an opening bracket, a field separator.
  // A `.` inside a word (`v1.2`, `e.g`, `src/a.test.ts`) is not a sentence end: only one followed
  // by a space or ending the text is.
  const cut = Math.max(sentenceDot(before), ...['!', '?', ';', ',', ':', '(', ')', '[', ']', '{', '}', '"', '“', '”', '|', '=', '\t'].map((c) => before.lastIndexOf(c)));
  const clause = before.slice(cut + 1);
  // A word may hold `.` and `/` between its letters and digits: a path or a file name is one word.
  const words = clause.match(LABEL_WORD)?.slice(-3) ?? [];
  while (words.length > 0 && isFunctionWord(words.at(-1)!)) words.pop();
  while (words.length > 0 && isFunctionWord(words[0])) words.shift();
  if (words.length === 0 || !words.some((w) => w.split(/[./]/).some((part) => /^\p{L}+$/u.test(part)))) return undefined;
  const label = words.join(' ').replace(/^[-#]+|[-#]+$/g, '');
  if (!label || label.length > FACT_LABEL_MAX_CHARS) return undefined;
  return { label, from: field ? 'field' : 'sentence' };
}

/** How a text is read: `prose` (a person's words) or `data` (what a tool returned). */
export type TextSource = 'prose' | 'data';

/**
 * Facts in free text, in order of appearance, each value once, at most `limit`. Where two rules
 * overlap the longer match wins (`ana.lopez@example.com` is one email, not a name and a domain).
 * Each fact is labelled with its field or the words before it in its sentence where there are
 * some. A number of three digits or more is a fact where a field names it (`passed=457`). A
 * quantity with a unit is a fact when it reads as measured (`4.37 s`, `371 ms`); a round small one
 * (`20 minutes`, `59 ms`) only where a field names it, or anywhere in `data` (a tool's output
 * states quantities; a person's `2 days` is a manner of speaking).
 */
export function factsFromText(text: string, limit: number, source: TextSource = 'prose'): Fact[] {
  return factsFromTextInPrefixes(text, limit, source, FACT_PREFIX_CHARS);
}

/** First prefix of a long text `factsFromText` reads (each next one four times longer). */
export const FACT_PREFIX_CHARS = 65_536;
/** A prefix is read only when it has this many characters per fact asked for. */
const PREFIX_CHARS_PER_FACT = 16;
/** Characters before a prefix's cut within which a match may have been cut short (no rule matches that much past what it keeps). */
export const FACT_PREFIX_MARGIN = 1024;

/**
 * `factsFromText`, reading a long text in growing prefixes (`first` characters, then four times
 * more each time, each cut at a line break): facts are taken in text order up to `limit`, so
 * once a prefix gives all `limit` of them from matches that end `FACT_PREFIX_MARGIN` characters
 * before its cut, the rest of the text cannot change them (matches before a cut are the same with
 * or without what follows, and labels look back). Invariant: the same facts as reading the whole.
 */
export function factsFromTextInPrefixes(text: string, limit: number, source: TextSource, first: number): Fact[] {
  for (let size = first; size < text.length; size *= 4) {
    // A prefix unlikely to hold `limit` facts is not read (an unbounded limit reads the whole text once).
    if (limit * PREFIX_CHARS_PER_FACT > size) continue;
    const cut = text.lastIndexOf('\n', size);
    if (cut <= FACT_PREFIX_MARGIN) continue;
    const got = readFacts(text.slice(0, cut + 1), limit, source, cut - FACT_PREFIX_MARGIN);
    if (got !== undefined) return got;
  }
  return readFacts(text, limit, source, Infinity)!;
}

/**
 * A line of a stack trace: `at fn (file:line:col)` (JavaScript, Java, C#), `File "x.py", line 3`
 * (Python), `#3 0x... in fn` (native). Where it points is the code that failed, not a fact of the
 * conversation.
 */
const STACK_FRAME_LINE = /^[ \t]*(?:at [^\n]*?[\w$>\])]?[ (]?[^\s()]+:\d+(?::\d+)?\)?[ \t]*$|File "[^"\n]+", line \d+[^\n]*$|#\d+ +0x[0-9a-f]+ [^\n]*$)/gm;
/** A path inside installed libraries (`node_modules/`, `site-packages/`, ...): never the user's data. */
const LIBRARY_PATH = /(?:^|[\\/])(?:node_modules|site-packages|dist-packages|\.cargo[\\/]registry|go[\\/]pkg[\\/]mod)[\\/]/;
/** A link to documentation or an error reference, in a text that reports an error: boilerplate of the error, not a fact. */
const REFERENCE_LINK = /^(?:https?:\/\/|www\.)(?:(?:docs?|help|developers?|learn|support)\.[^/\s]+|[^/\s]+\/(?:[^\s]*\/)?(?:docs?|documentation|help|errors?|reference|troubleshooting)(?:[/#?.-]|$))/i;
/** A text that reports a failure: an error word or an HTTP error status near its start. */
const REPORTS_ERROR = /\b(?:error|exception|traceback|failed|failure|not found|denied|invalid|refused)\b|\b(?:status|code|HTTP\/?[\d.]*)[ :="]*[45]\d\d\b/i;

/** A frame of the runtime itself (`node:internal/...`, `<anonymous>`, the Python standard library). */
const RUNTIME_FRAME = /node:internal|\(internal\/|<anonymous>|[\\/]lib[\\/]python\d[\d.]*[\\/]|java\.base\//;

/**
 * Character ranges of the stack-frame lines of `text` that point into libraries or the runtime,
 * in order. A frame in the user's own code (`src/app.ts:42:7`) says where the failure is: kept.
 */
function stackFrameRanges(text: string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const m of text.matchAll(STACK_FRAME_LINE)) if (LIBRARY_PATH.test(m[0]) || RUNTIME_FRAME.test(m[0])) out.push([m.index, m.index + m[0].length]);
  return out;
}

/**
 * True for a match that is error boilerplate rather than a fact: one inside a stack frame of a
 * library or the runtime, a path into installed libraries, or a documentation link in a text that
 * reports an error.
 */
function isBoilerplate(span: Span, inFrame: boolean, reportsError: boolean): boolean {
  if (inFrame) return true;
  if (span.kind === 'path' && LIBRARY_PATH.test(span.value)) return true;
  return span.kind === 'url' && reportsError && REFERENCE_LINK.test(span.value);
}

/** The facts of `text`; undefined when a match that counts ends past `safeEnd`, or fewer than `limit` were found before it (a longer prefix is read then). */
function readFacts(text: string, limit: number, source: TextSource, safeEnd: number): Fact[] | undefined {
  const whole = safeEnd === Infinity;
  if (!/[\p{L}\p{N}]/u.test(text)) return whole ? [] : undefined;
  // Each rule runs only where the characters it needs are there (a long text is read many times).
  const has = (pattern: RegExp) => pattern.test(text);
  const digits = has(/\d/);
  const spans = [
    ...(has(/@/) ? spansOf(text, EMAIL, 'email') : []),
    ...(has(/:\/\/|www\./) ? trimmedSpans(spansOf(text, URL, 'url')) : []),
    ...(digits ? spansOf(text, UUID, 'uuid') : []),
    ...(digits ? spansOf(text, ISO_DATE, 'date') : []),
    ...(digits ? spansOf(text, OTHER_DATE, 'date') : []),
    ...(digits && has(/[+(]|\d[-.]\d/) ? spansOf(text, PHONE, 'phone', (v) => digitCount(v) >= 8 && digitCount(v) <= 15) : []),
    ...(has(/\//) ? trimmedSpans(spansOf(text, PATH, 'path')).filter((s) => isPath(s.value)) : []),
    ...(digits && has(/\.[A-Za-z]\w{0,7}:\d/) ? spansOf(text, FILE_LINE, 'path') : []),
    ...(digits ? spansOf(text, HASH, 'hash') : []),
    ...(digits ? spansOf(text, VERSION, 'version') : []),
    ...(has(/#\d/) ? spansOf(text, HASH_NUMBER, 'number') : []),
    ...(digits ? spansOf(text, AMOUNT, 'amount').map((s) => ({ ...s, value: s.value.replace(/\s+/g, ' ') })) : []),
    ...(digits ? spansOf(text, UNIT_AMOUNT, 'amount').map((s) => (source === 'data' || isMeasured(s.value) ? s : { ...s, needsField: true })) : []),
    ...(digits ? spansOf(text, JOINED_ID, 'id', joinedId) : []),
    ...(digits ? spansOf(text, MIXED_ID, 'id') : []),
    ...(digits ? spansOf(text, CODE, 'code') : []),
    ...spansOf(text, CUED_CODE, 'code'),
    ...spansOf(text, CONSONANT_CODE, 'code', fewVowels),
    ...(digits ? spansOf(text, MASKED_TAIL, 'ending') : []),
    ...(has(/\d{5}/) ? longNumberSpans(text) : []),
    ...(has(/\d{3}/) ? spansOf(text, FIELD_NUMBER, 'number').map((s) => ({ ...s, needsField: true })) : []),
    ...(has(/["“'‘]/) ? spansOf(text, QUOTED_NAME, 'name') : []),
  ].sort((a, b) => a.start - b.start || b.end - a.end);
  // A line written in capitals is shouting, not a list of codes.
  // Worked out once per line, found by the line breaks' positions (a long line of codes is not
  // read again, nor searched back to its start, for each of them).
  const shoutingLines = new Map<number, boolean>();
  let breaks: number[] | undefined;
  const shouting = (at: number) => {
    breaks ??= lineBreaks(text);
    const k = breaksBefore(breaks, at);
    const lineStart = k === 0 ? 0 : breaks[k - 1] + 1;
    let shouts = shoutingLines.get(lineStart);
    if (shouts === undefined) {
      const line = text.slice(lineStart, k < breaks.length ? breaks[k] : text.length);
      const letters = line.replace(/[^A-Za-z]/g, '');
      shouts = letters.length >= 12 && letters.replace(/[^a-z]/g, '').length < letters.length / 4;
      shoutingLines.set(lineStart, shouts);
    }
    return shouts;
  };
  const out: Fact[] = [];
  const seen = new Set<string>();
  let covered = 0;
  const frames = /:\d|line \d|0x/.test(text) ? stackFrameRanges(text) : [];
  let frame = 0;
  const reportsError = REPORTS_ERROR.test(text.slice(0, 2048));
  for (const span of spans) {
    if (span.end > safeEnd) return undefined;
    if (span.start < covered) continue;
    // Spans come in order of their start: the frames are walked once.
    while (frame < frames.length && frames[frame][1] <= span.start) frame++;
    const inFrame = frame < frames.length && span.start >= frames[frame][0];
    if (isBoilerplate(span, inFrame, reportsError)) {
      covered = span.end;
      continue;
    }
    const value = span.value.trim();
    if (!value) continue;
    if ((span.kind === 'code' && /^[A-Z]+$/.test(value)) && shouting(span.start)) continue;
    // Words of a sentence name amounts and codes (`tracking number TRK1`); a date, email or path is named by its shape unless a field names it.
    const found = span.label ? { label: span.label, from: 'sentence' as const } : contextLabel(text, span.start);
    const context = found && (found.from === 'field' || SENTENCE_NAMED.test(span.kind)) ? found : undefined;
    if (span.needsField && context?.from !== 'field') continue;
    covered = span.end;
    if (seen.has(value)) continue;
    seen.add(value);
    out.push(context ? { label: context.label, labelFrom: context.from, value, kind: span.kind } : { value, kind: span.kind });
    if (out.length >= limit) return out;
  }
  return whole ? out : undefined;
}

/**
 * The label of a JSON value: its key, and for a vague key (`id`, `amount`, `date`) the parent
 * that tells it apart when there is one worth its tokens: a parent named like an identifier
 * (`voucher_60123.amount`), or any parent of a number (`payment_history.amount`). A parent
 * that is the value itself (`card_71.id: card_71`) is skipped.
 */
function labelOf(path: readonly string[], value?: string): string {
  const named = path.filter((p) => p !== '[]');
  const leaf = named.at(-1) ?? 'value';
  const parent = named.at(-2) === value ? named.at(-3) : named.at(-2);
  const worth = parent !== undefined && (value === undefined || /\d/.test(parent));
  const label = GENERIC_KEY.test(leaf) && worth ? `${parent}.${leaf}` : leaf;
  return label.replace(/[^\w.-]+/g, '_').slice(0, FACT_LABEL_MAX_CHARS);
}

function oneLine(text: string): string {
  return truncateMiddle(text.replace(/\s+/g, ' ').trim(), FACT_VALUE_MAX_CHARS);
}

/** The unit a record gives its amounts (`currency: "GBP"`), when it gives one. */
function unitOf(record: Record<string, unknown>): string | undefined {
  for (const [key, value] of Object.entries(record)) {
    if (UNIT_KEY.test(key) && typeof value === 'string' && /^\S{1,8}$/.test(value.trim())) return value.trim();
  }
  return undefined;
}

/**
 * Facts in a parsed JSON value, labelled with the field they came from (`order_id: QX7P2K`,
 * `voucher_6012358.amount: 250`, `total: 49.95 GBP`, `members: Ana Lopez`). Keeps strings
 * under id-like keys or that look like identifiers, the facts inside other strings, and numbers
 * under amount-like keys (with the unit their record gives); never a secret's value. Reads the
 * first elements of each array (`ARRAY_ITEMS_READ`). A field's value is given once; one that names
 * nothing alone (`identifiesAlone`: a bare date, an amount), once per record. `limit` bounds the
 * distinct field values (a value repeated per record does not use it up), and all facts to
 * `JSON_REPEAT_ALLOWANCE` times it.
 */
export function factsFromJson(value: unknown, limit: number): Fact[] {
  const out: Fact[] = [];
  const seen = new Set<string>();
  const distinct = new Set<string>();
  const full = () => distinct.size >= limit || out.length >= limit * JSON_REPEAT_ALLOWANCE;
  const push = (fact: Fact) => {
    // One fact per field and value; a value that names nothing alone, once per record too (each record keeps its own date).
    const field = `${fact.label ?? ''}\u0000${fact.value}`;
    const key = `${identifiesAlone(fact.value) ? '' : fact.record ?? ''}\u0000${field}`;
    if (full() || fact.value === '' || seen.has(key)) return;
    seen.add(key);
    distinct.add(field);
    out.push(fact);
  };
  const walk = (node: unknown, path: string[], unit: string | undefined, record: string | undefined): void => {
    if (full() || path.length > JSON_DEPTH_READ) return;
    const named = path.filter((p) => p !== '[]');
    const leaf = named.at(-1) ?? '';
    if (leaf && isSecretKey(leaf)) return;
    if (Array.isArray(node)) {
      const records = node.some((item) => item !== null && typeof item === 'object');
      const read = records ? ARRAY_ITEMS_READ.records : ARRAY_ITEMS_READ.values;
      // Each element of an array of records is a record of its own; values of a plain array belong to the record around it.
      node.slice(0, read).forEach((item, i) => walk(item, [...path, '[]'], unit, records ? (record === undefined ? String(i) : `${record}/${i}`) : record));
      return;
    }
    if (node && typeof node === 'object') {
      const fields = node as Record<string, unknown>;
      const first = fields.first_name ?? fields.firstName;
      const last = fields.last_name ?? fields.lastName;
      const hasName = typeof first === 'string' && typeof last === 'string';
      if (hasName) push({ record, label: labelOf([...path, 'name']).replace(/\.name$/, '') || 'name', labelFrom: 'field', value: oneLine(`${first} ${last}`) });
      const recordUnit = unitOf(fields);
      for (const [key, child] of Object.entries(fields)) {
        if (hasName && /^(first_?name|last_?name)$/i.test(key)) continue;
        walk(child, [...path, key], recordUnit, record);
      }
      return;
    }
    if (typeof node === 'string') {
      const text = node.trim();
      if (!text) return;
      // A whole field of 3-8 capital letters is a code of the data (a place, a state: `LIS`, `OPEN`);
      // a unit field is not: the amounts of its record carry it.
      if (text.length <= FACT_VALUE_MAX_CHARS && (ID_KEY.test(leaf) || isDistinctive(text) || /^\d{4,}$/.test(text) || (WHOLE_CODE.test(text) && !UNIT_KEY.test(leaf)))) {
        push({ record, label: labelOf(path, text), labelFrom: 'field', value: oneLine(text) });
        return;
      }
      // Other strings (messages, descriptions, logs): the facts in them, named by their sentence or else by the field.
      const inText = factsFromText(text, limit - distinct.size, 'data');
      for (const fact of inText) push(fact.label ? { ...fact, record } : { ...fact, record, label: labelOf(path), labelFrom: 'field' });
      // A short field holding a digit and no fact of its own (`12 Harbour Street`, `Suite 400`) is one value, as written.
      if (inText.length === 0 && text.length <= SHORT_FIELD_MAX_CHARS && /\d/.test(text) && !/[\n:=]/.test(text)) {
        push({ record, label: labelOf(path, text), labelFrom: 'field', value: oneLine(text) });
      }
      return;
    }
    if (typeof node === 'number' && Number.isFinite(node)) {
      const parent = named.at(-2) ?? '';
      // A number is a fact under an id- or amount-like key, or when it is no small count (3+ digits, or a fraction).
      const keyed = ID_KEY.test(leaf) || AMOUNT_KEY.test(leaf);
      const byParent = !keyed && AMOUNT_KEY.test(parent);
      if (!keyed && !byParent && Math.abs(node) < 100 && Number.isInteger(node)) return;
      const label = byParent ? `${parent}.${leaf}`.replace(/[^\w.-]+/g, '_').slice(0, FACT_LABEL_MAX_CHARS) : labelOf(path);
      const joined = unit !== undefined && unit !== '' && AMOUNT_KEY.test(byParent ? parent : leaf);
      push({ record, label, labelFrom: 'field', value: joined ? `${node} ${unit}` : String(node), ...(joined ? { unitFromField: true } : {}) });
    }
  };
  walk(value, [], undefined, undefined);
  return out;
}

/** Parses text that is a JSON object or array; undefined for anything else. */
export function parseJsonData(text: string): unknown {
  const t = text.trim();
  if (!(t.startsWith('{') && t.endsWith('}')) && !(t.startsWith('[') && t.endsWith(']'))) return undefined;
  try {
    return JSON.parse(t) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Facts of a tool result or message: read as JSON where it is JSON; otherwise as free text
 * (`source`), but for the tables written in it (markdown, CSV / TSV, column-aligned listings:
 * `splitTextTables`), whose rows are read as records, each cell named by its column, as a JSON
 * listing's are. In order of appearance, at most `limit` distinct values (see `factsFromJson`).
 */
export function factsFromContent(content: string, limit: number, source: TextSource = 'prose'): Fact[] {
  const data = parseJsonData(content);
  if (data !== undefined) return factsFromJson(data, limit);
  const pieces = splitTextTables(content);
  if (pieces.length === 1 && pieces[0].kind === 'text') return factsFromText(content, limit, source);
  const out: Fact[] = [];
  let tables = 0;
  for (const piece of pieces) {
    const left = limit - new Set(out.map((f) => f.value)).size;
    if (left <= 0) break;
    if (piece.kind === 'text') out.push(...factsFromText(piece.text, left, source));
    else {
      // Each table's records are its own: a second table's row 0 is not the first table's.
      const table = tables++;
      for (const fact of factsFromJson(piece.records, left)) out.push(fact.record === undefined || table === 0 ? fact : { ...fact, record: `${table}/${fact.record}` });
    }
  }
  return out;
}
