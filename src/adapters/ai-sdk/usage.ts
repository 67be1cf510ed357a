import { isFields, type Fields } from '../../recall/dialect.js';
import { addUsage } from '../../recall/usage-sum.js';

/**
 * Reading what a model response says it cost, in the shapes the AI SDK model specs use. Pure.
 */

/**
 * The input tokens a response's `usage` reports: `inputTokens.total` (LanguageModelV3 / V4
 * usage), or `inputTokens` as a number (V2); undefined when the provider reported none.
 */
export function inputTokensOf(usage: unknown): number | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const input = (usage as { inputTokens?: unknown }).inputTokens;
  const total = typeof input === 'object' && input !== null ? (input as { total?: unknown }).total : input;
  return typeof total === 'number' && Number.isFinite(total) && total > 0 ? total : undefined;
}

/**
 * A pass-through stream that calls `onEnd` exactly once: at the `finish` part (with the input
 * tokens its usage reports), or, for a stream that closes without one, at its end (with none).
 * A stream that errors or is cancelled calls nothing. Every part goes through unchanged and in order.
 */
export function watchFinish<P>(onEnd: (inputTokens: number | undefined) => void): TransformStream<P, P> {
  let ended = false;
  return new TransformStream<P, P>({
    transform(part, controller) {
      controller.enqueue(part);
      if (!ended && typeof part === 'object' && part !== null && (part as { type?: unknown }).type === 'finish') {
        ended = true;
        onEnd(inputTokensOf((part as { usage?: unknown }).usage));
      }
    },
    flush() {
      if (!ended) {
        ended = true;
        onEnd(undefined);
      }
    },
  });
}

/**
 * A pass-through stream that adds `earlier()` (the usage of the calls made before this stream's,
 * for the same request) to the `finish` part's usage, field by field (`addUsage`). Every other
 * part, and a finish part when `earlier()` is undefined, goes through unchanged and in order.
 */
export function raiseFinishUsage<P>(earlier: () => Fields | undefined): TransformStream<P, P> {
  return new TransformStream<P, P>({
    transform(part, controller) {
      const before = earlier();
      if (before === undefined || !isFields(part) || part.type !== 'finish' || !isFields(part.usage)) controller.enqueue(part);
      else controller.enqueue({ ...part, usage: addUsage(before, part.usage) } as P);
    },
  });
}
