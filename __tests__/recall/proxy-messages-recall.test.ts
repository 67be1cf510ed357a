import { describe, expect, test } from '@jest/globals';
import { validateMessages } from '../../src/formats/profiles.js';
import { recallHistory, recallProxyHooks } from './recall-chat.js';

/**
 * `ctxfold serve --recall` on `POST /v1/messages` (Anthropic): the proxy offers the recall tool,
 * answers the model's `ctxfold_recall` calls from the caller's chat and asks again; the client
 * gets the last answer only, whole or streamed. The client here speaks HTTP itself (fetch), as an
 * Anthropic client would, to a loopback stand-in model.
 */

const FACT = 'Noted: the nightly build keeps its cache in /srv/forge/cache-7, unlock token ZK-9031.';
const bed = recallProxyHooks();
type Body = Record<string, unknown>;

/** The chat as a Messages request: the system prompt apart, the turns in `messages`. */
function history(): { system: string; messages: Body[] } {
  const [system, ...rest] = recallHistory(24, FACT) as { role: string; content: string }[];
  return { system: system.content, messages: rest };
}

/** POSTs a Messages request for chat `chat`; resolves to the response's status and text. */
async function send(chat: string, body: Body): Promise<{ status: number; text: string }> {
  const response = await fetch(`${bed.proxy.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'key-m', 'anthropic-version': '2023-06-01', 'x-ctxfold-chat-id': chat },
    body: JSON.stringify({ model: 'claude-x', max_tokens: 200, ...body }),
  });
  return { status: response.status, text: await response.text() };
}

/** Chat `chat` with a summary over its early messages (one request, then the background summary). */
async function summarized(chat: string) {
  const h = history();
  await send(chat, h);
  await bed.proxy.drain();
  return h;
}

const ask = (h: { system: string; messages: Body[] }) => ({ system: h.system, messages: [...h.messages, { role: 'user', content: 'Where is the build cache?' }] });
const toolNames = (body: Body) => ((body.tools ?? []) as { name: string }[]).map((t) => t.name);
const recallCall = (args: unknown) => ({ calls: [{ name: 'ctxfold_recall', arguments: args }] });

/** The events of an SSE text, each `event:` name with its parsed data. */
function events(text: string): { name: string; data: Body }[] {
  return text.split('\n\n').filter((block) => block.trim() !== '').map((block) => {
    const lines = block.split('\n');
    const name = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? '';
    return { name, data: JSON.parse(lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n')) as Body };
  });
}

/** A client's accumulator, written here: the message a stream of events builds, and the block indexes in the order they started. */
function accumulate(stream: { name: string; data: Body }[]): { message: Body; indexes: number[] } {
  let message: Body = {};
  const content: Body[] = [];
  const indexes: number[] = [];
  for (const { name, data } of stream) {
    expect(name).toBe(data.type);
    if (data.type === 'message_start') message = { ...(data.message as Body) };
    if (data.type === 'content_block_start') {
      indexes.push(data.index as number);
      content[data.index as number] = { ...(data.content_block as Body) };
    }
    if (data.type === 'content_block_delta') {
      const block = content[data.index as number];
      const delta = data.delta as Body;
      if (delta.type === 'text_delta') block.text = `${String(block.text ?? '')}${String(delta.text)}`;
      if (delta.type === 'input_json_delta') block.json = `${String(block.json ?? '')}${String(delta.partial_json)}`;
    }
    if (data.type === 'message_delta') message = { ...message, ...(data.delta as Body) };
  }
  return { message: { ...message, content }, indexes };
}

describe('the proxy answers ctxfold_recall calls on /v1/messages', () => {
  test('whole: the second upstream request ends with the recall call and one user message of its tool_result; the client gets the final answer', async () => {
    const h = await summarized('m1');
    const before = bed.model.bodies.length;
    bed.model.enqueue(recallCall({ query: 'ZK-9031' }), { text: 'The token is ZK-9031.' });
    const { status, text } = await send('m1', ask(h));
    expect(status).toBe(200);
    const answer = JSON.parse(text) as Body;
    expect(answer).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'text', text: 'The token is ZK-9031.' }], stop_reason: 'end_turn' });
    const [first, second, ...more] = bed.model.bodies.slice(before);
    expect(more).toEqual([]);
    expect(toolNames(first)).toEqual(['ctxfold_recall']);
    expect(JSON.stringify(first.messages)).not.toContain('nightly build keeps its cache');
    expect(first.system).toBe(h.system);
    const tail = (second.messages as Body[]).slice(-2);
    expect(tail[0]).toEqual({ role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${before + 1}_0`, name: 'ctxfold_recall', input: { query: 'ZK-9031' } }] });
    expect(tail[1]).toMatchObject({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${before + 1}_0` }] });
    expect(JSON.stringify(tail[1])).toContain('nightly build keeps its cache');
    for (const body of [first, second]) expect(validateMessages(body.messages as unknown[], 'anthropic')).toEqual([]);
  });

  test('whole: two recall calls in one turn are answered in one user message, thinking kept first in the turn', async () => {
    const h = await summarized('m2');
    const before = bed.model.bodies.length;
    bed.model.enqueue({ calls: [{ name: 'ctxfold_recall', arguments: { query: 'ZK-9031' } }, { name: 'ctxfold_recall', arguments: { ids: ['#2'] } }], reasoning: 'I should look.' }, { text: 'done' });
    await send('m2', ask(h));
    const second = bed.model.bodies[before + 1];
    const tail = (second.messages as Body[]).slice(-2);
    expect((tail[0].content as Body[]).map((b) => b.type)).toEqual(['thinking', 'tool_use', 'tool_use']);
    expect(tail[0].content as Body[]).toContainEqual({ type: 'thinking', thinking: 'I should look.', signature: `sig_${before + 1}` });
    expect(tail[1].role).toBe('user');
    expect((tail[1].content as Body[]).map((b) => b.tool_use_id)).toEqual([`toolu_${before + 1}_0`, `toolu_${before + 1}_1`]);
    expect(validateMessages(second.messages as unknown[], 'anthropic')).toEqual([]);
  });

  test("whole: recall mixed with the application's tool reaches the client without the recall block, after one upstream request", async () => {
    const h = await summarized('m3');
    const before = bed.model.bodies.length;
    bed.model.enqueue({ calls: [{ name: 'ctxfold_recall', arguments: { ids: ['#2'] } }, { name: 'lookup', arguments: { q: 'x' } }] });
    const tools = [{ name: 'lookup', description: 'Looks up', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }];
    const answer = JSON.parse((await send('m3', { ...ask(h), tools })).text) as Body;
    expect(bed.model.bodies.length - before).toBe(1);
    expect(toolNames(bed.model.bodies[before])).toEqual(['lookup', 'ctxfold_recall']);
    expect((answer.content as Body[]).map((b) => b.name)).toEqual(['lookup']);
    expect(answer.stop_reason).toBe('tool_use');
  });

  test('streamed: a stream opening with a recall call is answered; the client gets the next round as one well-formed stream', async () => {
    const h = await summarized('m4');
    const before = bed.model.bodies.length;
    bed.model.enqueue(recallCall({ query: 'ZK-9031' }), { text: 'The token is ZK-9031.' });
    const { status, text } = await send('m4', { ...ask(h), stream: true });
    expect(status).toBe(200);
    expect(text).not.toContain('ctxfold_recall');
    const { message, indexes } = accumulate(events(text));
    expect(message.content).toEqual([{ type: 'text', text: 'The token is ZK-9031.' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(indexes).toEqual([0]);
    expect(bed.model.bodies.length - before).toBe(2);
    expect(JSON.stringify((bed.model.bodies[before + 1].messages as Body[]).at(-1))).toContain('nightly build keeps its cache');
  });

  /** A summarized chat asked once (streamed or not): three recall rounds, a fourth recall, then `final`; the answer as the client reads it and the upstream bodies. */
  async function pastTheRounds(chat: string, stream: boolean, final: Parameters<typeof bed.model.enqueue>[0], extra: Body = {}) {
    const h = await summarized(chat);
    const before = bed.model.bodies.length;
    const again = recallCall({ ids: ['#2'] });
    bed.model.enqueue(again, again, again, recallCall({ query: 'ZK-9031' }), final);
    const { status, text } = await send(chat, { ...ask(h), ...extra, ...(stream ? { stream: true } : {}) });
    expect(status).toBe(200);
    const message = stream ? accumulate(events(text)).message : JSON.parse(text) as Body;
    return { text, message, sent: bed.model.bodies.slice(before) };
  }

  test('past the rounds (3), a reply that only recalls is answered once more and the upstream asked with tool_choice {type: none}, whole and streamed', async () => {
    for (const stream of [false, true]) {
      const { message, sent } = await pastTheRounds(`m-final-${stream}`, stream, { text: 'The token is ZK-9031.' }, { tool_choice: { type: 'auto' } });
      expect(sent.map((b) => b.tool_choice)).toEqual([{ type: 'auto' }, { type: 'auto' }, { type: 'auto' }, { type: 'auto' }, { type: 'none' }]);
      // The final request answers the call it follows, and is valid.
      expect(JSON.stringify((sent[4].messages as Body[]).at(-1))).toContain('nightly build keeps its cache');
      expect(validateMessages(sent[4].messages as unknown[], 'anthropic')).toEqual([]);
      expect(message.content).toEqual([{ type: 'text', text: 'The token is ZK-9031.' }]);
      expect(message.stop_reason).toBe('end_turn');
    }
  });

  test('a final call the upstream refuses (400) is not relayed: the answer before it goes out without its recall block, whole and streamed', async () => {
    for (const stream of [false, true]) {
      const { text, message, sent } = await pastTheRounds(`m-refused-${stream}`, stream, { fail: 400 });
      expect(sent.map((b) => b.tool_choice)).toEqual([undefined, undefined, undefined, undefined, { type: 'none' }]);
      expect(text).not.toContain('scripted failure');
      expect(text).not.toContain('ctxfold_recall');
      expect(message.content).toEqual([]);
      expect(message.stop_reason).toBe('end_turn');
    }
  });

  test('streamed: text first goes through; a recall call after it is removed, the blocks renumbered and the stop reason end_turn', async () => {
    const h = await summarized('m5');
    const before = bed.model.bodies.length;
    bed.model.enqueue({ calls: [{ name: 'ctxfold_recall', arguments: { ids: ['#2'] } }, { name: 'lookup', arguments: { q: 'y' } }], say: 'Let me check.' }, { calls: [{ name: 'ctxfold_recall', arguments: { ids: ['#3'] } }], say: 'One moment.' });
    const mixed = accumulate(events((await send('m5', { ...ask(h), stream: true })).text));
    expect(mixed.message.content).toEqual([{ type: 'text', text: 'Let me check.' }, { type: 'tool_use', id: `toolu_${before + 1}_1`, name: 'lookup', input: {}, json: '{"q":"y"}' }]);
    expect(mixed.indexes).toEqual([0, 1]);
    expect(mixed.message.stop_reason).toBe('tool_use');
    const alone = accumulate(events((await send('m5', { ...ask(h), stream: true })).text));
    expect(alone.message.content).toEqual([{ type: 'text', text: 'One moment.' }]);
    expect(alone.message.stop_reason).toBe('end_turn');
    expect(bed.model.bodies.length - before).toBe(2);
  });
});
