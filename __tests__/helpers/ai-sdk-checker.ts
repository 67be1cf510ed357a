/** The independent AI SDK checker: moved to fuzz/oracle/ai-sdk.ts, shared with the fuzz run (`npm run fuzz`). */
export * from '../../fuzz/oracle/ai-sdk.js';
