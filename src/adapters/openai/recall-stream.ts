import type { Stream } from 'openai/core/streaming';
import type { RecallDialect, RecallView } from '../../recall/dialect.js';
import { answerRecallRounds, type RecallRounds } from '../../runtime/recall-rounds.js';
import { laterStreamUsage, streamEventUsage, withEarlierStreamUsage } from '../../recall/usage-sum.js';
import type { CompressResult } from '../../runtime/compress.js';
import { isFields, type Fields } from '../../runtime/endpoints.js';

type Report = CompressResult<unknown>['report'];

/** One streamed round as read: what it still holds, and the response it assembled (when a round may follow it). */
interface StreamRound {
  /** Events not given to the consumer yet. `raw`: none of this round was given (they are stripped when given); otherwise already stripped. */
  readonly pending: Fields[];
  readonly raw: boolean;
  /** The assembled response, for `dialect.read`; undefined when no round may follow (text was given on an endpoint whose stream cannot continue). */
  readonly response?: Fields;
  /** The usage this round's own call reported, when it did. */
  readonly usage?: Fields;
}

/** What a recall stream needs besides the first stream: how rounds are answered (`ask` resolves to the next round's stream) and where the consumer's items go. */
export interface RecallStreamRounds extends Omit<RecallRounds<StreamRound>, 'ask' | 'read'> {
  readonly dialect: RecallDialect;
  readonly report: Report;
  /** Sends the request again with a view, streamed: resolves to the SDK's stream of it. */
  readonly ask: (view: RecallView) => Promise<Stream<Fields>>;
  /**
   * Called once the last round's report is known (before the consumer sees the end), with the
   * usage that round's own call reported (what its view was billed; the consumer is shown every
   * round's usage added up).
   */
  readonly onReport: (report: Report, usage: Fields | undefined) => void;
}

/** A queue the rounds push events into and the consumer pulls from, in order; `fail` makes the next pull throw. */
function channel<T>() {
  let items: T[] = [];
  let read = 0;
  let done = false;
  let error: { readonly error: unknown } | undefined;
  let wake: (() => void) | undefined;
  const poke = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  return {
    push(item: T) {
      items.push(item);
      poke();
    },
    end() {
      done = true;
      poke();
    },
    fail(e: unknown) {
      error ??= { error: e };
      poke();
    },
    async next(): Promise<IteratorResult<T>> {
      for (;;) {
        if (read < items.length) {
          const value = items[read++];
          // Drop what was read once the queue is drained, so a long stream does not keep it all.
          if (read === items.length) {
            items = [];
            read = 0;
          }
          return { done: false, value };
        }
        if (error) throw error.error;
        if (done) return { done: true, value: undefined };
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
  };
}

/** The constructor of the SDK's `Stream` (public: `new Stream(iterator, controller, client)`). */
type StreamClass<T> = new (iterator: () => AsyncIterator<T>, controller: AbortController, client?: unknown) => Stream<T>;

/**
 * A stream that answers `ctxfold_recall` calls: the consumer gets one stream (an instance of the
 * SDK's own `Stream`, on the first stream's controller), the upstream's events without recall
 * calls. Events are held only until the first one that tells what the answer is
 * (`RecallStream.signal`): text or an application's call gives them and the rest as they come; a
 * recall call holds the answer to its end, and when it holds only recall calls they are answered
 * and the model asked again, streamed (`answerRecallRounds`: same rules and rounds as the
 * non-streamed path). On Chat Completions a round may follow text already given (its deltas
 * continue the message; each round's finish and usage are held until it is the last). The usage
 * the consumer is shown is every round's added up (each call is billed). A round that
 * fails makes the consumer's iteration throw; aborting the returned stream (or breaking off)
 * aborts the round in flight.
 */
export function recallStream(first: Stream<Fields>, client: unknown, rounds: RecallStreamRounds): Stream<Fields> {
  const { dialect } = rounds;
  const stream = dialect.stream;
  const out = channel<Fields>();
  let current: Stream<Fields> = first;
  let stopped = false;
  const stop = () => {
    stopped = true;
    if (current !== first) current.controller.abort();
  };
  first.controller.signal.addEventListener('abort', stop, { once: true });
  /** The usage of the rounds before the one being read, added up: what the consumer's usage is raised by. */
  let earlier: Fields | undefined;
  /** Later rounds read as the same answer (Chat: the first chunk's id). */
  const same = stream.continuation?.();
  const shown = (payload: Fields) => withEarlierStreamUsage(dialect.format, same ? same(payload) : payload, earlier);

  /** Reads one round's stream: gives its events as soon as they tell the answer is not a recall call, holds them otherwise. */
  const read = async (upstream: Stream<Fields>): Promise<StreamRound> => {
    current = upstream;
    if (stopped) upstream.controller.abort();
    const assembler = stream.assemble();
    const strip = stream.strip();
    let mode: 'undecided' | 'hold' | 'relay' = 'undecided';
    let ended = false;
    const held: Fields[] = [];
    const tail: Fields[] = [];
    let usage: Fields | undefined;
    const pass = (event: Fields) => {
      const payload = strip(event);
      if (payload === undefined) return;
      if (stream.continues && (ended ||= stream.terminal(event))) tail.push(payload);
      else out.push(shown(payload));
    };
    for await (const event of upstream) {
      if (!isFields(event)) continue;
      assembler.push(event);
      usage = laterStreamUsage(usage, streamEventUsage(dialect.format, event));
      if (mode === 'undecided') {
        const seen = stream.signal(event);
        if (seen === 'recall') mode = 'hold';
        else if (seen !== undefined) {
          mode = 'relay';
          for (const before of held.splice(0)) pass(before);
        }
      }
      if (mode === 'relay') pass(event);
      else held.push(event);
    }
    const relayed = mode === 'relay';
    return { pending: relayed ? tail : held, raw: !relayed, response: !relayed || stream.continues ? assembler.response() : undefined, usage };
  };

  const run = async () => {
    const outcome = await answerRecallRounds<StreamRound>(await read(first), rounds.report, {
      compressor: rounds.compressor,
      dialect,
      chatId: rounds.chatId,
      history: rounds.history,
      extras: rounds.extras,
      read: (round) => round.response,
      usage: (round) => round.usage,
      ask: async (view, earlierUsage) => {
        // A new round: what it shows is raised by the usage of the rounds before it.
        earlier = earlierUsage;
        return read(await rounds.ask(view));
      },
    });
    const last = outcome.reply;
    // What the last round shown is raised by (a refused final call falls back to the round before it).
    earlier = outcome.earlierUsage;
    rounds.onReport(outcome.report, last.usage);
    // What the last round still holds: stripped now, knowing its whole answer (or as it was stripped when held after text).
    const strip = last.raw ? stream.strip(last.response) : undefined;
    for (const event of last.pending) {
      const payload = strip ? strip(event) : event;
      if (payload !== undefined) out.push(shown(payload));
    }
    out.end();
  };
  run().catch((error: unknown) => out.fail(error));

  const iterate = (): AsyncIterator<Fields> => ({
    next: () => out.next(),
    return: async () => {
      stop();
      first.controller.abort();
      return { done: true, value: undefined };
    },
  });
  const SdkStream = first.constructor as StreamClass<Fields>;
  return new SdkStream(iterate, first.controller, client);
}
