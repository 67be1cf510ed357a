/**
 * The shared invariants of a valid tool-calling history, each one object with its check, its
 * repair and its cut constraint. Provider profiles word them (`rule`); repair and grouping keep them.
 */
export { everyCallAnswered, type UnansweredCalls, type Owed } from './every-call-answered.js';
export { resultAnswersCall, isOrphan, type OrphanResult } from './result-answers-call.js';
export { resultOnce, type RepeatedResult } from './result-once.js';
export type { CutSpan, Invariant, Worded } from './invariant.js';

import { everyCallAnswered } from './every-call-answered.js';
import { resultAnswersCall } from './result-answers-call.js';
import { resultOnce } from './result-once.js';

/** Every shared invariant, for checks that must hold of each (views, repair, groups). */
export const INVARIANTS = Object.freeze([everyCallAnswered, resultAnswersCall, resultOnce] as const);
