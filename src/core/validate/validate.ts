import type { MessageLens } from '../lens.js';
import { scanStructure } from '../structure.js';
import type { Rule, Violation } from './rules.js';
import type { IdPolicy } from '../remap-ids.js';

/** A provider profile: the lens that reads its messages and the list of rules its API enforces. */
export interface Profile<M> {
  readonly name: string;
  readonly lens: MessageLens<M>;
  readonly rules: readonly Rule<M>[];
  /** What the provider asks of call ids (unique across the request, a pattern); repair applies it. */
  readonly ids?: IdPolicy;
  /** True when the provider wants user and assistant turns to alternate: views get a note at seams that would join two of one role. */
  readonly alternates?: boolean;
}

/**
 * Checks a message sequence against every rule of a profile. Returns all violations ordered by
 * message index; an empty list means the provider accepts the sequence's tool-call structure.
 * The history is scanned once for calls and results; every rule reads that scan.
 */
export function checkProfile<M>(messages: readonly M[], profile: Profile<M>): Violation[] {
  const structure = scanStructure(messages, profile.lens);
  const input = { messages, lens: profile.lens, structure };
  const out: Violation[] = [];
  for (const rule of profile.rules) out.push(...rule.check(input));
  return out.sort((a, b) => a.index - b.index);
}
