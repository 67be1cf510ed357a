import { describe, expect, test } from '@jest/globals';
import { json } from '../helpers/upstream-server.js';
import { chatCompletion, post, RECALL_CALL, recallBedForFile } from './recall-bed.js';

/**
 * What the proxy's metrics measure: `ctxfold_upstream_latency_seconds` one observation per
 * upstream call (a recall loop makes several for one request), and `ctxfold_requests_in_flight`
 * the API requests being served, never the scrape of `/metrics` or a `/healthz` probe.
 */

const bed = recallBedForFile();

const history = [{ role: 'user', content: 'Where is the cache?' }];
const LATENCY = 'ctxfold_upstream_latency_seconds_count{route="chat.completions"}';

describe('ctxfold_upstream_latency_seconds', () => {
  test('a request with one recall round observes two upstream calls', async () => {
    const before = await bed().metric(LATENCY);
    const calls = bed().upstream.requests.length;
    bed().script((_q, res) => json(res, 200, chatCompletion(null, [RECALL_CALL])), (_q, res) => json(res, 200, chatCompletion('In /srv/cache.')));
    const logged = bed().nextRequestLog();
    await (await post(bed().proxy, '/v1/chat/completions', { model: 'm', messages: history })).text();
    await logged;
    expect(bed().upstream.requests.length - calls).toBe(2);
    expect(await bed().metric(LATENCY) - before).toBe(2);
  });

  test('a request without recall observes one', async () => {
    const before = await bed().metric(LATENCY);
    bed().script((_q, res) => json(res, 200, chatCompletion('plain')));
    const logged = bed().nextRequestLog();
    await (await post(bed().proxy, '/v1/chat/completions', { model: 'm', messages: history })).text();
    await logged;
    expect(await bed().metric(LATENCY) - before).toBe(1);
  });
});

describe('ctxfold_requests_in_flight', () => {
  test('reads 0 when idle: the scrape does not count itself', async () => {
    await (await fetch(`${bed().proxy.url}/healthz`)).text();
    expect(await bed().metric('ctxfold_requests_in_flight')).toBe(0);
  });

  test('reads 1 while one API request waits on the upstream', async () => {
    let arrived!: () => void;
    const waiting = new Promise<void>((resolve) => { arrived = resolve; });
    let release!: () => void;
    const released = new Promise<void>((resolve) => { release = resolve; });
    bed().script(async (_q, res) => {
      arrived();
      await released;
      json(res, 200, chatCompletion('late'));
    });
    const logged = bed().nextRequestLog();
    const pending = post(bed().proxy, '/v1/chat/completions', { model: 'm', messages: history }).then((r) => r.text());
    await waiting;
    expect(await bed().metric('ctxfold_requests_in_flight')).toBe(1);
    release();
    await pending;
    await logged;
  });
});
