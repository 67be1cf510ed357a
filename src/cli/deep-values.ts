import { MAX_NESTING, pathDeeperThan, pathText } from '../core/nesting.js';
import { CliError } from './cli-error.js';

/**
 * Refuses a record holding a value nested more than `MAX_NESTING` levels deep, naming the field
 * (`input line 3: messages[2].content[0].input.a.a...: is nested more than 256 levels deep`).
 * Everything the CLI reads or writes walks values recursively (the lens, fingerprints, and
 * `JSON.stringify` of the output), so such a value, anywhere in the record, is bad input (exit 2),
 * never a stack overflow. Each message, and each other field of a request body, counts from its own
 * first level, as the library counts messages, tools and instructions.
 */
export function refuseDeepValues(value: unknown, where: string): void {
  const refuse = (base: string, child: unknown) => {
    const steps = pathDeeperThan(child, MAX_NESTING);
    if (steps) throw new CliError(`${where}: ${pathText(base, steps)}: is nested more than ${MAX_NESTING} levels deep; ctxfold does not read values this deep`);
  };
  const list = (field: string, items: readonly unknown[]) => items.forEach((item, i) => refuse(`${field}[${i}]`, item));
  if (Array.isArray(value)) return list('messages', value);
  if (typeof value !== 'object' || value === null) return;
  for (const [field, child] of Object.entries(value)) {
    const base = pathText('', [field]);
    if (Array.isArray(child)) list(base, child);
    else refuse(base, child);
  }
}
