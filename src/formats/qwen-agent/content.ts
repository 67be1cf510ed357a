import { decodePrefix, imageSize } from '../openai-chat/image-tokens.js';
import type { QwenAgentContentItem } from './types.js';

/**
 * Reading Qwen-Agent content: a string or a list of content items, each holding exactly one of
 * `text`, `image`, `file`, `audio`, `video`. Only `text` items carry text; images are billed by
 * Qwen-VL's published rule (one token per 28x28 pixel patch after resizing, at most 1280 patches
 * by default, plus the two vision delimiter tokens).
 */

/** The keys a content item may have, one at a time (Qwen-Agent's `ContentItem`). */
export const CONTENT_ITEM_KEYS: readonly string[] = Object.freeze(['text', 'image', 'file', 'audio', 'video']);

/** Joins the text of string or item-list content; items without text contribute nothing. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let out = '';
  for (const item of content) {
    if (item && typeof item === 'object' && typeof (item as QwenAgentContentItem).text === 'string') out += (item as QwenAgentContentItem).text;
  }
  return out;
}

/** Side of a Qwen-VL patch, in pixels. */
const PATCH = 28;
/** Default bounds of an image's patch count (DashScope / Qwen2.5-VL `min_pixels`, `max_pixels`). */
const MIN_PATCHES = 4;
const MAX_PATCHES = 1280;
/** `<|vision_start|>` and `<|vision_end|>` around each image. */
const VISION_DELIMITERS = 2;

/** Tokens of an image of `width` x `height` pixels: resized to whole patches within the default bounds. */
export function qwenImageTokens(width: number, height: number): number {
  if (!(width > 0 && height > 0)) return MAX_PATCHES + VISION_DELIMITERS;
  let patches = Math.max(1, Math.round(width / PATCH)) * Math.max(1, Math.round(height / PATCH));
  if (patches > MAX_PATCHES) {
    // Scaled down keeping the aspect ratio, rounding each side down to whole patches.
    const beta = Math.sqrt((width * height) / (MAX_PATCHES * PATCH * PATCH));
    patches = Math.max(1, Math.floor(width / beta / PATCH)) * Math.max(1, Math.floor(height / beta / PATCH));
  }
  return Math.max(MIN_PATCHES, patches) + VISION_DELIMITERS;
}

/** Bytes decoded from an inline image to find its size. */
const HEADER_BYTES = 64 * 1024;

/** Size of an inline base64 image (`data:...;base64,...`), or undefined for a URL or a path. */
function inlineImageSize(url: string): { width: number; height: number } | undefined {
  if (!url.startsWith('data:')) return undefined;
  const comma = url.indexOf(',');
  if (comma < 0 || !url.slice(0, comma).endsWith(';base64')) return undefined;
  return imageSize(decodePrefix(url.slice(comma + 1), HEADER_BYTES));
}

/** Tokens of the image items of string or item-list content (0 for a string). */
export function contentImageTokens(content: unknown): number {
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (const item of content) {
    if (!item || typeof item !== 'object') continue;
    const image = (item as QwenAgentContentItem).image;
    if (typeof image !== 'string' || image === '') continue;
    const size = inlineImageSize(image);
    n += size ? qwenImageTokens(size.width, size.height) : MAX_PATCHES + VISION_DELIMITERS;
  }
  return n;
}
