import { imagePartTokens } from '../openai-chat/image-tokens.js';
import { typeOf } from './items.js';
import type { ResponsesItem } from './types.js';

/**
 * Tokens OpenAI bills for the images of a Responses item, by the same published rule as Chat
 * Completions: `input_image` parts of a message or of a tool output, a computer call's screenshot,
 * and an image generation call's image (base64 PNG) when it is sent back. Files (`input_file`)
 * are billed by what the provider extracts from them, which ctxfold cannot see: they count 0.
 */

type Obj = Record<string, unknown>;

/** Base64 characters of a generated image read for its size (its header; the rest is never decoded). */
const HEADER_CHARS = 90_000;

/** Tokens of one Responses image (`image_url` a string, `detail` beside it). */
function imageTokens(image: Obj): number {
  return imagePartTokens({ image_url: { url: image.image_url, detail: image.detail } });
}

/** Tokens of the `input_image` parts of a content list. */
function partsImageTokens(content: unknown): number {
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (const part of content) if (part && typeof part === 'object' && (part as Obj).type === 'input_image') n += imageTokens(part as Obj);
  return n;
}

/** Tokens the provider bills for the item's images; 0 when it has none. */
export function itemMediaTokens(item: ResponsesItem): number {
  switch (typeOf(item)) {
    case 'message':
      return partsImageTokens(item.content);
    case 'function_call_output':
    case 'custom_tool_call_output':
      return partsImageTokens(item.output);
    case 'computer_call_output':
      return item.output && typeof item.output === 'object' ? imageTokens(item.output as Obj) : 0;
    case 'image_generation_call':
      return typeof item.result === 'string' && item.result !== '' ? imagePartTokens({ image_url: { url: `data:image/png;base64,${item.result.slice(0, HEADER_CHARS)}` } }) : 0;
    default:
      return 0;
  }
}
