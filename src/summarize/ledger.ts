import type { TranscriptEntry } from '../formats/lens.js';
import type { TextCounter } from '../tokens/counter.js';
import { factsFromContent, factsFromText, identifiesAlone, isDistinctive, isSecretKey, parseJsonData, type Fact } from './facts.js';
import { byRecords, fitsTable, likelyCell, readJsonString, readTable, writeTable, type LineItem } from './ledger-table.js';

/**
 * The fact ledger: every identifier, code, path, URL, email, date and amount the summarized
 * messages held, deduplicated, with where it came from and how recently and how often the
 * conversation came back to it. It is carried from summary to summary as a block of plain text
 * that parses back (`parseLedger`), so facts survive every fold until the room runs out, and then
 * the least recent and least referenced go first. Pure: no I/O, no module-level state.
 *
 * The block, as `renderLedger` writes it:
 *
 *     Facts:
 *     - (7 of 15 facts kept, 31 messages read; @n = message n, ×k = k later mentions)
 *     - [get_user_details @5] email=ana.lopez1984@example.com dob=1962-03-17
 *     - [user @30] tracking_number=TRK023757X "May 27, 2024"
 *     - [get_order_details @9 ×4 @31] order_id=ZK4Q2W user_id=ana_lopez_4412 items.price=444
 *
 * One line per source (a tool result's tool name and message number, or a turn's role and
 * number; `@n` is message n, counted from the first message ever summarized), holding its facts
 * as `key=value` items separated by spaces, in the order they were found (a line whose facts do
 * not say whose they are names it in its header, `for key=value`: `LedgerFact.of`; a record's
 * values are written only beside its id). A key never holds a space, `=`, `"` or a bracket (a
 * sentence's words are joined by `_`); a value holding a space,
 * starting with `"` or ending with `:` is written as a JSON string. A fact named only by its shape
 * (`date`, `path`, `number`...) is written as its value alone when the value holds no `=`: the
 * shape is plain to see, and the key would cost room a fact could use. When keys repeat on a line
 * (the records of a listing) and it is shorter so, the line is a table instead: each key once,
 * then the records as rows (`- [list_orders @12] order_id|total: ORD-1 "12.50 EUR"; ORD-2 "9 EUR"`,
 * see `ledger-table.ts`). (Lines of the older form, one `- key: value`
 * per fact under a `- [source]` header, are still read.) When facts of a group were mentioned
 * again by later messages, its header says how often (`×k`, the most any of them was) and when
 * last (`@m`); read back, every fact of the group takes those figures. Groups are written least
 * recently mentioned first, so the freshest facts come last, as in every section of the working
 * memory. The meta line carries how many distinct facts were seen over every fold and how many
 * messages were read, so counts and numbering go on in the next fold.
 *
 * Written beside the rest of an extractive summary (`renderLedgerBesideSteps`), the block leaves out
 * what that rest already states: a request's or an answer's fact whose value is in it, and a
 * tool's record whose values all are. Each fact is then written once, and the next fold reads
 * those facts back from the rest (`withCarriedFacts`).
 */

/** One fact of the ledger. */
export interface LedgerFact {
  /** The field (`order_id`) or sentence words (`tracking number`) naming it, else its shape (`date`, `id`). */
  readonly key: string;
  readonly value: string;
  /** Where it came from: `get_user_details @5` (a tool call and its message number) or `user @3`. */
  readonly source: string;
  /** Message numbers (counted from the chat's first summarized message) of its first and last mention. */
  readonly firstSeen: number;
  readonly lastSeen: number;
  /** Later messages that mentioned it again. */
  readonly references: number;
  /** 2 when a field named it, 1 its sentence, 0 only its shape: a better name replaces a worse one. */
  readonly keyStrength: number;
  /**
   * The record of its source's listing it belongs to (`Fact.record`; read back, its table row), so
   * a table line keeps each record on one row. Absent outside a listing.
   */
  readonly record?: string;
  /** Its value joins a number and the unit a sibling field gave it (`Fact.unitFromField`): a table may write the unit once, in its column's head. */
  readonly unitFromField?: boolean;
  /**
   * Whose value it is, as `key=value`: the id of the record it belongs to when another line holds
   * that id (a record read again, or one whose id another record's field held first), else what
   * the call it came with or answers was about (`callSubject`: `path=src/a.ts`). Its line names
   * it in its header (`- [track @4 for tracking_number=TRK8812]`, `- [run_tests @9 for
   * path=test/a.test.ts]`) so its values say whose they are. A reference, not a fact: the line's
   * facts share it, and it is left out when the line holds that value itself.
   */
  readonly of?: string;
}

/** The ledger: its facts in insertion order, how many distinct facts were ever seen, how many messages were read. */
export interface Ledger {
  readonly facts: readonly LedgerFact[];
  /** Distinct facts seen so far over every fold (a fact dropped for room and seen again counts again). */
  readonly seen: number;
  /** Messages read so far: the number of the last one (message numbers start at 1). */
  readonly messages: number;
}

/**
 * Distinct facts taken from one text at most (a message, a call's arguments, a result): a listing
 * of a thousand records gives its first ones. A JSON listing's records may add their own copies of
 * shared dates and amounts beyond it, up to twice as many facts in all (`factsFromJson`).
 */
export const LEDGER_FACTS_PER_MESSAGE = 600;

/**
 * Ranking: a fact counts as if last seen `REFERENCE_WEIGHT` messages later for each time the
 * conversation mentioned it again, up to `REFERENCE_CAP` times. So among facts of about the same
 * age the ones the conversation keeps coming back to win, and a fact mentioned once a long time
 * ago does not outrank what was just said.
 */
export const REFERENCE_WEIGHT = 3;
export const REFERENCE_CAP = 5;

/**
 * Room a model-written summary's missing facts get (`Summarizer.factCheckTokens`): as much as the
 * summary itself may take (`FACT_CHECK_SHARE` of its `max_tokens`). The extractive summary's
 * ledger gets at most its whole size too, so a model's summary never carries fewer facts than the
 * extractive one would at the same size (the model's own text comes on top).
 */
export function factCheckRoom(maxSummaryTokens: number): number {
  return Math.max(64, Math.round(maxSummaryTokens * FACT_CHECK_SHARE));
}

/** Share of a model summary's `max_tokens` its appended facts may take (`factCheckRoom`). */
export const FACT_CHECK_SHARE = 1;

/** Times `renderLedger` picks its facts again with a room corrected by how far its estimate was off. */
const LEDGER_FIT_ATTEMPTS = 4;

/** Facts in a row that may not fit before `renderLedger` takes its room as full. */
const MISSES_BEFORE_FULL = 64;
/** Facts priced between two pauses of a pick (`writeLedgerSteps`): a few milliseconds of counting at most. */
const PICK_SLICE = 256;

/** Title of the ledger block when it stands alone (appended to a model's summary). */
export const LEDGER_TITLE = 'Facts:';

const META = /^- \((\d+) of (\d+) facts kept, (\d+) messages read(?:; [^()\n]*)?\)$/;
const HEADER = /^- \[([^\s@\]]+) @(\d+)(?: ×(\d+) @(\d+))?(?: for ([^\s=\]]+=[^\s\]]+))?\](?: (.*))?$/;
/** A record's id as a header names it (`of`): a key and a value that hold no space, `=` (the key) or `]`. */
const RECORD_REF = /^[^\s=\]]+=[^\s\]]+$/;
const SHAPE_KEY = /^(?:email|url|uuid|date|phone|path|hash|version|amount|id|code|number|ending|name|value)$/;
/** A bare fact line of an older summary (`- order_id: X`), read when there is no ledger block. */
const PLAIN_FACT = /^- ([\p{L}\p{N}_][\p{L}\p{N}_ .#'’-]{0,59}): (.+)$/u;

/** An empty ledger. */
export function emptyLedger(): Ledger {
  return { facts: [], seen: 0, messages: 0 };
}

/** What makes two facts one: the value when it identifies something alone, else the key and the value. */
export function factIdentity(key: string, value: string): string {
  return isDistinctive(value) ? `v:${value}` : `k:${key.toLowerCase()}\u0000${value}`;
}

/**
 * The identity of a tool result's field value that names nothing alone (`identifiesAlone` false):
 * its source, record, field and value, so another record, or another result, holding the same
 * value under any field keeps its own fact.
 */
function ownIdentity(source: string, record: string | undefined, key: string, value: string): string {
  return `o:${source}\u0000${record ?? ''}\u0000${key.toLowerCase()}\u0000${value}`;
}

/** Values worth looking for in later messages: not short numbers or words that occur by chance. */
function isReferenceable(value: string): boolean {
  return value.length >= 4 && !/^\d{1,4}(?:\.\d+)?$/.test(value) && (isDistinctive(value) || /\d/.test(value) || value.length >= 6);
}

const WORD_CHAR = /[\p{L}\p{N}_]/u;
/** Runs of the characters `WORD_CHAR` matches: the words `mentions` will not cut into. */
const WORD_RUN = /[\p{L}\p{N}_]+/gu;

/**
 * The longest word of a value (`WORD_RUN`), or undefined when it has none. Whenever
 * `mentions(text, value)` holds, the anchor is one of the text's words (`textWords`): the ledger
 * searches a message only for the facts filed under its words.
 */
export function anchorOf(value: string): string | undefined {
  let best: string | undefined;
  for (const w of value.match(WORD_RUN) ?? []) if (best === undefined || w.length > best.length) best = w;
  return best;
}

/** The distinct words of a text (`WORD_RUN`). */
export function textWords(text: string): Set<string> {
  return new Set(text.match(WORD_RUN));
}

/** The number of an amount (`$1,234.50` is `1234.50`), for matching it with a field's number. */
function amountCore(value: string): string | undefined {
  const m = /\d[\d,]*(?:\.\d+)?/.exec(value);
  return m ? m[0].replace(/,/g, '') : undefined;
}

/** True when `text` holds `value` not glued to other letters or digits (`ORD-1` is not in `ORD-12`). */
export function mentions(text: string, value: string): boolean {
  let at = text.indexOf(value);
  while (at >= 0) {
    const before = at > 0 ? text[at - 1] : '';
    const after = text[at + value.length] ?? '';
    const gluedBefore = before !== '' && WORD_CHAR.test(before) && WORD_CHAR.test(value[0]);
    const gluedAfter = after !== '' && WORD_CHAR.test(after) && WORD_CHAR.test(value[value.length - 1]);
    if (!gluedBefore && !gluedAfter) return true;
    at = text.indexOf(value, at + 1);
  }
  return false;
}

/** One line each: a value or label never holds a line break (the block is read back line by line). */
function normalized(fact: Fact): Fact {
  const value = fact.value.replace(/\s+/g, ' ').trim();
  const label = fact.label?.replace(/\s+/g, ' ').trim();
  return { ...fact, value, label: label || undefined };
}

/** A key as the block writes it: no space, `=`, `"` or bracket (runs of them become one `_`). */
function ledgerKey(label: string): string {
  return label.replace(/[\s="[\]]+/g, '_').replace(/^_+|_+$/g, '') || 'value';
}

function keyOf(fact: Fact): { key: string; strength: number } {
  if (fact.label) return { key: ledgerKey(fact.label), strength: fact.labelFrom === 'sentence' ? 1 : 2 };
  return { key: fact.kind ?? 'value', strength: 0 };
}

/** The text a message mentions facts in: its text, its calls' arguments, its results. */
function messageText(entry: TranscriptEntry): string {
  return [entry.text, ...entry.calls.map((c) => c.arguments), ...entry.results.map((r) => r.content)].join('\n');
}

/**
 * The source of facts from one text of message `ordinal` (`get_order @5`). The `nth` call or
 * result of the same tool in one message (parallel calls) is a source of its own (`get_order#2 @5`):
 * each call's and each result's facts keep their own line, their own record and their own name.
 */
function sourceLabel(name: string, ordinal: number, nth = 1): string {
  const clean = name.replace(/[\s[\]@#]+/g, '_').slice(0, 64) || 'tool';
  return nth > 1 ? `${clean}#${nth} @${ordinal}` : `${clean} @${ordinal}`;
}

/** Numbers the texts of one message by their name: 1 for the first of a name, 2 for the second... */
function nthOfName(): (name: string) => number {
  const seen = new Map<string, number>();
  return (name) => {
    const n = (seen.get(name) ?? 0) + 1;
    seen.set(name, n);
    return n;
  };
}

/** The message number in a source label (`get_user_details @5` is 5). */
export function sourceOrdinal(source: string): number {
  const m = / @(\d+)$/.exec(source);
  return m ? Number(m[1]) : 0;
}

/**
 * The ledger extended with `entries`, oldest first, numbered after the messages the ledger has
 * read. Facts come from user and assistant text, tool calls' arguments and tool results (the
 * last two read as data: a quantity there is a fact however round). A fact seen again
 * is one fact (a result's field value that names nothing alone, `identifiesAlone`, is one with
 * its own record's field only: another record's same date is its own fact, and not a mention of
 * this one): its last mention and its count of mentions move, a better key (a field over a
 * sentence over a shape) replaces a worse one, and with it the source. Known facts found again in
 * a later message by their value count as mentioned. System messages are skipped. Pure: returns
 * a new ledger. `checkpoint` runs between messages (abort checks).
 */
export function extendLedger(previous: Ledger, entries: readonly TranscriptEntry[], checkpoint: () => void = () => {}): Ledger {
  const builder = ledgerBuilder(previous);
  builder.add(entries, checkpoint);
  return builder.ledger();
}

/** A field that names its record (`order_id`, `orderId`, `invoice_number`, `sha`): its last word is an identifier's. */
const RECORD_ID_KEY = /(?:^|[_\-.])(?:id|uuid|guid|number|no|num|ref|reference|sha|slug)$|[a-z](?:Id|ID|Uuid|Number|Ref|Sha|Slug)$/;

/**
 * The first identifier field (`RECORD_ID_KEY`) of each record of a result's facts, keyed by
 * `Fact.record` ('' outside a listing): its key as the block writes it, and its value.
 */
function idFields(found: readonly Fact[]): Map<string, { key: string; value: string }> {
  const ids = new Map<string, { key: string; value: string }>();
  for (const f of found) {
    const record = f.record ?? '';
    if (ids.has(record) || f.labelFrom !== 'field' || f.label === undefined || !RECORD_ID_KEY.test(f.label.trim())) continue;
    const fact = normalized(f);
    if (fact.value) ids.set(record, { key: keyOf(fact).key, value: fact.value });
  }
  return ids;
}

/** Longest value a call's subject may have to be named in its result's header: a path or an id, not a text. */
const SUBJECT_MAX_CHARS = 80;

/** What a call was about (`callSubject`): `key=value`, and whether its field names an identifier. */
export interface CallSubject {
  readonly ref: string;
  readonly identifier: boolean;
}

/**
 * What a call was about, as its result's header names it (`LedgerFact.of`): its first argument
 * whose field names an identifier (`RECORD_ID_KEY`), else its first string argument; as
 * `key=value` when that fits a header (no space, `]`, at most `SUBJECT_MAX_CHARS`). Undefined for
 * arguments that are not a JSON object, or hold no such value (numbers, flags and secrets are
 * never a subject).
 */
export function callSubject(args: string | undefined): CallSubject | undefined {
  const data = args === undefined ? undefined : parseJsonData(args);
  if (data === undefined || data === null || typeof data !== 'object' || Array.isArray(data)) return undefined;
  let first: CallSubject | undefined;
  for (const [field, value] of Object.entries(data as Record<string, unknown>)) {
    const identifier = RECORD_ID_KEY.test(field);
    if (isSecretKey(field) || !(typeof value === 'string' || (identifier && typeof value === 'number' && Number.isFinite(value)))) continue;
    const text = String(value).trim();
    const ref = `${ledgerKey(field)}=${text}`;
    if (text === '' || text.length > SUBJECT_MAX_CHARS || !RECORD_REF.test(ref)) continue;
    if (identifier) return { ref, identifier };
    first ??= { ref, identifier };
  }
  return first;
}

/** Where a record read again was first read: its source and its record there. */
interface RecordHome {
  readonly source: string;
  readonly record: string | undefined;
}

/** A ledger extended a few messages at a time (`extendLedger` in steps, for a caller that yields between them). */
export interface LedgerBuilder {
  /** Reads the next entries, numbered after those already read; the same rules as `extendLedger`. */
  add(entries: readonly TranscriptEntry[], checkpoint?: () => void): void;
  /** The ledger so far (a copy: later `add` calls do not change it). */
  ledger(): Ledger;
}

/** Starts extending `previous`: `add` the entries in as many steps as wanted, then take the `ledger`. */
export function ledgerBuilder(previous: Ledger): LedgerBuilder {
  const facts: LedgerFact[] = [...previous.facts];
  const index = new Map<string, number>();
  // A value found in text (not an amount, which its words tell apart) is one fact whatever words name it.
  const byValue = new Map<string, number>();
  // Worked out once per fact: is its value worth looking for in later messages, does it identify alone.
  const lookFor: boolean[] = [];
  // Facts by the longest run of word characters in their value: a message that mentions a value
  // holds that run as a whole word (a mention is never glued to letters or digits), so only the
  // facts filed under one of its words are searched for. Values without a word are always searched.
  const byAnchor = new Map<string, number[]>();
  const unanchored: number[] = [];
  const file = (value: string, i: number) => {
    const anchor = anchorOf(value);
    if (anchor === undefined) unanchored.push(i);
    else {
      const list = byAnchor.get(anchor);
      if (list) list.push(i);
      else byAnchor.set(anchor, [i]);
    }
  };
  const distinct: boolean[] = [];
  // Facts named after the call that asked with them: a result holding them takes them over (the
  // record's line keeps them). And facts a call brought in: the answer returning them is the same
  // exchange, not a mention again.
  const callSourced: boolean[] = [];
  const askedOnly: boolean[] = [];
  const remember = (fact: LedgerFact, i: number) => {
    index.set(factIdentity(fact.key, fact.value), i);
    if (!byValue.has(fact.value)) byValue.set(fact.value, i);
  };
  facts.forEach((f, i) => {
    remember(f, i);
    // A record's own value read back is that record's again when it is read once more (`homesOf`).
    if (f.keyStrength === 2 && !PROSE_SOURCE.test(f.source) && !identifiesAlone(f.value)) index.set(ownIdentity(f.source, f.record, f.key, f.value), i);
    lookFor.push(isReferenceable(f.value));
    file(f.value, i);
    distinct.push(isDistinctive(f.value));
    callSourced.push(false);
    askedOnly.push(false);
  });
  let seen = previous.seen;
  let ordinal = previous.messages;
  // Call ids seen so far, to name a result the lens left unnamed after the call it answers.
  const callNames = new Map<string, string>();

  // A fact a result's own field value may take over: one only words or a call named so far.
  const claimable = (i: number | undefined) => (i !== undefined && (facts[i].keyStrength < 2 || askedOnly[i]) ? i : undefined);

  /**
   * The records of a result read before: a record whose first identifier field (`idFields`:
   * `order_id`, `sha`) holds a value an earlier result's record holds under the same field is that
   * record read again (keyed by `Fact.record`, '' for a record outside a listing). A value only a
   * call or words named so far names no record yet.
   */
  const homesOf = (ids: ReadonlyMap<string, { key: string; value: string }>): Map<string, RecordHome> => {
    const homes = new Map<string, RecordHome>();
    for (const [record, id] of ids) {
      const at = keeperOf(id);
      if (at !== undefined && facts[at].key === id.key) homes.set(record, { source: facts[at].source, record: facts[at].record });
    }
    return homes;
  };

  /**
   * The fact an earlier result's field holds for an id and keeps (not a value only a call or
   * words named so far, which the result reading it now would take over); undefined for none.
   */
  const keeperOf = (id: { key: string; value: string }): number | undefined => {
    const at = index.get(factIdentity(id.key, id.value));
    return at !== undefined && facts[at].keyStrength === 2 && !askedOnly[at] && !callSourced[at] && !PROSE_SOURCE.test(facts[at].source) ? at : undefined;
  };

  /**
   * The reference a result's new facts carry (`LedgerFact.of`): its own record's (top level) id,
   * as `key=value`, when an earlier result's field holds that id and keeps it (it is not a value
   * only a call or words named, which this result takes over); its listings' facts carry it too.
   */
  const recordRef = (id: { key: string; value: string } | undefined): string | undefined => {
    if (id === undefined || keeperOf(id) === undefined) return undefined;
    const of = `${id.key}=${id.value}`;
    return RECORD_REF.test(of) ? of : undefined;
  };

  const read = (entry: TranscriptEntry) => {
    const touched = new Set<number>();
    // Values this message's results hold as their records' own facts: restating one is not a mention of another fact.
    const stated = new Set<string>();
    // A number or amount in text that only restates a known value (`$112` for `prices.economy: 112`,
    // `5820417` for `card_5820417`) is a mention of that fact, not a new one.
    const restated = (fact: Fact): number | undefined => {
      const core = fact.kind === 'amount' ? amountCore(fact.value) : fact.kind === 'number' || fact.kind === 'ending' ? fact.value : undefined;
      if (core === undefined || core.length < 2) return undefined;
      const exact = byValue.get(core);
      if (exact !== undefined) return exact;
      if (fact.kind === 'amount' || core.length < 4) return undefined;
      const at = facts.findIndex((f, i) => distinct[i] && f.value !== core && f.value.includes(core) && mentions(f.value.replace(/_/g, ' '), core));
      return at >= 0 ? at : undefined;
    };
    const add = (found: Fact, source: string, asked = false, data = false, home?: RecordHome, of?: string) => {
      const fact = normalized(found);
      if (!fact.value) return;
      const { key, strength } = keyOf(fact);
      // A result's field value that names nothing alone is that record's own fact: it is one with
      // a fact of the same record and field, or takes over a fact only words or a call named so far
      // (the first record to hold it); never one another record or result holds by chance. A record
      // read before (`home`) is that record: its unchanged values are its facts again.
      const own = data && strength === 2 && !identifiesAlone(fact.value)
        ? (home ? ownIdentity(home.source, home.record, key, fact.value) : ownIdentity(source, found.record, key, fact.value))
        : undefined;
      if (own !== undefined) stated.add(fact.value);
      const identity = factIdentity(key, fact.value);
      const at = own !== undefined
        ? index.get(own) ?? claimable(byValue.get(fact.value) ?? index.get(identity))
        : (fact.kind !== undefined && fact.kind !== 'amount' ? byValue.get(fact.value) : undefined) ?? index.get(identity)
          ?? (fact.kind !== undefined ? restated(fact) : undefined);
      if (at === undefined) {
        const added: LedgerFact = { key, value: fact.value, source, firstSeen: ordinal, lastSeen: ordinal, references: 0, keyStrength: strength, record: found.record, of, ...(found.unitFromField ? { unitFromField: true } : {}) };
        remember(added, facts.length);
        if (own !== undefined) index.set(own, facts.length);
        touched.add(facts.length);
        facts.push(added);
        lookFor.push(isReferenceable(fact.value));
        file(fact.value, facts.length - 1);
        distinct.push(isDistinctive(fact.value));
        callSourced.push(asked);
        askedOnly.push(asked);
        seen++;
        return;
      }
      const old = facts[at];
      const again = !touched.has(at) && ordinal > old.lastSeen && !(askedOnly[at] && !asked);
      touched.add(at);
      const better = strength > old.keyStrength || (callSourced[at] && !asked && strength >= old.keyStrength);
      if (!asked) askedOnly[at] = false;
      if (better) callSourced[at] = asked;
      // A fact that takes this source takes its record too (the one it had belongs to its old source).
      const record = better ? found.record : old.record;
      const updated: LedgerFact = {
        key: better ? key : old.key,
        value: old.value,
        source: better ? source : old.source,
        firstSeen: old.firstSeen,
        lastSeen: Math.max(old.lastSeen, ordinal),
        references: old.references + (again ? 1 : 0),
        keyStrength: better ? strength : old.keyStrength,
        record,
        ...(old.unitFromField ? { unitFromField: true } : {}),
        // Whose value it is goes with its line: it stays named while the fact stays there, and a
        // fact that moves to this source takes this source's reference.
        ...((better ? of : old.of) === undefined ? {} : { of: better ? of : old.of }),
      };
      facts[at] = updated;
      if (better) remember(facts[at], at);
      if (own !== undefined) index.set(own, at);
    };
    for (const call of entry.calls) if (call.id && call.name) callNames.set(call.id, call.name);
    if (entry.text.trim()) {
      for (const fact of factsFromContent(entry.text, LEDGER_FACTS_PER_MESSAGE)) add(fact, sourceLabel(entry.role, ordinal));
    }
    // What a call asked with (a path it patched, a query, a command) is a fact of the call; its
    // answer's facts come with the result, and a value in both is one fact.
    const nthCall = nthOfName();
    for (const call of entry.calls) {
      const name = call.name || 'tool';
      const nth = nthCall(name);
      if (!call.arguments.trim()) continue;
      const source = sourceLabel(name, ordinal, nth);
      const of = callSubject(call.arguments)?.ref;
      for (const fact of factsFromContent(call.arguments, LEDGER_FACTS_PER_MESSAGE, 'data')) add(fact, source, true, false, undefined, of);
    }
    const nthResult = nthOfName();
    for (const result of entry.results) {
      const name = result.name || (result.id ? callNames.get(result.id) : undefined) || 'tool';
      const source = sourceLabel(name, ordinal, nthResult(name));
      const found = factsFromContent(result.content, LEDGER_FACTS_PER_MESSAGE, 'data');
      const ids = idFields(found);
      const homes = homesOf(ids);
      // Whose values these are: the record's id another line holds, else what the call asked about;
      // a record with an id of its own is named by it, so only another record's id it answers for
      // (`for order_id=...` on a record the call made for that order) is worth its room, not a
      // parameter (`for severity=high`).
      const subject = callSubject(result.callArguments);
      const of = recordRef(ids.get('')) ?? (subject && (subject.identifier || !ids.has('')) ? subject.ref : undefined);
      for (const fact of found) add(fact, source, false, true, homes.get(fact.record ?? ''), of);
    }
    // Known facts this message mentions without stating them as a fact (an id in a call's arguments,
    // a code in prose): only those whose anchor is one of its words are searched for.
    const text = messageText(entry);
    const mentioned = (i: number) => {
      const fact = facts[i];
      if (!lookFor[i] || touched.has(i) || ordinal <= fact.lastSeen || stated.has(fact.value) || !mentions(text, fact.value)) return;
      facts[i] = { ...fact, lastSeen: ordinal, references: fact.references + 1 };
    };
    for (const word of textWords(text)) {
      const candidates = byAnchor.get(word);
      if (candidates) for (const i of candidates) mentioned(i);
    }
    for (const i of unanchored) mentioned(i);
  };

  return {
    add(entries, checkpoint = () => {}) {
      for (const entry of entries) {
        checkpoint();
        ordinal++;
        if (entry.role !== 'system') read(entry);
      }
    },
    ledger: () => ({ facts: [...facts], seen, messages: ordinal }),
  };
}

/**
 * A ledger's own facts read from a summary of another shape (a model's prose): each identifier
 * found there becomes a fact of the source `summary @0`, unless the ledger already has it.
 */
export function withFactsOfText(ledger: Ledger, text: string): Ledger {
  const facts = [...ledger.facts];
  const known = new Set(facts.map((f) => factIdentity(f.key, f.value)));
  let seen = ledger.seen;
  for (const { fact, key, strength } of textFacts(text)) {
    const identity = factIdentity(key, fact.value);
    if (known.has(identity)) continue;
    known.add(identity);
    facts.push({ key, value: fact.value, source: 'summary @0', firstSeen: 0, lastSeen: 0, references: 0, keyStrength: strength });
    seen++;
  }
  return { ...ledger, facts, seen };
}

/** Every fact of a text by the text rules, one line each as the ledger writes it, with the key it would take. */
function* textFacts(text: string): Generator<{ fact: Fact; key: string; strength: number }> {
  for (const found of factsFromText(text, Number.MAX_SAFE_INTEGER)) {
    const fact = normalized(found);
    if (fact.value) yield { fact, ...keyOf(fact) };
  }
}

/** Sources that are turns of prose (a request, an answer) or a summary, not a tool's record. */
const PROSE_SOURCE = /^(?:user|assistant|summary) @\d+$/;

/**
 * The values of the facts a text states by the text rules (`factsFromText`, one line each as the
 * ledger writes them): what a summary's other sections already carry, so its ledger block need not
 * write them again. The same text always gives the same set, which is what lets a folded summary
 * get those facts back (`withCarriedFacts`).
 */
export function carriedValues(text: string): Set<string> {
  const values = new Set<string>();
  for (const { fact } of textFacts(text)) values.add(fact.value);
  return values;
}

/**
 * The ledger with the facts `text` carries (`carriedValues`) that it has no fact for, read back
 * from the other sections of an extractive summary: its ledger block left them out because those
 * sections held them (`renderLedgerBesideSteps`). They were counted when first seen, so `seen` does not
 * grow; they rank as the ledger's least recent fact, and come from `summary @0`. Adds nothing when
 * every value is already a fact's.
 */
export function withCarriedFacts(ledger: Ledger, text: string): Ledger {
  const values = new Set(ledger.facts.map((f) => f.value));
  let oldest = Number.POSITIVE_INFINITY;
  for (const f of ledger.facts) oldest = Math.min(oldest, f.lastSeen);
  const lastSeen = Number.isFinite(oldest) ? oldest : 0;
  const facts = [...ledger.facts];
  for (const { fact, key, strength } of textFacts(text)) {
    if (values.has(fact.value)) continue;
    values.add(fact.value);
    facts.push({ key, value: fact.value, source: 'summary @0', firstSeen: 0, lastSeen, references: 0, keyStrength: strength });
  }
  return facts.length === ledger.facts.length ? ledger : { ...ledger, facts };
}

/**
 * The ledger block to write beside `text` (the rest of a summary) in at most `maxTokens`, chosen
 * and written as `renderLedger` does, without the facts `text` already states (`carriedValues`):
 * a fact of a turn (a request, an answer) whose value `text` holds, and a tool's record whose
 * values `text` all holds (a record's fields are never split up). The meta line counts as kept
 * the facts written and every value `text` states (at most as many as were seen), so counts and
 * message numbering go on, and the next fold reads them back from `text` (`withCarriedFacts`).
 * With every fact left out, the block is the title and meta line alone when they fit; '' when
 * nothing fits. In steps: it pauses (`yield`) between picks, so a caller can give the event loop
 * a turn.
 */
export function* renderLedgerBesideSteps(ledger: Ledger, text: string, maxTokens: number, countText: TextCounter, title = LEDGER_TITLE): Generator<void, string, void> {
  const carried = carriedValues(text);
  if (carried.size === 0 || ledger.facts.length === 0) return (yield* writeLedgerSteps(ledger, maxTokens, countText, title)).text;
  // A source label does not say whether it names a tool or a turn: a tool named like a role
  // (`user`) is taken for a turn, and its facts are left out one by one.
  const wholeRecord = new Map<string, boolean>();
  for (const f of ledger.facts) wholeRecord.set(f.source, (wholeRecord.get(f.source) ?? true) && carried.has(f.value));
  const rest = ledger.facts.filter((f) => !(carried.has(f.value) && (PROSE_SOURCE.test(f.source) || wholeRecord.get(f.source))));
  const restLedger = { ...ledger, facts: rest };
  function* blockOf(room: number): Generator<void, string, void> {
    const { text: written, chosen } = yield* writeLedgerSteps(restLedger, room, countText, title);
    const values = new Set(chosen.map((i) => rest[i].value));
    // Kept: the facts written and every other value `text` states (what the next fold reads back),
    // never more than were seen.
    let kept = chosen.length;
    for (const v of carried) if (!values.has(v)) kept++;
    const seen = Math.max(ledger.seen, chosen.length);
    return withMetaLine(written, title, metaLine(Math.min(kept, seen), seen, ledger.messages));
  }
  let block = yield* blockOf(maxTokens);
  // The meta line may have grown by a digit or two: ask for less room until the block fits.
  let over = countText(block) - maxTokens;
  for (let room = maxTokens, tries = 0; over > 0 && tries < 8; tries++) {
    room -= over;
    block = yield* blockOf(room);
    over = countText(block) - maxTokens;
  }
  return over <= 0 ? block : '';
}

/** Runs steps to their end without pausing: the synchronous form of a `...Steps` generator. */
function finish<T>(steps: Generator<void, T, void>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** How a fact ranks: higher is kept first. Recency in message numbers, plus a bonus per mention. */
export function factScore(fact: LedgerFact): number {
  return fact.lastSeen + REFERENCE_WEIGHT * Math.min(fact.references, REFERENCE_CAP);
}

/**
 * For each fact of a tool's record that is not the record's id, the index of that id: the first
 * fact of the same source and record whose field names an identifier (`RECORD_ID_KEY`); undefined
 * for the id itself, for a fact of a record with no id among its facts, and for turns' facts.
 */
export function recordIds(facts: readonly LedgerFact[]): (number | undefined)[] {
  const idOf = new Map<string, number>();
  const recordOf = (f: LedgerFact) => `${f.source}\u0000${f.record ?? ''}`;
  facts.forEach((f, i) => {
    const record = recordOf(f);
    if (!idOf.has(record) && f.keyStrength === 2 && !PROSE_SOURCE.test(f.source) && RECORD_ID_KEY.test(f.key)) idOf.set(record, i);
  });
  return facts.map((f, i) => {
    const id = idOf.get(recordOf(f));
    return id === i ? undefined : id;
  });
}

/**
 * Facts best first: score, then last mention, then order of insertion (earlier fields of a record
 * first); a record's id (`recordIds`) ranks with its record's best-ranked fact, just before it; a
 * fact whose value a better-ranked fact already holds (another record's same date or amount) comes
 * after every first holder of a value, in the same order: a value the block does not hold yet
 * tells the model more than the same value on another row.
 */
export function rankFacts(facts: readonly LedgerFact[], ids: readonly (number | undefined)[] = recordIds(facts)): number[] {
  // A record's id ranks with the best-ranked fact of its record, just before it: values kept
  // without the id that says whose they are tell the model little.
  const score = facts.map(factScore);
  const seen = facts.map((f) => f.lastSeen);
  const isId = new Set<number>();
  ids.forEach((id, i) => {
    if (id === undefined) return;
    isId.add(id);
    if (score[i] > score[id] || (score[i] === score[id] && seen[i] > seen[id])) {
      score[id] = score[i];
      seen[id] = seen[i];
    }
  });
  const byScore = facts
    .map((_, i) => i)
    .sort((a, b) => score[b] - score[a] || seen[b] - seen[a] || Number(isId.has(b)) - Number(isId.has(a)) || a - b);
  const held = new Set<string>();
  const first: number[] = [];
  const repeats: number[] = [];
  for (const i of byScore) {
    const value = facts[i].value;
    if (held.has(value)) repeats.push(i);
    else {
      held.add(value);
      first.push(i);
    }
  }
  return repeats.length === 0 ? first : [...first, ...repeats];
}

/** The header of a group: its source, and when its facts were mentioned again, how often (the most any was) and when last. */
function headerLine(source: string, references: number, lastSeen: number, of?: string): string {
  const ref = of === undefined ? '' : ` for ${of}`;
  return references > 0 || lastSeen !== sourceOrdinal(source) ? `- [${source} ×${references} @${lastSeen}${ref}]` : `- [${source}${ref}]`;
}

/** The record a group's facts all belong to (`LedgerFact.of`), when they share one and none of them is its id. */
function groupRef(facts: readonly LedgerFact[], members: readonly number[]): string | undefined {
  const of = members.length > 0 ? facts[members[0]].of : undefined;
  if (of === undefined) return undefined;
  const id = of.slice(of.indexOf('=') + 1);
  for (const i of members) if (facts[i].of !== of || facts[i].value === id) return undefined;
  return of;
}

/**
 * A value as an item writes it: bare when it holds no space, does not start with `"` and does not
 * end with `:` (a line starting with `name: ` is a table), else a JSON string.
 */
function itemValue(value: string): string {
  return /\s/.test(value) || value.startsWith('"') || value.endsWith(':') ? JSON.stringify(value) : value;
}

/**
 * True when an item writes the fact as its value alone: only its shape names it, or only words of
 * a sentence before it (a key comes from data: a field, a column, a `key: value` label), and the
 * value holds no `=`.
 */
function isBare(fact: LedgerFact): boolean {
  return (SHAPE_KEY.test(ledgerKey(fact.key)) || fact.keyStrength < 2) && !itemValue(fact.value).includes('=');
}

/** One fact as an item of its group's line: `key=value`, or the value alone when no data names it (and it holds no `=`). */
function factItem(fact: LedgerFact): string {
  return isBare(fact) ? itemValue(fact.value) : `${ledgerKey(fact.key)}=${itemValue(fact.value)}`;
}

/**
 * The key a fact reads back with from its item (`value` for one written bare): a table's column,
 * so that a line reads back to the same keys whichever form it was written in, and is written
 * again in the same form.
 */
function columnKey(fact: LedgerFact): string {
  return isBare(fact) ? 'value' : ledgerKey(fact.key);
}

/**
 * The items of a group line, in order: `key=value` (the key runs to the first `=`) or a value
 * alone (its key is `value`); a value starting with `"` is a JSON string. Undefined when the text
 * is not a list of items (the line is not a ledger line).
 */
function parseItems(text: string): { key: string; value: string }[] | undefined {
  const items: { key: string; value: string }[] = [];
  let at = 0;
  const readValue = (): string | undefined => {
    if (text[at] !== '"') {
      const end = text.indexOf(' ', at);
      const value = text.slice(at, end < 0 ? text.length : end);
      at = end < 0 ? text.length : end;
      return value;
    }
    const read = readJsonString(text, at);
    if (!read) return undefined;
    at = read.end;
    return read.value;
  };
  while (at < text.length) {
    if (text[at] === ' ') {
      at++;
      continue;
    }
    let key = 'value';
    if (text[at] !== '"') {
      const space = text.indexOf(' ', at);
      const stop = space < 0 ? text.length : space;
      const eq = text.indexOf('=', at);
      if (eq > at && eq < stop) {
        key = text.slice(at, eq);
        at = eq + 1;
      }
    }
    const value = readValue();
    if (value === undefined || value === '' || (at < text.length && text[at] !== ' ')) return undefined;
    items.push({ key, value });
  }
  return items;
}

/**
 * What the positions in the lines below mean, written on the meta line of a block that has facts:
 * a model reads `@n` as a message of this conversation, not as something it has to guess at.
 */
export const POSITION_LEGEND = '@n = message n, ×k = k later mentions';

function metaLine(kept: number, seen: number, messages: number): string {
  return kept > 0 ? `- (${kept} of ${seen} facts kept, ${messages} messages read; ${POSITION_LEGEND})` : `- (${kept} of ${seen} facts kept, ${messages} messages read)`;
}

/**
 * The block of a ledger none of whose facts fit: its title and meta line alone, so the summary still
 * says how many facts it left out (and the next fold goes on counting from there).
 */
export function factlessBlock(ledger: Ledger, title = LEDGER_TITLE): string {
  return `${title}\n${metaLine(0, Math.max(ledger.seen, ledger.facts.length), ledger.messages)}`;
}

/** A block with its meta line (its second line) replaced by `meta`; the title and `meta` alone for no block. */
function withMetaLine(block: string, title: string, meta: string): string {
  return block ? block.replace(/^(.*\n)(.*)/, (_, head: string) => `${head}${meta}`) : `${title}\n${meta}`;
}

/** Mention stats of a group: the most recent mention and the most mentions of its members. */
function groupStats(facts: readonly LedgerFact[], members: readonly number[]): { references: number; lastSeen: number } {
  let references = 0;
  let lastSeen = 0;
  for (const i of members) {
    references = Math.max(references, facts[i].references);
    lastSeen = Math.max(lastSeen, facts[i].lastSeen);
  }
  return { references, lastSeen };
}

/**
 * The facts of one group as its line writes them: `key=value` items, or a table (`writeTable`)
 * when their keys repeat, each record fits one row, and the table takes fewer tokens.
 */
function groupBody(given: readonly LedgerFact[], countText: TextCounter): string {
  // A record's facts side by side (one that came from an earlier mention sorts first otherwise):
  // items, as rows, never suggest that one record's value belongs to another.
  const facts = given.some((f) => f.record !== undefined) ? byRecords(given).flat() : given;
  const items = facts.map((f) => factItem(f)).join(' ');
  const cells: LineItem[] = facts.map((f) => ({ key: columnKey(f), value: f.value, ...(f.record === undefined ? {} : { record: f.record }), ...(f.unitFromField ? { unitFromField: true } : {}) }));
  if (!fitsTable(cells)) return items;
  const table = writeTable(cells);
  return table !== undefined && countText(table) < countText(items) ? table : items;
}

/**
 * Writes the chosen facts (indexes into `ledger.facts`) as the lines of the block: title, meta line, then one
 * group per source, least recently mentioned first (then by source number), facts in insertion order.
 */
function writeLines(ledger: Ledger, chosen: readonly number[], title: string, countText: TextCounter): string[] {
  const groups = new Map<string, number[]>();
  for (const i of [...chosen].sort((a, b) => a - b)) {
    const source = ledger.facts[i].source;
    const members = groups.get(source);
    if (members) members.push(i);
    else groups.set(source, [i]);
  }
  const ordered = [...groups.entries()].map(([source, members]) => ({ source, members, ...groupStats(ledger.facts, members) }));
  ordered.sort((a, b) => a.lastSeen - b.lastSeen || sourceOrdinal(a.source) - sourceOrdinal(b.source) || a.references - b.references
    || (a.source < b.source ? -1 : a.source > b.source ? 1 : 0));
  const lines = [title, metaLine(chosen.length, Math.max(ledger.seen, chosen.length), ledger.messages)];
  for (const group of ordered) {
    lines.push(`${headerLine(group.source, group.references, group.lastSeen, groupRef(ledger.facts, group.members))} ${groupBody(group.members.map((i) => ledger.facts[i]), countText)}`);
  }
  return lines;
}

/**
 * The ledger as a block of at most `maxTokens` (by `countText`): the best-ranked facts that fit
 * (most recent and most referenced first; a fact too long for what is left is skipped for smaller
 * ones), written grouped by source. '' when no fact fits or there is none. Deterministic: the
 * same ledger and room give the same bytes, and a block parsed back (`parseLedger`) and written
 * again with the same room gives the same bytes.
 */
export function renderLedger(ledger: Ledger, maxTokens: number, countText: TextCounter, title = LEDGER_TITLE): string {
  return finish(writeLedgerSteps(ledger, maxTokens, countText, title)).text;
}

/** `renderLedger` in steps: it pauses (`yield`) after each pick and each block written; the same text. */
export function* renderLedgerSteps(ledger: Ledger, maxTokens: number, countText: TextCounter, title = LEDGER_TITLE): Generator<void, string, void> {
  return (yield* writeLedgerSteps(ledger, maxTokens, countText, title)).text;
}

/**
 * `renderLedger`, with the facts written (indexes into `ledger.facts`), in steps: a pause
 * (`yield`) after each pick and each block written, the stretches a long ledger makes long.
 */
function* writeLedgerSteps(ledger: Ledger, maxTokens: number, counter: TextCounter, title: string): Generator<void, { text: string; chosen: readonly number[] }, void> {
  const none = { text: '', chosen: [] };
  if (ledger.facts.length === 0 || maxTokens <= 0) return none;
  // Picked again until the block fills its room: the same group lines are counted again, once each here.
  const counted = new Map<string, number>();
  const countText: TextCounter = (text) => {
    let n = counted.get(text);
    if (n === undefined) counted.set(text, (n = counter(text)));
    return n;
  };
  const ids = recordIds(ledger.facts);
  const ranked = rankFacts(ledger.facts, ids);
  const fixed = countText(title) + 1 + countText(metaLine(ledger.facts.length, Math.max(ledger.seen, ledger.facts.length), ledger.messages)) + 1;
  if (fixed >= maxTokens) return none;
  // A group's header is priced once, with the stats of all its facts (its longest form).
  const bySource = new Map<string, number[]>();
  ledger.facts.forEach((f, i) => {
    const members = bySource.get(f.source);
    if (members) members.push(i);
    else bySource.set(f.source, [i]);
  });
  const headerCost = new Map<string, number>();
  // Each fact's price as an item (`key=value`) and as a table's cell, worked out once.
  const itemCost: number[] = [];
  const cellCost: number[] = [];
  /**
   * The best-ranked facts whose estimated cost fits `room`, in rank order, and that estimate;
   * pausing every `PICK_SLICE` facts (pricing a fact first seen counts its text).
   */
  function* pick(room: number): Generator<void, { chosen: number[]; total: number }, void> {
    const chosen: number[] = [];
    // Facts left out for room: a record whose id is one of them leaves out its other values too
    // (its id ranks before them).
    const skipped = new Set<number>();
    // The keys each group has written so far: a key written again is priced as a table's cell.
    const groupsOpen = new Map<string, Set<string>>();
    let total = fixed;
    let misses = 0;
    let seen = 0;
    for (const i of ranked) {
      if (++seen % PICK_SLICE === 0) yield;
      const id = ids[i];
      if (id !== undefined && skipped.has(id)) continue;
      const fact = ledger.facts[i];
      const group = fact.source;
      const key = columnKey(fact);
      const keys = groupsOpen.get(group);
      let extra = keys?.has(key) ? (cellCost[i] ??= countText(` ${likelyCell(fact.value, fact.unitFromField === true)}`)) : (itemCost[i] ??= countText(` ${factItem(fact)}`));
      if (!keys) {
        if (!headerCost.has(group)) {
          const stats = groupStats(ledger.facts, bySource.get(group)!);
          headerCost.set(group, countText(headerLine(group, stats.references, stats.lastSeen, groupRef(ledger.facts, bySource.get(group)!))) + 1);
        }
        extra += headerCost.get(group)!;
      }
      if (total + extra > room) {
        skipped.add(i);
        // Smaller facts further down may still fit; past a run of misses the room is as good as full.
        if (++misses >= MISSES_BEFORE_FULL || room - total < 3) break;
        continue;
      }
      misses = 0;
      total += extra;
      if (keys) keys.add(key);
      else groupsOpen.set(group, new Set([key]));
      chosen.push(i);
    }
    return { chosen, total };
  }
  let room = maxTokens;
  let last = yield* pick(room);
  yield;
  // Every fact, when only a few were left out and they all fit after all: the estimate can be over
  // the exact count (tokens merge across items), and a block read back must be written again whole
  // (the same bytes). A long ledger far over its room is not written whole.
  const left = ledger.facts.length - last.chosen.length;
  if (left > 0 && left <= Math.max(8, ledger.facts.length / 20)) {
    const all = ledger.facts.map((_, i) => i);
    const text = writeLines(ledger, all, title, countText).join('\n');
    if (countText(text) <= maxTokens) return { text, chosen: all };
    yield;
  }
  // The estimate prices each fact alone; the written block decides (a table's rows and empty
  // cells, tokens merging across items). A block is reckoned line by line, each line counted once
  // however many picks write it, less how far the first block's lines were off its own count.
  let offset: number | undefined;
  const tokensOf = (lines: readonly string[]): number => {
    let sum = lines.length - 1;
    for (const line of lines) sum += countText(line);
    offset ??= sum - countText(lines.join('\n'));
    return sum - offset;
  };
  // Pick again with the room scaled by how far the estimate was off, a few times, and keep the
  // attempt that fits with the most facts.
  let best: { lines: string[]; chosen: number[] } | undefined;
  for (let attempt = 0; last.chosen.length > 0; attempt++) {
    const lines = writeLines(ledger, last.chosen, title, countText);
    const tokens = tokensOf(lines);
    yield;
    if (tokens <= maxTokens && (!best || last.chosen.length > best.chosen.length)) best = { lines, chosen: last.chosen };
    const full = last.chosen.length === ledger.facts.length || maxTokens - tokens <= Math.max(4, maxTokens / 200);
    if ((tokens <= maxTokens && full) || attempt >= LEDGER_FIT_ATTEMPTS) break;
    const next = Math.floor(room * (maxTokens / tokens));
    if (next === room) break;
    room = next;
    last = yield* pick(room);
    yield;
  }
  // The text is counted whole before it is taken: the pick kept (or the last one, when none was
  // reckoned to fit) loses its worst-ranked facts until it fits, as many at once as the excess
  // would take at the chosen facts' mean cost, then one by one.
  const chosen = [...(best ?? last).chosen];
  const mean = Math.max(1, (last.total - fixed) / Math.max(1, last.chosen.length));
  let text = chosen.length > 0 ? (best?.lines ?? writeLines(ledger, chosen, title, countText)).join('\n') : '';
  for (let over = countText(text) - maxTokens; chosen.length > 0 && over > 0; over = countText(text) - maxTokens) {
    yield;
    chosen.length = Math.max(0, chosen.length - Math.max(1, Math.floor(over / mean)));
    text = chosen.length > 0 ? writeLines(ledger, chosen, title, countText).join('\n') : '';
  }
  return { text, chosen };
}

/**
 * Reads the ledger back from a summary: the block after its meta line (`- (n of m facts kept...`),
 * its group lines (and the older form's headers and `- key: value` lines), up to the first line of
 * another shape. A summary with no ledger block but a `Facts:` section of `- key: value` lines
 * (written before the ledger existed) gives those facts, of the source `summary @0`. A summary
 * with neither gives an empty ledger.
 */
export function parseLedger(summaryText: string): Ledger {
  const lines = summaryText.split('\n').map((l) => l.trimEnd());
  const metaAt = lines.findIndex((l) => META.test(l));
  if (metaAt < 0) return parsePlainFacts(lines);
  const meta = META.exec(lines[metaAt])!;
  const facts: LedgerFact[] = [];
  let source = 'summary @0';
  let references = 0;
  let lastSeen = 0;
  for (const line of lines.slice(metaAt + 1)) {
    const group = groupLineOf(line);
    if (group === null) break;
    if (group) {
      ({ source, references, lastSeen } = group);
      for (const { key, value, record, unitFromField } of group.items) {
        facts.push({ key, value, source, firstSeen: sourceOrdinal(source), lastSeen, references, keyStrength: carriedStrength(key), record, ...(unitFromField ? { unitFromField } : {}), ...(group.of === undefined ? {} : { of: group.of }) });
      }
      continue;
    }
    // The older form: one `- key: value` line per fact under its group's header.
    if (!line.startsWith('- ')) break;
    const body = line.slice(2);
    const split = body.indexOf(': ');
    if (split <= 0) break;
    const key = body.slice(0, split);
    facts.push({ key, value: body.slice(split + 2), source, firstSeen: sourceOrdinal(source), lastSeen, references, keyStrength: carriedStrength(key) });
  }
  return { facts, seen: Math.max(Number(meta[2]), facts.length), messages: Number(meta[3]) };
}

/** A carried key named after a shape (`date`, `id`) may still be replaced by a field's name; any other stays. */
function carriedStrength(key: string): number {
  return SHAPE_KEY.test(key) ? 0 : 2;
}

function parsePlainFacts(lines: readonly string[]): Ledger {
  const start = lines.indexOf('Facts:');
  if (start < 0) return emptyLedger();
  const facts: LedgerFact[] = [];
  const known = new Set<string>();
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith('- ')) break;
    const m = PLAIN_FACT.exec(line);
    const key = m ? m[1] : 'value';
    const value = m ? m[2] : line.slice(2).trim();
    const identity = factIdentity(key, value);
    if (!value || known.has(identity)) continue;
    known.add(identity);
    facts.push({ key, value, source: 'summary @0', firstSeen: 0, lastSeen: 0, references: 0, keyStrength: m ? 2 : 0 });
  }
  return { facts, seen: facts.length, messages: 0 };
}

/**
 * A group line of the block read: its source, mention figures and items (none for a header of the
 * older form). Undefined when the line is not a group line; null when it starts like one but its
 * items do not read (the block ends there).
 */
function groupLineOf(line: string): { source: string; references: number; lastSeen: number; of?: string; items: LineItem[] } | null | undefined {
  const header = HEADER.exec(line);
  if (!header) return undefined;
  const items = header[6] === undefined ? [] : readTable(header[6]) ?? parseItems(header[6]);
  if (!items) return null;
  return {
    source: `${header[1]} @${header[2]}`,
    references: header[3] === undefined ? 0 : Number(header[3]),
    lastSeen: header[4] === undefined ? Number(header[2]) : Number(header[4]),
    ...(header[5] === undefined ? {} : { of: header[5] }),
    items,
  };
}

/** The lines of a summary that belong to its ledger block (title, meta, headers, facts), to leave out when reading the rest. */
export function ledgerBlockRange(summaryText: string): { start: number; end: number } | undefined {
  const lines = summaryText.split('\n').map((l) => l.trimEnd());
  const metaAt = lines.findIndex((l) => META.test(l));
  if (metaAt < 0) return undefined;
  let end = metaAt + 1;
  while (end < lines.length && lines[end].startsWith('- ') && (groupLineOf(lines[end]) || lines[end].slice(2).indexOf(': ') > 0)) end++;
  const start = metaAt > 0 && lines[metaAt - 1] === LEDGER_TITLE ? metaAt - 1 : metaAt;
  return { start, end };
}

/** Facts seen and kept, as the ledger block of a summary reports them; undefined when it has none. */
export function ledgerStats(summaryText: string): { readonly seen: number; readonly kept: number } | undefined {
  for (const line of summaryText.split('\n')) {
    const m = META.exec(line.trimEnd());
    if (m) return { kept: Number(m[1]), seen: Number(m[2]) };
  }
  return undefined;
}

/** The summary without its ledger blocks (a model may copy the previous one; the check writes a fresh one). */
export function withoutLedgerBlocks(summaryText: string): string {
  let text = summaryText;
  for (let range = ledgerBlockRange(text); range; range = ledgerBlockRange(text)) {
    const lines = text.split('\n');
    lines.splice(range.start, range.end - range.start);
    text = lines.join('\n');
  }
  return text.replace(/\n{3,}/g, '\n\n').trim();
}

/**
 * Checks a summary written by a model against the ledger of what it was given: the ledger's
 * facts whose values the summary does not hold are appended to it as a ledger block, most recent
 * and most referenced first, in at most `maxTokens`. The block's meta line counts as kept the
 * facts the summary held plus those appended, so the counts and the message numbering carry on
 * to the next fold; a summary that held every fact gets the title and meta line only. A ledger
 * block the model copied from its previous summary is replaced. Deterministic.
 */
export function appendMissingFacts(summary: string, ledger: Ledger, maxTokens: number, countText: TextCounter): string {
  const body = withoutLedgerBlocks(summary);
  if (ledger.facts.length === 0) return body;
  const missing = ledger.facts.filter((f) => !mentions(body, f.value));
  const held = ledger.facts.length - missing.length;
  const seen = Math.max(ledger.seen, ledger.facts.length);
  const { text, chosen } = finish(writeLedgerSteps({ facts: missing, seen, messages: ledger.messages }, maxTokens, countText, LEDGER_TITLE));
  const block = withMetaLine(text, LEDGER_TITLE, metaLine(held + chosen.length, seen, ledger.messages));
  return body ? `${body}\n\n${block}` : block;
}
