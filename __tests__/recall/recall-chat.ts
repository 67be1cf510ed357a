import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { startServer, type RunningServer, type ServerOptions } from '../../src/server/index.js';
import { afterAll, beforeAll } from '@jest/globals';
import { createExtractiveSummarizer } from '../../src/summarize/extractive.js';
import { startChatStandIn, type ChatStandIn } from './chat-stand-in.js';

/** A chat of `turns` user/assistant pairs (about 70 tokens each); message #2 (the first answer) holds `fact`. */
export function recallHistory(turns: number, fact: string): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [{ role: 'system', content: 'You are a careful assistant.' }];
  for (let t = 0; t < turns; t++) {
    out.push({ role: 'user', content: `Question ${t} about module ${t % 7}. ${'Some filler words for the question. '.repeat(8)}` });
    out.push({ role: 'assistant', content: t === 0 ? fact : `Answer ${t}. ${'Some filler words for the answer. '.repeat(8)}` });
  }
  return out;
}

/**
 * `ctxfold serve --recall` in process before `model`: a 2,000-token window, keepLast 4, quiet, and
 * summaries held to 300 tokens (so the early fact is not in them and only recall brings it back);
 * `options` override.
 */
export function startRecallProxy(model: ChatStandIn, options: Partial<ServerOptions> = {}): Promise<RunningServer> {
  return startServer({ upstream: model.baseURL, port: 0, store: 'memory', logLevel: 'silent', maxContextTokens: 2000, keepLast: 4, recall: true, summarizer: createExtractiveSummarizer({ maxSummaryTokens: 300 }), ...options });
}

/** Registers a file's stand-in model and recall proxy: started before its tests, closed after them. */
export function recallProxyHooks(): { readonly model: ChatStandIn; readonly proxy: RunningServer } {
  let model: ChatStandIn | undefined;
  let proxy: RunningServer | undefined;
  beforeAll(async () => {
    model = await startChatStandIn();
    proxy = await startRecallProxy(model);
  });
  afterAll(async () => {
    await proxy?.close();
    await model?.close();
  });
  return {
    get model() {
      if (!model) throw new Error('recallProxyHooks: the model starts in beforeAll; use it inside a test');
      return model;
    },
    get proxy() {
      if (!proxy) throw new Error('recallProxyHooks: the proxy starts in beforeAll; use it inside a test');
      return proxy;
    },
  };
}
