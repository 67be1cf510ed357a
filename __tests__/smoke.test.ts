import { describe, expect, test } from '@jest/globals';
import { compressContext } from '../src/index.js';

describe('compressContext', () => {
  test('returns a short history unchanged', () => {
    const messages = [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }];
    const r = compressContext(messages);
    expect(r.messages).toEqual(messages);
    expect(r.messages[0]).toBe(messages[0]);
    expect(r.report.dropped).toHaveLength(0);
  });
});
