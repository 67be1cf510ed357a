/** The independent OpenAI Responses checker: moved to fuzz/oracle/openai-responses.ts, shared with the fuzz run (`npm run fuzz`). */
export * from '../../fuzz/oracle/openai-responses.js';
