import type { FormatName } from '../formats/lens.js';
import { isRecallToolFormat, RECALL_TOOL_FORMATS, recallToolDefinition } from './tool-definition.js';

/**
 * The recall tool definition to count into a request before its format is known for sure: the
 * format's own when it has one; for `auto`, the longest of them (counting errs high, the safe
 * side for a budget). Undefined for a named format with no recall tool definition.
 */
export function recallToolToCount(format: FormatName | 'auto'): Record<string, unknown> | undefined {
  if (format !== 'auto') return isRecallToolFormat(format) ? recallToolDefinition(format) : undefined;
  let longest: Record<string, unknown> | undefined;
  for (const f of RECALL_TOOL_FORMATS) {
    const d = recallToolDefinition(f);
    if (!longest || JSON.stringify(d).length > JSON.stringify(longest).length) longest = d;
  }
  return longest;
}

/**
 * The request's tools with the recall tool's definition (for `format`) appended, or undefined when
 * the format has none. The given list is not changed; a recall tool it already holds is not added twice.
 */
export function toolsWithRecall(tools: unknown, format: FormatName): unknown[] | undefined {
  if (!isRecallToolFormat(format)) return undefined;
  const given = Array.isArray(tools) ? tools : [];
  const definition = recallToolDefinition(format);
  const name = (t: unknown) => {
    const o = t as { name?: unknown; function?: { name?: unknown } } | null;
    return typeof o === 'object' && o !== null ? (o.name ?? o.function?.name) : undefined;
  };
  const present = given.some((t) => name(t) === name(definition));
  return present ? [...given] : [...given, definition];
}
