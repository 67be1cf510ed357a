/**
 * The provider-level prompt (`LanguageModelV3Prompt` / `V4`) is the `ModelMessage` shape with one
 * narrowing: user and assistant content is always a list of parts, never a string. Messages
 * ctxfold writes (the summary, a note) use string content, valid in a `ModelMessage` list; this
 * gives them the one-text-part form a provider expects. The caller's own messages already are in
 * that form and are passed as they are (same objects). Pure: nothing is mutated.
 */

type Msg = { readonly role?: unknown; readonly content?: unknown };

/** `view` with every user or assistant message whose content is a string written as one text part. */
export function asProviderPrompt<M>(view: readonly M[]): M[] {
  return view.map((m) => {
    const msg = m as Msg;
    if ((msg?.role !== 'user' && msg?.role !== 'assistant') || typeof msg.content !== 'string') return m;
    return { ...msg, content: [{ type: 'text', text: msg.content }] } as M;
  });
}
