/**
 * Values computed from texts (token counts, fingerprints), remembered by the text itself and
 * bounded by the characters the memo keeps alive: when the next text would pass `maxChars`, the
 * memo starts over. A hit is one hash-and-compare of the string; nothing is ever stale, since the
 * key is the content.
 */
export class TextMemo<V> {
  private readonly values = new Map<string, V>();
  private chars = 0;

  constructor(private readonly maxChars: number) {}

  get(text: string): V | undefined {
    return this.values.get(text);
  }

  set(text: string, value: V): void {
    if (this.chars + text.length > this.maxChars) {
      this.values.clear();
      this.chars = 0;
    }
    this.values.set(text, value);
    this.chars += text.length;
  }
}
