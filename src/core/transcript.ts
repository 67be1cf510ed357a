import type { MessageLens, TranscriptEntry } from '../formats/lens.js';
import { callOf, scanStructure, type CallStructure } from './structure.js';

/**
 * Gives each result of `entries` (the readings of messages[start, ...)) the name of the call it
 * answers, as the structure scan paired them (the one pairing rule), so a summarizer never pairs
 * calls and results on its own. Entries are replaced, never changed in place.
 */
export function withCallNames(entries: TranscriptEntry[], structure: CallStructure, start: number): TranscriptEntry[] {
  for (const placed of structure.results) {
    if (placed.result.name) continue;
    const name = callOf(structure, placed)?.name;
    if (!name) continue;
    const k = placed.index - start;
    const entry = entries[k];
    if (!entry) continue;
    entries[k] = { ...entry, results: entry.results.map((r, slot) => (slot === placed.slot ? { ...r, name } : r)) };
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
