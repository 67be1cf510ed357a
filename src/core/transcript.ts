import type { MessageLens, TranscriptEntry } from './lens.js';
import { callOf, scanStructure, type CallStructure } from './structure.js';

/**
 * Gives each result of `entries` (the readings of messages[start, ...)) the name and the arguments
 * of the call it answers, as the structure scan paired them (the one pairing rule), so a summarizer
 * never pairs calls and results on its own. A name the result carries is kept. Entries are
 * replaced, never changed in place.
 */
export function withCallNames(entries: TranscriptEntry[], structure: CallStructure, start: number): TranscriptEntry[] {
  for (const placed of structure.results) {
    const call = callOf(structure, placed);
    if (!call) continue;
    const name = placed.result.name || call.name;
    const callArguments = call.arguments.trim() ? call.arguments : undefined;
    if (name === placed.result.name && callArguments === undefined) continue;
    const k = placed.index - start;
    const entry = entries[k];
    if (!entry) continue;
    entries[k] = {
      ...entry,
      results: entry.results.map((r, slot) => (slot === placed.slot ? { ...r, ...(name ? { name } : {}), ...(callArguments === undefined ? {} : { callArguments }) } : r)),
    };
  }
  return entries;
}

/**
 * The format-neutral reading of messages[start, end) that summarizers are given, results named
 * after the calls they answer. `start` must be a group start.
 */
export function transcriptOf<M>(messages: readonly M[], lens: MessageLens<M>, start = 0, end = messages.length): TranscriptEntry[] {
  const entries: TranscriptEntry[] = [];
  for (let i = start; i < end; i++) entries.push(lens.read(messages[i]));
  return withCallNames(entries, scanStructure(messages, lens, start, end), start);
}
