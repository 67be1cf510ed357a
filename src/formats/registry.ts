import { InputError } from '../errors.js';
import { memoizedLens, type FormatName, type MessageLens } from './lens.js';
import { evidenceIn, type Evidence } from './evidence.js';
import { openaiChatLens } from './openai-chat/lens.js';
import { qwenAgentLens } from './qwen-agent/lens.js';
import { hermesLens } from './hermes/lens.js';
import { anthropicLens } from './anthropic/lens.js';
import { aiSdkLens } from './ai-sdk/lens.js';
import { openaiResponsesLens } from './openai-responses/lens.js';
import { geminiLens } from './gemini/lens.js';

/** Lenses that ship, by format name. Formats listed in `FormatName` but absent here are not built yet. */
export const LENSES: Partial<Record<FormatName, MessageLens<any>>> = {
  openai: openaiChatLens,
  'qwen-agent': qwenAgentLens,
  hermes: hermesLens,
  anthropic: anthropicLens,
  'ai-sdk': aiSdkLens,
  'openai-responses': openaiResponsesLens,
  gemini: geminiLens,
};

/** The format names `--format` / `options.format` accept today. */
export const SUPPORTED_FORMATS = Object.keys(LENSES) as FormatName[];

/** What a format is called in messages to the user. */
const FORMAT_TITLES: Readonly<Record<FormatName, string>> = {
  openai: 'OpenAI Chat Completions',
  'openai-responses': 'OpenAI Responses',
  anthropic: 'Anthropic Messages',
  gemini: 'Gemini',
  'ai-sdk': 'Vercel AI SDK',
  'qwen-agent': 'Qwen-Agent',
  hermes: 'Hermes (<tool_call> text)',
};

const listed = (evidence: readonly Evidence[]) => evidence.slice(0, 2).map((e) => `${e.what} at messages[${e.index}]`).join(', ');

/** How a lens was chosen: named by the caller, detected by evidence, or the default for a history with no tool traffic. */
export type LensOrigin = 'named' | 'evidence' | 'default';

/**
 * The lens to read `messages` with, detected by positive evidence (`auto`) or named. Detection
 * picks a format only from features that belong to it (see `evidence.ts`): evidence of a format
 * that does not ship yet, or of two formats at once, is an `InputError` naming the candidates and
 * what was seen, so nothing is ever read, repaired or dropped on a guess. A history with no tool
 * traffic at all (plain role/content messages) has nothing to pair and is read as OpenAI Chat.
 * Every message from `from` on is then checked against the lens (`from`: messages already read
 * with it, for a remembered history). The lens returned reads each message object once (a fresh
 * memo per call, so one request never sees readings of objects a caller changed since), unless
 * its reading is cheaper than remembering it (`cheapRead`): it then reads again when asked.
 */
export function selectLens(messages: unknown, format: FormatName | 'auto' = 'auto', path = 'messages', from = 0): MessageLens<any> {
  return chooseLens(messages, format, path, from).lens;
}

/**
 * `selectLens`, also saying how the lens was chosen (repair runs only on a named or detected
 * format) and whether a message from `from` on breaks one of the lens's shape rules (`misshapen`:
 * repair has something to fix or refuse even where the calls pair).
 */
export function chooseLens(messages: unknown, format: FormatName | 'auto' = 'auto', path = 'messages', from = 0): { lens: MessageLens<any>; origin: LensOrigin; misshapen: boolean } {
  if (!Array.isArray(messages)) throw new InputError(path, `must be an array of messages, got ${messages === null ? 'null' : typeof messages}`);
  let lens: MessageLens<any> | undefined;
  let origin: LensOrigin = 'named';
  if (format === 'auto') {
    const found = evidenceIn(messages, from);
    const formats = [...found.keys()];
    if (formats.length > 1) {
      throw new InputError(path, `the messages point to more than one format: ${formats.map((f) => `${FORMAT_TITLES[f]} (${listed(found.get(f)!)})`).join('; ')}; pass format to say which (supported: ${SUPPORTED_FORMATS.join(', ')})`);
    }
    const detected = formats[0] ?? 'openai';
    origin = formats.length === 0 ? 'default' : 'evidence';
    lens = LENSES[detected];
    if (!lens) {
      throw new InputError(path, `the messages are ${FORMAT_TITLES[detected]} (${listed(found.get(detected)!)}), which ctxfold does not read yet (supported: ${SUPPORTED_FORMATS.join(', ')}); nothing was changed`);
    }
  } else {
    lens = LENSES[format];
    if (!lens) throw new InputError('format', `unsupported format ${JSON.stringify(format)} (supported: ${SUPPORTED_FORMATS.join(', ')}, auto)`);
  }
  // Messages before `from` were read with this lens before (a remembered history) and are not checked again.
  const shapeRules = lens.shapeRules ?? [];
  let misshapen = false;
  for (let i = from; i < messages.length; i++) {
    const p = lens.problem(messages[i]);
    if (p) throw new InputError(`${path}[${i}]${p.field}`, p.rule);
    if (!misshapen) for (const rule of shapeRules) if (rule.fault(messages[i])) misshapen = true;
  }
  return { lens: memoizedLens(lens), origin, misshapen };
}
