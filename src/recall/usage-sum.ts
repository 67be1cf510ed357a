import { isFields, type Fields, type RecallDialect } from './dialect.js';

/**
 * The usage a client is shown after a recall loop: every upstream call made for its request
 * (by the proxy or by ctxfold/openai), added up. Numbers are summed field by field (nested details too); any other value is
 * the later answer's.
 */

/**
 * `later` with `earlier` added: each number of `later` plus the same field's number in `earlier`,
 * nested objects alike. With `union`, fields only `earlier` has (or that `later` leaves null) are
 * taken from it too; without, only `later`'s fields are raised (an Anthropic `message_delta`,
 * whose absent fields mean "unchanged"). Invariant: neither input is changed.
 */
export function addUsage(earlier: Fields, later: Fields, union = true): Fields {
  const out: Record<string, unknown> = { ...later };
  for (const key of Object.keys(later)) {
    const a = earlier[key];
    const b = later[key];
    if (typeof a === 'number' && typeof b === 'number') out[key] = a + b;
    else if (isFields(a) && isFields(b)) out[key] = addUsage(a, b, union);
    else if (union && (b === null || b === undefined) && a !== undefined) out[key] = a;
  }
  if (union) for (const key of Object.keys(earlier)) if (!(key in later)) out[key] = earlier[key];
  return out;
}

/** The `usage` object of a whole answer (Chat, Responses and Messages all carry it at the top), or undefined. */
export function usageOf(reply: Fields | undefined): Fields | undefined {
  return reply !== undefined && isFields(reply.usage) ? reply.usage : undefined;
}

/** The running total: `total` plus `usage` (either may be missing). */
export function totalUsage(total: Fields | undefined, usage: Fields | undefined): Fields | undefined {
  if (usage === undefined) return total;
  return total === undefined ? usage : addUsage(total, usage);
}

/** A whole answer whose `usage` includes the earlier calls' `earlier`. Invariant: the same object when there is nothing to add. */
export function withEarlierUsage(reply: Fields, earlier: Fields | undefined): Fields {
  const own = usageOf(reply);
  return earlier === undefined || own === undefined ? reply : { ...reply, usage: addUsage(earlier, own) };
}

/**
 * A streamed event whose usage includes the earlier calls' `earlier`: Chat's `usage` chunk,
 * Responses' `response.usage` (in `response.completed` and the other response events), and
 * Anthropic's `message_start` usage (whole) and `message_delta` usage (its own fields only: the
 * client keeps `message_start`'s for the others). Invariant: the same object when the event
 * carries no usage or there is nothing to add.
 */
export function withEarlierStreamUsage(format: RecallDialect['format'], event: Fields, earlier: Fields | undefined): Fields {
  if (earlier === undefined) return event;
  if (format === 'openai') return withEarlierUsage(event, earlier);
  if (format === 'openai-responses') return isFields(event.response) && usageOf(event.response) ? { ...event, response: withEarlierUsage(event.response, earlier) } : event;
  if (event.type === 'message_start' && isFields(event.message) && usageOf(event.message)) return { ...event, message: withEarlierUsage(event.message, earlier) };
  if (event.type === 'message_delta' && usageOf(event)) return { ...event, usage: addUsage(earlier, usageOf(event)!, false) };
  return event;
}

/**
 * The usage a streamed event reports for its own call, or undefined: Chat's `usage` chunk,
 * Responses' `response.usage` in its closing events (`response.completed`, `.incomplete`,
 * `.failed`), Anthropic's `message_start` usage and `message_delta` usage (fields as given: read
 * them in order with `laterStreamUsage`). Invariant: never counts an event's usage twice across a
 * stream, as only one event per stream carries it (Anthropic: the start and the delta, merged).
 */
export function streamEventUsage(format: RecallDialect['format'], event: Fields): Fields | undefined {
  if (format === 'openai') return usageOf(event);
  if (format === 'openai-responses') {
    const closing = event.type === 'response.completed' || event.type === 'response.incomplete' || event.type === 'response.failed';
    return closing && isFields(event.response) ? usageOf(event.response) : undefined;
  }
  if (event.type === 'message_start' && isFields(event.message)) return usageOf(event.message);
  if (event.type === 'message_delta') return usageOf(event);
  return undefined;
}

/** A stream's usage so far with an event's usage read in: its fields replace those read before (Anthropic's delta carries running totals). */
export function laterStreamUsage(sofar: Fields | undefined, usage: Fields | undefined): Fields | undefined {
  if (usage === undefined) return sofar;
  return sofar === undefined ? usage : { ...sofar, ...usage };
}
