import { openaiChatLens } from '../../src/formats/openai-chat/lens.js';
import { Fingerprints } from '../../src/runtime/fingerprints.js';
import type { OriginalsStore } from '../../src/store/originals.js';
import type { ChatState, StateStore } from '../../src/store/state.js';
import { chatHistory, coveredHash } from './crash-chat.mjs';
import type { Ack } from './crash-rounds.js';

/** Messages before the first covered one: the head (the chat's one system message). */
const HEAD = 1;

/** What the checks know of one chat across its kills. */
export interface ChatRecord {
  readonly chat: string;
  /** Every acknowledged commit of the chat so far, over all its workers. */
  readonly acks: Ack[];
  /** The state read after the previous kill. */
  previous: ChatState | undefined;
}

/** What one check found. */
export interface CheckResult {
  readonly state: ChatState | undefined;
  /** Broken rules, each a sentence; empty when the stored state is a valid one. */
  readonly problems: string[];
}

/** The chat's message ids as the compressor computes them (openai-chat lens, content fingerprints). */
export function chatIds(chat: string, turns: number): { history: ReturnType<typeof chatHistory>; ids: string[] } {
  const history = chatHistory(chat, turns);
  return { history, ids: new Fingerprints().idsOf(history, openaiChatLens) };
}

/**
 * Reads the chat's state back after a kill and checks it is one the compressor could have
 * committed and that no acknowledged commit was lost: it parses; its version is at least every
 * acknowledged one and the one read before; its covered ids are the chat's ids right after the
 * head, in order (the chat had `turns` turns at most); for every acknowledged commit, the hash of
 * the stored ids of that length is the acknowledged hash (an equal version covers exactly those);
 * they extend the ids read before. With `originals`: every covered id has its original (kept
 * before the commit), and each is that message of the chat (same index, same JSON).
 */
export async function checkChat(store: StateStore, originals: OriginalsStore | undefined, record: ChatRecord, turns: number): Promise<CheckResult> {
  const problems: string[] = [];
  let state: ChatState | undefined;
  try {
    state = await store.get(record.chat);
  } catch (error) {
    return { state: undefined, problems: [`the stored state does not read back: ${(error as Error).message}`] };
  }
  const lastAck = record.acks.reduce<Ack | undefined>((a, b) => (a === undefined || b.version > a.version ? b : a), undefined);
  const version = state?.version ?? 0;
  if (lastAck && version < lastAck.version) problems.push(`version ${version} is older than the acknowledged version ${lastAck.version}`);
  if (version < (record.previous?.version ?? 0)) problems.push(`version ${version} went back from ${record.previous!.version}`);
  if (!state) return { state, problems };

  const { history, ids } = chatIds(record.chat, turns);
  const covered = state.coveredIds;
  const expected = ids.slice(HEAD, HEAD + covered.length);
  if (covered.length > ids.length - HEAD || covered.some((id, i) => id !== expected[i])) {
    const at = covered.findIndex((id, i) => id !== expected[i]);
    problems.push(`covered ids are not the chat's ids after the head: at ${at} ${JSON.stringify(covered[at])}, expected ${JSON.stringify(expected[at])} (${covered.length} covered, ${ids.length} messages)`);
  }
  for (const ack of record.acks) {
    if (ack.count > covered.length || coveredHash(covered.slice(0, ack.count)) !== ack.hash) {
      problems.push(`acknowledged version ${ack.version} (${ack.count} ids, ${ack.hash.slice(0, 8)}) is not a prefix of the stored version ${version} (${covered.length} ids)`);
    }
    if (ack.version === version && ack.count !== covered.length) problems.push(`version ${version} was acknowledged with ${ack.count} ids, stored with ${covered.length}`);
  }
  const before = record.previous?.coveredIds ?? [];
  if (before.length > covered.length || before.some((id, i) => id !== covered[i])) {
    problems.push(`covered ids (${covered.length}) do not extend those read before (${before.length})`);
  }

  if (originals) {
    const kept = await originals.getOriginals(record.chat, covered);
    const found = new Set<string>();
    for (const r of kept) {
      found.add(r.id);
      if (ids[r.index] !== r.id || r.raw !== JSON.stringify(history[r.index])) problems.push(`original ${r.id} is not message ${r.index} of the chat`);
    }
    const unkept = covered.filter((id) => !found.has(id));
    if (unkept.length > 0) problems.push(`${unkept.length} covered id(s) have no original kept (${covered.slice(0, lastAck?.count ?? 0).filter((id) => !found.has(id)).length} of them acknowledged), first ${unkept[0]}`);
  }
  return { state, problems };
}
