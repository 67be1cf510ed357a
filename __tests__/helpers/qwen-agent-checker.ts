/** The independent Qwen-Agent checker: moved to fuzz/oracle/qwen-agent.ts, shared with the fuzz run (`npm run fuzz`). */
export * from '../../fuzz/oracle/qwen-agent.js';
