import type { TranscriptEntry } from '../formats/lens.js';
import type { CoveredMessage } from '../runtime/summary-job.js';
import type { OriginalRecord } from './originals.js';

/**
 * A message as recall shows it: the role and text, then each call with its name, arguments and
 * id, then each result with its name, id and content. Nothing is cut: bounding is the resolver's.
 */
export function recordText(entry: TranscriptEntry): string {
  const lines = [entry.text];
  for (const call of entry.calls) lines.push(`-> call ${call.name}(${call.arguments})${call.id ? ` [id ${call.id}]` : ''}`);
  for (const result of entry.results) {
    lines.push(`<- result${result.name ? ` of ${result.name}` : ''}${result.id ? ` [id ${result.id}]` : ''}: ${result.content}`);
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
