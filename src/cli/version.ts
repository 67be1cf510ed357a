import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The version in ctxfold's own package.json, found by walking up from this file (it sits at a
 * different depth in `src/` and in `dist/src/`). Never throws: `unknown` if it cannot be read.
 */
export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      try {
        const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
        if (pkg.name === 'ctxfold' && typeof pkg.version === 'string') return pkg.version;
      } catch {
        // not ours or unreadable: keep walking up
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return 'unknown';
    dir = parent;
  }
}
