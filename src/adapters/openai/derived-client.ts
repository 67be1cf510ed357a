import type { OpenAI } from 'openai';

/** What a derived client replaces: its `post`, and `withOptions` (so a client made from it is wrapped too). */
export interface ClientOverrides<C extends OpenAI> {
  readonly post: OpenAI['post'];
  readonly withOptions: C['withOptions'];
}

/** A resource object that answers through `client`: the SDK's resources call `this._client`. */
function rebound<R extends object>(resource: R, client: object, own: PropertyDescriptorMap = {}): R {
  return Object.create(resource, { ...own, _client: { value: client, enumerable: false, configurable: true } }) as R;
}

/**
 * A client that behaves as `client` (same class for `instanceof`, same options and resources)
 * except that `chat.completions` and `responses` (and the SDK helpers built on them: `parse`,
 * `stream`, `runTools`) post through `overrides.post`. The given client is not changed: the
 * result is a Proxy whose `chat` and `responses` are objects inheriting from the client's own,
 * with their `_client` pointed at the proxy. Other members are the client's, methods bound to it
 * (its private fields need the real instance as `this`).
 */
export function derivedClient<C extends OpenAI>(client: C, overrides: ClientOverrides<C>): C {
  const bound = new Map<unknown, unknown>();
  const proxy: C = new Proxy(client, {
    get(target, key) {
      if (key === 'post') return overrides.post;
      if (key === 'withOptions') return overrides.withOptions;
      if (key === 'chat') return chat;
      if (key === 'responses') return responses;
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function' || key === 'constructor') return value;
      let method = bound.get(value);
      if (method === undefined) bound.set(value, (method = (value as (...args: unknown[]) => unknown).bind(target)));
      return method;
    },
  });
  // Made after the proxy they answer through; the trap above reads them only once a caller does.
  const completions = rebound(client.chat.completions, proxy);
  const chat = rebound(client.chat, proxy, { completions: { value: completions, enumerable: true, configurable: true } });
  const responses = rebound(client.responses, proxy);
  return proxy;
}
