import { isFields } from '../runtime/endpoints.js';
import { streamSignalOf, type FoldRoute } from './routes.js';
import { SseReader } from './sse-reader.js';

/** A JSON response body larger than this is relayed but not parsed for its usage. */
const MAX_PARSED_BODY_BYTES = 16 * 1024 * 1024;

/** What a relayed response said about the model's answer, once it has ended. */
export interface AnswerFacts {
  /** Input tokens the provider billed, when the response reported them. */
  readonly billedInputTokens?: number;
  /** True when the response says the model failed (a stream's error event, a `failed` status). */
  readonly failed: boolean;
}

/** Sees a response's bytes as they are relayed and tells, at the end, what it said. */
export interface UsageWatch {
  push(chunk: Uint8Array): void;
  end(): AnswerFacts;
}

/**
 * A watch for a successful response of `route`: an event stream is read event by event (only the
 * current event is held), a JSON body is collected up to 16 MiB and parsed at its end. Neither
 * changes a byte of what the client receives.
 */
export function usageWatch(route: FoldRoute, contentType: string | null): UsageWatch {
  if (contentType !== null && contentType.toLowerCase().startsWith('text/event-stream')) {
    let billed: number | undefined;
    let failed = false;
    const reader = new SseReader((data) => {
      if (data === '[DONE]' || data === '') return;
      let item: unknown;
      try {
        item = JSON.parse(data);
      } catch {
        return; // not JSON: nothing to read in it
      }
      if (!isFields(item)) return;
      const signal = streamSignalOf(route, item);
      billed = signal.billedInputTokens ?? billed;
      failed ||= signal.failed === true;
    });
    return {
      push: (chunk) => reader.push(chunk),
      end: () => {
        reader.end();
        return { billedInputTokens: billed, failed };
      },
    };
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  return {
    push(chunk) {
      size += chunk.length;
      if (size <= MAX_PARSED_BODY_BYTES) chunks.push(chunk);
      else chunks.length = 0;
    },
    end() {
      if (size > MAX_PARSED_BODY_BYTES || size === 0) return { failed: false };
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks, size).toString('utf8'));
      } catch {
        return { failed: false };
      }
      if (!isFields(body)) return { failed: false };
      return { billedInputTokens: route.endpoint.billed(body), failed: route.endpoint.failed(body) };
    },
  };
}
