import type { Logger } from 'pino';
import type { RepairAction } from '../core/repair.js';
import { fingerprintText } from '../runtime/fingerprints.js';
import type { FoldRoute } from './routes.js';
import { bodyPath } from './route-history.js';

/**
 * Logs, at debug level, what the compressor repaired in a request's history before it went
 * upstream: one line per request, each change by kind, the body path of the message it concerns
 * and the call id, and the compressor's wording of it (ids, names and indexes, never contents).
 * The chat is named by its fingerprint, as in every other line.
 */
export function logRepairs(logger: Logger, route: FoldRoute, tenant: string, chatId: string, actions: readonly RepairAction[]): void {
  if (actions.length === 0 || !logger.isLevelEnabled('debug')) return;
  const at = (a: RepairAction) => bodyPath(route, `messages[${a.index}]`) ?? `messages[${a.index}]`;
  logger.debug({
    route: route.name,
    tenant,
    chat: fingerprintText(chatId),
    repairs: actions.map((a) => ({ kind: a.action, at: at(a), ...(a.id === undefined ? {} : { id: a.id }) })),
  }, `repaired the request's history (${actions.length} change(s)): ${actions.map((a) => `${a.action} at ${at(a)}: ${a.detail}`).join('; ')}`);
}
