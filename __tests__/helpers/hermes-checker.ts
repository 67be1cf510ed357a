/** The independent Hermes checker: moved to fuzz/oracle/hermes.ts, shared with the fuzz run (`npm run fuzz`). */
export * from '../../fuzz/oracle/hermes.js';
