import { describe, expect, test } from '@jest/globals';
import { runWithoutPackages } from '../helpers/without-packages.js';

// Runs the built package (`npm run build` first), as a project that never installed ioredis would.
describe('ctxfold/redis is the only entry that needs ioredis', () => {
  const withoutIoredis = (code: string) => runWithoutPackages(['ioredis'], code);

  test("import('ctxfold/redis') without ioredis fails with one line naming the package to install", () => {
    const r = withoutIoredis(`try { await import('ctxfold/redis'); console.log('loaded'); } catch (e) { console.log(e.name + ': ' + e.message); }\n`);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^StoreError: ctxfold\/redis: needs the package ioredis, which is not installed: run `npm install ioredis`$/);
  });

  test("import('ctxfold') and a compressor work where ioredis is not installed", () => {
    const r = withoutIoredis(`const m = await import('ctxfold');
const c = m.createCompressor();
await c.wrap(async (req) => req.messages.length)({ chatId: 'a', messages: [{ role: 'user', content: 'hi' }] });
await c.close();
console.log('ok');\n`);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('ok');
  });

  test("with ioredis, ctxfold/redis exports RedisStore and hasLeases", () => {
    const r = runWithoutPackages([], `const m = await import('ctxfold/redis');
console.log(typeof m.RedisStore, typeof m.hasLeases, m.hasLeases(new m.RedisStore({ url: 'redis://127.0.0.1:1' })));
process.exit(0);\n`);
    expect(r.stdout.trim()).toBe('function function true');
  });
});
