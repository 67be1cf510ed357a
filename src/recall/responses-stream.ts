import { RECALL_TOOL_NAME } from './tool-definition.js';
import { droppedBefore, isFields, type Fields, type RecallStream, type StreamAssembler, type StreamSignalKind } from './dialect.js';
import { isRecallCall as isRecallItem, withoutResponsesRecallCalls, withoutResponsesRecallTool } from './responses-without.js';

/**
 * Streamed Responses (`response.*` events) read for recall calls. An output item is known by its
 * `response.output_item.added` event; the events about it carry its `output_index`. The final
 * `response.completed` (or `incomplete`, `failed`) event carries the whole response.
 */

const nonEmpty = (v: unknown): boolean => typeof v === 'string' && v !== '';
const ENDS = new Set(['response.completed', 'response.incomplete', 'response.failed']);
/** Output items that tell nothing yet: text shows in its deltas, reasoning travels with what follows it. */
const QUIET_ITEMS = new Set(['message', 'reasoning']);

function signal(event: Fields): StreamSignalKind | undefined {
  const type = event.type;
  if (type === 'error' || type === 'response.failed') return 'other';
  if (type === 'response.output_item.added' && isFields(event.item)) {
    const item = event.item;
    if (item.type === 'function_call') return item.name === RECALL_TOOL_NAME ? 'recall' : 'other';
    return typeof item.type === 'string' && QUIET_ITEMS.has(item.type) ? undefined : 'other';
  }
  if ((type === 'response.output_text.delta' || type === 'response.refusal.delta') && nonEmpty(event.delta)) return 'text';
  return undefined;
}

const terminal = (event: Fields): boolean => typeof event.type === 'string' && ENDS.has(event.type);

/** The response a stream amounts to: the one its last response-carrying event holds (the completed one, at the end). */
function assemble(): StreamAssembler {
  let latest: Fields = {};
  return {
    push(event) {
      if (isFields(event.response)) latest = event.response;
    },
    response: () => latest,
  };
}

/** Output indexes `withoutResponsesRecallCalls` removes from a whole response: its recall calls and the reasoning left last. */
function droppedIndexes(final: Fields): Set<number> {
  const output = Array.isArray(final.output) ? final.output : [];
  const dropped = new Set<number>();
  const kept: number[] = [];
  output.forEach((item, i) => (isRecallItem(item) ? dropped.add(i) : kept.push(i)));
  if (dropped.size === 0) return dropped;
  while (kept.length > 0 && isFields(output[kept[kept.length - 1]]) && (output[kept[kept.length - 1]] as Fields).type === 'reasoning') dropped.add(kept.pop()!);
  return dropped;
}

/**
 * Removes recall calls from events: the events of a dropped item go, the others' `output_index`
 * shifts down past the dropped ones and their `sequence_number` past the dropped events, and every
 * response an event carries is passed through `withoutResponsesRecallCalls` and, as every
 * response of a request offered the tool, `withoutResponsesRecallTool`. Without `final`, an
 * item is dropped from its `output_item.added` on (a reasoning item already sent stays).
 */
function strip(final?: Fields): (event: Fields) => Fields | undefined {
  const dropped = final ? droppedIndexes(final) : new Set<number>();
  let droppedEvents = 0;
  return (event) => {
    const index = typeof event.output_index === 'number' ? event.output_index : undefined;
    if (index !== undefined && !final && event.type === 'response.output_item.added' && isRecallItem(event.item)) dropped.add(index);
    if (index !== undefined && dropped.has(index)) {
      droppedEvents++;
      return undefined;
    }
    let out = event;
    const edit = (key: string, value: unknown) => {
      if (out === event) out = { ...event };
      (out as Record<string, unknown>)[key] = value;
    };
    if (index !== undefined && dropped.size > 0) {
      const shift = droppedBefore(dropped, index);
      if (shift > 0) edit('output_index', index - shift);
    }
    if (droppedEvents > 0 && typeof event.sequence_number === 'number') edit('sequence_number', event.sequence_number - droppedEvents);
    if (isFields(event.response)) {
      const response = withoutResponsesRecallTool(withoutResponsesRecallCalls(event.response));
      if (response !== event.response) edit('response', response);
    }
    return out;
  };
}

/** Recall in streamed `POST /responses`. A round never continues a stream that already sent text (a second response would start inside it). */
export const RESPONSES_RECALL_STREAM: RecallStream = Object.freeze<RecallStream>({ signal, terminal, continues: false, assemble, strip });
