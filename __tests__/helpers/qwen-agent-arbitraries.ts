/** Qwen-Agent history generators: moved to fuzz/histories/qwen-agent.ts, shared with the fuzz run (`npm run fuzz`). */
export * from '../../fuzz/histories/qwen-agent.js';
