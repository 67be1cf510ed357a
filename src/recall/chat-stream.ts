import { RECALL_TOOL_NAME } from './tool-definition.js';
import { isFields, type Fields, type RecallStream, type StreamAssembler, type StreamSignalKind } from './dialect.js';

/**
 * Streamed Chat Completions (`chat.completion.chunk` events) read for recall calls. A call is known
 * by the first delta of its `index` (the one that carries `function.name`, as OpenAI sends it);
 * later deltas of that index carry only argument pieces.
 */

const choicesOf = (chunk: Fields): Fields[] => (Array.isArray(chunk.choices) ? chunk.choices.filter(isFields) : []);
const deltaOf = (choice: Fields): Fields => (isFields(choice.delta) ? choice.delta : {});
const callDeltasOf = (delta: Fields): Fields[] => (Array.isArray(delta.tool_calls) ? delta.tool_calls.filter(isFields) : []);
const nameOf = (call: Fields): unknown => (isFields(call.function) ? call.function.name : undefined);
const nonEmpty = (v: unknown): boolean => typeof v === 'string' && v !== '';

function signal(chunk: Fields): StreamSignalKind | undefined {
  if (chunk.error !== undefined && chunk.error !== null) return 'other';
  for (const choice of choicesOf(chunk)) {
    if (typeof choice.index === 'number' && choice.index > 0) return 'other';
    const delta = deltaOf(choice);
    if (nonEmpty(delta.content) || nonEmpty(delta.refusal)) return 'text';
    if (delta.function_call !== undefined && delta.function_call !== null) return 'other';
    for (const call of callDeltasOf(delta)) {
      const name = nameOf(call);
      if (nonEmpty(name)) return name === RECALL_TOOL_NAME ? 'recall' : 'other';
    }
  }
  return undefined;
}

function terminal(chunk: Fields): boolean {
  const choices = choicesOf(chunk);
  if (choices.some((c) => c.finish_reason !== undefined && c.finish_reason !== null)) return true;
  return choices.length === 0 && chunk.usage !== undefined && chunk.usage !== null;
}

interface ChoiceSoFar {
  content: string | null;
  refusal: string | null;
  calls: { id?: unknown; type?: unknown; name: string; arguments: string }[];
  finish: unknown;
}

/** Builds the `chat.completion` a stream amounts to: texts joined, each call's argument pieces joined by index. */
function assemble(): StreamAssembler {
  let head: Fields = {};
  let usage: unknown;
  const choices = new Map<number, ChoiceSoFar>();
  return {
    push(chunk) {
      if (head.id === undefined) head = { id: chunk.id, created: chunk.created, model: chunk.model };
      if (chunk.usage !== undefined && chunk.usage !== null) usage = chunk.usage;
      for (const choice of choicesOf(chunk)) {
        const at = typeof choice.index === 'number' ? choice.index : 0;
        let so = choices.get(at);
        if (!so) choices.set(at, (so = { content: null, refusal: null, calls: [], finish: null }));
        const delta = deltaOf(choice);
        if (typeof delta.content === 'string') so.content = (so.content ?? '') + delta.content;
        if (typeof delta.refusal === 'string') so.refusal = (so.refusal ?? '') + delta.refusal;
        for (const piece of callDeltasOf(delta)) {
          const k = typeof piece.index === 'number' ? piece.index : so.calls.length;
          const call = (so.calls[k] ??= { name: '', arguments: '' });
          if (piece.id !== undefined) call.id ??= piece.id;
          if (piece.type !== undefined) call.type ??= piece.type;
          const f = isFields(piece.function) ? piece.function : {};
          if (typeof f.name === 'string') call.name += f.name;
          if (typeof f.arguments === 'string') call.arguments += f.arguments;
        }
        if (choice.finish_reason !== undefined && choice.finish_reason !== null) so.finish = choice.finish_reason;
      }
    },
    response() {
      const out = [...choices.entries()].sort((x, y) => x[0] - y[0]).map(([index, so]) => {
        const calls = so.calls.filter((c) => c !== undefined).map((c) => ({ id: c.id, type: c.type ?? 'function', function: { name: c.name, arguments: c.arguments } }));
        const message = { role: 'assistant', content: so.content, refusal: so.refusal, ...(calls.length > 0 ? { tool_calls: calls } : {}) };
        return { index, message, finish_reason: so.finish, logprobs: null };
      });
      return { ...head, object: 'chat.completion', choices: out, ...(usage !== undefined ? { usage } : {}) };
    },
  };
}

/**
 * Removes recall calls from chunks, choice by choice: their deltas are dropped, the application's
 * calls are renumbered so their indexes stay 0, 1, ... (a client places deltas by index), and a
 * `finish_reason` of `tool_calls` with no call left becomes `stop` (as `withoutRecallCalls` does).
 * A chunk left with nothing in it is dropped.
 */
function strip(): (chunk: Fields) => Fields | undefined {
  const state = new Map<number, { recall: Set<number>; index: Map<number, number> }>();
  return (chunk) => {
    const choices = Array.isArray(chunk.choices) ? chunk.choices : undefined;
    if (!choices) return chunk;
    let changed = false;
    let emptied = 0;
    const out = choices.map((choice: unknown) => {
      if (!isFields(choice)) return choice;
      const at = typeof choice.index === 'number' ? choice.index : 0;
      let s = state.get(at);
      if (!s) state.set(at, (s = { recall: new Set(), index: new Map() }));
      const delta = deltaOf(choice);
      let next: Fields = delta;
      if (Array.isArray(delta.tool_calls)) {
        const kept: unknown[] = [];
        let touched = false;
        for (const piece of delta.tool_calls) {
          const k = isFields(piece) && typeof piece.index === 'number' ? piece.index : undefined;
          if (k === undefined) {
            // Not placed by index: dropped only when it names recall itself.
            if (isFields(piece) && nameOf(piece) === RECALL_TOOL_NAME) touched = true;
            else kept.push(piece);
            continue;
          }
          if (!s.recall.has(k) && !s.index.has(k)) {
            if (nameOf(piece as Fields) === RECALL_TOOL_NAME) s.recall.add(k);
            else s.index.set(k, s.index.size);
          }
          if (s.recall.has(k)) {
            touched = true;
            continue;
          }
          const to = s.index.get(k)!;
          if (to !== k) touched = true;
          kept.push(to === k ? piece : { ...(piece as Fields), index: to });
        }
        if (touched) {
          const { tool_calls: _all, ...rest } = delta;
          next = kept.length > 0 ? { ...rest, tool_calls: kept } : rest;
        }
      }
      const finish = choice.finish_reason === 'tool_calls' && s.index.size === 0 && s.recall.size > 0 ? 'stop' : choice.finish_reason;
      if (next === delta && finish === choice.finish_reason) return choice;
      changed = true;
      if (Object.keys(next).length === 0 && Object.keys(delta).length > 0 && (finish === null || finish === undefined)) emptied++;
      return { ...choice, delta: next, finish_reason: finish };
    });
    if (!changed) return chunk;
    if (emptied === choices.length && (chunk.usage === undefined || chunk.usage === null)) return undefined;
    return { ...chunk, choices: out };
  };
}

/**
 * Chunks shown as one completion: each carries the `id` and `created` of the first chunk shown
 * (a later round's upstream call has its own; a client that groups chunks by id would see two
 * completions). Invariant: a chunk that already carries them is passed as the same object.
 */
function continuation(): (chunk: Fields) => Fields {
  let first: { readonly id: unknown; readonly created: unknown } | undefined;
  return (chunk) => {
    if (!('id' in chunk)) return chunk;
    if (first === undefined) {
      first = { id: chunk.id, created: chunk.created };
      return chunk;
    }
    if (chunk.id === first.id && (chunk.created === first.created || first.created === undefined)) return chunk;
    return { ...chunk, id: first.id, ...(first.created !== undefined ? { created: first.created } : {}) };
  };
}

/** Recall in streamed `POST /chat/completions`: a later round's deltas continue the message already streamed, under its id. */
export const CHAT_RECALL_STREAM: RecallStream = Object.freeze<RecallStream>({ signal, terminal, continues: true, continuation, assemble, strip });
