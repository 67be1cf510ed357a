/**
 * What a model answered as a summary, read the same way for every summarizer that asks a model:
 * a string, or content parts (`[{ type: 'text', text }]`, as some servers and SDKs answer) whose
 * texts are joined. The result is trimmed and never empty: `missing` when there is no text at
 * all, `empty` when the text is blank. Each summarizer words its own error from the reason.
 */
export function readSummaryText(content: unknown): { readonly text: string } | { readonly problem: 'missing' | 'empty' } {
  let value = content;
  if (Array.isArray(value)) {
    value = value.map((p: { text?: unknown } | null | undefined) => (typeof p?.text === 'string' ? p.text : '')).join('');
  }
  if (typeof value !== 'string') return { problem: 'missing' };
  const text = value.trim();
  return text === '' ? { problem: 'empty' } : { text };
}
