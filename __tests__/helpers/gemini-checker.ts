/** The independent Gemini checker: moved to fuzz/oracle/gemini.ts, shared with the fuzz run (`npm run fuzz`). */
export * from '../../fuzz/oracle/gemini.js';
