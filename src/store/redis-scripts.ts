import { createHash } from 'node:crypto';

/** A Lua script Redis runs atomically, with its SHA1 for `EVALSHA`. */
export interface LuaScript {
  readonly name: string;
  readonly source: string;
  readonly sha: string;
}

function lua(name: string, source: string): LuaScript {
  return Object.freeze({ name, source, sha: createHash('sha1').update(source).digest('hex') });
}

/** `COMMIT` reply: the lease key no longer holds the job's token (expired, released, taken over). */
export const COMMIT_LEASE_LOST = -1;
/** `COMMIT` reply: the stored `version` field is not a number. */
export const COMMIT_BAD_VERSION = -2;
/** `COMMIT` reply: a lease with a newer fence already wrote the chat. */
export const COMMIT_FENCE_BEHIND = -3;

/**
 * Compare-and-set of a chat's state hash on its `version` field, optionally under a lease.
 * KEYS: state hash, lease key. ARGV: expected version, new version, state JSON, lease token ('' =
 * no lease), fence. Under a lease it writes only while the lease key holds the token and the
 * stored fence is not newer than ours, and records the fence. Replies 1 written, 0 version moved,
 * -1 lease not held, -2 stored version is not a number, -3 a newer fence already wrote.
 */
export const COMMIT = lua('commit', `
local token = ARGV[4]
if token ~= '' and redis.call('GET', KEYS[2]) ~= token then return -1 end
local stored = redis.call('HGET', KEYS[1], 'version')
local current = 0
if stored then
  current = tonumber(stored)
  if current == nil then return -2 end
end
if current ~= tonumber(ARGV[1]) then return 0 end
if token == '' then
  redis.call('HSET', KEYS[1], 'version', ARGV[2], 'state', ARGV[3])
  return 1
end
local fence = tonumber(redis.call('HGET', KEYS[1], 'fence') or '0') or 0
if fence > tonumber(ARGV[5]) then return -3 end
redis.call('HSET', KEYS[1], 'version', ARGV[2], 'state', ARGV[3], 'fence', ARGV[5])
return 1
`);

/**
 * Grants a lease: `SET lease token NX PX ttl`, and only when that succeeds `INCR` the chat's fence
 * counter, in one atomic step. KEYS: lease key, fence key. ARGV: token, ttl ms. Replies the new
 * fence (>= 1), or 0 when another token holds the lease.
 */
export const ACQUIRE = lua('acquire', `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return 0
`);

/** Extends a lease by ARGV[2] ms only while KEYS[1] holds the token ARGV[1]. Replies 1 extended, 0 not ours. */
export const RENEW = lua('renew', `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`);

/** Deletes a lease only while KEYS[1] holds the token ARGV[1]. Replies 1 released, 0 not ours (left alone). */
export const RELEASE = lua('release', `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`);
