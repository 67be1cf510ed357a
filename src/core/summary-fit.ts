/**
 * Shortening a summary to the room a view has for it. Summaries put their newest facts last
 * (rolling summaries append), so the default rule keeps the first line (a title) and as many of
 * the last lines as fit, with a marker saying how many older lines were left out. Deterministic:
 * the same text and room give the same result. A summarizer may bring its own rule.
 */

/** Shortens `text` to at most `maxTokens` (by `countText`); returns '' when not even the marker fits. */
export type SummaryShortener = (text: string, maxTokens: number) => string;

/** The default rule: the title line, a marker, then the newest lines that fit. */
export function keepNewestLines(text: string, maxTokens: number, countText: (text: string) => number): string {
  if (countText(text) <= maxTokens) return text;
  const lines = text.split('\n');
  const title = lines[0];
  const kept: string[] = [];
  const render = () => [title, `[... ${lines.length - 1 - kept.length} older line(s) left out to fit the context budget]`, ...kept].join('\n');
  if (countText(render()) > maxTokens) return '';
  // Newest last: walk back from the end while the rendering still fits.
  for (let i = lines.length - 1; i >= 1; i--) {
    kept.unshift(lines[i]);
    if (countText(render()) > maxTokens) {
      kept.shift();
      break;
    }
  }
  return render();
}
