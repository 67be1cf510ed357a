/** Anthropic history generators: moved to fuzz/histories/anthropic.ts, shared with the fuzz run (`npm run fuzz`). */
export * from '../../fuzz/histories/anthropic.js';
