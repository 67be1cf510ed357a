import { IMAGE_BASE_TOKENS, imagePartTokens, imageSize, tiledImageTokens, UNKNOWN_IMAGE_SIZE } from '../openai-chat/image-tokens.js';
import { isObj, partsOf } from './parts.js';
import type { AiSdkMessage } from './types.js';

/**
 * Tokens the images of an AI SDK message cost, by OpenAI's published tile rule (the rule the
 * codebase bills images by; see openai-chat/image-tokens.ts): `image` parts, `file` parts with an
 * `image/*` (or V4 `image`) media type, and image items of a tool result's `content` output (V3
 * `image-data` / `file-data`, V4 `file`), V4's tagged file data included. The size is read from
 * inline data (a data URL, base64 text or bytes); a remote image counts as 1024x1024. Pure.
 */

type Obj = Record<string, unknown>;

/** Tokens of one image given as a data URL, base64 text, a URL (object or string) or bytes. */
function imageTokens(data: unknown, mediaType: unknown, low: boolean): number {
  if (low) return IMAGE_BASE_TOKENS;
  if (data instanceof Uint8Array || data instanceof ArrayBuffer) {
    const size = imageSize(data instanceof Uint8Array ? data : new Uint8Array(data));
    return size ? tiledImageTokens(size.width, size.height) : tiledImageTokens(UNKNOWN_IMAGE_SIZE.width, UNKNOWN_IMAGE_SIZE.height);
  }
  if (data instanceof URL) return imagePartTokens({ image_url: { url: data.href } });
  if (typeof data === 'string') {
    if (data.startsWith('data:') || /^[a-z][a-z0-9+.-]*:\/\//i.test(data)) return imagePartTokens({ image_url: { url: data } });
    // Bare base64 text: read as inline data of the given type.
    return imagePartTokens({ image_url: { url: `data:${typeof mediaType === 'string' ? mediaType : 'image/*'};base64,${data}` } });
  }
  return tiledImageTokens(UNKNOWN_IMAGE_SIZE.width, UNKNOWN_IMAGE_SIZE.height);
}

/** `image/png`, or (V4) the top-level segment alone: `image`. */
const isImageType = (t: unknown) => typeof t === 'string' && (t === 'image' || t.startsWith('image/'));

/**
 * The payload of file data: V3 gives it as is; V4 (ai 7) tags it, `{ type: 'data', data }` or
 * `{ type: 'url', url }` (a `reference` or `text` has no bytes to size: unknown, billed as such).
 */
function untagged(data: unknown): unknown {
  if (!isObj(data) || data instanceof URL || typeof data.type !== 'string') return data;
  if (data.type === 'data') return data.data;
  if (data.type === 'url') return data.url;
  return undefined;
}

/** True when a part asks OpenAI for its low-detail rendering (`providerOptions.openai.imageDetail: 'low'`). */
function lowDetail(part: Obj): boolean {
  const po = part.providerOptions;
  return isObj(po) && isObj(po.openai) && po.openai.imageDetail === 'low';
}

/** Tokens of the image items of a tool result's `content` output. */
function outputImages(part: Obj): number {
  const out = part.output;
  if (!isObj(out) || out.type !== 'content' || !Array.isArray(out.value)) return 0;
  let n = 0;
  for (const item of out.value) {
    if (!isObj(item)) continue;
    if (item.type === 'image-data' || ((item.type === 'media' || item.type === 'file-data' || item.type === 'file') && isImageType(item.mediaType))) n += imageTokens(untagged(item.data), item.mediaType, false);
    else if (item.type === 'image-url') n += imageTokens(item.url, undefined, false);
  }
  return n;
}

/** Tokens the images of `m` cost; 0 when it has none. */
export function messageMediaTokens(m: AiSdkMessage): number {
  const parts = partsOf(m);
  if (parts.length === 0) return 0;
  let n = 0;
  for (const part of parts) {
    if (!isObj(part)) continue;
    if (part.type === 'image') n += imageTokens(part.image, part.mediaType, lowDetail(part));
    else if (part.type === 'file' && isImageType(part.mediaType)) n += imageTokens(untagged(part.data), part.mediaType, lowDetail(part));
    else if (part.type === 'tool-result') n += outputImages(part);
  }
  return n;
}
