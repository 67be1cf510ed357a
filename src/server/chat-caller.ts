import type { IncomingHttpHeaders } from 'node:http';
import type { ProxyError } from './json-errors.js';
import { callerKey, tenantOf, type TenantRule } from './tenant.js';

/**
 * The tenant whose chats a request to `/v1/ctxfold/chats` may read: `tenantOf` the request, as for
 * a folded request, but only when the request names its tenant: a caller key (`Authorization:
 * Bearer`, or `x-api-key`), or, when the proxy holds the upstream key, the trusted tenant header.
 * Undefined otherwise (a 401): the `anonymous` tenant, shared by every request that names none,
 * is never shown.
 */
export function viewerTenant(headers: IncomingHttpHeaders, rule: TenantRule): string | undefined {
  const named = headers[rule.tenantHeader];
  const tenantName = Array.isArray(named) ? named[0] : named;
  const trustedHeader = rule.proxyHoldsKey && tenantName !== undefined && tenantName !== '';
  if (callerKey(headers) === undefined && !trustedHeader) return undefined;
  return tenantOf(headers, rule);
}

/** The 401 of the chat endpoints: no key (and no trusted tenant header), so no tenant to show. */
export const NO_TENANT: ProxyError = Object.freeze({
  status: 401,
  message: 'this endpoint shows the caller\'s own chats: send the API key the chats were made with (Authorization: Bearer KEY, or x-api-key)',
  code: 'ctxfold_unauthorized',
});

/** The 503 of the chat endpoints when the store does not answer (logged by the handler; the answer names no chat). */
export const STORE_DOWN: ProxyError = Object.freeze({
  status: 503,
  message: 'the store did not answer (the proxy\'s log says why); retry later',
  code: 'ctxfold_store_unavailable',
});
