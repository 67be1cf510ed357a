// Lists the largest functions of src/ by lines, read with the TypeScript compiler API.
// A function's size is the lines from its first to its last (nested closures included, as a
// reader of it reads them); every function, method, accessor, constructor and arrow counts.
// Usage: node scripts/largest-functions.mjs [how many, default 10] [folder, default src]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const most = Number(process.argv[2] ?? 10);
const root = process.argv[3] ?? 'src';

function* sourceFiles(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sourceFiles(path);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) yield path;
  }
}

/** The name a reader would look the function up by. */
function nameOf(node) {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  if (node.name) return node.name.getText();
  const p = node.parent;
  if (p && ts.isVariableDeclaration(p) && ts.isIdentifier(p.name)) return p.name.text;
  if (p && ts.isPropertyAssignment(p)) return p.name.getText();
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  return '(anonymous)';
}

const rows = [];
for (const file of sourceFiles(root)) {
  const text = readFileSync(file, 'utf8');
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      rows.push({ lines: end - start + 1, name: nameOf(node), where: `${relative('.', file)}:${start + 1}` });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}
rows.sort((a, b) => b.lines - a.lines);
for (const r of rows.slice(0, most)) console.log(`${String(r.lines).padStart(5)}  ${r.name}  ${r.where}`);
