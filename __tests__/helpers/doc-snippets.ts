/**
 * The code blocks of the project's markdown, read and run as a reader pastes them.
 *
 * A block is a fenced ```js / ```mjs / ```ts / ```sh (or bash, shell) block; any other fence
 * (```json, a bare ``` showing output) is text, not a snippet. A block that cannot run here says so
 * on the line right before its fence, `<!-- snippet: needs OPENAI_API_KEY -->`: it is only checked
 * to parse. A snippet states what it prints in comments, `// prints: TEXT` (js, ts) or
 * `# prints: TEXT` (sh, after the command it belongs to); `<name>` in TEXT stands for any text.
 * A sh command that exits with another status than 0 says so in its own line's comment, `# exit 1`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

export type SnippetLanguage = 'js' | 'ts' | 'sh';

/** One fenced block of a markdown file. */
export interface Snippet {
  /** `README.md:19`: the file (from the project root) and the line of its opening fence. */
  readonly where: string;
  readonly language: SnippetLanguage;
  readonly code: string;
  /** Why it is not run here (its `<!-- snippet: ... -->` marker), or undefined: it runs. */
  readonly notRun?: string;
  /** What it says it prints, in order of the comments. */
  readonly prints: readonly string[];
}

/** What running a snippet gave. */
export interface SnippetRun {
  /** Empty when every command exited as stated and printed what the snippet says. */
  readonly problems: readonly string[];
  readonly output: string;
}

const LANGUAGES: Record<string, SnippetLanguage> = { js: 'js', mjs: 'js', javascript: 'js', ts: 'ts', typescript: 'ts', sh: 'sh', bash: 'sh', shell: 'sh' };
const MARKER = /^<!--\s*snippet:\s*(.+?)\s*-->$/;
/** Generous: a guard against a hang on a busy host, not a speed check. */
const HANG_GUARD_MS = 300_000;

/** Every markdown file under `dir` (relative to `root`), sorted. */
export function markdownFiles(root: string, dir: string): string[] {
  const found: string[] = [];
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) found.push(relative(root, path));
    }
  };
  walk(join(root, dir));
  return found.sort();
}

/** The snippets of one markdown file (`file` relative to `root`), in order. A fence may be indented (inside a list item). */
export function snippetsOf(root: string, file: string): Snippet[] {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const snippets: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\S*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const [, indent, tag] = open;
    let end = i + 1;
    while (end < lines.length && lines[end].trim() !== '```') end++;
    if (end === lines.length) throw new Error(`${file}:${i + 1}: a code block that is never closed`);
    const language = LANGUAGES[tag.toLowerCase()];
    if (language !== undefined) {
      const code = lines.slice(i + 1, end).map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l)).join('\n') + '\n';
      let before = i - 1;
      while (before >= 0 && lines[before].trim() === '') before--;
      const notRun = before >= 0 ? MARKER.exec(lines[before].trim())?.[1] : undefined;
      snippets.push({ where: `${file}:${i + 1}`, language, code, notRun, prints: printsOf(code, language) });
    }
    i = end;
  }
  return snippets;
}

/** The texts a snippet's `prints:` comments name. */
function printsOf(code: string, language: SnippetLanguage): string[] {
  const comment = language === 'sh' ? /#\s*prints:\s?(.*)$/ : /\/\/\s*prints:\s?(.*)$/;
  return code.split('\n').map((l) => comment.exec(l)?.[1]?.trimEnd()).filter((t): t is string => t !== undefined && t !== '');
}

/** `TEXT` of a `prints:` comment as a pattern: literal, but for `<name>` placeholders, which match any text on the line. */
function printedPattern(text: string): RegExp {
  const parts = text.split(/<[a-z][a-z ]*>/);
  return new RegExp(parts.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^\\n]+?'));
}

/** The problems of an output against what the snippet says it prints (empty: all there). */
function missingPrints(output: string, prints: readonly string[]): string[] {
  return prints.filter((p) => !printedPattern(p).test(output)).map((p) => `did not print "${p}"`);
}

/** The JavaScript a reader runs for a js or ts snippet (ts is stripped of its types as `tsc` would). */
function javascriptOf(snippet: Snippet): { code: string; problems: string[] } {
  if (snippet.language === 'js') return { code: snippet.code, problems: [] };
  const out = ts.transpileModule(snippet.code, { reportDiagnostics: true, compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
  const problems = (out.diagnostics ?? []).map((d) => `TypeScript: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
  return { code: out.outputText, problems };
}

/**
 * A scratch directory inside the project, so `import ... from 'ctxfold'` in a file written there
 * resolves to this package (a package's self-reference through its exports map, as a user's
 * `node_modules/ctxfold` would): the built `dist/`. Files a snippet writes in its working
 * directory land there too, and go with it.
 */
export function scratchDir(root: string): string {
  return mkdtempSync(join(root, '.snippet-run-'));
}

/** Removes a scratch directory. */
export function removeScratch(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Runs a js or ts snippet with node in `scratch` (a `scratchDir`): it must exit 0 and print what it says. */
function runScript(snippet: Snippet, scratch: string, name: string): SnippetRun {
  const { code, problems } = javascriptOf(snippet);
  if (problems.length > 0) return { problems, output: '' };
  const file = join(scratch, `${name}.mjs`);
  writeFileSync(file, code);
  const r = spawnSync(process.execPath, [file], { cwd: scratch, encoding: 'utf8', timeout: HANG_GUARD_MS });
  const found = r.status === 0 ? [] : [`exited with ${r.status ?? r.signal}: ${r.stderr.trim().slice(-2000)}`];
  return { problems: [...found, ...missingPrints(r.stdout, snippet.prints)], output: r.stdout };
}

/** One command of a sh snippet: its text (continuation lines joined), the status it states, what it prints. */
interface ShCommand {
  readonly text: string;
  readonly status: number;
  readonly prints: string[];
}

/** The commands of a sh snippet; comment lines belong to the command before them. */
function commandsOf(code: string): ShCommand[] {
  const commands: ShCommand[] = [];
  const lines = code.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '') continue;
    if (line.startsWith('#')) {
      const printed = /^#\s*prints:\s?(.*)$/.exec(line)?.[1]?.trimEnd();
      if (printed && commands.length > 0) commands.at(-1)!.prints.push(printed);
      continue;
    }
    let text = lines[i];
    while (text.trimEnd().endsWith('\\') && i + 1 < lines.length) text = `${text.trimEnd().slice(0, -1)} ${lines[++i].trim()}`;
    const status = Number(/#\s*exit (\d+)/.exec(text)?.[1] ?? 0);
    const printed = /#\s*prints:\s?(.*)$/.exec(text)?.[1]?.trimEnd();
    commands.push({ text, status, prints: printed ? [printed] : [] });
  }
  return commands;
}

/**
 * Runs a sh snippet in the project root, each command on its own, as a reader types them:
 * `npx ctxfold` is the package's bin, here the built `dist/src/cli/main.js` (npx would otherwise
 * look the name up in the registry). Each command must exit with the status it states (0 unless
 * `# exit N`) and print (on standard output or error, as a terminal shows both) what it says.
 */
function runShell(snippet: Snippet, root: string): SnippetRun {
  const problems: string[] = [];
  let output = '';
  const bin = join(root, 'dist', 'src', 'cli', 'main.js');
  for (const command of commandsOf(snippet.code)) {
    const text = command.text.replace(/(^|[;&|]\s*)npx ctxfold\b/g, `$1"${process.execPath}" "${bin}"`);
    const r = spawnSync('bash', ['-c', text], { cwd: root, encoding: 'utf8', timeout: HANG_GUARD_MS });
    const printed = `${r.stdout}${r.stderr}`;
    output += printed;
    if (r.status !== command.status) problems.push(`${command.text.trim()}: exited with ${r.status ?? r.signal}, not ${command.status}: ${r.stderr.trim().slice(-2000)}`);
    problems.push(...missingPrints(printed, command.prints).map((p) => `${command.text.trim()}: ${p}`));
  }
  return { problems, output };
}

/** Runs a snippet as its reader would (js and ts in `scratch`, sh in the project root). */
export function runSnippet(snippet: Snippet, root: string, scratch: string, name: string): SnippetRun {
  return snippet.language === 'sh' ? runShell(snippet, root) : runScript(snippet, scratch, name);
}

/** Checks that a snippet not run here still parses: `node --check` for js and ts, `bash -n` for sh. Empty: it does. */
export function parseProblems(snippet: Snippet, scratch: string, name: string): string[] {
  if (snippet.language === 'sh') {
    const r = spawnSync('bash', ['-n'], { input: snippet.code, encoding: 'utf8' });
    return r.status === 0 ? [] : [`bash -n: ${r.stderr.trim()}`];
  }
  const { code, problems } = javascriptOf(snippet);
  if (problems.length > 0) return problems;
  const file = join(scratch, `${name}.mjs`);
  writeFileSync(file, code);
  const r = spawnSync(process.execPath, ['--check', file], { encoding: 'utf8' });
  return r.status === 0 ? [] : [`node --check: ${r.stderr.trim()}`];
}
