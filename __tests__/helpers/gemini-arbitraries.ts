/** Gemini history generators: moved to fuzz/histories/gemini.ts, shared with the fuzz run (`npm run fuzz`). */
export * from '../../fuzz/histories/gemini.js';
