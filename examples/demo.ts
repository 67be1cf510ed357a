#!/usr/bin/env node
/**
 * `npm run demo`: runs ctxfold on a generated long tool-calling conversation, offline, with the
 * embedded defaults (tiktoken counts, extractive summarizer, a SQLite file in a temp dir).
 * Part 1 compresses the whole history once; part 2 replays it turn by turn through `wrap()`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compressContext } from '../src/runtime/compress.js';
import { validateMessages } from '../src/formats/profiles.js';
import { openaiProfile } from '../src/formats/openai-chat/profile.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { createCompressor } from '../src/runtime/compressor.js';
import { SqliteStore } from '../src/store/sqlite-store.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { freeEncoders } from '../src/tokens/tiktoken.js';
import { generateConversation } from '../bench/fixtures/conversation.js';

const MAX_TOKENS = 12_000;
const line = (s = '') => process.stdout.write(`${s}\n`);

function splitTurns(messages: OpenAIChatMessage[]): { request: number; reply: OpenAIChatMessage[] }[] {
  // A turn is: the history up to a user message (the request), then what the model answered.
  const turns: { request: number; reply: OpenAIChatMessage[] }[] = [];
  for (let i = 0; i < messages.length; i++) {
    if (messages[i].role !== 'user') continue;
    let j = i + 1;
    while (j < messages.length && messages[j].role !== 'user') j++;
    turns.push({ request: i + 1, reply: messages.slice(i + 1, j) });
  }
  return turns;
}

async function main(): Promise<void> {
  const conversation = generateConversation({ messages: 600, seed: 7 });
  const counter = createTokenCounter();

  line('ctxfold demo — a generated 600-message tool-calling conversation (OpenAI Chat format)');
  line();
  line(`Part 1: compressContext(messages, { maxContextTokens: ${MAX_TOKENS}, toolOutputTrim: true })`);
  const t0 = performance.now();
  const once = compressContext(conversation, { maxContextTokens: MAX_TOKENS, toolOutputTrim: true, counter });
  const ms = performance.now() - t0;
  const r = once.report;
  line(`  messages  ${r.messagesBefore} -> ${r.messagesAfter}`);
  line(`  tokens    ${r.tokensBefore} -> ${r.tokensAfter} (limit ${MAX_TOKENS})`);
  line(`  groups    ${r.groups.count} (${r.groups.turns} tool-call turns, largest ${r.groups.largest} messages)`);
  line(`  dropped   ${r.dropped.length} messages, whole groups only; collapsed ${r.collapsed.length} bulky tool results`);
  line(`  valid     ${validateMessages(once.messages, openaiProfile).length === 0 ? 'yes: every call answered, no orphan result' : 'NO'}`);
  line(`  time      ${ms.toFixed(1)} ms (cold: includes loading the tokenizer)`);
  line();

  const dir = mkdtempSync(join(tmpdir(), 'ctxfold-demo-'));
  const store = SqliteStore.open(join(dir, 'state.db'));
  const compressor = createCompressor({ maxContextTokens: MAX_TOKENS, compressionThresholdTokens: 8_000, keepLast: 8, store, counter });
  compressor.on('summary:done', (e) => {
    const first = e.newlyCovered[0];
    const last = e.newlyCovered[e.newlyCovered.length - 1];
    line(`    ↳ summary v${e.version} landed: covers ${e.coveredIds.length} messages (new: ${first} … ${last}), ${e.tokensBefore} tokens -> ${e.tokensAfter}`);
  });
  compressor.on('summary:failed', (e) => line(`    ↳ summary failed: ${String(e.error)}`));

  line(`Part 2: replay turn by turn through createCompressor().wrap() — SQLite state in ${dir}`);
  line('  turn  history  full tokens  sent tokens  summary');
  // The stand-in model replays the recorded answer: no network, no API key.
  let replies: OpenAIChatMessage[] = [];
  const model = compressor.wrap(async (request: { chatId: string; messages: OpenAIChatMessage[] }) => ({ sent: request.messages, reply: replies }));
  const turns = splitTurns(conversation);
  let invalid = 0;
  for (let t = 0; t < turns.length; t++) {
    const history = conversation.slice(0, turns[t].request);
    replies = turns[t].reply;
    const { sent } = await model({ chatId: 'demo-chat', messages: history });
    if (validateMessages(sent, openaiProfile).length > 0) invalid++;
    const state = await store.get('demo-chat');
    if (t % 5 === 0 || t === turns.length - 1) {
      const full = compressContext(history, { counter }).report.tokensBefore;
      const sentTokens = compressContext(sent, { counter }).report.tokensBefore;
      line(`  ${String(t + 1).padStart(4)}  ${String(history.length).padStart(7)}  ${String(full).padStart(11)}  ${String(sentTokens).padStart(11)}  ${state ? `v${state.version} (${state.coveredIds.length} msgs)` : '-'}`);
    }
    // Give the background job a moment, as real traffic would between turns.
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await compressor.drain();
  const final = await store.get('demo-chat');
  line();
  line(`  ${turns.length} requests, ${invalid} invalid views; final summary v${final?.version ?? 0} covers ${final?.coveredIds.length ?? 0} message ids`);
  if (final) line(`  summary starts: ${final.summary.slice(0, 160).replace(/\n/g, ' | ')}…`);
  await compressor.close();
  rmSync(dir, { recursive: true, force: true });
  freeEncoders();
}

main().catch((error: unknown) => {
  process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
