import type { CallRef } from '../formats/lens.js';
import { isSecretKey, parseJsonData } from './facts.js';
import { truncateMiddle } from './truncate-middle.js';

/** Longest string argument value kept whole, longest arguments list, longest call line. */
export const CALL_LIMITS = { value: 60, items: 4, keys: 8, line: 320 } as const;

const BARE = /^[\w.@:+/#-]+$/;

function compactValue(value: unknown, depth: number): string {
  if (typeof value === 'string') {
    const v = truncateMiddle(value.replace(/\s+/g, ' ').trim(), CALL_LIMITS.value);
    return BARE.test(v) ? v : JSON.stringify(v);
  }
  if (value === null || typeof value !== 'object') return String(value);
  if (depth >= 3) return Array.isArray(value) ? `[${value.length} items]` : '{…}';
  if (Array.isArray(value)) {
    const shown = value.slice(0, CALL_LIMITS.items).map((v) => compactValue(v, depth + 1));
    if (value.length > CALL_LIMITS.items) shown.push(`+${value.length - CALL_LIMITS.items} more`);
    return `[${shown.join(', ')}]`;
  }
  return `{${compactFields(value as Record<string, unknown>, depth + 1, ':')}}`;
}

function compactFields(record: Record<string, unknown>, depth: number, separator: string): string {
  const entries = Object.entries(record);
  const shown = entries
    .slice(0, CALL_LIMITS.keys)
    .map(([k, v]) => `${k}${separator}${isSecretKey(k) ? '[redacted]' : compactValue(v, depth)}`);
  if (entries.length > CALL_LIMITS.keys) shown.push(`+${entries.length - CALL_LIMITS.keys} more`);
  return shown.join(', ');
}

/**
 * A tool call as one short line, `name(key=value, ...)`: JSON arguments compacted, long string
 * values cut in the middle, long lists and objects shortened with a count of what was left out,
 * secrets (passwords, tokens, API keys) redacted. Identifiers in arguments survive whole unless
 * longer than `CALL_LIMITS.value` characters. Deterministic.
 */
export function callText(call: CallRef): string {
  const data = parseJsonData(call.arguments);
  let args: string;
  if (data !== undefined && !Array.isArray(data)) args = compactFields(data as Record<string, unknown>, 0, '=');
  else if (data !== undefined) args = compactValue(data, 0);
  else args = call.arguments.replace(/\s+/g, ' ').trim();
  return truncateMiddle(`${call.name || 'unnamed'}(${args})`, CALL_LIMITS.line);
}
