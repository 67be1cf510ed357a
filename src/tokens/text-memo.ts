/**
 * Texts one generation of a `TextMemo` holds at most: 2^17, so its `Map` last grows at 2^16
 * entries (a copy of a few milliseconds), never at 2^17 or more.
 */
export const MAX_GENERATION_TEXTS = 131_072;

/**
 * Values computed from texts (token counts, fingerprints), remembered by the text itself and
 * bounded by the bytes of text it keeps alive (two bytes a character, as JavaScript strings may
 * take). Two generations approximate least-recently-used at the cost of one lookup a hit: new and
 * recently used texts live in the young generation; when it fills half of `maxBytes`, it becomes
 * the old one and the previous old generation (texts not used since) is dropped whole. A text
 * used again from the old generation moves to the young one. Nothing is ever stale, since the
 * key is the content.
 *
 * A generation also ends at `MAX_GENERATION_TEXTS` texts, however few bytes they take: a `Map`
 * grows by copying every entry into a table twice as large, in one synchronous step, and past
 * 2^17 entries that step alone holds the event loop for 10 to 100 ms (many short texts, such as
 * a summary's fact items, fill 16 MiB with a million of them).
 */
export class TextMemo<V> {
  private young = new Map<string, V>();
  private old = new Map<string, V>();
  private youngBytes = 0;
  private oldBytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(text: string): V | undefined {
    const hit = this.young.get(text);
    if (hit !== undefined) return hit;
    const value = this.old.get(text);
    if (value !== undefined) {
      this.old.delete(text);
      this.oldBytes -= 2 * text.length;
      this.add(text, value);
    }
    return value;
  }

  set(text: string, value: V): void {
    if (this.young.has(text)) {
      this.young.set(text, value);
      return;
    }
    if (this.old.delete(text)) this.oldBytes -= 2 * text.length;
    this.add(text, value);
  }

  private add(text: string, value: V): void {
    const size = 2 * text.length;
    if (size > this.maxBytes / 2) return; // larger than a generation: not worth keeping
    if (this.youngBytes + size > this.maxBytes / 2 || this.young.size >= MAX_GENERATION_TEXTS) {
      this.old = this.young;
      this.oldBytes = this.youngBytes;
      this.young = new Map();
      this.youngBytes = 0;
    }
    this.young.set(text, value);
    this.youngBytes += size;
  }

  /** Texts held and the bytes they take. */
  size(): { texts: number; bytes: number } {
    return { texts: this.young.size + this.old.size, bytes: this.youngBytes + this.oldBytes };
  }
}
