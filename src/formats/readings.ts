import type { CallRef, InPlaceCall, MessageKind, ResultRef } from './lens.js';
import { MAX_NESTING, nestedDeeperThan } from '../core/nesting.js';
import { describe } from './describe.js';

/** Shared empty lists: most messages open no call and carry no result, and reading runs per message per request. */
export const NO_CALLS: readonly CallRef[] = Object.freeze([]);
export const NO_RESULTS: readonly ResultRef[] = Object.freeze([]);
export const NO_IN_PLACE: readonly InPlaceCall[] = Object.freeze([]);

/** The kind of a message by its role, from a format's table of its roles; `other` for a role not in it. */
export function kindByRole(role: unknown, kinds: Readonly<Record<string, MessageKind>>): MessageKind {
  return typeof role === 'string' && Object.hasOwn(kinds, role) ? kinds[role] : 'other';
}

/**
 * Why `value` is not a message object with a string `role` (not an object, nested deeper than
 * ctxfold reads, or its role not a string); undefined when it is one. A lens's `problem` starts here.
 */
export function messageObjectProblem(value: unknown): { readonly field: string; readonly rule: string } | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { field: '', rule: `must be a message object, got ${describe(value)}` };
  if (nestedDeeperThan(value)) return { field: '', rule: `is nested more than ${MAX_NESTING} levels deep; ctxfold does not read values this deep` };
  const role = (value as Record<string, unknown>).role;
  if (typeof role !== 'string') return { field: '.role', rule: `must be a string, got ${describe(role)}` };
  return undefined;
}
