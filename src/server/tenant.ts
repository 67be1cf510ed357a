import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** How the proxy tells tenants apart. */
export interface TenantRule {
  /**
   * True when the proxy adds the upstream key itself (`--upstream-key-env`): callers then need no
   * key of their own, and the tenant is the header `tenantHeader` names (trusted: put the proxy
   * behind something that sets it, e.g. a gateway or a chat UI that forwards its user id).
   */
  readonly proxyHoldsKey: boolean;
  /** Lower-case name of the header that names a tenant explicitly. Default `x-ctxfold-tenant`. */
  readonly tenantHeader: string;
}

/** The default header that names a tenant. */
export const DEFAULT_TENANT_HEADER = 'x-ctxfold-tenant';

/** Hex characters of a tenant id: 64 bits of a sha256, fixed length so that a scoped chat id cannot be forged by its suffix. */
const TENANT_HEX = 16;

const single = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/**
 * The API key the caller sent: the token of `Authorization: Bearer ...`, else `x-api-key`
 * (Anthropic clients). Undefined when there is none. It is forwarded upstream and never kept.
 */
export function callerKey(headers: IncomingHttpHeaders): string | undefined {
  const auth = single(headers.authorization);
  if (auth !== undefined) {
    const match = /^\s*bearer\s+(\S+)\s*$/i.exec(auth);
    if (match) return match[1];
  }
  const key = single(headers['x-api-key']);
  return key !== undefined && key.trim() !== '' ? key.trim() : undefined;
}

/** A fixed-length id for `kind:value` (sha256, truncated): the key or header value cannot be read back from it. */
function hashed(kind: string, value: string): string {
  return createHash('sha256').update(`ctxfold-tenant\u0000${kind}\u0000${value}`).digest('hex').slice(0, TENANT_HEX);
}

/**
 * The tenant a request belongs to, as a 16-hex-character id that every chat state key starts
 * with. When the caller brings its own key: a hash of that key (the tenant header, if sent, then
 * splits it further; it can never reach another key's chats). When the proxy holds the key: a
 * hash of the tenant header (else of the caller's key, if one was sent, else the shared
 * `anonymous` tenant). Requests with no key at all share the `anonymous` tenant.
 */
export function tenantOf(headers: IncomingHttpHeaders, rule: TenantRule): string {
  const named = single(headers[rule.tenantHeader]);
  const tenantName = named !== undefined && named !== '' ? named : undefined;
  const key = callerKey(headers);
  if (rule.proxyHoldsKey && tenantName !== undefined) return hashed('header', tenantName);
  if (key === undefined) return hashed('anonymous', tenantName ?? '');
  return tenantName === undefined ? hashed('key', key) : hashed('key+header', `${hashed('key', key)}\u0000${tenantName}`);
}

/**
 * The store key of a chat: the tenant id, a colon, then the chat id. The tenant part has a fixed
 * length, so no chat id a caller chooses can reach another tenant's state.
 */
export function scopedChatId(tenant: string, chatId: string): string {
  return `${tenant}:${chatId}`;
}
