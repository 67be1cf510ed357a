/**
 * Checks for what a language model behind `wrapLanguageModel` receives, written from the AI SDK's
 * provider types (`LanguageModelV3Prompt` in @ai-sdk/provider 3, `LanguageModelV4Prompt` in 4) and
 * sharing no code with src: the shape of each provider-level message, plus a guard middleware that
 * proves the middlewares after it never mutate the params they were given.
 */
import { isDeepStrictEqual } from 'node:util';

/** One shape problem of a provider prompt, at a message index. */
export interface PromptShapeProblem {
  readonly index: number;
  readonly detail: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The part types each role may hold at the provider level (V4 adds `custom` and `reasoning-file` to assistant messages). */
const PARTS: Readonly<Record<string, readonly string[]>> = {
  user: ['text', 'file'],
  assistant: ['text', 'file', 'reasoning', 'tool-call', 'tool-result', 'custom', 'reasoning-file'],
  tool: ['tool-result', 'tool-approval-response'],
};

/**
 * Every way `prompt` is not a provider-level prompt: a system message carries a string; user,
 * assistant and tool messages carry a list of parts (never a string) of the types their role may
 * hold; text parts carry text; tool parts carry their ids and a typed output. Empty: the shape is right.
 */
export function providerPromptProblems(prompt: readonly unknown[]): PromptShapeProblem[] {
  const out: PromptShapeProblem[] = [];
  prompt.forEach((m, index) => {
    const bad = (detail: string) => out.push({ index, detail });
    if (!isObj(m)) return bad('not an object');
    const role = m.role;
    if (role === 'system') {
      if (typeof m.content !== 'string') bad('system content is not a string');
      return;
    }
    if (typeof role !== 'string' || !(role in PARTS)) return bad(`role ${String(role)}`);
    if (!Array.isArray(m.content)) return bad(`${role} content is not a list of parts (got ${typeof m.content})`);
    for (const part of m.content as unknown[]) {
      if (!isObj(part) || typeof part.type !== 'string') {
        bad('a part without a type');
        continue;
      }
      if (!PARTS[role].includes(part.type)) bad(`a ${part.type} part in a ${role} message`);
      if ((part.type === 'text' || part.type === 'reasoning') && typeof part.text !== 'string') bad(`a ${part.type} part without text`);
      if (part.type === 'tool-call' && (typeof part.toolCallId !== 'string' || typeof part.toolName !== 'string')) bad('a tool-call without ids');
      if (part.type === 'tool-result' && (typeof part.toolCallId !== 'string' || !isObj(part.output) || typeof part.output.type !== 'string')) bad('a tool-result without id or typed output');
    }
  });
  return out;
}

/** What a guard saw: calls checked and the first mutation found. */
export interface GuardLog {
  calls: number;
  mutated?: string;
}

/** Freezes a value deeply (typed arrays aside: they cannot be frozen), so any write to it throws in strict code. */
function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value) || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
}

/**
 * A middleware to put before the one under test (`middleware: [guard, tested]`): it deep-freezes
 * the prompt it passes on (a write to a message or to the list throws), and every
 * `snapshotEvery`-th call also checks, once the call is over, that the params are deep-equal to a
 * snapshot taken before and that the prompt still holds the very same message objects.
 */
export function mutationGuard(log: GuardLog, snapshotEvery = 1) {
  const taken = new WeakMap<object, { clone: unknown; prompt: readonly unknown[]; items: readonly unknown[] }>();
  let seen = 0;
  const check = (params: Obj) => {
    log.calls++;
    const t = taken.get(params);
    if (!t) return;
    const prompt = params.prompt as unknown[];
    if (prompt !== t.prompt || prompt.length !== t.items.length || prompt.some((m, i) => m !== t.items[i])) log.mutated ??= 'the prompt array was changed';
    else if (!isDeepStrictEqual(snapshot(params), t.clone)) log.mutated ??= 'the params or a message were mutated';
  };
  return {
    specificationVersion: 'v3' as const,
    transformParams: async ({ params }: { params: Obj }) => {
      const out = { ...params };
      if (seen++ % snapshotEvery === 0) taken.set(out, { clone: snapshot(out), prompt: out.prompt as unknown[], items: [...(out.prompt as unknown[])] });
      deepFreeze(out.prompt);
      return Object.freeze(out);
    },
    wrapGenerate: async ({ doGenerate, params }: { doGenerate: () => PromiseLike<unknown>; params: Obj }) => {
      const r = await doGenerate();
      check(params);
      return r;
    },
    wrapStream: async ({ doStream, params }: { doStream: () => PromiseLike<unknown>; params: Obj }) => {
      const r = await doStream();
      check(params);
      return r;
    },
  };
}

/** A deep copy of the params' data (bytes as numbers; the AbortSignal and functions left out). */
function snapshot(params: Obj): Obj {
  const { abortSignal: _signal, ...rest } = params;
  return JSON.parse(JSON.stringify(rest, (_k, v: unknown) => (v instanceof Uint8Array ? Array.from(v) : v))) as Obj;
}
