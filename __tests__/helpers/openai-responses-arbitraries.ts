/** OpenAI Responses history generators: moved to fuzz/histories/openai-responses.ts, shared with the fuzz run (`npm run fuzz`). */
export * from '../../fuzz/histories/openai-responses.js';
