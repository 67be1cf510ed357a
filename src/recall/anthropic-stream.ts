import { RECALL_TOOL_NAME } from './tool-definition.js';
import { droppedBefore, isFields, type Fields, type RecallStream, type StreamAssembler, type StreamSignalKind } from './dialect.js';

/**
 * Streamed Messages (Anthropic SSE events) read for recall calls. A content block is known by its
 * `content_block_start` event; the events about it carry its `index`. `message_delta` carries the
 * stop reason and `message_stop` ends the message.
 */

const isRecallStart = (event: Fields): boolean => event.type === 'content_block_start' && isFields(event.content_block)
  && event.content_block.type === 'tool_use' && event.content_block.name === RECALL_TOOL_NAME;
/** Blocks that tell nothing yet: text shows in its deltas, thinking travels with what follows it. */
const QUIET_BLOCKS = new Set(['text', 'thinking', 'redacted_thinking']);

function signal(event: Fields): StreamSignalKind | undefined {
  if (event.type === 'error') return 'other';
  if (event.type === 'content_block_start' && isFields(event.content_block)) {
    const block = event.content_block;
    if (block.type === 'tool_use') return block.name === RECALL_TOOL_NAME ? 'recall' : 'other';
    if (block.type === 'text' && typeof block.text === 'string' && block.text !== '') return 'text';
    return typeof block.type === 'string' && QUIET_BLOCKS.has(block.type) ? undefined : 'other';
  }
  if (event.type === 'content_block_delta' && isFields(event.delta) && event.delta.type === 'text_delta') {
    return typeof event.delta.text === 'string' && event.delta.text !== '' ? 'text' : undefined;
  }
  return undefined;
}

const terminal = (event: Fields): boolean => event.type === 'message_delta' || event.type === 'message_stop';

/**
 * The message a stream amounts to: `message_start`'s message with each block built from its start
 * and deltas (text, thinking and its signature appended; a tool use's `input` parsed from its
 * JSON deltas at its stop), and `message_delta`'s stop reason and usage.
 */
function assemble(): StreamAssembler {
  let message: Record<string, unknown> = {};
  const blocks: Record<string, unknown>[] = [];
  const json = new Map<number, string>();
  return {
    push(event) {
      const index = typeof event.index === 'number' ? event.index : -1;
      switch (event.type) {
        case 'message_start':
          if (isFields(event.message)) message = { ...event.message };
          break;
        case 'content_block_start':
          if (index >= 0 && isFields(event.content_block)) blocks[index] = { ...event.content_block };
          break;
        case 'content_block_delta': {
          const block = blocks[index];
          const d = event.delta;
          if (!block || !isFields(d)) break;
          if (d.type === 'text_delta' && typeof d.text === 'string') block.text = `${typeof block.text === 'string' ? block.text : ''}${d.text}`;
          else if (d.type === 'thinking_delta' && typeof d.thinking === 'string') block.thinking = `${typeof block.thinking === 'string' ? block.thinking : ''}${d.thinking}`;
          else if (d.type === 'signature_delta' && typeof d.signature === 'string') block.signature = `${typeof block.signature === 'string' ? block.signature : ''}${d.signature}`;
          else if (d.type === 'input_json_delta' && typeof d.partial_json === 'string') json.set(index, (json.get(index) ?? '') + d.partial_json);
          break;
        }
        case 'content_block_stop': {
          const block = blocks[index];
          const text = json.get(index);
          if (block && text !== undefined) {
            try {
              block.input = text === '' ? {} : JSON.parse(text) as unknown;
            } catch {
              block.input = text;
            }
          }
          break;
        }
        case 'message_delta':
          if (isFields(event.delta)) message = { ...message, ...event.delta };
          if (isFields(event.usage)) message = { ...message, usage: { ...(isFields(message.usage) ? message.usage : {}), ...event.usage } };
          break;
        default:
          break;
      }
    },
    response: () => ({ ...message, content: blocks.filter((b) => b !== undefined) }),
  };
}

/**
 * Removes recall calls from events: a recall block's events go (from its `content_block_start`
 * on), the `index` of every later block shifts down past the dropped ones, and a `message_delta`
 * stopping for `tool_use` stops for `end_turn` when no other tool use was streamed. `final` adds
 * nothing here: every recall block is known by its start.
 */
function strip(): (event: Fields) => Fields | undefined {
  const dropped = new Set<number>();
  let otherTools = false;
  return (event) => {
    const index = typeof event.index === 'number' ? event.index : undefined;
    if (index !== undefined && isRecallStart(event)) dropped.add(index);
    if (index !== undefined && dropped.has(index)) return undefined;
    if (event.type === 'content_block_start' && isFields(event.content_block) && typeof event.content_block.type === 'string' && event.content_block.type.endsWith('tool_use')) otherTools = true;
    if (index !== undefined && dropped.size > 0) {
      const shift = droppedBefore(dropped, index);
      if (shift > 0) return { ...event, index: index - shift };
    }
    if (event.type === 'message_delta' && dropped.size > 0 && !otherTools && isFields(event.delta) && event.delta.stop_reason === 'tool_use') {
      return { ...event, delta: { ...event.delta, stop_reason: 'end_turn' } };
    }
    return event;
  };
}

/** Recall in streamed `POST /messages`. A round never continues a stream that already sent text (its message would start again). */
export const ANTHROPIC_RECALL_STREAM: RecallStream = Object.freeze<RecallStream>({ signal, terminal, continues: false, assemble, strip });
