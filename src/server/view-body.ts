import type { Fields } from '../runtime/endpoints.js';

/** True when the view is the history itself: the same objects in the same order. */
function unchanged(view: readonly unknown[], history: readonly unknown[]): boolean {
  if (view.length !== history.length) return false;
  for (let i = 0; i < view.length; i++) if (view[i] !== history[i]) return false;
  return true;
}

/**
 * The body to forward for a folded history: undefined when the view is the history itself and
 * no tool was added (the client's own bytes then go out), else the body with its list replaced by
 * the view (and `tools` by the tools with recall's), as JSON. The proxy's thread and its fold
 * threads write it with this one function, so both send the same bytes.
 */
export function viewBody(body: Fields, listField: string, history: readonly unknown[], view: readonly unknown[], tools: unknown[] | undefined): Buffer | undefined {
  if (unchanged(view, history) && !tools) return undefined;
  return Buffer.from(JSON.stringify({ ...body, [listField]: view, ...(tools ? { tools } : {}) }), 'utf8');
}
