/**
 * The lens contract, defined in core/lens.ts (the core reads every message through it, and a
 * folder the core imports from cannot also import the core). Re-exported here so every format,
 * and every caller that reads `formats/lens.js`, keeps its import.
 */
export * from '../core/lens.js';
