/**
 * Gemini `generateContent` request shapes, loosely typed: every field ctxfold does not read is
 * kept as it is (unknown fields included), so a content goes back to the provider unchanged.
 */

/** A call the model asks the client to run. `id` is optional in Gemini (pairing is then by name and position). */
export interface GeminiFunctionCall {
  name: string;
  args?: Record<string, unknown>;
  id?: string;
  [key: string]: unknown;
}

/** The client's answer to a call: the call's name, its id when the call had one, and a JSON object. */
export interface GeminiFunctionResponse {
  name: string;
  response: Record<string, unknown>;
  id?: string;
  [key: string]: unknown;
}

/** Inline bytes (base64) of an image, audio, video or document part. */
export interface GeminiBlob {
  mimeType: string;
  data: string;
  [key: string]: unknown;
}

/** A file referenced by URI (Files API or a storage URL). */
export interface GeminiFileData {
  mimeType?: string;
  fileUri: string;
  [key: string]: unknown;
}

/**
 * One part of a content: text (a thought summary when `thought` is true), media, a function
 * call or response, or code the provider ran itself with its result. `thoughtSignature` may sit
 * on any part and must go back byte-identical, on the same part.
 */
export interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: GeminiBlob;
  fileData?: GeminiFileData;
  functionCall?: GeminiFunctionCall;
  functionResponse?: GeminiFunctionResponse;
  executableCode?: { language?: string; code?: string; [key: string]: unknown };
  codeExecutionResult?: { outcome?: string; output?: string; [key: string]: unknown };
  [key: string]: unknown;
}

/** One entry of `contents`: a user or model turn. A missing role reads as `user`. */
export interface GeminiContent {
  role?: string;
  parts: GeminiPart[];
  [key: string]: unknown;
}

/** The request's `systemInstruction`: instructions outside `contents`. */
export interface GeminiSystemInstruction {
  role?: string;
  parts: { text: string; [key: string]: unknown }[];
  [key: string]: unknown;
}
