import { requestSignal, type SummarizeRequest, type Summarizer } from '../../src/summarize/summarizer.js';

/** How a scripted summarizer behaves on one call. */
export type Behaviour = 'ok' | 'throw' | 'empty' | 'hang' | 'hang-ignoring-signal';

/** A summarizer for tests that records concurrency per chat-less call and can be told to fail. */
export interface ScriptedSummarizer extends Summarizer {
  /** Calls made so far. */
  calls: number;
  /** Most calls that were inside `summarize` at the same time. */
  maxConcurrent: number;
  /** Input sizes (messages) of each call. */
  inputs: number[];
  /** Behaviour for the next calls, consumed in order; `ok` once the list is empty. */
  script: Behaviour[];
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      reject(signal.reason);
    }, { once: true });
  });
}

/**
 * A summarizer that waits `delay()` ms, counts how many of its calls overlap, and writes a summary
 * that names how many messages it folded in. One instance per chat lets a test assert that a
 * chat's summarizer is never entered twice at once.
 */
export function scriptedSummarizer(delay: () => number = () => 0, name = 'scripted'): ScriptedSummarizer {
  let inside = 0;
  const s: ScriptedSummarizer = {
    name,
    inputBudgetTokens: 1_000_000,
    calls: 0,
    maxConcurrent: 0,
    inputs: [],
    script: [],
    async summarize(request: SummarizeRequest): Promise<string> {
      s.calls++;
      s.inputs.push(request.messages.length);
      const signal = requestSignal(request);
      inside++;
      s.maxConcurrent = Math.max(s.maxConcurrent, inside);
      try {
        const behaviour = s.script.shift() ?? 'ok';
        if (behaviour === 'hang') await sleep(1e9, signal);
        if (behaviour === 'hang-ignoring-signal') {
          // Runs on past the abort (however long the job's limit is) and then answers as if fine.
          await new Promise<void>((resolve) => {
            const after = () => setTimeout(resolve, 100);
            if (signal.aborted) after();
            else signal.addEventListener('abort', after, { once: true });
          });
          return 'an answer that arrived after the job was given up';
        }
        await sleep(delay(), signal);
        if (behaviour === 'throw') throw new Error('summarizer exploded');
        if (behaviour === 'empty') return '   ';
        const prev = request.previousSummary ? `${request.previousSummary}\n` : '';
        return `${prev}folded ${request.messages.length} messages`;
      } finally {
        inside--;
      }
    },
  };
  return s;
}
