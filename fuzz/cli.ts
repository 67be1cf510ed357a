#!/usr/bin/env node
/** The fuzz run's entry point (`npm run fuzz -- ...`): see main.ts. */
import { fuzzMain } from './main.js';

fuzzMain(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (error: unknown) => {
    process.stderr.write(`fuzz: the run itself failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = 2;
  },
);
