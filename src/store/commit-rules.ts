import { InputError } from '../errors.js';
import type { ChatState } from './state.js';

/**
 * Checks a `commit(state, expectedVersion)` call before any store touches its data, so every
 * store accepts and rejects exactly the same calls: `expectedVersion` is a whole number >= 0,
 * `state.version` is `expectedVersion + 1`, and every field has the type `ChatState` declares.
 * Throws an `InputError` naming the field; returns nothing when the call is valid.
 */
export function assertCommittable(state: ChatState, expectedVersion: number): void {
  if (!Number.isSafeInteger(expectedVersion) || expectedVersion < 0) {
    throw new InputError('commit: expectedVersion', `must be a whole number >= 0 (0 = no state yet), got ${String(expectedVersion)}`);
  }
  if (state === null || typeof state !== 'object') throw new InputError('commit: state', `must be a ChatState object, got ${String(state)}`);
  const where = `commit(chat ${JSON.stringify(state.chatId)})`;
  if (typeof state.chatId !== 'string' || state.chatId === '') throw new InputError('commit: state.chatId', `must be a non-empty string, got ${JSON.stringify(state.chatId)}`);
  if (state.version !== expectedVersion + 1) {
    throw new InputError(`${where}: state.version`, `must be expectedVersion + 1 = ${expectedVersion + 1}, got ${String(state.version)}`);
  }
  for (const field of ['summary', 'summarizer', 'createdAt', 'updatedAt'] as const) {
    if (typeof state[field] !== 'string') throw new InputError(`${where}: state.${field}`, `must be a string, got ${typeof state[field]}`);
  }
  if (state.model !== undefined && typeof state.model !== 'string') {
    throw new InputError(`${where}: state.model`, `must be a string or undefined, got ${typeof state.model}`);
  }
  for (const field of ['tokensBefore', 'tokensAfter'] as const) {
    const value = state[field];
    if (!Number.isSafeInteger(value) || value < 0) throw new InputError(`${where}: state.${field}`, `must be a whole number >= 0, got ${String(value)}`);
  }
  if (state.compactTokens !== undefined && (!Number.isSafeInteger(state.compactTokens) || state.compactTokens < 1)) {
    throw new InputError(`${where}: state.compactTokens`, `must be a whole number >= 1 or undefined, got ${String(state.compactTokens)}`);
  }
  if (!Array.isArray(state.coveredIds)) throw new InputError(`${where}: state.coveredIds`, 'must be an array of strings');
  const bad = state.coveredIds.findIndex((id) => typeof id !== 'string');
  if (bad >= 0) throw new InputError(`${where}: state.coveredIds[${bad}]`, `must be a string, got ${typeof state.coveredIds[bad]}`);
}
