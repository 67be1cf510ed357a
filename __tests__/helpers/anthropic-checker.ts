/** The independent Anthropic checker: moved to fuzz/oracle/anthropic.ts, shared with the fuzz run (`npm run fuzz`). */
export * from '../../fuzz/oracle/anthropic.js';
