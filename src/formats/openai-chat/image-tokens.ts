/**
 * What OpenAI bills for an image part (`{ type: 'image_url', image_url: { url, detail } }`), by its
 * published rule for GPT-4o-class models: `detail: 'low'` costs 85 tokens; otherwise the image is
 * scaled to fit 2048x2048, then its shortest side to 768, and it costs 85 + 170 per 512-pixel tile.
 * The size is read from the image itself when it is inline (a base64 `data:` URL of a PNG, JPEG,
 * GIF or WebP: only the header is decoded); for a remote URL, whose size ctxfold cannot see, a
 * 1024x1024 image is assumed (765 tokens). Pure: no I/O, no module state.
 */

/** Tokens of a low-detail image, and of the base plus each tile of a high-detail one. */
export const IMAGE_BASE_TOKENS = 85;
export const IMAGE_TILE_TOKENS = 170;
/** The size assumed when an image's own size cannot be read. */
export const UNKNOWN_IMAGE_SIZE = { width: 1024, height: 1024 } as const;

/** Tokens of a high-detail image of `width` x `height` pixels. */
export function tiledImageTokens(width: number, height: number): number {
  if (!(width > 0 && height > 0)) return tiledImageTokens(UNKNOWN_IMAGE_SIZE.width, UNKNOWN_IMAGE_SIZE.height);
  let w = width;
  let h = height;
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w *= fit;
  h *= fit;
  const shortest = Math.min(w, h);
  if (shortest > 768) {
    w *= 768 / shortest;
    h *= 768 / shortest;
  }
  return IMAGE_BASE_TOKENS + IMAGE_TILE_TOKENS * Math.ceil(w / 512) * Math.ceil(h / 512);
}

/** The first `count` bytes of base64 `data`, or fewer when it is shorter or not base64 (every format's image headers are read with it). */
export function decodePrefix(data: string, count: number): Uint8Array {
  const chars = Math.min(data.length, Math.ceil(count / 3) * 4);
  let text: string;
  try {
    text = atob(data.slice(0, chars - (chars % 4)));
  } catch {
    return new Uint8Array(0);
  }
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

const u16be = (b: Uint8Array, i: number) => (b[i] << 8) | b[i + 1];
const u16le = (b: Uint8Array, i: number) => b[i] | (b[i + 1] << 8);
const u32be = (b: Uint8Array, i: number) => ((b[i] << 24) >>> 0) + (b[i + 1] << 16) + (b[i + 2] << 8) + b[i + 3];

/** Width and height from an image's header (PNG, JPEG, GIF, WebP), or undefined when they cannot be read. */
export function imageSize(bytes: Uint8Array): { width: number; height: number } | undefined {
  if (bytes.length >= 24 && bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47) {
    return { width: u32be(bytes, 16), height: u32be(bytes, 20) };
  }
  if (bytes.length >= 10 && bytes[0] === 0x47 && bytes[1] === 0x49 && bytes[2] === 0x46) return { width: u16le(bytes, 6), height: u16le(bytes, 8) };
  if (bytes.length >= 30 && bytes[0] === 0x52 && bytes[1] === 0x49 && bytes[8] === 0x57 && bytes[9] === 0x45) {
    const kind = String.fromCharCode(bytes[12], bytes[13], bytes[14], bytes[15]);
    if (kind === 'VP8X') return { width: 1 + (bytes[24] | (bytes[25] << 8) | (bytes[26] << 16)), height: 1 + (bytes[27] | (bytes[28] << 8) | (bytes[29] << 16)) };
    if (kind === 'VP8 ') return { width: u16le(bytes, 26) & 0x3fff, height: u16le(bytes, 28) & 0x3fff };
    if (kind === 'VP8L') return { width: 1 + (u16le(bytes, 21) & 0x3fff), height: 1 + (((bytes[22] >> 6) | (bytes[23] << 2) | (bytes[24] << 10)) & 0x3fff) };
  }
  if (bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xd8) {
    // Walk the JPEG segments to a start-of-frame marker, which holds the size.
    let i = 2;
    while (i + 9 < bytes.length) {
      if (bytes[i] !== 0xff) return undefined;
      const marker = bytes[i + 1];
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        return { width: u16be(bytes, i + 7), height: u16be(bytes, i + 5) };
      }
      i += 2 + u16be(bytes, i + 2);
    }
  }
  return undefined;
}

/** Bytes of an inline image decoded to find its size (a JPEG's frame header may come after its metadata). */
const HEADER_BYTES = 64 * 1024;

/** Tokens OpenAI bills for one `image_url` part (see the file comment for the rule). */
export function imagePartTokens(part: { readonly image_url?: unknown }): number {
  const image = part.image_url;
  const url = typeof image === 'string' ? image : typeof image === 'object' && image !== null ? (image as { url?: unknown }).url : undefined;
  const detail = typeof image === 'object' && image !== null ? (image as { detail?: unknown }).detail : undefined;
  if (detail === 'low') return IMAGE_BASE_TOKENS;
  if (typeof url === 'string' && url.startsWith('data:')) {
    const comma = url.indexOf(',');
    const size = comma > 0 && url.slice(0, comma).endsWith(';base64') ? imageSize(decodePrefix(url.slice(comma + 1), HEADER_BYTES)) : undefined;
    if (size) return tiledImageTokens(size.width, size.height);
  }
  return tiledImageTokens(UNKNOWN_IMAGE_SIZE.width, UNKNOWN_IMAGE_SIZE.height);
}
