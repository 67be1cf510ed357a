/**
 * Reads server-sent events as their bytes pass by, without holding the stream: only the line
 * being received and the current event's `data` lines are kept. Each complete event's data (its
 * `data:` lines joined by newlines) goes to `onData`. Lines end in LF, CRLF or CR, as the
 * specification allows; a multi-byte character split between chunks is decoded whole. The
 * event's `event:` name, when it has one, comes with it.
 */
export class SseReader {
  readonly #decoder = new TextDecoder();
  #line = '';
  #data: string[] = [];
  #event: string | undefined;
  /** A CR ended the last chunk: a LF at the start of the next one belongs to it. */
  #pendingCr = false;

  constructor(private readonly onData: (data: string, event?: string) => void) {}

  /** Feeds the next bytes of the stream. */
  push(chunk: Uint8Array): void {
    this.#text(this.#decoder.decode(chunk, { stream: true }));
  }

  /** The stream ended: an event not closed by a blank line is still delivered. */
  end(): void {
    this.#text(this.#decoder.decode());
    if (this.#line !== '') this.#takeLine(this.#line);
    this.#line = '';
    this.#dispatch();
  }

  #text(text: string): void {
    let start = 0;
    if (this.#pendingCr && text.startsWith('\n')) start = 1;
    this.#pendingCr = false;
    for (let i = start; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.#takeLine(this.#line + text.slice(start, i));
      this.#line = '';
      if (c === 13) {
        if (i + 1 === text.length) this.#pendingCr = true;
        else if (text.charCodeAt(i + 1) === 10) i++;
      }
      start = i + 1;
    }
    this.#line += text.slice(start);
  }

  #takeLine(line: string): void {
    if (line === '') return this.#dispatch();
    if (line.startsWith('data:')) this.#data.push(line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5));
    else if (line.startsWith('event:')) this.#event = line.charCodeAt(6) === 32 ? line.slice(7) : line.slice(6);
    // `id:`, `retry:` and comments are not needed.
  }

  #dispatch(): void {
    const event = this.#event;
    this.#event = undefined;
    if (this.#data.length === 0) return;
    const data = this.#data.join('\n');
    this.#data = [];
    this.onData(data, event);
  }
}
