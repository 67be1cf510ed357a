import { decodePrefix, imageSize } from '../openai-chat/image-tokens.js';
import type { GeminiPart } from './types.js';

/**
 * What Gemini bills for media parts, by its published rule for images (Gemini 2.x): an image
 * with both sides at most 384 pixels costs 258 tokens; a larger one is cropped and scaled into
 * tiles of 768x768 pixels, 258 tokens each. The size is read from the header of inline bytes
 * (PNG, JPEG, GIF, WebP); for a file referenced by URI, whose size ctxfold cannot see, a
 * 1024x1024 image is assumed (4 tiles). Other media (audio, video, documents) are billed by
 * duration or page, which the request does not say: one unit of 258 tokens is counted, a floor.
 * Pure: no I/O, no module state.
 */

/** Tokens of one small image, and of each 768x768 tile of a larger one. */
export const GEMINI_MEDIA_UNIT_TOKENS = 258;
/** Largest side (pixels) of an image billed as one unit. */
export const GEMINI_SMALL_IMAGE_SIDE = 384;
/** Side (pixels) of one billed tile of a larger image. */
export const GEMINI_TILE_SIDE = 768;
/** The size assumed for an image whose size cannot be read. */
export const GEMINI_UNKNOWN_IMAGE = Object.freeze({ width: 1024, height: 1024 });

/** Tokens of an image of `width` x `height` pixels by the rule above. */
export function geminiImageTokens(width: number, height: number): number {
  if (!(width > 0 && height > 0)) return geminiImageTokens(GEMINI_UNKNOWN_IMAGE.width, GEMINI_UNKNOWN_IMAGE.height);
  if (width <= GEMINI_SMALL_IMAGE_SIDE && height <= GEMINI_SMALL_IMAGE_SIDE) return GEMINI_MEDIA_UNIT_TOKENS;
  return GEMINI_MEDIA_UNIT_TOKENS * Math.ceil(width / GEMINI_TILE_SIDE) * Math.ceil(height / GEMINI_TILE_SIDE);
}

/** Bytes decoded from the start of inline data to find an image's size (a JPEG's frame header may follow its metadata). */
const HEADER_BYTES = 64 * 1024;

const isImage = (mimeType: unknown) => typeof mimeType === 'string' && mimeType.toLowerCase().startsWith('image/');

/** Tokens Gemini bills for one part's media (`inlineData` or `fileData`); 0 for a part without media. */
export function geminiPartMediaTokens(part: GeminiPart): number {
  const inline = part.inlineData;
  if (inline && typeof inline === 'object') {
    if (!isImage(inline.mimeType)) return GEMINI_MEDIA_UNIT_TOKENS;
    const size = typeof inline.data === 'string' ? imageSize(decodePrefix(inline.data, HEADER_BYTES)) : undefined;
    return size ? geminiImageTokens(size.width, size.height) : geminiImageTokens(0, 0);
  }
  const file = part.fileData;
  // A file without a stated type is priced as an image of the assumed size (the higher figure).
  if (file && typeof file === 'object') return isImage(file.mimeType) || file.mimeType === undefined ? geminiImageTokens(0, 0) : GEMINI_MEDIA_UNIT_TOKENS;
  return 0;
}
