import type { WriteStream } from 'node:tty';

/** A progress line on a terminal: updated in place, at most a few times a second. */
export interface Progress {
  /** One more record done, with the tokens it came in with and went out with (compress). */
  record(tokensIn?: number, tokensOut?: number): void;
  /** Clears the line, so a diagnostic printed next starts at the left margin. */
  clear(): void;
  /** Writes the last state and ends the line. */
  done(): void;
}

/** What the progress line reads: the bytes read so far, and the input's size when known. */
export interface ProgressSource {
  bytesRead(): number;
  readonly totalBytes?: number;
}

const NONE: Progress = { record() {}, clear() {}, done() {} };

const EVERY_MS = 250;

/** `12.3k`, `4.5M`: a count in few characters. */
function short(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1e6) return `${(n / 1e3).toFixed(1)}k`;
  if (n < 1e9) return `${(n / 1e6).toFixed(1)}M`;
  return `${(n / 1e9).toFixed(1)}G`;
}

/** `42s`, `3m05s`, `1h02m`. */
function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/**
 * The progress line of a run: records done, tokens in and out (when counted), records per second,
 * and, when the input's size is known, the share read and the time left (from the bytes read so
 * far). Shown only when `stream` is a terminal and the run is not `quiet`; otherwise every method
 * does nothing, so nothing but diagnostics ever reaches a file or pipe.
 */
export function createProgress(stream: NodeJS.WriteStream, quiet: boolean, source: ProgressSource, now: () => number = Date.now): Progress {
  if (quiet || !stream.isTTY) return NONE;
  const tty = stream as WriteStream;
  const started = now();
  let last = 0;
  let records = 0;
  let tokensIn = 0;
  let tokensOut = 0;
  let counted = false;
  let shown = false;
  const line = () => {
    const seconds = (now() - started) / 1000;
    const parts = [`${records} record${records === 1 ? '' : 's'}`];
    if (counted) parts.push(`${short(tokensIn)} tokens in, ${short(tokensOut)} out`);
    if (seconds > 0) parts.push(`${short(Math.round(records / seconds))} records/s`);
    const total = source.totalBytes;
    const read = source.bytesRead();
    if (total !== undefined && total > 0 && read > 0) {
      parts.push(`${Math.min(100, Math.floor((read / total) * 100))}% read`);
      if (read < total) parts.push(`ETA ${duration((seconds * (total - read)) / read)}`);
    }
    return `ctxfold: ${parts.join(', ')}`;
  };
  const show = () => {
    const text = line();
    const width = tty.columns ?? 0;
    tty.write(`\r\x1b[K${width > 1 && text.length >= width ? text.slice(0, width - 1) : text}`);
    shown = true;
  };
  return {
    record(inTokens, outTokens) {
      records++;
      if (inTokens !== undefined && outTokens !== undefined) {
        counted = true;
        tokensIn += inTokens;
        tokensOut += outTokens;
      }
      const t = now();
      if (t - last >= EVERY_MS) {
        last = t;
        show();
      }
    },
    clear() {
      if (shown) tty.write('\r\x1b[K');
      shown = false;
    },
    done() {
      if (records === 0 && !shown) return;
      show();
      tty.write('\n');
      shown = false;
    },
  };
}
