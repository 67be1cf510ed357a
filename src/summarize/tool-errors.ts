import { parseJsonData } from './facts.js';
import { truncateMiddle } from './truncate-middle.js';

/** Longest error message kept. */
export const ERROR_MAX_CHARS = 200;

/** Text that opens like an error report. */
const OPENS_AS_ERROR = /^\W*(?:error|exception|failed|failure|fatal|traceback|invalid|denied|forbidden|unauthori[sz]ed|not found|timeout|timed out)\b/i;
/** Words that make a short result an error report. */
const ERROR_WORDS = /\b(?:error|exception|not found|failed|failure|invalid|denied|unauthori[sz]ed|forbidden|refused|timed out|cannot|can't|unable to|not allowed|not permitted|not enough|insufficient|does not exist|doesn't exist|no such)\b/i;
/** Results longer than this are data unless they open like an error. */
const SHORT_RESULT_CHARS = 300;

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim() !== '') ?? text;
  return truncateMiddle(line.replace(/\s+/g, ' ').trim(), ERROR_MAX_CHARS);
}

/**
 * The error a tool result reports, as one short line, or undefined when it reports none. JSON
 * results count as errors only when they say so (`error`/`errors` field, `ok: false`, status
 * `error`/`failed`), so data that merely contains the word is not mistaken for a failure; plain
 * text counts when it opens like an error, or is one short line that uses error words ("Record
 * not found"): a multi-line text that mentions an error is usually data (a log file read).
 */
export function errorOf(content: string): string | undefined {
  const text = content.trim();
  if (!text) return undefined;
  const data = parseJsonData(text);
  if (data !== undefined) {
    if (Array.isArray(data) || data === null || typeof data !== 'object') return undefined;
    const record = data as Record<string, unknown>;
    const error = record.error ?? record.errors;
    if (error !== undefined && error !== null && error !== false && error !== '') {
      const message = typeof error === 'string' ? error : (error as { message?: unknown }).message;
      return firstLine(typeof message === 'string' ? message : JSON.stringify(error));
    }
    const status = typeof record.status === 'string' ? record.status : '';
    if (record.ok === false || record.success === false || /^(?:error|failed|failure)$/i.test(status)) return firstLine(text);
    return undefined;
  }
  if (OPENS_AS_ERROR.test(text)) return firstLine(text);
  if (text.length <= SHORT_RESULT_CHARS && !text.includes('\n') && ERROR_WORDS.test(text)) return firstLine(text);
  return undefined;
}
