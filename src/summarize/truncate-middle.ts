/**
 * Shortens a text to at most `maxChars` characters by cutting its middle and saying how much was
 * cut, so both the opening (what a text is) and the ending (how it concluded) survive. A text
 * that already fits is returned unchanged; the result never splits a surrogate pair and is never
 * longer than `max(maxChars, marker length)`.
 */
export function truncateMiddle(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const marker = (cut: number) => ` […${cut} chars cut…] `;
  // The marker's own length depends on the count it shows; size it for the worst case.
  const room = Math.max(0, maxChars - marker(text.length).length);
  let headEnd = Math.ceil(room / 2);
  let tailStart = text.length - (room - headEnd);
  if (isHighSurrogate(text.charCodeAt(headEnd - 1))) headEnd--;
  if (isLowSurrogate(text.charCodeAt(tailStart))) tailStart++;
  return `${text.slice(0, headEnd)}${marker(tailStart - headEnd)}${text.slice(tailStart)}`;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
