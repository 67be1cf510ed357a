import { truncateMiddle } from './truncate-middle.js';

/**
 * Sentence picking for the extractive summary: what a user asked (first sentences, greetings
 * skipped) and what an assistant concluded (last sentences, pleasantries skipped).
 */

const GREETING = /^(?:hi|hello|hey|dear|good (?:morning|afternoon|evening)|thanks|thank you|thx|many thanks|greetings)\b/i;
/** A sentence that is only politeness ("If you need anything else, feel free to ask!"). */
const PLEASANTRY = /^(?:please )?(?:let me know if|feel free|if you (?:need|have|require) (?:any|anything)|is there anything else|anything else|have a (?:great|nice|good|wonderful)|you(?:'re| are) welcome|my pleasure|(?:i'm |i am )?(?:glad|happy) (?:i could|to) help|hope this helps)/i;
const LIST_LINE = /^\s*(?:[-*•]|\d+[.)])\s+/;
/** Words of a sentence that reports what happened, not what may happen. */
const OUTCOME = /\b(?:successfully|has been|have been|was|were|is now|confirmed|updated|completed|created|deleted|removed|added|applied|saved|sent|issued|processed|scheduled|resolved|fixed|failed|found|changed|transferred)\b/i;

/** Longest sentence kept; longer ones are cut in the middle. */
export const SENTENCE_MAX_CHARS = 220;

/**
 * Splits text into sentences: at `.`, `!`, `?` (and `。！？`) followed by a new sentence, and at
 * line breaks (list items are sentences). Markdown emphasis, headings and list markers go.
 */
export function splitSentences(text: string): string[] {
  const plain = text
    .replace(/\*\*|__|`+/g, '')
    .replace(/^\s*(?:#+|[-*•]|\d+[.)])\s+/gm, '');
  return plain
    .split(/\n+|(?<=[.!?])\s+(?=["'“(\[]?[\p{Lu}\p{N}])|(?<=[。！？])/u)
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .filter((s) => /[\p{L}\p{N}]/u.test(s));
}

function isGreeting(sentence: string): boolean {
  // "Sure, it's user_name_1234." or "Thanks, change it" carry content; only bare greetings go.
  return GREETING.test(sentence) && sentence.split(/\s+/).length <= 6 && !/\d/.test(sentence) && !/\b(?:but|please|can|could|need|want|change|update|fix|add|remove|stop)\b/i.test(sentence);
}

/** The first one or two sentences of a user's message that are not bare greetings, joined. */
export function requestOf(text: string, maxChars = 2 * SENTENCE_MAX_CHARS): string {
  const kept = splitSentences(text).filter((s) => !isGreeting(s)).slice(0, 2);
  return truncateMiddle(kept.map((s) => truncateMiddle(s, SENTENCE_MAX_CHARS)).join(' '), maxChars);
}

/**
 * What an assistant concluded: its last two prose sentences that are not pleasantries, preceded by
 * its first earlier sentence that reports an outcome ("Your order has been updated"),
 * which an answer often opens with.
 */
export function conclusionOf(text: string): string {
  // Prose states conclusions; list lines are details (they still give their identifiers as facts).
  const prose = text.split('\n').filter((line) => !LIST_LINE.test(line)).join('\n');
  const candidates = [...new Set(splitSentences(prose.trim() ? prose : text))].filter((s) => !PLEASANTRY.test(s));
  const last = candidates.slice(-2);
  const earlier = candidates.slice(0, -2).find((s) => OUTCOME.test(s));
  return (earlier ? [earlier, ...last] : last).map((s) => truncateMiddle(s, SENTENCE_MAX_CHARS)).join(' ');
}

/**
 * The last two sentences that report an outcome: for the narration beside a tool call, where
 * "I'll look that up" says nothing a later turn needs and "The file was saved" does.
 */
export function outcomesOf(text: string): string {
  const outcomes = [...new Set(splitSentences(text))].filter((s) => !PLEASANTRY.test(s) && OUTCOME.test(s));
  return outcomes.slice(-2).map((s) => truncateMiddle(s, SENTENCE_MAX_CHARS)).join(' ');
}
