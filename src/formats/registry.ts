import { InputError } from '../errors.js';
import type { FormatName, MessageLens } from './lens.js';
import { openaiChatLens } from './openai-chat/lens.js';

/** Lenses that ship, by format name. Formats listed in `FormatName` but absent here are not built yet. */
export const LENSES: Partial<Record<FormatName, MessageLens<any>>> = {
  openai: openaiChatLens,
};

/** The format names `--format` / `options.format` accept today. */
export const SUPPORTED_FORMATS = Object.keys(LENSES) as FormatName[];

/**
 * Returns the lens for a named format, or detects it from the messages (`auto`). Throws a
 * `InputError` naming the first message that fits no shipped format, and the rule it breaks.
 * Messages before `from` are taken as already checked.
 */
export function selectLens(messages: unknown, format: FormatName | 'auto' = 'auto', path = 'messages', from = 0): MessageLens<any> {
  if (!Array.isArray(messages)) throw new InputError(path, `must be an array of messages, got ${messages === null ? 'null' : typeof messages}`);
  let lens: MessageLens<any> | undefined;
  if (format === 'auto') {
    lens = SUPPORTED_FORMATS.map((f) => LENSES[f]!).find((l) => {
      for (let i = from; i < messages.length; i++) if (l.problem(messages[i]) !== undefined) return false;
      return true;
    });
    if (!lens) lens = openaiChatLens; // report the problem in terms of the default format
  } else {
    lens = LENSES[format];
    if (!lens) throw new InputError('format', `unsupported format ${JSON.stringify(format)} (supported: ${SUPPORTED_FORMATS.join(', ')}, auto)`);
  }
  // Messages before `from` were read with this lens before (a remembered history) and are not checked again.
  for (let i = from; i < messages.length; i++) {
    const p = lens.problem(messages[i]);
    if (p) throw new InputError(`${path}[${i}]${p.field}`, p.rule);
  }
  return lens;
}
