/**
 * An independent checker of Anthropic Messages histories, written from the provider notes
 * (../shared/provider-rules.md) and Anthropic's documentation, sharing no code with src: it
 * returns every problem the API (or, with `bedrock`, Claude on Bedrock) would answer with a 400.
 *
 * Anthropic's first-party API merges consecutive messages of the same role into one turn, so
 * the tool rules are checked on merged turns; Bedrock does not merge (it wants strict alternation).
 */

type Block = { type: string; [key: string]: unknown };
type Message = { role: string; content: string | Block[] };

/** One problem: the message index and what is wrong. */
export interface CheckerProblem {
  readonly index: number;
  readonly problem: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const CALL_TYPES = ['tool_use', 'server_tool_use', 'mcp_tool_use'];
const SERVER_CALLS = ['server_tool_use', 'mcp_tool_use'];
const isServerResult = (t: string) => t.endsWith('_tool_result') && t !== 'tool_result';
const isThinking = (t: string) => t === 'thinking' || t === 'redacted_thinking';

/** A turn as the API sees it: consecutive messages of one role, merged. */
interface Turn {
  readonly role: string;
  /** Blocks with the index of the message each came from. */
  readonly blocks: { block: Block; index: number }[];
  readonly first: number;
}

function blocks(m: Message): Block[] {
  return typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
}

function turnsOf(messages: readonly Message[], merge: boolean): Turn[] {
  const turns: Turn[] = [];
  messages.forEach((m, index) => {
    const last = turns[turns.length - 1];
    const own = blocks(m).map((block) => ({ block, index }));
    if (merge && last && last.role === m.role) last.blocks.push(...own);
    else turns.push({ role: m.role, blocks: own, first: index });
  });
  return turns;
}

/** What the request says beside its messages. */
export interface CheckerOptions {
  /** Check Claude on Bedrock (strict alternation, its id pattern, no blank text) instead of the first-party API. */
  readonly bedrock?: boolean;
  /** The request's `thinking` is enabled; by default, taken to be when any message carries a thinking block. */
  readonly thinking?: boolean;
}

/** Every problem of `messages` (empty when the provider accepts them), in message order. */
export function anthropicProblems(input: readonly unknown[], options: CheckerOptions = {}): CheckerProblem[] {
  const out: CheckerProblem[] = [];
  const say = (index: number, problem: string) => out.push({ index, problem });

  // Shape first: nothing else is checked on a list that is not messages.
  for (let i = 0; i < input.length; i++) {
    const m = input[i];
    if (!isObject(m)) say(i, 'not an object');
    else if (m.role !== 'user' && m.role !== 'assistant') say(i, `role ${String(m.role)} is not user or assistant`);
    else if (typeof m.content !== 'string' && !(Array.isArray(m.content) && m.content.every((b) => isObject(b) && typeof b.type === 'string'))) say(i, 'content is not a string or a list of blocks');
  }
  if (out.length > 0) return out;
  const messages = input as Message[];

  if (options.bedrock) {
    if (messages.length > 0 && messages[0].role !== 'user') say(0, 'first message is not a user message');
    messages.forEach((m, i) => {
      if (i > 0 && messages[i - 1].role === m.role) say(i, 'two messages of the same role in a row');
      if (m.content === '' || (Array.isArray(m.content) && m.content.length === 0)) say(i, 'empty content');
      blocks(m).forEach((b, k) => {
        if (b.type === 'text' && (typeof b.text !== 'string' || b.text.trim() === '') && m.content !== '') say(i, `blank text at content ${k}`);
        const id = b.type === 'tool_use' ? b.id : b.type === 'tool_result' ? b.tool_use_id : undefined;
        if (typeof id === 'string' && !/^[a-zA-Z0-9_.:-]{1,64}$/.test(id)) say(i, `tool id ${id} does not fit Bedrock's pattern`);
        if (b.type === 'tool_result' && b.is_error === true && (b.content === undefined || b.content === '' || (Array.isArray(b.content) && b.content.length === 0))) say(i, 'error result without content');
      });
      const results = blocks(m).filter((b) => b.type === 'tool_result').length;
      const uses = i > 0 && messages[i - 1].role === 'assistant' ? blocks(messages[i - 1]).filter((b) => b.type === 'tool_use').length : 0;
      if (m.role === 'user' && results > uses) say(i, `${results} tool results for ${uses} tool uses of the turn before`);
    });
  }

  const turns = turnsOf(messages, !options.bedrock);
  const callIds = new Map<string, number>();
  const serverCalls = new Map<string, { index: number; answered: boolean; turn: number }>();
  let anyThinking = false;

  turns.forEach((turn, t) => {
    const next = turns[t + 1];
    const previous = turns[t - 1];
    if (turn.role === 'assistant') {
      const uses: string[] = [];
      for (const { block: b, index } of turn.blocks) {
        if (isThinking(b.type)) anyThinking = true;
        if (b.type === 'tool_result') say(index, 'tool_result block in an assistant message');
        if (CALL_TYPES.includes(b.type)) {
          const id = String(b.id);
          if (callIds.has(id)) say(index, `tool id ${id} used twice in the request (first at message ${callIds.get(id)})`);
          callIds.set(id, index);
          if (!/^[a-zA-Z0-9_-]+$/.test(id)) say(index, `tool id ${id} does not fit ^[a-zA-Z0-9_-]+$`);
        }
        if (b.type === 'tool_use') uses.push(String(b.id));
        if (SERVER_CALLS.includes(b.type)) serverCalls.set(String(b.id), { index, answered: false, turn: t });
        if (isServerResult(b.type)) {
          const call = serverCalls.get(String(b.tool_use_id));
          if (!call || call.answered) say(index, `${b.type} ${String(b.tool_use_id)} follows no server tool call`);
          else call.answered = true;
        }
      }
      const last = turn.blocks[turn.blocks.length - 1];
      if (last && isThinking(last.block.type)) say(last.index, 'assistant message ends with a thinking block');
      if (uses.length === 0) return;
      // Every tool_use is answered at the start of the very next (user) turn.
      if (!next || next.role !== 'user') {
        say(turn.first, `tool uses ${uses.join(', ')} have no user turn right after`);
        return;
      }
      const leading: string[] = [];
      for (const { block: b } of next.blocks) {
        if (b.type !== 'tool_result') break;
        leading.push(String(b.tool_use_id));
      }
      const missing = uses.filter((id) => !leading.includes(id));
      if (missing.length > 0) say(turn.first, `tool uses ${missing.join(', ')} are not answered at the start of the next message`);
      return;
    }
    // A user turn: results first, each answering a tool_use of the turn right before, once.
    const prevUses = new Set<string>();
    if (previous && previous.role === 'assistant') for (const { block: b } of previous.blocks) if (b.type === 'tool_use') prevUses.add(String(b.id));
    const answered = new Set<string>();
    let seenOther = false;
    for (const { block: b, index } of turn.blocks) {
      if (CALL_TYPES.includes(b.type) || isServerResult(b.type)) say(index, `${b.type} block in a user message`);
      if (b.type !== 'tool_result') {
        seenOther = true;
        continue;
      }
      const id = String(b.tool_use_id);
      if (seenOther) say(index, `tool_result ${id} comes after other content`);
      if (!/^[a-zA-Z0-9_-]+$/.test(id)) say(index, `tool_use_id ${id} does not fit ^[a-zA-Z0-9_-]+$`);
      if (!prevUses.has(id)) say(index, `tool_result ${id} answers no tool_use of the turn before`);
      else if (answered.has(id)) say(index, `tool_use ${id} answered twice`);
      answered.add(id);
    }
  });

  // Server tool calls are answered in their own message, unless in the request's last assistant turn or answered later.
  let lastAssistantTurn = -1;
  turns.forEach((turn, t) => { if (turn.role === 'assistant') lastAssistantTurn = t; });
  for (const [id, call] of serverCalls) if (!call.answered && call.turn !== lastAssistantTurn) say(call.index, `server tool call ${id} has no result`);

  // Thinking on, and the request ends inside a tool loop: the loop's first assistant turn starts with thinking.
  const lastTurn = turns[turns.length - 1];
  if ((options.thinking ?? anyThinking) && lastTurn && lastTurn.role === 'user' && lastTurn.blocks.length > 0 && lastTurn.blocks.every(({ block }) => block.type === 'tool_result')) {
    let start: Turn | undefined;
    for (let t = turns.length - 1; t >= 0; t--) {
      const turn = turns[t];
      if (turn.role === 'user' && !turn.blocks.every(({ block }) => block.type === 'tool_result')) break;
      if (turn.role === 'assistant') start = turn;
    }
    if (start && !(start.blocks.length > 0 && isThinking(start.blocks[0].block.type))) say(start.first, 'thinking is on and the open tool loop does not start with a thinking block');
  }
  return out.sort((a, b) => a.index - b.index);
}
