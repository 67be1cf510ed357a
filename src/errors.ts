/**
 * Bad input from a caller: `path` names the field (`messages[3].role`, `options.keepLast`), the
 * message says which rule it breaks and what was found. Never thrown for a provider-valid history.
 */
export class CtxfoldInputError extends Error {
  readonly path: string;
  constructor(path: string, rule: string) {
    super(`${path}: ${rule}`);
    this.name = 'CtxfoldInputError';
    this.path = path;
  }
}
