import type { IncomingMessage } from 'node:http';
import { CtxfoldError, type CtxfoldErrorCode } from '../errors.js';

/** Default request body limit: 32 MiB (a long history with pictures inlined fits; a runaway upload does not). */
export const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;

/** The body was larger than the limit; nothing of it was kept. */
export class BodyTooLargeError extends CtxfoldError {
  static override readonly kind: string = 'BodyTooLargeError';
  static override readonly code: CtxfoldErrorCode = 'CTXFOLD_BODY_TOO_LARGE';
  constructor(readonly limit: number, readonly declared?: number) {
    super(`the request body is larger than the proxy's limit of ${limit} bytes${declared !== undefined ? ` (content-length ${declared})` : ''}; raise --max-body-bytes to accept it`);
  }
}

/** The client went away before its body was complete. */
export class BodyAbortedError extends CtxfoldError {
  static override readonly kind: string = 'BodyAbortedError';
  static override readonly code: CtxfoldErrorCode = 'CTXFOLD_BODY_ABORTED';
  constructor() {
    super('the client closed the connection before its request body was complete');
  }
}

/**
 * The whole request body, at most `limit` bytes. A `content-length` over the limit is refused
 * before anything is read; a body that grows past it while arriving is refused as soon as it does
 * and the rest is read and thrown away (so the client can still read the 413). Rejects with
 * `BodyTooLargeError` or `BodyAbortedError`. A body of `sharedFrom` bytes or more is gathered in
 * a `SharedArrayBuffer`, so a fold thread reads it where it lies (posting it copies nothing).
 */
export function readBody(req: IncomingMessage, limit: number, sharedFrom = Infinity): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      reject(new BodyTooLargeError(limit, declared));
      return;
    }
    const chunks: Buffer[] = [];
    // A large body of a declared length is written where it will stay as it arrives, so no
    // single step copies all of it.
    let shared = Number.isSafeInteger(declared) && declared >= sharedFrom ? Buffer.from(new SharedArrayBuffer(declared)) : undefined;
    let size = 0;
    let done = false;
    const finish = (error?: Error) => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('aborted', onAborted);
      req.off('error', onError);
      if (error) {
        chunks.length = 0;
        if (error instanceof BodyTooLargeError) req.resume();
        reject(error);
      } else if (shared !== undefined) resolve(size === shared.length ? shared : shared.subarray(0, size));
      else resolve(size >= sharedFrom ? sharedConcat(chunks, size) : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) finish(new BodyTooLargeError(limit));
      else if (shared !== undefined && size <= shared.length) shared.set(chunk, size - chunk.length);
      else {
        // More than declared: what was written goes first, the rest is gathered as usual.
        if (shared !== undefined) chunks.push(shared.subarray(0, size - chunk.length));
        shared = undefined;
        chunks.push(chunk);
      }
    };
    const onEnd = () => finish();
    const onAborted = () => finish(new BodyAbortedError());
    const onError = () => finish(new BodyAbortedError());
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('aborted', onAborted);
    req.on('error', onError);
  });
}

/** `Buffer.concat` into a `SharedArrayBuffer` of its own. */
function sharedConcat(chunks: readonly Buffer[], size: number): Buffer {
  const out = Buffer.from(new SharedArrayBuffer(size));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}
