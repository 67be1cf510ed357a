/** Hermes history generators: moved to fuzz/histories/hermes.ts, shared with the fuzz run (`npm run fuzz`). */
export * from '../../fuzz/histories/hermes.js';
