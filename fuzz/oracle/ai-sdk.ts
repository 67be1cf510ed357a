/**
 * An independent checker for Vercel AI SDK message lists (`ModelMessage[]`, a V3 call's `prompt`),
 * written from the AI SDK's source (ai 6.0: `convertToLanguageModelPrompt` throws
 * `MissingToolResultsError`, `collectToolApprovals` runs approved tools named in the last message)
 * and from the providers' rules in ../shared/provider-rules.md (I1-I4). It shares no code with
 * src: it walks the messages itself, block by block (an assistant message that opens calls, then
 * the tool messages right after it), and never pairs by id across the whole history.
 */

/** One problem the checker found, at a message index. */
export interface CheckerProblem {
  readonly index: number;
  readonly rule: 'shape' | 'call-unanswered' | 'result-orphan' | 'result-duplicate' | 'call-id-duplicate' | 'provider-result-orphan';
  readonly detail: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const partsOf = (m: Obj): Obj[] => (Array.isArray(m.content) ? (m.content as unknown[]).filter(isObj) : []);

/** Shape problems of one message (roles, content kinds, the fields tool parts need). */
function shapeProblems(m: unknown, index: number): CheckerProblem[] {
  const bad = (detail: string): CheckerProblem[] => [{ index, rule: 'shape', detail }];
  if (!isObj(m)) return bad('not an object');
  const { role, content } = m;
  if (role !== 'system' && role !== 'user' && role !== 'assistant' && role !== 'tool') return bad(`role ${String(role)}`);
  if (role === 'system') return typeof content === 'string' ? [] : bad('system content is not a string');
  if (role === 'tool' && !Array.isArray(content)) return bad('tool content is not a list');
  if (typeof content === 'string') return [];
  if (!Array.isArray(content)) return bad('content is neither a string nor a list');
  const out: CheckerProblem[] = [];
  for (const part of content as unknown[]) {
    if (!isObj(part) || typeof part.type !== 'string') {
      out.push(...bad('a part without a type'));
      continue;
    }
    const t = part.type;
    if (role === 'tool' && t !== 'tool-result' && t !== 'tool-approval-response') out.push(...bad(`a ${t} part in a tool message`));
    if (role === 'user' && t.startsWith('tool-')) out.push(...bad(`a ${t} part in a user message`));
    if (t === 'tool-call' && (typeof part.toolCallId !== 'string' || typeof part.toolName !== 'string')) out.push(...bad('a tool-call without string toolCallId/toolName'));
    if (t === 'tool-result' && typeof part.toolCallId !== 'string') out.push(...bad('a tool-result without a string toolCallId'));
    if (t === 'tool-approval-request' && (typeof part.approvalId !== 'string' || typeof part.toolCallId !== 'string')) out.push(...bad('an approval request without ids'));
    if (t === 'tool-approval-response' && (typeof part.approvalId !== 'string' || typeof part.approved !== 'boolean')) out.push(...bad('an approval response without approvalId/approved'));
  }
  return out;
}

/** Every problem of `messages` (an empty list: the AI SDK and the providers behind it accept them). */
export function checkAiSdk(messages: readonly unknown[]): CheckerProblem[] {
  const out: CheckerProblem[] = [];
  messages.forEach((m, i) => out.push(...shapeProblems(m, i)));
  if (out.length > 0) return out;
  const list = messages as Obj[];
  const n = list.length;
  const seenProviderCalls = new Set<string>();
  let i = 0;
  while (i < n) {
    const m = list[i];
    if (m.role === 'assistant') {
      const parts = partsOf(m);
      // Provider-executed results: their call is in this message or an earlier assistant message.
      for (const p of parts) if (p.type === 'tool-call') seenProviderCalls.add(p.toolCallId as string);
      for (const p of parts) {
        if (p.type === 'tool-result' && !seenProviderCalls.has(p.toolCallId as string)) {
          out.push({ index: i, rule: 'provider-result-orphan', detail: `provider result ${String(p.toolCallId)} has no call before it` });
        }
      }
      const ids = new Set<string>();
      const approvalIds = new Set<string>();
      for (const p of parts) {
        if (p.type === 'tool-call') {
          if (ids.has(p.toolCallId as string)) out.push({ index: i, rule: 'call-id-duplicate', detail: `two calls with id ${String(p.toolCallId)}` });
          ids.add(p.toolCallId as string);
        }
        if (p.type === 'tool-approval-request') {
          if (approvalIds.has(p.approvalId as string)) out.push({ index: i, rule: 'call-id-duplicate', detail: `two approval requests with id ${String(p.approvalId)}` });
          approvalIds.add(p.approvalId as string);
        }
      }
      const open = parts.filter((p) => p.type === 'tool-call' && p.providerExecuted !== true).map((p) => p.toolCallId as string);
      const approvals = new Map<string, string>();
      for (const p of parts) if (p.type === 'tool-approval-request') approvals.set(p.approvalId as string, p.toolCallId as string);
      if (open.length === 0 && approvals.size === 0) {
        i++;
        continue;
      }
      // The block: the tool messages right after the assistant message.
      const answered = new Set<string>();
      const approvalAnswered = new Map<string, number>();
      let j = i + 1;
      for (; j < n && list[j].role === 'tool'; j++) {
        for (const p of partsOf(list[j])) {
          if (p.type === 'tool-result') {
            const id = p.toolCallId as string;
            if (!open.includes(id)) out.push({ index: j, rule: 'result-orphan', detail: `result ${id} answers no call of messages[${i}]` });
            else if (answered.has(id)) out.push({ index: j, rule: 'result-duplicate', detail: `second result for ${id}` });
            else answered.add(id);
          } else {
            const id = p.approvalId as string;
            if (!approvals.has(id)) out.push({ index: j, rule: 'result-orphan', detail: `approval response ${id} answers no request of messages[${i}]` });
            else if (approvalAnswered.has(id)) out.push({ index: j, rule: 'result-duplicate', detail: `second approval response for ${id}` });
            else approvalAnswered.set(id, j);
          }
        }
      }
      // generateText answers a call itself when its approval response is in the history's last message.
      const settled = new Set<string>();
      for (const [approvalId, at] of approvalAnswered) if (at === n - 1) settled.add(approvals.get(approvalId)!);
      const missing = open.filter((id) => !answered.has(id) && !settled.has(id));
      if (missing.length > 0) out.push({ index: i, rule: 'call-unanswered', detail: `no result for ${missing.join(', ')}` });
      i = j;
      continue;
    }
    if (m.role === 'tool') {
      for (const p of partsOf(m)) out.push({ index: i, rule: 'result-orphan', detail: `${String(p.type)} ${String(p.toolCallId ?? p.approvalId)} follows no call` });
    }
    i++;
  }
  return out.sort((a, b) => a.index - b.index);
}
