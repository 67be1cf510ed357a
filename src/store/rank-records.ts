import { queryWords, type OriginalRecord } from './originals.js';

/** Occurrences of `word` in `text` (non-overlapping), counted up to 100. */
function occurrences(text: string, word: string): number {
  let n = 0;
  for (let at = text.indexOf(word); at !== -1 && n < 100; at = text.indexOf(word, at + word.length)) n++;
  return n;
}

/**
 * The records holding the query's words (as substrings, case-insensitive), best first, at most
 * `limit`: a BM25-like score where rarer words weigh more, repeats add less and less and longer
 * texts a little less; ties go to the earlier message. For stores without a full-text index
 * (memory, Redis): it reads every record given, so its cost is linear in their text.
 */
export function rankRecords(records: Iterable<OriginalRecord>, query: string, limit: number): OriginalRecord[] {
  const words = queryWords(query);
  if (words.length === 0 || limit < 1) return [];
  const texts = [...records].map((r) => ({ r, lower: r.text.toLowerCase() }));
  if (texts.length === 0) return [];
  const avg = texts.reduce((n, t) => n + t.lower.length, 0) / texts.length;
  const df = words.map((w) => texts.filter((t) => t.lower.includes(w)).length);
  const scored: { r: OriginalRecord; score: number }[] = [];
  for (const t of texts) {
    let score = 0;
    words.forEach((w, k) => {
      if (df[k] === 0) return;
      const tf = occurrences(t.lower, w);
      if (tf === 0) return;
      const idf = Math.log(1 + (texts.length - df[k] + 0.5) / (df[k] + 0.5));
      score += idf * ((tf * 2.2) / (tf + 1.2 * (0.25 + 0.75 * (t.lower.length / Math.max(1, avg)))));
    });
    if (score > 0) scored.push({ r: t.r, score });
  }
  scored.sort((a, b) => b.score - a.score || a.r.index - b.r.index);
  return scored.slice(0, limit).map((s) => s.r);
}
