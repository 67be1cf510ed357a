import { truncateMiddle } from './truncate-middle.js';

/**
 * Finds the facts a later turn is likely to need (identifiers, codes, dates, amounts, emails,
 * names) in tool results and messages. Pure and deterministic: same input, same facts, same order.
 */

/** One fact: an identifier-like value, with the field it came from when known. */
export interface Fact {
  readonly label?: string;
  readonly value: string;
}

/**
 * Elements of one JSON array read for facts: a listing of fifty flights gives its first records,
 * a list of record ids most of its ids.
 */
export const ARRAY_ITEMS_READ = { records: 5, values: 12 } as const;

/** Longest value kept for one fact; longer values are cut in the middle. */
export const FACT_VALUE_MAX_CHARS = 80;

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
const UUID = /\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b/g;
const ISO_DATE = /\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?!\d)/g;
const AMOUNT = /(?:[$€£¥]\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]*(?:\.\d+)?\s?(?:USD|EUR|GBP|CNY|JPY|dollars|euros)\b)/g;
/** `user_name_1234`, `card_7480005`, `order-10231`: words joined by `_`/`-`, ending in digits. */
const JOINED_ID = /\b[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)*[_-]\d{2,}\b/g;
/** `XY123`, `ABC-123`, `4BMN53`, `QX7P2K`: capitals mixed with digits. */
const CODE = /\b(?:[A-Z]{2,}[-_]?\d[A-Z0-9]*|(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{4,}(?:-[A-Z0-9]+)*)\b/g;
/** A code named as one in the text (`order QXPTKL`, `ticket #ABCDE`), even when it has no digit. */
const NAMED_CODE = /\b(?:confirmation|order|ticket|invoice|case|reference|ref|record|locator|account|transaction)(?:\s+(?:id|number|code|no\.?))?\s*(?:is|:|#|=)?\s*#?([A-Za-z0-9]{5,12})\b/gi;
const CARD_TAIL = /\b(?:ending in|ends in|ending with|last (?:4|four)(?: digits)?(?: (?:are|is))?:?)\s*(\d{4})\b/gi;
/** A long number with the capitalised words naming it (`Gift Card 6276644`). */
const LONG_NUMBER = /(?:\b\p{Lu}\p{L}*\s+){0,2}(?<![\d.,$€£¥-])\b\d{5,}\b(?![.,]\d)/gu;
/** The words an amount is the value of, just before it on its line (`Total Cost: $239`). */
const AMOUNT_LABEL = /([\p{L}][\p{L}\p{N} #-]{0,30}?)\s*:\s*$/u;
const QUOTED_NAME = /(?<![\p{L}\p{N}'])["“'‘](\p{Lu}[\p{L}'’.-]*(?:\s+\p{Lu}[\p{L}'’.-]*){1,3})["”'’](?![\p{L}\p{N}])/gu;

/** Whole values that identify something on their own (compared exactly when deduplicating). */
const DISTINCTIVE = [
  /^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$/,
  /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
  /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/,
  /^[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)*[_-]\d{2,}$/,
  /^(?=[A-Z0-9-]*[A-Z])[A-Z0-9][A-Z0-9-]{4,15}$/,
  /^(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9][A-Z0-9-]{2,15}$/,
  /^\d{5,}$/,
];

/** Keys whose values are worth keeping whatever they look like. */
const ID_KEY = /(?:^|[_\-.])(?:id|ids|uuid|code|number|no|num|email|phone|name|status|date|dob|time|at|ref|reference|sku|iban|four|last4)$|[a-z](?:Id|ID|Ids|Code|Number|Email|Phone|Name|Status|Date|At|Ref)$/;
/** Keys whose numbers are amounts or counts a later turn may quote. */
const AMOUNT_KEY = /(?:amount|balance|price|total|cost|fee|fees|refund|paid|due|charge|salary|quantity|count)$/i;
/** Keys never copied into a summary (`max_tokens` is not a secret; `access_token` and `authToken` are). */
const SECRET_KEY = /password|passwd|secret|api[_-]?key|apikey|authorization|cookie|credential|private[_-]?key|(?:^|[_-])token$/i;
const SECRET_CAMEL_KEY = /[a-z]Token$/;
/** Leaf keys too vague alone: they are labelled with their parent (`certificate_85447.amount`). */
const GENERIC_KEYS = new Set(['id', 'name', 'amount', 'status', 'number', 'code', 'date', 'price', 'balance', 'type', 'value', 'email', 'total', 'time']);

/** True when `value` identifies something on its own (an id, code, email, date...), not a common word or small number. */
export function isDistinctive(value: string): boolean {
  return DISTINCTIVE.some((p) => p.test(value));
}

/** True for keys that name secrets (passwords, tokens, API keys): their values are never kept. */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key) || SECRET_CAMEL_KEY.test(key);
}

interface Span {
  readonly start: number;
  readonly end: number;
  readonly fact: Fact;
}

function spansOf(text: string, pattern: RegExp, label?: string): Span[] {
  const out: Span[] = [];
  for (const m of text.matchAll(pattern)) {
    const whole = m[0];
    const value = m[1] ?? whole;
    const start = (m.index ?? 0) + (m[1] === undefined ? 0 : whole.lastIndexOf(m[1]));
    out.push({ start, end: start + value.length, fact: label ? { label, value } : { value } });
  }
  return out;
}

/**
 * Amounts named by the words before them (`Total Cost: $239`, `Gift Card 7091239: $157`). An
 * amount with no name says nothing a later turn can use, so it is not kept.
 */
function amountSpans(text: string): Span[] {
  const out: Span[] = [];
  for (const span of spansOf(text, AMOUNT)) {
    const lineStart = text.lastIndexOf('\n', span.start - 1) + 1;
    const before = text.slice(lineStart, span.start).replace(/\*\*|__/g, '');
    const name = AMOUNT_LABEL.exec(before)?.[1].replace(/^\s*(?:[-*•]|\d+[.)])\s+/, '').trim();
    if (name) out.push({ start: span.start, end: span.end, fact: { label: name, value: span.fact.value } });
  }
  return out;
}

/**
 * Identifier-like values in free text, in order of appearance, each once, at most `limit`.
 * Where two patterns overlap the longer match wins (`sofia.kim@example.com` is one email).
 */
export function factsFromText(text: string, limit: number): Fact[] {
  const spans = [
    ...spansOf(text, EMAIL),
    ...spansOf(text, UUID),
    ...spansOf(text, ISO_DATE),
    ...amountSpans(text),
    ...spansOf(text, JOINED_ID),
    ...spansOf(text, CODE),
    ...spansOf(text, NAMED_CODE).filter((s) => /^[A-Z0-9]+$/.test(s.fact.value)),
    ...spansOf(text, CARD_TAIL, 'last4'),
    ...spansOf(text, LONG_NUMBER),
    ...spansOf(text, QUOTED_NAME),
  ].sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Fact[] = [];
  const seen = new Set<string>();
  let covered = 0;
  for (const span of spans) {
    if (span.start < covered) continue;
    covered = span.end;
    const value = span.fact.value.trim();
    if (seen.has(value)) continue;
    seen.add(value);
    out.push(span.fact.label ? { label: span.fact.label, value } : { value });
    if (out.length >= limit) break;
  }
  return out;
}

function labelOf(path: readonly string[]): string {
  const named = path.filter((p) => p !== '[]');
  const leaf = named.at(-1) ?? 'value';
  const label = GENERIC_KEYS.has(leaf.toLowerCase()) && named.length >= 2 ? `${named.at(-2)}.${leaf}` : leaf;
  return label.replace(/[^\w.-]+/g, '_').slice(0, 48);
}

function oneLine(text: string): string {
  return truncateMiddle(text.replace(/\s+/g, ' ').trim(), FACT_VALUE_MAX_CHARS);
}

/**
 * Facts in a parsed JSON value, labelled with the field they came from (`order_id: QX7P2K`,
 * `certificate_8544743.amount: 250`, `passengers: Sofia Kim`). Keeps strings under id-like keys
 * or that look like identifiers, numbers under amount-like keys; never a secret's value. Reads
 * the first elements of each array (`ARRAY_ITEMS_READ`).
 */
export function factsFromJson(value: unknown, limit: number): Fact[] {
  const out: Fact[] = [];
  const seen = new Set<string>();
  const push = (fact: Fact) => {
    const key = `${fact.label ?? ''}\u0000${fact.value}`;
    if (out.length >= limit || fact.value === '' || seen.has(key)) return;
    seen.add(key);
    out.push(fact);
  };
  const walk = (node: unknown, path: string[]): void => {
    if (out.length >= limit) return;
    const leaf = path.filter((p) => p !== '[]').at(-1) ?? '';
    if (leaf && isSecretKey(leaf)) return;
    if (Array.isArray(node)) {
      const records = node.some((item) => item !== null && typeof item === 'object');
      const read = records ? ARRAY_ITEMS_READ.records : ARRAY_ITEMS_READ.values;
      for (const item of node.slice(0, read)) walk(item, [...path, '[]']);
      return;
    }
    if (node && typeof node === 'object') {
      const record = node as Record<string, unknown>;
      const first = record.first_name ?? record.firstName;
      const last = record.last_name ?? record.lastName;
      const named = typeof first === 'string' && typeof last === 'string';
      if (named) push({ label: labelOf([...path, 'name']).replace(/\.name$/, '') || 'name', value: oneLine(`${first} ${last}`) });
      for (const [key, child] of Object.entries(record)) {
        if (named && /^(first_?name|last_?name)$/i.test(key)) continue;
        walk(child, [...path, key]);
      }
      return;
    }
    if (typeof node === 'string') {
      const text = node.trim();
      if (text.length > 2 * FACT_VALUE_MAX_CHARS) {
        for (const fact of factsFromText(text, limit - out.length)) push(fact);
      } else if (ID_KEY.test(leaf) || isDistinctive(text)) {
        push({ label: labelOf(path), value: oneLine(text) });
      }
      return;
    }
    if (typeof node === 'number' && (ID_KEY.test(leaf) || AMOUNT_KEY.test(leaf))) push({ label: labelOf(path), value: String(node) });
  };
  walk(value, []);
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

/** Facts of a tool result or message: read as JSON where it is JSON, as free text otherwise. */
export function factsFromContent(content: string, limit: number): Fact[] {
  const data = parseJsonData(content);
  return data === undefined ? factsFromText(content, limit) : factsFromJson(data, limit);
}
