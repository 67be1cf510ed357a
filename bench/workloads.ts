/** The histories the benchmark runs on: the shared corpus of real conversations and generated ones. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateConversation, modelRequestEnds } from './fixtures/conversation.js';
import type { OpenAIChatMessage } from '../src/index.js';
import { evenlySpaced } from './stats.js';

/** One workload: one or more histories, and the request points of each to replay. */
export interface Workload {
  readonly name: string;
  readonly kind: 'corpus' | 'generated';
  readonly histories: readonly OpenAIChatMessage[][];
  /** Per history: the history lengths of the replayed requests (each is a prefix ending before an assistant message). */
  readonly points: readonly number[][];
  /** Per history: the subset of `points` the peer systems are timed on. */
  readonly peerPoints: readonly Set<number>[];
  /** How the request points were chosen, in words. */
  readonly sampling: string;
}

/** Where the shared corpus sits relative to the project root. */
export function corpusPath(root: string): string {
  return join(root, '..', 'shared', 'corpus', 'tau-bench-airline-gpt4o.jsonl');
}

/** Every conversation of the corpus, in file order, or undefined when the file is absent. */
export function loadCorpus(root: string): OpenAIChatMessage[][] | undefined {
  const file = corpusPath(root);
  if (!existsSync(file)) return undefined;
  return readFileSync(file, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { messages: OpenAIChatMessage[] }).messages);
}

/**
 * The corpus as a workload, or undefined when absent: every `coldEvery`-th conversation gets a
 * cold call, and every `replayEvery`-th of those is replayed request by request.
 */
export function corpusWorkload(root: string, coldEvery: number, replayEvery: number): Workload | undefined {
  const all = loadCorpus(root);
  if (!all) return undefined;
  const histories = all.filter((_, i) => i % coldEvery === 0);
  const points = histories.map((h, i) => (i % replayEvery === 0 ? modelRequestEnds(h) : []));
  const replayed = points.filter((p) => p.length > 0).length;
  return {
    name: 'corpus',
    kind: 'corpus',
    histories,
    points,
    peerPoints: points.map((p) => new Set(p)),
    sampling: `cold: ${histories.length} of ${all.length} tau-bench conversations; replay: every request of ${replayed} of them`,
  };
}

/** A generated conversation of `size` messages (seed 1000 + size), replayed at `samples` evenly spaced requests, peers at `peerSamples` of those. */
export function generatedWorkload(size: number, samples: number, peerSamples: number): Workload {
  const history = generateConversation({ messages: size, seed: 1000 + size });
  const ends = modelRequestEnds(history);
  const points = evenlySpaced(ends.length, samples).map((i) => ends[i]);
  const peer = new Set(evenlySpaced(points.length, peerSamples).map((i) => points[i]));
  const sampling = points.length === ends.length
    ? `all ${ends.length} requests`
    : `${points.length} of ${ends.length} requests, evenly spaced (last included)${peer.size < points.length ? `; peers timed on ${peer.size} of them` : ''}`;
  return { name: size >= 1000 ? `gen-${size / 1000}k` : `gen-${size}`, kind: 'generated', histories: [history], points: [points], peerPoints: [peer], sampling };
}
