import { get_encoding, get_encoding_name_for_model, type Tiktoken, type TiktokenEncoding, type TiktokenModel } from 'tiktoken';

/** The encoding used when none is named and the model is unknown. */
export const DEFAULT_ENCODING: TiktokenEncoding = 'o200k_base';

const loaded = new Map<TiktokenEncoding, Tiktoken>();

/**
 * Picks the tiktoken encoding for a model name: tiktoken's own table first, then family
 * prefixes, then `o200k_base`. Never throws on an unknown model.
 */
export function encodingForModel(model: string | undefined): TiktokenEncoding {
  if (!model) return DEFAULT_ENCODING;
  try {
    return get_encoding_name_for_model(model as TiktokenModel);
  } catch {
    const m = model.toLowerCase();
    if (/^(gpt-3\.5|gpt-4(?!o|\.|-?o)|text-embedding-3|text-embedding-ada)/.test(m)) return 'cl100k_base';
    return DEFAULT_ENCODING;
  }
}

/** One encoder per encoding for the whole process (WASM memory is ~30 MB each); see `freeEncoders`. */
export function sharedEncoder(encoding: TiktokenEncoding): Tiktoken {
  let enc = loaded.get(encoding);
  if (!enc) {
    enc = get_encoding(encoding);
    loaded.set(encoding, enc);
  }
  return enc;
}

/** Frees every shared WASM encoder; a later count loads them again. Call on shutdown. */
export function freeEncoders(): void {
  for (const enc of loaded.values()) enc.free();
  loaded.clear();
}
