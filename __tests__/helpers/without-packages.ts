import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project root: a script written here resolves `ctxfold` and its subpaths through the package's own exports. */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Runs the ES module `code` in a fresh `node` whose module resolution cannot find `packages`
 * (each name and its subpaths, e.g. `@langchain/` for a scope), as in a project that never
 * installed them. The script is written in the project root so `import('ctxfold/...')` resolves
 * to the built package; it is removed afterwards. `nodeArgs` go to that node before the script
 * (e.g. `--no-experimental-sqlite`, as on a Node without `node:sqlite`).
 */
export function runWithoutPackages(packages: readonly string[], code: string, { timeoutMs = 30_000, nodeArgs = [] }: { timeoutMs?: number; nodeArgs?: readonly string[] } = {}): { status: number | null; stdout: string; stderr: string } {
  const hook = `const hidden = ${JSON.stringify(packages)};
export async function resolve(specifier, context, next) {
  if (hidden.some((p) => p.endsWith('/') ? specifier.startsWith(p) : specifier === p || specifier.startsWith(p + '/'))) {
    const error = new Error("Cannot find package '" + specifier + "' imported from " + context.parentURL);
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return next(specifier, context);
}`;
  const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`;
  const script = join(ROOT, `.without-packages-${process.pid}-${Date.now()}.mjs`);
  writeFileSync(script, code);
  try {
    const r = spawnSync(process.execPath, [...nodeArgs, '--import', `data:text/javascript,${encodeURIComponent(register)}`, script], { cwd: ROOT, encoding: 'utf8', timeout: timeoutMs });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  } finally {
    rmSync(script, { force: true });
  }
}
