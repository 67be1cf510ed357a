/** The OpenAI Chat pairing oracle: moved to fuzz/oracle/openai.ts, shared with the fuzz run (`npm run fuzz`). */
export * from '../../fuzz/oracle/openai.js';
