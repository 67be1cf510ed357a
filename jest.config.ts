import type { Config } from 'jest';

const config: Config = {
  testEnvironment: 'node',
  roots: ['<rootDir>/__tests__'],
  testMatch: ['**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.tsx?$': ['ts-jest', { useESM: true }] },
  // A guard against a hang, not a speed check: a busy 2-core host may take minutes over a replay
  // that takes seconds when idle, and every loop in the tests is bounded.
  testTimeout: 600_000,
  reporters: ['default', '<rootDir>/__tests__/helpers/plain-summary-reporter.mjs'],
};

export default config;
