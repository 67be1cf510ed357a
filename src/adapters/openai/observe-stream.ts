import type { Stream } from 'openai/core/streaming';

/** How a stream's items are watched: each item as it passes, and the end. */
export interface StreamWatch<T> {
  /** Sees every item before the consumer does. */
  readonly onItem: (item: T) => void;
  /** Called once, when the stream has ended by itself (not broken off, aborted or failed). */
  readonly onEnd: () => void;
}

/** The constructor of the SDK's `Stream` (public: `new Stream(iterator, controller, client)`). */
type StreamClass<T> = new (iterator: () => AsyncIterator<T>, controller: AbortController, client?: unknown) => Stream<T>;

/**
 * The same stream for the consumer, as an instance of the SDK's own `Stream` class (iteration,
 * `tee()`, `toReadableStream()` and `controller` work as before, on the same controller and
 * response), that shows each item to `watch.onItem` and calls `watch.onEnd` once the stream has
 * ended. Items are passed on unchanged. A consumer that breaks off (the SDK then aborts the
 * request), an abort, or an error ends it without `onEnd`.
 */
export function watchedStream<T>(stream: Stream<T>, client: unknown, watch: StreamWatch<T>): Stream<T> {
  let ended = false;
  const iterate = (): AsyncIterator<T> => {
    const inner = stream[Symbol.asyncIterator]();
    return {
      async next() {
        const step = await inner.next();
        if (!step.done) watch.onItem(step.value);
        else if (!ended && !stream.controller.signal.aborted) {
          ended = true;
          watch.onEnd();
        }
        return step;
      },
      return: (value?: unknown) => inner.return?.(value) ?? Promise.resolve({ done: true, value: undefined }),
      throw: (error?: unknown) => inner.throw?.(error) ?? Promise.reject(error),
    };
  };
  const SdkStream = stream.constructor as StreamClass<T>;
  return new SdkStream(iterate, stream.controller, client);
}
