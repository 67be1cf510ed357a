/**
 * Retention: how much of what a conversation told the model is still in the view a system sends
 * when the history must fit a smaller budget. For each conversation, each budget share and each
 * system, the view of the conversation's last request is checked with the fact checker
 * (`fact-checker.ts`), which shares no code with the summarizer it judges.
 *
 * - The last request is the history up to the conversation's last assistant answer: the final
 *   assistant message is cut off when the conversation ends with one (`lastRequest`).
 * - Its budget is `floor(share x its tokens)`, tokens counted with `createTokenCounter()`
 *   (o200k_base) under the `openaiChatLens` accounting, request overhead included (as
 *   `bench/budget.ts` `viewTokens` counts).
 * - Facts are those of the request (user messages, tool-call arguments, tool results).
 * - Reported per system and share: mean share of facts kept, worst tenth (10th percentile over
 *   conversations, nearest rank), the same counting only good views (valid and within budget; any
 *   other view keeps nothing), mean share kept of the facts that come up again later in the
 *   conversation ("reused": a later message of any role mentions them, the signal that they
 *   matter), share of views within budget, share of valid views (`validateMessages(view,
 *   'openai')` empty), median tokens sent / budget, and how many runs threw.
 */
import { createTokenCounter, validateMessages, type OpenAIChatMessage, type TokenCounter } from '../../src/index.js';
import { fairBudget, requestFloor, viewTokens } from '../budget.js';
import { extractFacts, isAlnum, normalize, occursIn, retentionOfFacts, viewText, type Fact, type FactKind } from './fact-checker.js';

/**
 * What a system sends for a request, and, for a system with recall, the original messages the model
 * can still get back through a recall call (those its summary replaced and its store keeps).
 */
export type RetentionOutput = OpenAIChatMessage[] | { readonly view: OpenAIChatMessage[]; readonly recallable: readonly OpenAIChatMessage[] };

/** A system whose views are measured: `run` returns the view it would send for `messages` at `budget` tokens. */
export interface RetentionSystem {
  readonly name: string;
  /**
   * False for a system that cannot announce recall (a one-shot view with no store to answer a
   * recall call): its "recall announced" is reported as not applicable, not as 0%.
   */
  readonly announcesRecall?: boolean;
  run(messages: OpenAIChatMessage[], budget: number): RetentionOutput | Promise<RetentionOutput>;
}

/** How a share becomes a request's budget (`RetentionOptions.rule`). */
export type BudgetRule = 'fair' | 'total';

/** Figures of one system at one budget share. */
export interface RetentionRow {
  readonly system: string;
  /** The budget rule: `fair` (floor + share x rest) or `total` (share x the request's tokens). */
  readonly rule: BudgetRule;
  /** The budget share (of the rest, or of the request's tokens, by `rule`). */
  readonly share: number;
  /** Conversations measured (those whose request holds at least one fact). */
  readonly conversations: number;
  /** Mean facts per conversation. */
  readonly meanFacts: number;
  /** Mean over conversations of the share of facts the view keeps. */
  readonly meanKept: number;
  /** 10th percentile (nearest rank) of the per-conversation share kept. */
  readonly worstTenth: number;
  /**
   * The same, counting only good views: a view over the budget or one the provider refuses keeps
   * nothing (it would not be sent, or would be answered with an error). Mean and 10th percentile.
   */
  readonly meanKeptGood: number;
  readonly worstTenthGood: number;
  /** Mean share kept of the facts that come up again later (over conversations that have some). */
  readonly reusedKept: number;
  /**
   * Mean share of facts the model can reach: in the view, or in an original message it can recall
   * (systems with recall); the same as `meanKept` for the others. And its 10th percentile.
   */
  readonly meanReachable: number;
  readonly worstTenthReachable: number;
  /** Share of views with tokens sent <= budget. */
  readonly withinBudget: number;
  /** Share of views the provider accepts (`validateMessages(view, 'openai')` is empty). */
  readonly valid: number;
  /** Median of tokens sent / budget. */
  readonly medianSent: number;
  /**
   * Median over conversations of the tokens the facts this system's view missed would cost in their
   * cheapest attributed form (`attributedCost`), and of that over the room above the floor
   * (`budget - floor`); NaN when no view missed a fact.
   */
  readonly missedCostMedian: number;
  readonly missedCostShareMedian: number;
  /** Share of conversations whose floor (system prompt + last user turn) fits the budget at all. */
  readonly feasible: number;
  /**
   * The values-only ceiling (`valuesCeiling`): mean over conversations of the most facts any view
   * within the budget could carry, and its 10th percentile. The same for every system of a share.
   */
  readonly ceiling: number;
  readonly ceilingWorstTenth: number;
  /**
   * Of the views whose history was summarized or cleared (they hold a summary or a cleared
   * result), the share that tells the model how to recall (they name `ctxfold_recall`); NaN when
   * none was. What a system with recall must reach 100% on.
   */
  readonly recallAnnounced: number;
  /** Runs that threw (counted as keeping nothing, invalid and over budget). */
  readonly errors: number;
  /**
   * Facts the views leave out, summed over conversations, by the checker's kind (runs that threw
   * not counted): where a system's losses lie. Kinds with none are absent.
   */
  readonly missedByKind: Readonly<Partial<Record<FactKind, number>>>;
}

/** Options of `measureRetention`. */
export interface RetentionOptions {
  readonly conversations: readonly OpenAIChatMessage[][];
  /** Budget shares, e.g. [0.1, 0.25, 0.5]. */
  readonly shares: readonly number[];
  /**
   * How a share becomes a budget: `fair` (default) is `floor + share x rest` (`fairBudget`: the
   * floor every valid view must send, plus a share of the rest); `total` is `share x` the request's tokens.
   */
  readonly rule?: BudgetRule;
  readonly systems: readonly RetentionSystem[];
  /** Reference counter for budgets and tokens sent. Default: a fresh `createTokenCounter()`. */
  readonly counter?: TokenCounter;
  /** Called after each conversation (for progress lines). */
  readonly onConversation?: (done: number, total: number) => void;
}

/** The history of a conversation's last request: everything before its final assistant message when it ends with one. */
export function lastRequest(messages: readonly OpenAIChatMessage[]): OpenAIChatMessage[] {
  const n = messages.length;
  return n > 0 && messages[n - 1].role === 'assistant' ? messages.slice(0, n - 1) : messages.slice();
}

/** Nearest-rank percentile of values (p in (0, 1]); NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

/** The facts of `messages` that a message after the one they first appear in mentions again. */
export function reusedFacts(messages: readonly OpenAIChatMessage[], facts: readonly Fact[]): Fact[] {
  const starts: number[] = [];
  let text = '';
  for (const m of messages) {
    starts.push(text.length);
    text += viewText([m]) + ' \u0000 ';
  }
  starts.push(text.length);
  return facts.filter((f) => {
    const from = starts[f.message + 1] ?? text.length;
    return occursIn(text, f.key, from);
  });
}

/** The missed facts of samples, summed by kind. */
function sumKinds(list: readonly Sample[]): Partial<Record<FactKind, number>> {
  const out: Partial<Record<FactKind, number>> = {};
  for (const s of list) for (const [kind, n] of Object.entries(s.missed ?? {}) as [FactKind, number][]) out[kind] = (out[kind] ?? 0) + n;
  return out;
}

interface Sample {
  /** The view holds a summary or a cleared result; and it names the recall tool. */
  folded?: boolean;
  announced?: boolean;
  kept: number;
  reachable: number;
  reused: number | undefined;
  within: boolean;
  valid: boolean;
  sent: number;
  error: boolean;
  missed?: Partial<Record<FactKind, number>>;
  /** Tokens of the missed facts in their cheapest attributed form (`attributedCost`), and that over the room above the floor. */
  missedCost?: number;
  missedCostShare?: number;
}

/**
 * Tokens of the cheapest form of `facts` that still says where each came from: the facts of one
 * message on one line, after that message's label (`[message 12] value; value`), each value as
 * first written. A lower bound of what any summary naming its sources pays for them (it adds keys,
 * call names and the text around them).
 */
export function attributedCost(facts: readonly Fact[], counter: TokenCounter): number {
  const bySource = new Map<number, string[]>();
  for (const f of facts) {
    const list = bySource.get(f.message);
    if (list) list.push(f.value);
    else bySource.set(f.message, [f.value]);
  }
  let cost = 0;
  for (const [message, values] of bySource) cost += counter.text(`\n- [message ${message}] ${values.join('; ')}`);
  return cost;
}

/**
 * An estimate of the most facts any view within `budget` can carry: the floor (system prompt and
 * last user turn, which every view sends) keeps the facts it holds for free; the room left
 * (`budget - floor`) is filled with the other facts' values alone, each priced as its own text
 * after a space (no key, no grouping, no other text), and a fact whose value occurs in one already
 * written counts as carried. Values go cheapest per fact carried first (a value that holds other
 * facts' values carries them too), each skipped when it no longer fits. Token counts
 * of joined texts are not exactly additive and the order is greedy, so this is an estimate, not a
 * proof; it is above what a readable summary can do. Returns the share of `facts` (1 when there
 * are none; 0 when the floor alone is over the budget and holds none of them).
 */
export function valuesCeiling(request: readonly OpenAIChatMessage[], facts: readonly Fact[], budget: number, floor: number, counter: TokenCounter): number {
  if (facts.length === 0) return 1;
  let lastUser = -1;
  for (let i = request.length - 1; i >= 0; i--) if (request[i].role === 'user') { lastUser = i; break; }
  const floorText = lastUser >= 0 ? normalize(viewText(request.slice(lastUser))) : '';
  let room = budget - floor;
  // What the ceiling wrote, values apart (a NUL between them, so no value runs into the next).
  let written = '';
  const carried = (f: Fact) => (floorText !== '' && occursIn(floorText, f.key, 0)) || (written !== '' && occursIn(written, f.key, 0));
  // Which values hold another fact's value (unglued, as `occursIn` reads it): all keys joined,
  // each key looked for outside its own slot.
  const starts: number[] = [];
  let joined = '';
  for (const f of facts) {
    joined += '\u0000';
    starts.push(joined.length);
    joined += f.key;
  }
  joined += '\u0000';
  const slotAt = (pos: number) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= pos) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const held = new Array<number>(facts.length).fill(0);
  facts.forEach((f, i) => {
    const edgeStart = isAlnum(f.key[0]);
    const edgeEnd = isAlnum(f.key[f.key.length - 1]);
    for (let at = joined.indexOf(f.key); at >= 0; at = joined.indexOf(f.key, at + 1)) {
      const j = slotAt(at);
      if (j === i || (edgeStart && isAlnum(joined[at - 1])) || (edgeEnd && isAlnum(joined[at + f.key.length]))) continue;
      held[j]++;
    }
  });
  // Cheapest per fact carried first (a value carries itself and the values it holds).
  const rest = facts.map((f, i) => ({ f, carries: 1 + held[i] }))
    .filter(({ f }) => !(floorText !== '' && occursIn(floorText, f.key, 0)))
    .map(({ f, carries }) => ({ f, cost: counter.text(` ${f.value}`), carries }))
    .sort((x, y) => x.cost / x.carries - y.cost / y.carries || x.cost - y.cost || y.f.key.length - x.f.key.length);
  if (room > 0) {
    for (const { f, cost } of rest) {
      if (carried(f) || cost > room) continue;
      room -= cost;
      written += `\u0000 ${f.key} \u0000`;
    }
  }
  return facts.filter(carried).length / facts.length;
}

/** Runs every system on every conversation at every share and aggregates per system and share. */
export async function measureRetention(options: RetentionOptions): Promise<RetentionRow[]> {
  const counter = options.counter ?? createTokenCounter();
  const samples = new Map<string, Sample[]>();
  const factCounts: number[] = [];
  const feasible = new Map<number, number>();
  const ceilings = new Map<number, number[]>();
  const keyOf = (system: string, share: number) => `${share}\u0000${system}`;
  let done = 0;
  for (const conversation of options.conversations) {
    const request = lastRequest(conversation);
    const facts = extractFacts(request);
    // Facts are distinct by normalized value, so by value too: what the checker reports missing.
    const kindOf = new Map(facts.map((f) => [f.value, f.kind] as const));
    done++;
    if (facts.length === 0) {
      options.onConversation?.(done, options.conversations.length);
      continue;
    }
    factCounts.push(facts.length);
    const reused = reusedFacts(request, facts);
    const tokens = viewTokens(request, counter);
    const rule = options.rule ?? 'fair';
    const floor = rule === 'fair' ? fairBudget(request, 0, counter).floor : requestFloor(request, request.length, counter);
    for (const share of options.shares) {
      const budget = rule === 'fair' ? fairBudget(request, share, counter).budget : Math.max(1, Math.floor(share * tokens));
      if (floor <= budget) feasible.set(share, (feasible.get(share) ?? 0) + 1);
      const list = ceilings.get(share) ?? [];
      list.push(valuesCeiling(request, facts, budget, floor, counter));
      ceilings.set(share, list);
      for (const system of options.systems) {
        let sample: Sample;
        try {
          const output = await system.run(request, budget);
          const view = Array.isArray(output) ? output : output.view;
          const recallable = Array.isArray(output) ? [] : output.recallable;
          const sent = viewTokens(view, counter);
          let valid = false;
          try {
            valid = view.every((m) => m !== undefined && m !== null) && validateMessages(view, 'openai').length === 0;
          } catch {
            valid = false;
          }
          const inView = retentionOfFacts(facts, view);
          const missed: Partial<Record<FactKind, number>> = {};
          for (const value of inView.missing) {
            const kind = kindOf.get(value)!;
            missed[kind] = (missed[kind] ?? 0) + 1;
          }
          const text = JSON.stringify(view);
          const missingValues = new Set(inView.missing);
          const missedFacts = facts.filter((f) => missingValues.has(f.value));
          const missedCost = missedFacts.length > 0 ? attributedCost(missedFacts, counter) : undefined;
          sample = {
            ...(missedCost === undefined ? {} : { missedCost, missedCostShare: missedCost / Math.max(1, budget - floor) }),
            folded: text.includes('[Summary of') || text.includes('[tool result cleared'),
            announced: system.announcesRecall === false ? undefined : text.includes('ctxfold_recall'),
            kept: inView.share,
            missed,
            reachable: recallable.length > 0 ? retentionOfFacts(facts, [...view, ...recallable]).share : inView.share,
            reused: reused.length > 0 ? retentionOfFacts(reused, view).share : undefined,
            within: sent <= budget,
            valid,
            sent: sent / budget,
            error: false,
          };
        } catch {
          sample = { kept: 0, reachable: 0, reused: reused.length > 0 ? 0 : undefined, within: false, valid: false, sent: Number.NaN, error: true };
        }
        const key = keyOf(system.name, share);
        let list = samples.get(key);
        if (!list) samples.set(key, (list = []));
        list.push(sample);
      }
    }
    options.onConversation?.(done, options.conversations.length);
  }
  const rows: RetentionRow[] = [];
  const n = factCounts.length;
  for (const share of options.shares) {
    for (const system of options.systems) {
      const list = samples.get(keyOf(system.name, share)) ?? [];
      const reused = list.map((s) => s.reused).filter((x): x is number => x !== undefined);
      rows.push({
        system: system.name,
        rule: options.rule ?? 'fair',
        share,
        conversations: list.length,
        meanFacts: mean(factCounts),
        meanKept: mean(list.map((s) => s.kept)),
        worstTenth: percentile(list.map((s) => s.kept), 0.1),
        meanKeptGood: mean(list.map((s) => (s.within && s.valid ? s.kept : 0))),
        worstTenthGood: percentile(list.map((s) => (s.within && s.valid ? s.kept : 0)), 0.1),
        reusedKept: mean(reused),
        meanReachable: mean(list.map((s) => s.reachable)),
        worstTenthReachable: percentile(list.map((s) => s.reachable), 0.1),
        withinBudget: list.length === 0 ? Number.NaN : list.filter((s) => s.within).length / list.length,
        valid: list.length === 0 ? Number.NaN : list.filter((s) => s.valid).length / list.length,
        medianSent: percentile(list.filter((s) => !s.error).map((s) => s.sent), 0.5),
        feasible: n === 0 ? Number.NaN : (feasible.get(share) ?? 0) / n,
        ceiling: mean(ceilings.get(share) ?? []),
        ceilingWorstTenth: percentile(ceilings.get(share) ?? [], 0.1),
        recallAnnounced: ((folded) => (folded.length === 0 ? Number.NaN : folded.filter((s) => s.announced).length / folded.length))(list.filter((s) => s.folded && s.announced !== undefined)),
        errors: list.filter((s) => s.error).length,
        missedByKind: sumKinds(list),
        missedCostMedian: percentile(list.map((s) => s.missedCost).filter((x): x is number => x !== undefined), 0.5),
        missedCostShareMedian: percentile(list.map((s) => s.missedCostShare).filter((x): x is number => x !== undefined), 0.5),
      });
    }
  }
  return rows;
}
