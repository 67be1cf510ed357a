import type { Grouping } from '../core/groups.js';
import type { RepairAction } from '../core/repair.js';
import type { Violation } from '../core/validate/rules.js';
import type { MessageLens, Reading } from '../formats/lens.js';
import type { CompressReport } from '../runtime/compress.js';
import { factsFromContent } from '../summarize/facts.js';

/**
 * The page `ctxfold inspect` writes, as plain JSON-ready data: one entry per history, each
 * message and group of the history the plan worked on (the input, or its repaired copy: every
 * index below is in it) with what the fold did to it. Built by `historyModel`, pure: the same
 * analysis gives the same model. `html.ts` embeds it in the page and the page's script renders it.
 */
export interface InspectPage {
  readonly title: string;
  readonly histories: readonly HistoryModel[];
}

/** What happened to a message: in the head, replaced by the summary, dropped for room, sent word for word between them, in the kept tail, or the last user turn held while the tail gave way. */
export type Fate = 'head' | 'summarized' | 'dropped' | 'middle' | 'tail' | 'held';

/** One message of the history. `body` is its text, then one line per call (`→ name(args)`) and per result (`← name: content`). */
export interface MessageModel {
  readonly role: string;
  readonly body: string;
  readonly fate: Fate;
  /** Set when the view sends it with its tool result cleared: its tokens before and in the view. */
  readonly cleared?: { readonly before: number; readonly after: number };
  /** True when repair made or changed it (it is not the input's own object). */
  readonly repaired?: true;
}

/** One atomic group: kept or dropped whole. `kind` names what it holds (`tool round`, `user`, ...). */
export interface GroupModel {
  readonly start: number;
  readonly end: number;
  readonly kind: string;
  readonly fate: Fate;
}

/** A ledger line of the summary and the message it names (`@n`), when that message is in this history. */
export interface LedgerLine {
  readonly text: string;
  readonly target?: number;
}

/** A fact of a message the view leaves out (listed once, at its first message); `historyModel` files it as kept when its value occurs in the view's text. */
export interface FactModel {
  readonly label: string;
  readonly value: string;
  readonly from: number;
}

/** One history's page section. */
export interface HistoryModel {
  readonly label: string;
  readonly format: string;
  readonly messages: readonly MessageModel[];
  readonly groups: readonly GroupModel[];
  /** Index of the first message the view sends after what it summarized or dropped; absent when nothing was left out after the head. */
  readonly cut?: number;
  readonly tokens: {
    readonly before: number;
    readonly beforeExact: boolean;
    readonly after: number;
    readonly window?: number;
    readonly threshold?: number;
    readonly reserved: number;
    readonly split: CompressReport['split'];
  };
  readonly summary?: {
    readonly text: string;
    readonly summarizer?: string;
    readonly start: number;
    readonly end: number;
    readonly coveredIds: readonly string[];
    readonly ledger: readonly LedgerLine[];
  };
  readonly facts: { readonly kept: readonly FactModel[]; readonly left: readonly FactModel[]; readonly messagesRead: number; readonly capped: boolean };
  readonly validation: { readonly profile: string; readonly issues: readonly { readonly rule: string; readonly message: string; readonly viewIndex: number; readonly at?: number }[] };
  readonly repairs: readonly (RepairAction & { readonly at?: number })[];
  readonly notes: readonly string[];
  readonly overBudget: boolean;
}

/** What `historyModel` reads: the analysis of one history and the view made of it. */
export interface HistorySource<M> {
  readonly label: string;
  /** The messages as given. */
  readonly original: readonly M[];
  /** The history the plan worked on (report indexes refer to it). */
  readonly input: readonly M[];
  readonly lens: MessageLens<M>;
  readonly grouping: Grouping;
  readonly view: readonly M[];
  readonly report: CompressReport;
  readonly coveredIds?: readonly string[];
  readonly summarizer?: string;
  /** The profile the view was checked against, and what it found. */
  readonly profile: string;
  readonly violations: readonly Violation[];
}

/** Facts listed per side at most (a long history's dropped messages could hold tens of thousands). */
export const FACTS_LISTED = 300;
/** Facts read from one message at most. */
const FACTS_PER_MESSAGE = 20;

/** The text of a reading as the page shows it: its text, its calls, its results and in-place calls. */
export function bodyOf(r: Reading): string {
  const lines = r.text === '' ? [] : [r.text];
  for (const c of r.calls) lines.push(`→ ${c.name}(${c.arguments})`);
  for (const x of r.results) lines.push(`← ${x.name ?? 'result'}: ${x.content}`);
  for (const p of r.inPlace) lines.push(`→ ${p.call.name}(${p.call.arguments})`, `← ${p.call.name}: ${p.result.content}`);
  return lines.join('\n');
}

/** The ledger line header's first message number: `- [get_order @9 ×4 @31] ...` is 9. */
const LEDGER_HEADER = /^- \[[^\]]*?@(\d+)/;

/**
 * The summary message of a view: the one the plan wrote, whose text opens with the summary
 * frame (`[Summary of N earlier messages ...]`). Undefined when the view carries none.
 */
function summaryTextOf<M>(view: readonly M[], kept: ReadonlySet<M>, lens: MessageLens<M>): string | undefined {
  for (const m of view) {
    if (kept.has(m)) continue;
    const text = lens.read(m).text;
    if (text.startsWith('[Summary of ')) return text;
  }
  return undefined;
}

/** The kind a group holds, as the page names it. */
function kindOf(grouping: Grouping, g: number, readings: readonly Reading[]): string {
  const group = grouping.groups[g];
  if (group.type === 'turn') return 'tool round';
  const r = readings[group.start];
  if (r.kind === 'result') return 'tool result';
  return r.kind;
}

/**
 * The model of one history's section. Indexes are in `input`; a repair that removed a message
 * names the input message (`RepairAction.index`), and `at` is where the timeline shows it: the
 * first message of `input` after it that repair kept as it was.
 */
export function historyModel<M>(s: HistorySource<M>): HistoryModel {
  const { input, lens, grouping, report, view } = s;
  const n = input.length;
  const readings = input.map((m) => lens.read(m));
  const { fate, lastLeftOut } = fatesOf(report, n);
  const cleared = new Map(report.collapsed.map((c) => [c.index, c]));
  const own = new Set(s.original);
  const messages: MessageModel[] = readings.map((r, i) => {
    const c = cleared.get(i);
    return {
      role: r.role,
      body: bodyOf(r),
      fate: fate[i],
      ...(c ? { cleared: { before: c.tokensBefore, after: c.tokensAfter } } : {}),
      ...(own.has(input[i]) ? {} : { repaired: true as const }),
    };
  });
  const groups: GroupModel[] = grouping.groups.map((g) => ({ start: g.start, end: g.end, kind: kindOf(grouping, g.index, readings), fate: fate[g.start] }));

  const repairs = repairsPlaced(s);

  const keptSet = new Set(input.filter((_, i) => fate[i] !== 'summarized' && fate[i] !== 'dropped'));
  const viewText = view.map((m) => bodyOf(lens.read(m))).join('\n');
  const summary = summaryModel(s, summaryTextOf(view, keptSet, lens));

  const facts = factsModel(readings, fate, viewText);

  return {
    label: s.label,
    format: report.format,
    messages,
    groups,
    ...(lastLeftOut >= 0 && lastLeftOut + 1 < n ? { cut: lastLeftOut + 1 } : {}),
    tokens: {
      before: report.tokensBefore,
      beforeExact: report.tokensBeforeExact,
      after: report.tokensAfter,
      ...(report.maxContextTokens === undefined ? {} : { window: report.maxContextTokens }),
      ...(report.compressionThresholdTokens === undefined ? {} : { threshold: report.compressionThresholdTokens }),
      reserved: report.reservedOutputTokens,
      split: report.split,
    },
    ...(summary ? { summary } : {}),
    facts,
    validation: { profile: s.profile, issues: s.violations.map((v) => ({ rule: v.rule, message: v.message, viewIndex: v.index, ...viewToHistory(view, input, v.index) })) },
    repairs,
    notes: [...report.notes, ...(report.summary.note ? [report.summary.note] : [])],
    overBudget: report.overBudget,
  };
}

/** What became of each message (head, middle, tail, held, summarized, dropped), and the last one left out (-1: none). */
function fatesOf(report: HistorySource<unknown>['report'], n: number): { fate: Fate[]; lastLeftOut: number } {
  const fate: Fate[] = new Array<Fate>(n);
  for (let i = 0; i < n; i++) fate[i] = i < report.headEnd ? 'head' : i >= report.protectedStart ? 'tail' : 'middle';
  if (report.heldUserTurn) for (let i = report.heldUserTurn.start; i < report.heldUserTurn.end; i++) fate[i] = 'held';
  let lastLeftOut = -1;
  for (const d of report.dropped) {
    fate[d.index] = d.reason === 'summarized' ? 'summarized' : 'dropped';
    lastLeftOut = Math.max(lastLeftOut, d.index);
  }
  return { fate, lastLeftOut };
}

/** The repair actions, each with where the timeline shows a message repair removed: before the first later input message kept as it was. */
function repairsPlaced<M>(s: HistorySource<M>): HistoryModel['repairs'] {
  const originalIndex = new Map<M, number>();
  s.original.forEach((m, k) => originalIndex.set(m, k));
  const survivors = s.input.map((m) => originalIndex.get(m) ?? -1);
  return s.report.repaired.map((a) => {
    const at = survivors.findIndex((k) => k >= a.index);
    return at < 0 ? a : { ...a, at };
  });
}

/** The summary's section, its ledger lines pointing at the message each names; undefined when the view has no summary text. */
function summaryModel<M>(s: HistorySource<M>, text: string | undefined): HistoryModel['summary'] {
  const { report } = s;
  const n = s.input.length;
  const start = report.headEnd;
  const covered = report.summary.applied ? report.summary.coveredMessages : 0;
  return text === undefined ? undefined : {
    text,
    ...(s.summarizer ? { summarizer: s.summarizer } : {}),
    start,
    end: start + covered,
    coveredIds: s.coveredIds ?? [],
    // `@n` is message n counted from the first message summarized (1-based): the CLI's summary is
    // the history's first, so that is the message right after the head.
    ledger: text.split('\n').filter((l) => l.startsWith('- ')).map((l): LedgerLine => {
      const m = LEDGER_HEADER.exec(l);
      const target = m ? start + Number(m[1]) - 1 : -1;
      return target >= start && target < n ? { text: l, target } : { text: l };
    }),
  };
}

/** Facts of the messages left out (each once, where it first occurs), split by whether the view still says them. */
function factsModel(readings: readonly Reading[], fate: readonly Fate[], viewText: string): HistoryModel['facts'] {
  const n = readings.length;
  const kept: FactModel[] = [];
  const left: FactModel[] = [];
  let messagesRead = 0;
  // Each fact once, where it first occurs.
  const listed = new Set<string>();
  for (let i = 0; i < n && (kept.length < FACTS_LISTED || left.length < FACTS_LISTED); i++) {
    if (fate[i] !== 'summarized' && fate[i] !== 'dropped') continue;
    messagesRead++;
    const r = readings[i];
    const texts = [r.text, ...r.calls.map((c) => c.arguments), ...r.results.map((x) => x.content)].filter((t) => t !== '');
    for (const t of texts) {
      for (const f of factsFromContent(t, FACTS_PER_MESSAGE)) {
        const key = `${f.label ?? f.kind ?? 'value'}=${f.value}`;
        if (listed.has(key)) continue;
        listed.add(key);
        const side = viewText.includes(f.value) ? kept : left;
        if (side.length < FACTS_LISTED) side.push({ label: f.label ?? f.kind ?? 'value', value: f.value, from: i });
      }
    }
  }
  let leftOut = 0;
  for (let i = 0; i < n; i++) if (fate[i] === 'summarized' || fate[i] === 'dropped') leftOut++;

  return { kept, left, messagesRead, capped: messagesRead < leftOut };
}

/** `{ at }`: the history index of the view message at `k` when it is one of the history's own messages. */
function viewToHistory<M>(view: readonly M[], input: readonly M[], k: number): { at?: number } {
  const m = view[k];
  const at = m === undefined ? -1 : input.indexOf(m);
  return at < 0 ? {} : { at };
}
