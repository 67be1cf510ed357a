#!/usr/bin/env node
/**
 * `ctxfold compress|validate [options] [FILE|-]`: parse the command line, read and split the
 * input, run the command, write the result in the input's shape. `ctxfold serve` runs the proxy
 * until SIGINT or SIGTERM. Every failure a user can fix is
 * one stderr line and exit 2; anything else is an internal error (exit 70).
 */
import { parseArgs } from './args.js';
import { CliError, describeFailure, EXIT, oneLine } from './cli-error.js';
import { helpText } from './help.js';
import { parseInput, readInput } from './input.js';
import { renderOutputs, writeChunks } from './output.js';
import { runValidate } from './validate-command.js';
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
  const { command, file, options } = invocation;
  // Loaded on demand: only serve needs the HTTP server, the metrics and the logger.
  if (command === 'serve') return (await import('./serve-command.js')).runServe(options);
  if (file === undefined && process.stdin.isTTY) {
    throw new CliError(`no input: give a FILE, "-", or pipe JSON into ctxfold ${command} (see ctxfold --help)`);
  }
  const input = parseInput(await readInput(file));
  // Loaded on demand: only compress needs the tokenizer, whose WASM takes a while to load.
  const result = command === 'compress' ? await (await import('./compress-command.js')).runCompress(input, options) : runValidate(input, options);
  for (const line of result.diagnostics) printError(line);
  await writeChunks(process.stdout, renderOutputs(input.shape, result.outputs, options.pretty));
  return result.exitCode;
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
