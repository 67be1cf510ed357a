import { eachMessage, type MessageRule, type Rule, type Violation } from '../../core/validate/rules.js';
import { everyCallAnswered, resultAnswersCall, resultOnce } from '../../core/invariants/index.js';
import { blocksOf, IN_PLACE_CALL_TYPES, isBlock, isInPlaceResultType, isThinkingType, nthBlockIndex, usesThinking } from './blocks.js';
import { scanServerTools } from './server-tools.js';
import { openLoopStart } from './thinking.js';
import type { AnthropicMessage } from './types.js';

/**
 * The rules of the Anthropic Messages API (and of Claude on Bedrock) as rule units, each worded
 * like the provider's own 400 from the project's provider notes, with the message index
 * (`messages.N`, as the API counts: the list without the top-level `system`) and the id.
 */

/** I1/I3: every `tool_use` is answered by a `tool_result` block in the next message. */
export const toolUseAnswered: Rule<AnthropicMessage> = everyCallAnswered.rule(({ turn, calls }) => {
  const missing = calls.map((c) => c.id ?? c.name);
  return {
    index: turn.opener,
    id: missing[0],
    message: `messages.${turn.opener}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
  };
});

/**
 * Each block on its side: calls (`tool_use`, server tool calls) and server tool results are the
 * model's, in assistant messages; a `tool_result` is the client's, in a user message. Where a
 * misplaced block belongs cannot be told, so repair refuses it rather than guess.
 */
export const blocksOnTheirSide: MessageRule<AnthropicMessage> = {
  id: 'block-wrong-role',
  fault(m) {
    if (!Array.isArray(m?.content)) return undefined;
    for (let k = 0; k < m.content.length; k++) {
      const b = m.content[k];
      if (!isBlock(b)) continue;
      if (m.role === 'user' && (b.type === 'tool_use' || IN_PLACE_CALL_TYPES.includes(b.type) || isInPlaceResultType(b.type))) {
        return { field: `.content[${k}]`, message: `a \`${b.type}\` block in a user message: calls and server tool results belong in the assistant message that made them.` };
      }
      if (m.role === 'assistant' && b.type === 'tool_result') {
        return { field: `.content[${k}]`, message: 'a `tool_result` block in an assistant message: a tool\'s result belongs in the user message right after its `tool_use`.' };
      }
    }
    return undefined;
  },
  repair: { advice: 'move the block to the message it belongs in, or remove it (ctxfold does not guess where a call or a result belongs)' },
};

/** The profile rule of `blocksOnTheirSide`, placed as the API counts (`messages.3.content.1`). */
export const blocksOnSide: Rule<AnthropicMessage> = eachMessage(blocksOnTheirSide, (index, field) => `messages.${index}${field.replace(/\[(\d+)\]/g, '.$1')}`);

/** I2: every `tool_result` answers a `tool_use` of the message right before (also when a cut left it first, `messages.0`). */
export const toolResultHasUse: Rule<AnthropicMessage> = resultAnswersCall.rule((p, { messages }) => ({
  index: p.index,
  id: p.result.id,
  message: `messages.${p.index}.content.${nthBlockIndex(messages[p.index].content, 'tool_result', p.slot)}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${p.result.id ?? p.result.idHint ?? ''}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
}));

/** I4: a `tool_use` has exactly one `tool_result`. */
export const toolResultSingle: Rule<AnthropicMessage> = resultOnce.rule(({ result: p, call }, { messages }) => {
  const id = call.id ?? '';
  return {
    index: p.index,
    id,
    message: `messages.${p.index}.content.${nthBlockIndex(messages[p.index].content, 'tool_result', p.slot)}: each tool_use must have a single result. Found multiple \`tool_result\` blocks with id: ${id}`,
  };
});

/** I3: in a user message, `tool_result` blocks come before anything else. */
export const toolResultsFirst: Rule<AnthropicMessage> = {
  id: 'tool-result-not-first',
  check({ messages }) {
    const out: Violation[] = [];
    messages.forEach((m, index) => {
      if (m.role !== 'user') return;
      const blocks = blocksOf(m);
      const firstOther = blocks.findIndex((b) => b.type !== 'tool_result');
      if (firstOther < 0 || !blocks.slice(firstOther).some((b) => b.type === 'tool_result')) return;
      const previous = index > 0 && messages[index - 1].role === 'assistant' ? blocksOf(messages[index - 1]).filter((b) => b.type === 'tool_use').length : 0;
      const expected = previous > 0 ? previous : blocks.filter((b) => b.type === 'tool_result').length;
      out.push({
        index,
        rule: 'tool-result-not-first',
        message: `messages.${index}: Did not find ${expected} \`tool_result\` block(s) at the beginning of this message. Messages following \`tool_use\` blocks must begin with a matching number of \`tool_result\` blocks.`,
      });
    });
    return out;
  },
};

/** I4: `tool_use` ids (server tool calls included) are unique across the whole request. */
export const toolUseIdsUnique: Rule<AnthropicMessage> = {
  id: 'call-id-duplicate',
  check({ messages }) {
    const out: Violation[] = [];
    const seen = new Map<string, string>();
    messages.forEach((m, index) => {
      if (m.role !== 'assistant') return;
      blocksOf(m).forEach((b, k) => {
        if (b.type !== 'tool_use' && b.type !== 'server_tool_use' && b.type !== 'mcp_tool_use') return;
        if (typeof b.id !== 'string') return;
        const first = seen.get(b.id);
        if (first === undefined) {
          seen.set(b.id, `messages.${index}.content.${k}`);
          return;
        }
        out.push({ index, rule: 'call-id-duplicate', id: b.id, message: `messages.${index}.content.${k}: \`tool_use\` ids must be unique (${b.id} is also the id at ${first})` });
      });
    });
    return out;
  },
};

/**
 * Server tools: a `server_tool_use` is answered by its `*_tool_result` block in the same message.
 * A call left open in the request's last assistant message (a paused turn, or one waiting on a
 * client tool) or answered in a later message is accepted.
 */
export const serverToolsAnswered: Rule<AnthropicMessage> = {
  id: 'server-tool-unanswered',
  check({ messages }) {
    const out: Violation[] = [];
    let lastAssistant = -1;
    for (let i = messages.length - 1; i >= 0 && lastAssistant < 0; i--) if (messages[i].role === 'assistant') lastAssistant = i;
    for (const c of scanServerTools(messages).calls) {
      if (c.answeredAt >= 0 || c.index === lastAssistant) continue;
      const resultType = c.type === 'mcp_tool_use' ? 'mcp_tool_result' : `${c.name}_tool_result`;
      out.push({ index: c.index, rule: 'server-tool-unanswered', id: c.id, message: `messages.${c.index}: \`${c.name}\` tool use with id \`${c.id}\` was found without a corresponding \`${resultType}\` block` });
    }
    return out;
  },
};

/** Server tools: a `*_tool_result` block follows the server tool call it answers. */
export const serverResultsHaveCall: Rule<AnthropicMessage> = {
  id: 'server-tool-result-orphan',
  check({ messages }) {
    const out: Violation[] = [];
    for (const r of scanServerTools(messages).results) {
      if (r.callAt >= 0) continue;
      out.push({
        index: r.index,
        rule: 'server-tool-result-orphan',
        id: r.id,
        message: `messages.${r.index}.content.${r.block}: unexpected \`tool_use_id\` found in \`${r.type}\` blocks: ${r.id}. Each \`${r.type}\` block must have a corresponding \`server_tool_use\` block before it.`,
      });
    }
    return out;
  },
};

/** I6: with thinking on, the assistant message that started an unfinished tool loop starts with its thinking block. */
export const thinkingLeadsOpenLoop: Rule<AnthropicMessage> = {
  id: 'thinking-not-first',
  check({ messages }) {
    const start = openLoopStart(messages);
    if (start < 0 || !usesThinking(messages)) return [];
    const m = messages[start];
    const first = Array.isArray(m.content) ? m.content[0] : m.content;
    if (isBlock(first) && isThinkingType(first.type)) return [];
    const found = isBlock(first) ? first.type : 'text';
    return [{
      index: start,
      rule: 'thinking-not-first',
      message: `messages.${start}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${found}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`,
    }];
  },
};

/** I6: an assistant message does not end with a thinking block (its answer would be missing). */
export const thinkingNotLast: Rule<AnthropicMessage> = {
  id: 'thinking-last-block',
  check({ messages }) {
    const out: Violation[] = [];
    messages.forEach((m, index) => {
      if (m.role !== 'assistant' || !Array.isArray(m.content) || m.content.length === 0) return;
      const last = m.content[m.content.length - 1];
      if (isBlock(last) && isThinkingType(last.type)) out.push({ index, rule: 'thinking-last-block', message: `messages.${index}: The final block in an assistant message cannot be \`thinking\`` });
    });
    return out;
  },
};

/** Anthropic's tool id pattern, for `tool_use.id` and `tool_result.tool_use_id`. */
export const ANTHROPIC_TOOL_ID = /^[a-zA-Z0-9_-]+$/;

/** I11: tool ids, in calls and results, fit Anthropic's pattern. */
export const toolIdsFitAnthropic: Rule<AnthropicMessage> = {
  id: 'tool-id-pattern',
  check({ messages }) {
    const out: Violation[] = [];
    messages.forEach((m, index) => {
      blocksOf(m).forEach((b, k) => {
        const field = b.type === 'tool_use' ? 'tool_use.id' : b.type === 'tool_result' ? 'tool_result.tool_use_id' : undefined;
        const id = b.type === 'tool_use' ? b.id : b.tool_use_id;
        if (field === undefined || typeof id !== 'string' || ANTHROPIC_TOOL_ID.test(id)) return;
        out.push({ index, rule: 'tool-id-pattern', id, message: `messages.${index}.content.${k}.${field}: String should match pattern '^[a-zA-Z0-9_-]+$'` });
      });
    });
    return out;
  },
};

/** Bedrock (I7): the first message is a user message. */
export const startsWithUser: Rule<AnthropicMessage> = {
  id: 'first-not-user',
  check({ messages }) {
    if (messages.length === 0 || messages[0].role === 'user') return [];
    return [{ index: 0, rule: 'first-not-user', message: 'messages.0: A conversation must start with a user message. Try again with a conversation that starts with a user message.' }];
  },
};

/** Bedrock (I8): user and assistant messages alternate. */
export const rolesAlternate: Rule<AnthropicMessage> = {
  id: 'roles-not-alternating',
  check({ messages }) {
    const out: Violation[] = [];
    for (let i = 1; i < messages.length; i++) {
      if (messages[i].role !== messages[i - 1].role) continue;
      out.push({ index: i, rule: 'roles-not-alternating', message: `messages.${i}: A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.` });
    }
    return out;
  },
};

/** Bedrock's toolUseId pattern: 1-64 characters of letters, digits, `_`, `.`, `:` and `-`. */
export const BEDROCK_TOOL_ID = /^[a-zA-Z0-9_.:-]{1,64}$/;

/** Bedrock (I11): tool ids, in calls and results, fit its toolUseId pattern. */
export const toolIdsFitBedrock: Rule<AnthropicMessage> = {
  id: 'tool-id-pattern',
  check({ messages }) {
    const out: Violation[] = [];
    messages.forEach((m, index) => {
      blocksOf(m).forEach((b, k) => {
        const id = b.type === 'tool_use' ? b.id : b.type === 'tool_result' ? b.tool_use_id : undefined;
        if (typeof id !== 'string' || BEDROCK_TOOL_ID.test(id)) return;
        out.push({ index, rule: 'tool-id-pattern', id, message: `messages.${index}.content.${k}: toolUseId ${JSON.stringify(id)} does not fit Bedrock's constraint: 1 to 64 characters matching [a-zA-Z0-9_.:-]+` });
      });
    });
    return out;
  },
};

/** Bedrock (I10): a message has content. */
export const contentPresent: Rule<AnthropicMessage> = {
  id: 'content-empty',
  check({ messages }) {
    const out: Violation[] = [];
    messages.forEach((m, index) => {
      if (m.content === '' || (Array.isArray(m.content) && m.content.length === 0)) {
        out.push({ index, rule: 'content-empty', message: `The content field in the Message object at messages.${index} is empty. Add a ContentBlock object to the content field and try again.` });
      }
    });
    return out;
  },
};

/** Bedrock (I10): text is not blank (whitespace only), as string content or as a text block. */
export const textNotBlank: Rule<AnthropicMessage> = {
  id: 'text-blank',
  check({ messages }) {
    const out: Violation[] = [];
    const blank = (index: number, k: number) => out.push({ index, rule: 'text-blank', message: `The text field in the ContentBlock object at messages.${index}.content.${k} is blank. Add text to the text field, and try again.` });
    messages.forEach((m, index) => {
      if (typeof m.content === 'string') {
        if (m.content !== '' && m.content.trim() === '') blank(index, 0);
        return;
      }
      blocksOf(m).forEach((b, k) => {
        if (b.type === 'text' && (typeof b.text !== 'string' || b.text.trim() === '')) blank(index, k);
      });
    });
    return out;
  },
};

/** Bedrock (I10): an error result carries content. */
export const errorResultHasContent: Rule<AnthropicMessage> = {
  id: 'error-result-empty',
  check({ messages }) {
    const out: Violation[] = [];
    messages.forEach((m, index) => {
      blocksOf(m).forEach((b, k) => {
        if (b.type !== 'tool_result' || b.is_error !== true) return;
        if (b.content !== undefined && b.content !== '' && !(Array.isArray(b.content) && b.content.length === 0)) return;
        out.push({ index, rule: 'error-result-empty', id: typeof b.tool_use_id === 'string' ? b.tool_use_id : undefined, message: `The content field at messages.${index}.content.${k}.toolResult cannot be empty when status value is error.` });
      });
    });
    return out;
  },
};

/** Bedrock (I2): a user message carries no more `tool_result` blocks than the turn before has `tool_use` blocks. */
export const resultsWithinUses: Rule<AnthropicMessage> = {
  id: 'tool-results-exceed',
  check({ messages }) {
    const out: Violation[] = [];
    messages.forEach((m, index) => {
      if (m.role !== 'user') return;
      const results = blocksOf(m).filter((b) => b.type === 'tool_result').length;
      if (results === 0) return;
      const uses = index > 0 && messages[index - 1].role === 'assistant' ? blocksOf(messages[index - 1]).filter((b) => b.type === 'tool_use').length : 0;
      if (results > uses) out.push({ index, rule: 'tool-results-exceed', message: `The number of toolResult blocks at messages.${index}.content exceeds the number of toolUse blocks of previous turn.` });
    });
    return out;
  },
};
