import { COMMANDS, FLAGS, type CommandName, type FlagSpec } from './args.js';
import { EXIT } from './cli-error.js';

const PURPOSE: Record<CommandName, string> = {
  compress: 'fit each history into the token budget without breaking tool calling',
  validate: "check each history against the provider's tool-calling rules",
  inspect: 'write one self-contained HTML page showing what a fold does to each history (offline)',
  serve: 'run an OpenAI-compatible proxy that folds every request\'s history to the model\'s window',
};

/** How each command is invoked. */
const SYNOPSIS: Record<CommandName, string> = {
  compress: 'ctxfold compress [options] [FILE|-]',
  validate: 'ctxfold validate [options] [FILE|-]',
  inspect: 'ctxfold inspect [options] [FILE|-] --html OUT.html',
  serve: 'ctxfold serve --upstream URL [options]',
};

/** The commands that read messages from FILE or standard input. */
const READS_INPUT: readonly CommandName[] = ['compress', 'validate', 'inspect'];

function flagLabel(f: FlagSpec): string {
  const names = f.short ? `-${f.short}, --${f.long}` : `--${f.long}`;
  if (!f.value) return names;
  return f.value.optional ? `${names} [${f.value.name}]` : `${names} ${f.value.name}`;
}

function table(rows: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(...rows.map(([left]) => left.length)) + 2;
  return rows.map(([left, right]) => `  ${left.padEnd(width)}${right}`);
}

/** One row per flag the command takes, by its current name only (deprecated names are never listed). */
function flagRows(command: CommandName): [string, string][] {
  const rows: [string, string][] = [];
  for (const f of FLAGS) {
    const help = f.help[command];
    if (help) rows.push([flagLabel(f), help.fallback ? `${help.summary} [default: ${help.fallback}]` : help.summary]);
  }
  rows.push(['-h, --help', 'show this help']);
  return rows;
}

const IO = [
  'Input (FILE, or standard input when FILE is omitted or "-"):',
  '  UTF-8 text: one JSON value, or JSONL. A first line that is JSON on its own starts JSONL (or is the',
  '  whole input, when nothing follows it); otherwise the whole text is parsed as one JSON value, then as JSONL.',
  ...table([
    ['[ {message}, ... ]', 'a JSON array of messages'],
    ['{ "messages": [...], ... }', 'a request body with "messages" (OpenAI Chat, Anthropic with "system", AI SDK, Qwen-Agent, Hermes)'],
    ['{ "contents": [...], ... }', 'a Gemini request body ("systemInstruction" kept and counted)'],
    ['{ "input": [...], ... }', 'an OpenAI Responses request body ("instructions" kept and counted)'],
    ['JSONL', 'one array or object as above per line; blank lines are skipped'],
  ]),
  '  JSONL is read and written record by record: each output line is written as soon as its record',
  '  is done, so memory stays bounded whatever the size of the input. A record that cannot be read',
  '  (not JSON, not messages, a message that breaks its format) is one line on standard error naming',
  '  its input line, the field and the rule; it has no output line, the run goes on with the next',
  '  record, and exits 2 at the end. In a single JSON document, the first such error stops the run.',
  '  Progress (records, tokens in and out, rate, and the time left when reading a FILE) is shown on',
  '  standard error only when it is a terminal, and never with --quiet.',
  '  A body\'s other fields are kept as they are; "system", "systemInstruction" and "instructions"',
  '  are counted into the request and never dropped.',
];

/** What compress and validate write (inspect writes its page, --html). */
const OUTPUT = [
  'Output (standard output, in the shape of the input):',
  ...table([
    ['array in', 'an object { "messages": ..., "ctxfold": ... } (an array cannot carry the report)'],
    ['object in', 'the same object with its list ("messages", "contents" or "input") set and a "ctxfold" field added'],
    ['JSONL in', 'JSONL, one line per input record, in order (none for a record that could not be read)'],
  ]),
];

const CTXFOLD_FIELD: Record<CommandName, readonly string[]> = {
  serve: [],
  compress: [
    '  compress: "messages" is the view to send; "ctxfold" is the report (tokensBefore, tokensAfter,',
    '    overBudget, dropped, collapsed, repaired, summarize, notes, ...).',
  ],
  inspect: [
    '',
    'Output of inspect: the page (--html), and one line on standard output naming it. The page shows each',
    '  history\'s groups (head, summarized, sent verbatim, kept tail, dropped, cleared, repaired), the',
    '  cut, the token split, the summary with its ledger, the facts kept and left out, and the',
    '  provider\'s check of the view. A record that cannot be read has no section: the page is written',
    '  with the others, and the run exits 2. More in docs/inspect.md.',
  ],
  validate: [
    '  validate: "messages" is unchanged; "ctxfold" is { "valid": boolean, "violations": [...] }, and',
    '    each violation is also printed on standard error.',
  ],
};

const SERVE = [
  'serve:',
  '  Routes: POST /v1/chat/completions, POST /v1/responses, POST /v1/messages (Anthropic) have their',
  '  history folded to the model\'s window, every other field and the answer (streams chunk by chunk)',
  '  pass through; GET /v1/models is passed through; GET /healthz, GET /metrics (Prometheus);',
  '  GET /v1/ctxfold/chats and GET /v1/ctxfold/chats/ID: the caller\'s own chats as JSON (summary, job,',
  '  last token split), only to the key they were made with (with --upstream-key-env, to their',
  '  --tenant-header too); 401 without either, 404 for another tenant\'s chat;',
  '  GET /ui with --ui; any other path is a 404.',
  '  A model\'s window: its --config entry, else --max-context-tokens, else ctxfold\'s table of known models.',
  '  Chat: header --chat-id-header or x-ctxfold-chat-id, else metadata.chat_id, else user, else a',
  '  fingerprint of the opening;',
  '  always inside the tenant (a hash of the caller\'s API key, or --tenant-header with --upstream-key-env).',
  '  Prints "ctxfold serve listening on http://HOST:PORT" on standard output once it listens; logs JSON',
  '  lines on standard error. SIGINT or SIGTERM: stops accepting, finishes in-flight requests, drains the',
  '  summary jobs, exits 0. More in docs/proxy.md.',
];

const EXIT_CODES = [
  'Exit codes:',
  ...table([
    [String(EXIT.ok), 'success (validate: every history is valid; serve: stopped cleanly on SIGINT or SIGTERM)'],
    [String(EXIT.violations), 'validate found a violation in at least one history; compress with --provider: a view still breaks a rule of that provider'],
    [String(EXIT.usage), 'bad input or usage; one line on standard error says where; nothing is written to standard output, except for JSONL, where the records that could be read are'],
    [String(EXIT.internal), 'internal error; set CTXFOLD_DEBUG=1 to print its stack trace'],
  ]),
];

function commandSection(command: CommandName): string[] {
  return [`Options of ${command}:`, ...table(flagRows(command))];
}

/** Help for one command, or for the whole tool; rendered from the flag table the parser uses. */
export function helpText(version: string, command?: CommandName): string {
  const commands = command ? [command] : COMMANDS;
  const usage = [
    ...commands.map((c) => [SYNOPSIS[c], PURPOSE[c]] as const),
    ...(command ? [] : [['ctxfold help [COMMAND]', 'show this help, or one command\'s'] as const, ['ctxfold --version', 'print the version'] as const]),
  ];
  const lines = [
    `ctxfold ${version}: keep long LLM conversations inside the context window without breaking tool calling.`,
    '',
    'Usage:',
    ...table(usage),
    '',
    ...commands.flatMap((c) => [...commandSection(c), '']),
    `  An option takes its value as the next word or after "=" (${command === 'serve' ? '--port=8080' : '--format=openai'}). "--" ends the options.`,
    ...(commands.some((c) => c !== 'validate') ? ['  --tool-output-trim takes the next word only when it is a number.'] : []),
    ...(commands.some((c) => READS_INPUT.includes(c)) ? ['', ...IO] : []),
    ...(commands.includes('compress') || commands.includes('validate') ? ['', ...OUTPUT] : []),
    ...(commands.some((c) => READS_INPUT.includes(c)) ? commands.flatMap((c) => CTXFOLD_FIELD[c]) : []),
    ...(commands.includes('serve') ? ['', ...SERVE] : []),
    '',
    ...EXIT_CODES,
    '',
  ];
  return lines.join('\n');
}
