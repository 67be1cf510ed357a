import { scanList, scanListAfter, type ListLayout } from './json-list-scan.js';

/**
 * Parses the request bodies of a folding route, reusing what the previous body under the same
 * key already parsed. An agent resends its whole history with a turn or two appended, so a body
 * mostly starts with the bytes of the last one: the history items that lie wholly inside that
 * shared byte prefix are the previous body's own objects, and only the rest is decoded and
 * parsed. Byte-identical JSON parses to equal values whatever the key, so a wrong key only costs
 * a miss, never a wrong result.
 */

/** One remembered body: its bytes, where its list items end, and the items. */
interface Entry {
  readonly raw: Buffer;
  readonly layout: ListLayout;
  readonly items: readonly unknown[];
}

/** Options of `createBodyReuse`. */
export interface BodyReuseOptions {
  /** Most body bytes remembered, over all keys; the least recently used go first. 0 turns reuse off. */
  readonly maxBytes: number;
  /** Most bodies remembered, over all keys. Default 1,024. */
  readonly maxEntries?: number;
}

/** Counters of a `BodyReuse`. */
export interface BodyReuseStats {
  /** Bodies read. */
  readonly bodies: number;
  /** List items taken from a previous body instead of being parsed again. */
  readonly reusedItems: number;
  /** Bodies and bytes held. */
  readonly entries: number;
  readonly bytes: number;
}

/** A body reader with a memory of the last body per key (see the module comment). */
export interface BodyReuse {
  /**
   * `JSON.parse` of the body's UTF-8 text, always: equal to it value for value, throwing the same
   * `SyntaxError` for a body that is not JSON. Items of the top-level array `listField`
   * (`messages`, `input`) reused from the previous body of `key` are the same objects as that
   * body's: no one may change them (the proxy never does). A key is used with one `listField`.
   * Up to `slots` bodies are kept under `key` (default 1: one chat's last body), and a body is
   * read against the one it shares the most whole items with; it takes that one's place when it
   * carries all of its items, else it is kept beside it (the oldest beyond `slots` goes).
   */
  parse(key: string, listField: string, raw: Buffer, slots?: number): unknown;
  stats(): BodyReuseStats;
}

/** Length of the longest common prefix of `a` and `b`, compared in blocks (memcmp), then byte by byte. */
export function sharedPrefix(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length);
  let at = 0;
  for (let block = 64 * 1024; block >= 64; block >>= 4) {
    while (at + block <= n && a.compare(b, at, at + block, at, at + block) === 0) at += block;
  }
  while (at < n && a[at] === b[at]) at++;
  return at;
}

/** Number of leading items whose whole bytes lie inside the first `prefix` bytes. */
function itemsWithin(layout: ListLayout, prefix: number): number {
  const { ends } = layout;
  let lo = 0;
  let hi = ends.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ends[mid]! <= prefix) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A body's own copy when it is a view into a larger buffer (Node's socket buffers), so remembering it keeps nothing else alive. */
const own = (raw: Buffer): Buffer => (raw.byteOffset === 0 && raw.buffer.byteLength === raw.length ? raw : Buffer.from(raw));

/** Creates a body reader (see `BodyReuse`). */
export function createBodyReuse(options: BodyReuseOptions): BodyReuse {
  const names = new Map<string, Buffer>();
  const nameOf = (field: string): Buffer => {
    let name = names.get(field);
    if (name === undefined) names.set(field, (name = Buffer.from(field, 'utf8')));
    return name;
  };
  const maxEntries = options.maxEntries ?? 1024;
  // Per key, its bodies, most recent first; keys in least-recently-used order (Map order).
  const groups = new Map<string, Entry[]>();
  let held = 0;
  let bytes = 0;
  let bodies = 0;
  let reusedItems = 0;

  /** Keeps `entry` first under `key` in place of `replaced` (the body it was read from), at most `slots` there; then evicts the least recently used keys while over the bounds. */
  const remember = (key: string, entry: Entry, replaced: Entry | undefined, slots: number) => {
    if (entry.raw.length > options.maxBytes) return;
    const list = groups.get(key) ?? [];
    groups.delete(key);
    const kept = [entry];
    for (const e of list) {
      if (e !== replaced && kept.length < slots) kept.push(e);
      else {
        held--;
        bytes -= e.raw.length;
      }
    }
    groups.set(key, kept);
    held++;
    bytes += entry.raw.length;
    for (const [k, g] of groups) {
      if ((bytes <= options.maxBytes && held <= maxEntries) || k === key) break;
      groups.delete(k);
      for (const e of g) {
        held--;
        bytes -= e.raw.length;
      }
    }
    // Still over: this key's own older bodies go too (its newest stays).
    while ((bytes > options.maxBytes || held > maxEntries) && kept.length > 1) {
      const e = kept.pop()!;
      held--;
      bytes -= e.raw.length;
    }
  };

  /** The whole body parsed; remembered when its list can be laid out. */
  const parseWhole = (key: string, listField: string, raw: Buffer, slots: number): unknown => {
    const body: unknown = JSON.parse(raw.toString('utf8'));
    const items = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>)[listField] : undefined;
    const layout = Array.isArray(items) ? scanList(raw, nameOf(listField)) : undefined;
    if (layout !== undefined && layout.ends.length === (items as unknown[]).length) remember(key, { raw: own(raw), layout, items: (items as unknown[]).slice() }, undefined, slots);
    return body;
  };

  return {
    parse(key, listField, raw, slots = 1) {
      bodies++;
      if (options.maxBytes <= 0) return JSON.parse(raw.toString('utf8'));
      // The remembered body that shares the most whole items with this one.
      let last: Entry | undefined;
      let kept = 0;
      for (const e of groups.get(key) ?? []) {
        const n = itemsWithin(e.layout, sharedPrefix(e.raw, raw));
        if (n > kept) [last, kept] = [e, n];
      }
      if (last === undefined) return parseWhole(key, listField, raw, slots);
      const layout = scanListAfter(raw, nameOf(listField), last.layout, kept);
      if (layout === undefined) return parseWhole(key, listField, raw, slots);
      // The kept items become one placeholder value: the separators around them stay as they were,
      // so this text is JSON exactly when the whole body is.
      const text = `${raw.toString('utf8', 0, layout.open + 1)}0${raw.toString('utf8', layout.ends[kept - 1])}`;
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        // The error the caller sees is the one of the whole body (its positions are the body's).
        return parseWhole(key, listField, raw, slots);
      }
      const fresh = body[listField];
      if (!Array.isArray(fresh) || fresh[0] !== 0 || fresh.length !== layout.ends.length - kept + 1) return parseWhole(key, listField, raw, slots);
      const items = last.items.slice(0, kept);
      for (let i = 1; i < fresh.length; i++) items.push(fresh[i]);
      body[listField] = items;
      reusedItems += kept;
      // A body that carries all of the one it was read from continues it and takes its place; one
      // that shares only some (another chat that opens alike, an edit) is kept beside it.
      remember(key, { raw: own(raw), layout, items: items.slice() }, kept === last.items.length ? last : undefined, slots);
      return body;
    },
    stats: () => ({ bodies, reusedItems, entries: held, bytes }),
  };
}
