/**
 * Values computed from texts (token counts, fingerprints), remembered by the text itself and
 * bounded by the bytes of text it keeps alive (two bytes a character, as JavaScript strings may
 * take): past `maxBytes`, the least recently used texts are forgotten first. Nothing is ever
 * stale, since the key is the content.
 */
export class TextMemo<V> {
  private readonly values = new Map<string, V>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(text: string): V | undefined {
    const value = this.values.get(text);
    if (value !== undefined) {
      // Most recently used last: Map iterates in insertion order, so eviction starts at the front.
      this.values.delete(text);
      this.values.set(text, value);
    }
    return value;
  }

  set(text: string, value: V): void {
    const size = 2 * text.length;
    if (size > this.maxBytes) return;
    if (this.values.has(text)) this.values.delete(text);
    else this.bytes += size;
    this.values.set(text, value);
    for (const key of this.values.keys()) {
      if (this.bytes <= this.maxBytes) break;
      this.values.delete(key);
      this.bytes -= 2 * key.length;
    }
  }

  /** Texts held and the bytes they take. */
  size(): { texts: number; bytes: number } {
    return { texts: this.values.size, bytes: this.bytes };
  }
}
