import { InputError } from '../errors.js';
import { repairWithLens, type RepairAction } from '../core/repair.js';
import type { Violation } from '../core/validate/rules.js';
import { checkProfile, type Profile } from '../core/validate/validate.js';
import type { FormatName, MessageLens } from './lens.js';
import { remapCallIds } from '../core/remap-ids.js';
import { openaiProfile } from './openai-chat/profile.js';
import { qwenAgentProfile } from './qwen-agent/profile.js';
import { hermesProfile } from './hermes/profile.js';
import { anthropicProfile, bedrockProfile } from './anthropic/profile.js';
import { aiSdkProfile } from './ai-sdk/profile.js';
import { deepseekProfile, deepseekReasonerProfile } from './openai-compatible/deepseek.js';
import { mistralProfile } from './openai-compatible/mistral.js';
import { qwenTemplateProfile } from './openai-compatible/qwen-template.js';
import { openaiResponsesProfile } from './openai-responses/profile.js';
import { geminiProfile } from './gemini/profile.js';
import { selectLens } from './registry.js';

/** The provider profiles that ship, by name. */
export const PROFILES = { openai: openaiProfile, 'qwen-agent': qwenAgentProfile, hermes: hermesProfile, anthropic: anthropicProfile, bedrock: bedrockProfile, 'ai-sdk': aiSdkProfile, deepseek: deepseekProfile, 'deepseek-reasoner': deepseekReasonerProfile, mistral: mistralProfile, 'qwen-template': qwenTemplateProfile, 'openai-responses': openaiResponsesProfile, gemini: geminiProfile } as const satisfies Record<string, Profile<any>>;

/** A provider profile's name (`openai`). */
export type ProfileName = keyof typeof PROFILES;

/** The profile for `name`, or an `InputError` naming the profiles that exist. */
export function profileFor(name: unknown, path = 'profile'): Profile<any> {
  if (typeof name === 'object' && name !== null && Array.isArray((name as Profile<unknown>).rules) && typeof (name as Profile<unknown>).lens === 'object') return name as Profile<any>;
  if (typeof name === 'string' && Object.hasOwn(PROFILES, name)) return PROFILES[name as ProfileName];
  throw new InputError(path, `must be a profile name (${Object.keys(PROFILES).join(', ')}) or a Profile object, got ${typeof name === 'string' ? JSON.stringify(name) : String(name)}`);
}

/**
 * Checks a history against a provider's tool-call rules. Returns every violation, ordered by
 * message index, each worded like the provider's own 400 error; an empty list means the provider
 * accepts the sequence. Input that is not a list of that format's messages is an `InputError`
 * naming the message and field, never a violation. Without `profile`, the format is detected by
 * evidence (an unknown or ambiguous one is an `InputError`) and checked against its profile.
 */
export function validateMessages<M>(messages: readonly M[], profile?: ProfileName | Profile<M>): Violation[] {
  // Without a profile, the format is detected by evidence and checked against its own profile.
  const p = (profile === undefined ? profileFor(selectLens(messages, 'auto').format) : profileFor(profile)) as Profile<M>;
  if (profile !== undefined) selectLens(messages, p.lens.format);
  return checkProfile(messages, p);
}

/**
 * `repairWithLens`, then the format's own profile on what it gives: a rule repair could not
 * satisfy without guessing (results split over messages of a format that pairs by position) is an
 * `InputError` naming the input message and the rule. A broken history comes out fixed or refused,
 * never passed on still broken; one with nothing to fix is not checked again.
 */
export function repairOrRefuse<M>(messages: readonly M[], lens: MessageLens<M>): { messages: readonly M[]; actions: RepairAction[] } {
  const fixed = repairWithLens(messages, lens);
  if (fixed.actions.length === 0) return fixed;
  const left = checkProfile(fixed.messages, profileFor(lens.format) as Profile<M>);
  if (left.length === 0) return { messages: fixed.messages, actions: fixed.actions };
  const v = left[0];
  throw new InputError(`messages[${fixed.inputIndex(v.index)}]`, `${fixed.actions.length} change(s) made, and the repaired history still breaks a rule: ${v.message} (rule ${v.rule}); repair cannot settle this without guessing: fix the message, or pass repair: false to see every fault`);
}

/**
 * Fixes a broken incoming history (missing result -> synthetic error result in the format's
 * shape; orphan or duplicate result -> removed) and says what it did. With `provider`, call ids
 * are also made to fit that provider's rules (unique across the request, its id pattern), the same
 * in each call and its results. Untouched messages are the caller's own objects, in order; a
 * history with nothing to fix comes back as the same array. Repair runs only on a format that was
 * named or detected by evidence: it never deletes anything on a guess. What it cannot fix without
 * guessing is an `InputError` naming the message and the rule (see `repairOrRefuse`).
 */
export function repairHistory<M>(messages: readonly M[], options: { readonly format?: FormatName | 'auto'; readonly provider?: ProfileName | Profile<M> } = {}): { messages: readonly M[]; actions: RepairAction[] } {
  const profile = options.provider === undefined ? undefined : (profileFor(options.provider, 'options.provider') as Profile<M>);
  const lens = selectLens(messages, options.format ?? profile?.lens.format ?? 'auto') as MessageLens<M>;
  if (profile && profile.lens.format !== lens.format) {
    throw new InputError('options.provider', `${profile.name} reads ${profile.lens.format} messages, but the messages are ${lens.format}`);
  }
  const fixed = repairOrRefuse(messages, lens);
  if (!profile?.ids) return fixed;
  const renamed = remapCallIds(fixed.messages, lens, profile.ids);
  if (renamed.actions.length === 0) return fixed;
  return { messages: renamed.messages, actions: [...fixed.actions, ...renamed.actions] };
}
