import { CtxfoldError } from '../../errors.js';
import type { CompressResult } from '../../runtime/compress.js';
import { isFields, type Fields } from '../../recall/dialect.js';
import { AI_SDK_RECALL } from '../../recall/ai-sdk-dialect.js';
import { assembleParts, recallPartStripper, streamSignal } from '../../recall/ai-sdk-stream.js';
import { answerRecallRounds, type RecallRounds, type RecallView } from '../../runtime/recall-rounds.js';

type Report = CompressResult<unknown>['report'];

/**
 * One streamed round as far as it was read: the parts held so far, the reader of the rest (when
 * the round was left streaming at its first telling part), and the result the held parts add up
 * to (what the recall rounds read).
 */
interface StreamRound<P> {
  readonly held: P[];
  readonly rest?: ReadableStreamDefaultReader<P>;
  readonly result: Fields;
}

/**
 * Reads a round's parts until the first telling one (`streamSignal`): text or an application's
 * call leaves the rest unread; a recall call first reads the round to its end, whole.
 */
async function readRound<P>(stream: ReadableStream<P>, reading: { current?: ReadableStreamDefaultReader<P> }): Promise<StreamRound<P>> {
  const reader = stream.getReader();
  reading.current = reader;
  const held: P[] = [];
  let whole = false;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    held.push(value);
    const signal = streamSignal(value);
    if (signal === 'recall') whole = true;
    else if (signal !== undefined && !whole) return { held, rest: reader, result: assembleParts(held) };
  }
  return { held, result: assembleParts(held) };
}

/** What streaming with recall needs: the rounds' facts (as for `doGenerate`), a way to stream the model again, and where the last view's report goes. */
export interface StreamRecall<P> extends Omit<RecallRounds<StreamRound<P>>, 'dialect' | 'read' | 'ask'> {
  readonly report: Report;
  /** Streams the same call again with this view (the model's `doStream`). */
  readonly stream: (view: RecallView) => Promise<ReadableStream<P>>;
  /**
   * Called with the report of the view whose answer the application gets, before any of it
   * streams, and the usage of the rounds answered before it, added up (undefined when none was:
   * each round is billed, so the application's finish part should show them too).
   */
  readonly onReport: (report: Report, earlierUsage: Fields | undefined) => void;
}

/**
 * The stream the application gets when the model may call `ctxfold_recall`: the first round's
 * parts are held until its first telling part. A round that opens with recall calls only is
 * answered and the model streamed again (the same rules and rounds as `doGenerate`,
 * `answerRecallRounds`); the application gets one stream, the last round's, from its start, and
 * never a recall call's parts (a recall call after text, mixed with the application's calls or
 * past the rounds is removed, and a `tool-calls` finish left with none becomes `stop`). A failed
 * round errors the stream; cancelling it cancels the round being read.
 */
export function recallAnsweringStream<P>(first: ReadableStream<P>, recall: StreamRecall<P>): ReadableStream<P> {
  const reading: { current?: ReadableStreamDefaultReader<P> } = {};
  let cancelled = false;
  const strip = recallPartStripper();
  let queue: P[] | undefined;
  let rest: ReadableStreamDefaultReader<P> | undefined;
  /** Enqueues what the filter keeps of `part`; true when something was enqueued. */
  const emit = (controller: ReadableStreamDefaultController<P>, part: P): boolean => {
    const kept = strip(part);
    if (kept === undefined) return false;
    controller.enqueue(kept as P);
    return true;
  };
  return new ReadableStream<P>({
    // Every pull enqueues at least one part or closes the stream: a pull that enqueued nothing
    // (every part it read was a recall call's) would not be called again.
    async pull(controller) {
      let sent = false;
      if (queue === undefined) {
        const out = await answerRecallRounds(await readRound(first, reading), recall.report, {
          compressor: recall.compressor,
          dialect: AI_SDK_RECALL,
          chatId: recall.chatId,
          history: recall.history,
          extras: recall.extras,
          read: (round) => round.result,
          ask: async (view) => {
            // Cancelled while a round was being read or answered: the model is not asked again.
            if (cancelled) throw new CtxfoldError('the stream was cancelled', { code: 'CTXFOLD_ABORTED' });
            return readRound(await recall.stream(view), reading);
          },
          usage: (round) => (isFields(round.result.usage) ? round.result.usage : undefined),
        });
        recall.onReport(out.report, out.earlierUsage);
        queue = out.reply.held;
        rest = out.reply.rest;
        for (const part of queue) sent = emit(controller, part) || sent;
      }
      while (!sent) {
        const next = rest === undefined ? { done: true as const, value: undefined } : await rest.read();
        if (next.done) {
          controller.close();
          return;
        }
        sent = emit(controller, next.value);
      }
      if (rest === undefined) controller.close();
    },
    async cancel(reason) {
      cancelled = true;
      await reading.current?.cancel(reason);
    },
  });
}
