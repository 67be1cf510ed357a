/**
 * `ctxfold/server`: the OpenAI-compatible proxy, for embedding (`ctxfold serve` runs the same).
 * Put it in front of any OpenAI-compatible API (or Anthropic's Messages API): each request's
 * history is folded to the model's window without breaking tool calling, every other field and
 * the answer pass through as they are, and summaries are made in the background.
 *
 *   const proxy = await startServer({ upstream: 'https://api.openai.com/v1', port: 0, store: 'memory' });
 *   const client = new OpenAI({ baseURL: `${proxy.url}/v1` });
 *   ...
 *   await proxy.close();
 */
/** Starts the proxy; resolves with its URL, port, `drain()` and a graceful `close()`. */
export { startServer } from './start-server.js';
/** Checks a parsed per-model config (`{ models: { name: { maxContextTokens } } }`), naming the field at fault. */
export { checkConfig, readConfigFile } from './model-limits.js';

export type { RunningServer } from './start-server.js';
export type { ServerOptions } from './options.js';
export type { ModelLimits, ProxyConfig } from './model-limits.js';
export type { LogLevel, LogDestination } from './logger.js';
export type { ChatJson, ChatListItem } from './chat-json.js';
export type { ChatListJson } from './chats-route.js';
export type { VersionSeen, ViewSeen } from './chat-activity.js';
