import type { TranscriptEntry } from '../formats/lens.js';
import { callText } from '../summarize/call-text.js';
import type { OriginalRecord } from '../store/originals.js';

/** A message a committed summary newly covers, as the job read it (for keeping its original). */
export interface CoveredMessage {
  /** Its id, as listed in the committed state's `coveredIds`. */
  readonly id: string;
  /** Its position in the history the job summarized. */
  readonly index: number;
  /** What the format's lens reads of it (call names filled in on results). */
  readonly entry: TranscriptEntry;
  readonly message: unknown;
}

/**
 * A message as recall shows it: the role and text, then each call with its name, arguments and
 * id, then each result with the call it answers (its name and, shortened, its arguments: a search
 * for what the call was about finds its result too), its id and content. Neither text nor result
 * is cut: bounding is the resolver's.
 */
export function recordText(entry: TranscriptEntry): string {
  const lines = [entry.text];
  for (const call of entry.calls) lines.push(`-> call ${call.name}(${call.arguments})${call.id ? ` [id ${call.id}]` : ''}`);
  for (const result of entry.results) {
    const of = result.name && result.callArguments !== undefined ? callText({ name: result.name, arguments: result.callArguments }) : result.name;
    lines.push(`<- result${of ? ` of ${of}` : ''}${result.id ? ` [id ${result.id}]` : ''}: ${result.content}`);
  }
  return lines.filter((l) => l !== '').join('\n');
}

/** The records to keep for messages a summary now covers: one per message, same order, same ids. */
export function originalRecords(covered: readonly CoveredMessage[]): OriginalRecord[] {
  return covered.map((c) => ({
    id: c.id,
    index: c.index,
    role: c.entry.role,
    text: recordText(c.entry),
    raw: JSON.stringify(c.message) ?? 'null',
  }));
}
