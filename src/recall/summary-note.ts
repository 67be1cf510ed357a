import { recallNoteText } from '../core/summary-frame.js';
import type { SummaryShortener } from '../core/summary-fit.js';
import type { TextCounter } from '../tokens/counter.js';
import { RECALL_TOOL_NAME } from './tool-definition.js';

/** The suffix added to a summary of `coveredMessages` messages when recall is on (a newline, then the note). */
export function recallNoteSuffix(coveredMessages: number): string {
  return `\n${recallNoteText(RECALL_TOOL_NAME, coveredMessages)}`;
}

/**
 * A shortener that keeps the recall note: a text ending with a note is shortened without it (to
 * the room less the note's tokens) and the note is put back; any other text goes to `base` as is.
 * Where nothing of the summary fits beside it, the note stands alone, so the model still learns
 * what it can recall. Invariant: the note is whole at the end, or absent only when it alone does
 * not fit.
 */
export function keepingRecallNote(base: SummaryShortener, count: TextCounter): SummaryShortener {
  return (text, maxTokens) => {
    const m = /\n\[Recall: [^\n]*\]$/.exec(text);
    if (!m) return base(text, maxTokens);
    const body = text.slice(0, m.index);
    const shortened = base(body, maxTokens - count(m[0]) - 1);
    if (shortened.trim() !== '') return shortened + m[0];
    const note = m[0].slice(1);
    return count(note) <= maxTokens ? note : '';
  };
}
