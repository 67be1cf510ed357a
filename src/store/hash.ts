import { createHash } from 'node:crypto';

/**
 * The `coveredHash` of a chat state: sha1 (hex) over the covered ids joined with `'\n'`.
 * Invariant: the same ids in the same order always give the same hash, so a changed, removed or
 * reordered covered message changes it. It is a quick check, not the authority: `coveredIds`
 * themselves are. Ids holding `'\n'` can collide (`['a\nb']` and `['a', 'b']`), as do `[]` and
 * `['']`; message ids (`${position}:${fingerprint}` or a provider's id) contain neither case.
 */
export function hashCoveredIds(ids: readonly string[]): string {
  return createHash('sha1').update(ids.join('\n')).digest('hex');
}
