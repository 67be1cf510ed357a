/** OpenAI Chat history generators: moved to fuzz/histories/openai.ts, shared with the fuzz run (`npm run fuzz`). */
export * from '../../fuzz/histories/openai.js';
