/**
 * No import cycles between the folders of src/. Every src/**\/*.ts is read and its relative
 * imports parsed: static `import ... from`, `export ... from`, side-effect `import '...'`,
 * dynamic `import('...')`, and `import type` / `export type` as well. Type-only imports count:
 * they erase at run time, but they are what layering is about (a folder that names another's
 * types depends on it), and a type cycle is one move away from a value cycle.
 *
 * Each file belongs to its top-level folder under src/ (core, formats, runtime, recall, store,
 * server, adapters, cli, summarize, tokens...; files directly in src/ are "root"), except the
 * public entries: each file package.json "exports" names (src/index.ts, core/index.ts,
 * store/sqlite.ts...) is a node of its own, "entry <subpath>". An entry gathers the names of its
 * subpath from wherever they live (`ctxfold/core` re-exports the OpenAI Chat lens of formats/,
 * whose lenses import the core), so it stands above the folders, not inside one; an import of an
 * entry from inside src/ is an edge to that node, and a cycle through it is still found.
 *
 * The graph has an edge a -> b when a file of a imports a file of b; every strongly connected
 * component of more than one node is a cycle, and the test lists them all.
 *
 * ALLOWED lists the cycles known and not yet broken, each with its reason; any other cycle fails.
 */
import { describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

/** Known cycles (folders sorted, joined by ' <-> '), each with why it is still here. */
const ALLOWED: Readonly<Record<string, string>> = {};

/** The relative module specifiers a source imports or re-exports, type-only ones included. */
function relativeImports(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const specs = [
    ...code.matchAll(/\b(?:import|export)\s+(?:type\s+)?[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g),
    ...code.matchAll(/\bimport\s*['"]([^'"]+)['"]/g),
    ...code.matchAll(/\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]);
  return specs.filter((s) => s.startsWith('./') || s.startsWith('../'));
}

/** Source file of each public entry (package.json "exports": dist/src/x.js is src/x.ts) -> its node name. */
function entries(): Map<string, string> {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, string | { import?: string }> };
  const out = new Map<string, string>();
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    const built = typeof target === 'string' ? target : target.import;
    if (!built?.startsWith('./dist/src/') || !built.endsWith('.js')) continue;
    out.set(join(root, built.slice('./dist/'.length).replace(/\.js$/, '.ts')), `entry ${join('ctxfold', subpath)}`);
  }
  return out;
}

const ENTRIES = entries();

/** The node of a file under src/: its entry name, or its top-level folder ("root" for a file directly in src/). */
function folderOf(file: string): string {
  const entry = ENTRIES.get(file);
  if (entry !== undefined) return entry;
  const parts = relative(src, file).split(sep);
  return parts.length === 1 ? 'root' : parts[0];
}

/** Folder -> folders it imports from, with one importing file named per edge. */
function folderGraph(): Map<string, Map<string, string>> {
  const files = readdirSync(src, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name));
  const graph = new Map<string, Map<string, string>>();
  for (const file of files) {
    const from = folderOf(file);
    if (!graph.has(from)) graph.set(from, new Map());
    for (const spec of relativeImports(readFileSync(file, 'utf8'))) {
      const target = normalize(join(dirname(file), spec));
      if (relative(src, target).startsWith('..')) continue;
      const to = folderOf(target);
      if (to !== from && !graph.get(from)!.has(to)) graph.get(from)!.set(to, `${relative(root, file)} -> ${spec}`);
    }
  }
  return graph;
}

/** Strongly connected components (Tarjan), each sorted; only those of more than one node. */
function cycles(graph: ReadonlyMap<string, ReadonlyMap<string, string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) out.push(scc.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return out.sort((a, b) => a.join().localeCompare(b.join()));
}

describe('src/ folders import one another without cycles', () => {
  const graph = folderGraph();

  test('the parse finds every kind of relative import, type-only ones included', () => {
    const source = [
      "import { a } from './a.js';",
      "import type { B } from '../b/b.js';",
      "export { c } from './c.js';",
      "export type { D } from './d.js';",
      "export * from './e.js';",
      "import './f.js';",
      "const g = await import('./g.js');",
      "import {\n  h,\n  type H,\n} from './h.js';",
      "import z from 'zod';",
      "// import { x } from './commented.js';",
      "/* import { y } from './block.js'; */",
    ].join('\n');
    expect(relativeImports(source).sort()).toEqual(['../b/b.js', './a.js', './c.js', './d.js', './e.js', './f.js', './g.js', './h.js']);
  });

  test('the cycle finder reports a component of several folders and nothing else', () => {
    const g = new Map([
      ['a', new Map([['b', '']])],
      ['b', new Map([['c', '']])],
      ['c', new Map([['a', ''], ['d', '']])],
      ['d', new Map<string, string>()],
    ]);
    expect(cycles(g)).toEqual([['a', 'b', 'c']]);
  });

  test('the graph covers the folders of src/ and every public entry, each entry a file that exists', () => {
    expect([...graph.keys()]).toEqual(expect.arrayContaining(['root', 'core', 'formats', 'runtime', 'recall', 'store', 'server', 'adapters', 'entry ctxfold', 'entry ctxfold/core']));
    expect(ENTRIES.size).toBeGreaterThanOrEqual(9);
    for (const [file, name] of ENTRIES) expect({ name, node: graph.has(name) ? name : `${relative(root, file)} not found` }).toEqual({ name, node: name });
  });

  test('no cycle between folders other than the allowed ones, each edge of a cycle named by one of its imports', () => {
    const found = cycles(graph).map((scc) => {
      const edges = scc.flatMap((a) => scc.filter((b) => graph.get(a)?.has(b)).map((b) => `${a} -> ${b} (${graph.get(a)!.get(b)})`));
      return { cycle: scc.join(' <-> '), edges };
    });
    expect(found.filter((c) => !(c.cycle in ALLOWED))).toEqual([]);
  });

  test('the proxy and the adapters are peers on the runtime: neither imports the other', () => {
    expect([...graph.get('server')!].filter(([to]) => to === 'adapters')).toEqual([]);
    expect([...graph.get('adapters')!].filter(([to]) => to === 'server')).toEqual([]);
  });

  test('every allowed cycle still exists (a broken one leaves the list)', () => {
    const now = new Set(cycles(graph).map((scc) => scc.join(' <-> ')));
    expect(Object.keys(ALLOWED).filter((c) => !now.has(c))).toEqual([]);
  });
});
