/**
 * The texts the planner writes itself: the frame around a summary and the placeholder of a
 * cleared tool result. Each says what was left out, so the model knows it is not seeing everything.
 */

/** The text of the message that stands for summarized history: a short frame, then the summary. */
export function summaryMessageText(summary: string, coveredMessages: number): string {
  return `[Summary of ${coveredMessages} earlier messages of this conversation, which are not repeated here]\n${summary}`;
}

/** Placeholder text for a collapsed tool result; says what was there so the model can ask again. */
export function collapsedPlaceholder(chars: number): string {
  return `[tool result cleared to save context: ${chars} characters omitted]`;
}

/**
 * Placeholder text for a cleared tool result whose original the store keeps: says what was there
 * and how to read it again (`toolName` with the message's id). A pure function of its arguments, so
 * one result is cleared to the same bytes on every request.
 */
export function recallablePlaceholder(chars: number, toolName: string, messageId: string): string {
  return `[tool result cleared to save context: ${chars} characters omitted; ${toolName} with ids [${JSON.stringify(messageId)}] reads it again]`;
}

/** The note put before a model turn a cut left first, where the format wants a user turn there. */
export function omittedNoteText(droppedMessages: number): string {
  return `[${droppedMessages} earlier messages of this conversation were left out to fit the context window]`;
}

/**
 * The line added under a summary when recall is on: which of the summarized messages the model
 * can read again, by number (`#1`..`#n`, oldest first), and with which tool. A pure function of
 * its arguments, so the summary's text stays byte-identical between requests for one summary.
 */
export function recallNoteText(toolName: string, coveredMessages: number): string {
  return `[Recall: the original text of the ${coveredMessages} summarized messages (#1-#${coveredMessages}, oldest first) can be read again with the ${toolName} tool, by ids (e.g. ["#${coveredMessages}"]) or by a query]`;
}

/** The text of a note put between two turns of one role that a cut brought together. */
export const BRIDGE_TEXT = '[earlier turns of this conversation are left out here]';
