import { describe, expect, test } from '@jest/globals';
import { request, type IncomingMessage } from 'node:http';
import { chunk, recallBedForFile, recallChunks, sse } from './recall-bed.js';

/**
 * A client that leaves while a streamed recall's second round is being relayed is recorded as
 * status 499 (the client left first), as a plain streamed request is, in the log and the metrics.
 */

const bedOf = recallBedForFile();

describe('a client leaving during a streamed recall round', () => {
  test('is logged and counted as 499', async () => {
    bedOf().script(
      (_q, res) => sse(res, recallChunks()),
      // The second round streams its first words, then waits (until the proxy gives up on it).
      (_q, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'In ' }))}\n\n`);
      },
    );
    const logged = bedOf().nextRequestLog();
    const cut = bedOf().upstream.nextCutOff();
    // node:http with no agent: the connection is this request's own, and destroying it is the client leaving.
    const body = JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'Where is the cache?' }] });
    const req = request(`${bedOf().proxy.url}/v1/chat/completions`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } });
    const res = await new Promise<IncomingMessage>((resolve, reject) => req.on('response', resolve).on('error', reject).end(body));
    expect(res.statusCode).toBe(200);
    const first = await new Promise<string>((resolve) => res.once('data', (c: Buffer) => resolve(c.toString('utf8'))));
    expect(first).toContain('In ');
    req.on('error', () => undefined);
    req.destroy();
    await cut;
    const line = await logged;
    expect(line).toMatchObject({ status: 499, recallRounds: 1, complete: false });
    expect(await bedOf().metric('ctxfold_requests_total{route="chat.completions",status="499"}')).toBe(1);
  });
});
