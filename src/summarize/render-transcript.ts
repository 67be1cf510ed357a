import type { TranscriptEntry } from '../formats/lens.js';
import { callText } from './call-text.js';
import { truncateMiddle } from './truncate-middle.js';

/**
 * Longest parts of one entry as a summarizer prompt shows them; longer ones are cut in the
 * middle. Tool results are the bulky part of agent logs, so they get the tightest limit.
 */
export const RENDER_LIMITS = { text: 12_000, arguments: 4_000, result: 6_000 } as const;

/** The tags that fence data in a summarizer prompt; text inside an entry can never close them. */
export const PROMPT_TAGS = ['previous_summary', 'transcript'] as const;

const ROLE_LABEL: Record<TranscriptEntry['role'], string> = {
  system: 'SYSTEM',
  user: 'USER',
  assistant: 'ASSISTANT',
  tool: 'TOOL',
  other: 'OTHER',
};

const TAG_PATTERN = new RegExp(`<(/?)(${PROMPT_TAGS.join('|')})\\b`, 'gi');

/** Defuses the prompt's own fence tags inside data (`</transcript>` becomes `‹/transcript`). */
export function defuseTags(text: string): string {
  return text.replace(TAG_PATTERN, '‹$1$2');
}

/**
 * Renders one transcript entry as plain text for a summarizer: the role and text, then each tool
 * call with its name, arguments and id, then each result with its name, id and content. A result
 * without an id (Gemini pairs by position) names its call's arguments, shortened (`callText`):
 * nothing else would tell the model which of two calls of one tool it answers. The same rendering
 * is what the rolling driver counts, so batch sizes match what a prompt really holds.
 */
export function renderEntry(entry: TranscriptEntry): string {
  const lines = [entry.text ? `${ROLE_LABEL[entry.role]}: ${clip(entry.text, RENDER_LIMITS.text)}` : `${ROLE_LABEL[entry.role]}:`];
  for (const call of entry.calls) {
    lines.push(`  -> call ${call.name}(${clip(call.arguments, RENDER_LIMITS.arguments)})${call.id ? ` [id ${call.id}]` : ''}`);
  }
  for (const result of entry.results) {
    const of = result.name && !result.id && result.callArguments !== undefined ? defuseTags(callText({ name: result.name, arguments: result.callArguments })) : result.name;
    const label = `${of ? ` of ${of}` : ''}${result.id ? ` [id ${result.id}]` : ''}`;
    lines.push(`  <- result${label}: ${clip(result.content, RENDER_LIMITS.result)}`);
  }
  return lines.join('\n');
}

/** Renders entries oldest first, separated by blank lines. */
export function renderTranscript(entries: readonly TranscriptEntry[]): string {
  return entries.map(renderEntry).join('\n\n');
}

function clip(text: string, maxChars: number): string {
  return defuseTags(truncateMiddle(text, maxChars));
}
