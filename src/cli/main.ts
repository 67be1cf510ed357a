#!/usr/bin/env node
/**
 * `ctxfold compress|validate|inspect [options] [FILE|-]`: parse the command line, read the input record
 * by record, run the command on each, write each result in the input's shape as soon as it is done. `ctxfold serve` runs the proxy
 * until SIGINT or SIGTERM. Every failure a user can fix is
 * one stderr line and exit 2; anything else is an internal error (exit 70).
 */
import { parseArgs } from './args.js';
import { CliError, describeFailure, EXIT, oneLine } from './cli-error.js';
import { helpText } from './help.js';
import { openInput } from './input-stream.js';
import { runRecords } from './record-loop.js';
import { createValidateCommand } from './validate-command.js';
import { packageVersion } from './version.js';

const printError = (line: string) => process.stderr.write(`ctxfold: ${oneLine(line)}\n`);

async function main(argv: readonly string[]): Promise<number> {
  const invocation = parseArgs(argv);
  if (invocation.kind === 'help') {
    process.stdout.write(helpText(packageVersion(), invocation.command));
    return EXIT.ok;
  }
  if (invocation.kind === 'version') {
    process.stdout.write(`${packageVersion()}\n`);
    return EXIT.ok;
  }
  const { command, file, options, notices } = invocation;
  for (const line of notices) printError(line);
  // Loaded on demand: only serve needs the HTTP server, the metrics and the logger.
  if (command === 'serve') return (await import('./serve-command.js')).runServe(options);
  if (file === undefined && process.stdin.isTTY) {
    throw new CliError(`no input: give a FILE, "-", or pipe JSON into ctxfold ${command} (see ctxfold --help)`);
  }
  // Loaded on demand: inspect and compress need the tokenizer, whose WASM takes a while to load.
  if (command === 'inspect') return (await import('./inspect-command.js')).runInspect(await openInput(file, true), options);
  const run = command === 'compress' ? (await import('./compress-command.js')).createCompressCommand(options) : createValidateCommand(options);
  // Indented output waits for the layout (a one-line document or JSONL); compact output does not.
  return runRecords(await openInput(file, !options.pretty), run, options);
}

function fail(error: unknown): number {
  const { line, stack, exitCode } = describeFailure(error, process.env.CTXFOLD_DEBUG === '1');
  printError(line);
  if (stack) process.stderr.write(`${stack}\n`);
  return exitCode;
}

// A reader that stops early (`ctxfold compress big.jsonl | head`) is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  process.exit(error.code === 'EPIPE' ? (process.exitCode ?? EXIT.ok) : fail(error));
});

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (error: unknown) => { process.exitCode = fail(error); },
);
