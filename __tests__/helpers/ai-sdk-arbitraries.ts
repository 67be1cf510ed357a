/** AI SDK history generators: moved to fuzz/histories/ai-sdk.ts, shared with the fuzz run (`npm run fuzz`). */
export * from '../../fuzz/histories/ai-sdk.js';
