import { decodePrefix, imageSize } from '../openai-chat/image-tokens.js';
import { isBlock, isInPlaceResultType } from './blocks.js';
import type { AnthropicBlock, AnthropicMessage } from './types.js';

/**
 * What Anthropic bills for the parts of a message that are not text, by its published rules:
 * - an image costs width x height / 750 tokens, after it is scaled to fit 1568 pixels on its long
 *   edge and about 1,600 tokens (1.15 megapixels); the size is read from an inline image's header,
 *   and an image whose size cannot be seen (a URL, a file id) is taken at the 1,600-token maximum;
 * - a PDF page costs its text plus an image of the page: estimated at 3,000 tokens a page (the
 *   docs give 1,500-3,000 for the text, plus the page image), pages counted in an inline PDF and
 *   one page assumed for a PDF by reference;
 * - opaque data (redacted thinking, a search result's encrypted page content) is the model's own
 *   text, encrypted: a quarter of its length in characters, an estimate that errs high.
 * Images inside `tool_result` content and server tool results count the same way. Pure.
 */

/** Tokens an image costs at most (it is scaled down to about 1.15 megapixels first). */
export const IMAGE_MAX_TOKENS = 1600;
/** Pixels of an image's long edge at most (it is scaled down to fit first). */
export const IMAGE_MAX_EDGE = 1568;
/** Pixels per token of an image. */
export const PIXELS_PER_TOKEN = 750;
/** Tokens assumed per PDF page (text plus page image). */
export const PDF_PAGE_TOKENS = 3000;

/** Tokens of an image of `width` x `height` pixels, after Anthropic's downscaling. */
export function imageTokens(width: number, height: number): number {
  if (!(width > 0 && height > 0)) return IMAGE_MAX_TOKENS;
  let w = width;
  let h = height;
  const edge = Math.min(1, IMAGE_MAX_EDGE / Math.max(w, h));
  w *= edge;
  h *= edge;
  const area = Math.min(1, (IMAGE_MAX_TOKENS * PIXELS_PER_TOKEN) / (w * h));
  return Math.min(IMAGE_MAX_TOKENS, Math.ceil((w * h * area) / PIXELS_PER_TOKEN));
}

/** Bytes of an inline image decoded to find its size (a JPEG's frame header may follow its metadata). */
const HEADER_BYTES = 64 * 1024;

type Source = { type?: unknown; data?: unknown; media_type?: unknown };

function imageBlockTokens(block: AnthropicBlock): number {
  const source = block.source as Source | undefined;
  if (source && source.type === 'base64' && typeof source.data === 'string') {
    const size = imageSize(decodePrefix(source.data, HEADER_BYTES));
    if (size) return imageTokens(size.width, size.height);
  }
  return IMAGE_MAX_TOKENS;
}

/** Pages of a PDF, counted from its page objects (`/Type /Page`, not `/Pages`); at least one. */
function pdfPages(base64: string): number {
  let text: string;
  try {
    text = atob(base64);
  } catch {
    return 1;
  }
  const pages = text.match(/\/Type\s*\/Page(?![a-zA-Z])/g);
  return Math.max(1, pages ? pages.length : 1);
}

function documentTokens(block: AnthropicBlock): number {
  const source = block.source as Source | undefined;
  if (!source || typeof source !== 'object') return 0;
  if (source.type === 'text' || source.type === 'content') return 0; // billed as text
  if (source.type === 'base64' && typeof source.data === 'string') {
    return source.media_type === 'application/pdf' ? PDF_PAGE_TOKENS * pdfPages(source.data) : Math.ceil(source.data.length / 4);
  }
  return PDF_PAGE_TOKENS; // a PDF by URL or file id: one page assumed
}

/** Opaque strings under a server tool result: encrypted page content and the like. */
function opaqueTokens(value: unknown, depth = 0): number {
  if (depth > 64 || typeof value !== 'object' || value === null) return 0;
  let n = 0;
  if (Array.isArray(value)) {
    for (const v of value) n += opaqueTokens(v, depth + 1);
    return n;
  }
  const o = value as Record<string, unknown>;
  if (o.type === 'image') return imageBlockTokens(o as AnthropicBlock);
  for (const [k, v] of Object.entries(o)) {
    if ((k === 'encrypted_content' || k === 'encrypted_index') && typeof v === 'string') n += Math.ceil(v.length / 4);
    else n += opaqueTokens(v, depth + 1);
  }
  return n;
}

/** Tokens of the non-text parts of one block (and of the blocks a tool result carries). */
function blockMediaTokens(block: AnthropicBlock): number {
  switch (block.type) {
    case 'image':
      return imageBlockTokens(block);
    case 'document':
      return documentTokens(block);
    case 'redacted_thinking':
      return typeof block.data === 'string' ? Math.ceil(block.data.length / 4) : 0;
    case 'tool_result': {
      if (!Array.isArray(block.content)) return 0;
      let n = 0;
      for (const b of block.content) if (isBlock(b)) n += blockMediaTokens(b);
      return n;
    }
    default:
      return isInPlaceResultType(block.type) ? opaqueTokens(block.content) : 0;
  }
}

/** Tokens Anthropic bills for a message's images, documents and opaque data (see the file comment); 0 when none. */
export function messageMediaTokens(m: AnthropicMessage): number {
  if (!Array.isArray(m.content)) return 0;
  let n = 0;
  for (const b of m.content) if (isBlock(b)) n += blockMediaTokens(b);
  return n;
}
