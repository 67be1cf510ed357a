import type { Rule, Violation } from '../../core/validate/rules.js';
import { everyCallAnswered, resultAnswersCall, resultOnce } from '../../core/invariants/index.js';
import type { CallTurn, PlacedResult } from '../../core/structure.js';
import type { QwenAgentMessage } from './types.js';

/**
 * Qwen-Agent's rules for function calls, worded like its own check (`validate_num_fncall_results`
 * in `qwen_agent/llm/function_calling.py`): the function messages after a run of function_call
 * messages answer them one to one, in call order, with the same function names. Its prompt
 * builders render results by position (`<tool_response>` blocks), so the order is what the model
 * reads even where `extra.function_id` pairs them.
 */

const COUNT_TEXT = (expected: number, received: number) => `Expecting ${expected} function results (i.e., messages with role="function") but received ${received} function results. The number of function results must match that of the function_call messages.`;

/** A list of names the way Python prints it (`['a', None]`), as Qwen-Agent's message shows it. */
const pyList = (names: readonly (string | undefined)[]) => `[${names.map((n) => (n === undefined ? 'None' : `'${n}'`)).join(', ')}]`;

const callText = (id: string | undefined, name: string) => (id !== undefined ? `${id} (${name})` : `function ${name}`);

/** Results of `turn` that answer one of its calls, in message order. */
function answersInOrder(turn: CallTurn): PlacedResult[] {
  return turn.answers.filter((a): a is PlacedResult => a !== undefined).sort((a, b) => a.index - b.index);
}

/** I1: every call of a turn is answered by a function message before the next non-function message. */
export const qwenCallsAnswered: Rule<QwenAgentMessage> = everyCallAnswered.rule(({ turn, calls }) => ({
  index: turn.opener,
  id: calls[0].id ?? calls[0].name,
  message: `messages[${turn.opener}]: ${COUNT_TEXT(turn.calls.length, turn.calls.length - calls.length)} No result for: ${calls.map((c) => callText(c.id, c.name)).join(', ')}.`,
}));

/** I2: a function message answers a function_call of the run of assistant messages right before it. */
export const qwenResultsHaveCall: Rule<QwenAgentMessage> = resultAnswersCall.rule((p, { structure }) => {
  const what = `function result ${p.result.name ?? '(no name)'}${p.result.id !== undefined ? ` with function_id ${p.result.id}` : ''}`;
  const where = p.pairing === 'outside'
    ? 'no assistant message with a function_call comes right before it'
    : `it names the function and function_id of none of the function_call messages starting at messages[${structure.turns[p.turn].opener}]`;
  return {
    index: p.index,
    id: p.result.id ?? p.result.name,
    message: `messages[${p.index}]: ${what} answers no call: ${where}. A message with role "function" must follow the function_call messages it answers.`,
  };
});

/** I4: a call is answered once; a further function message for it is one result too many. */
export const qwenResultsUnique: Rule<QwenAgentMessage> = resultOnce.rule(({ result: p, turn, call, first }, { structure }) => ({
  index: p.index,
  id: call.id ?? call.name,
  message: `messages[${p.index}]: ${COUNT_TEXT(turn.calls.length, structure.results.filter((r) => r.turn === p.turn).length)} ${callText(call.id, call.name)} was already answered in messages[${first}].`,
}));

/** Results come in call order and name the function of the call they answer (Qwen-Agent renders them by position). */
export const qwenResultsInOrder: Rule<QwenAgentMessage> = {
  id: 'result-order',
  check({ structure }) {
    const out: Violation[] = [];
    for (const turn of structure.turns) {
      const answers = answersInOrder(turn);
      let bad: PlacedResult | undefined;
      answers.forEach((a, k) => {
        const call = turn.calls[a.call];
        const expected = turn.calls.filter((_, c) => turn.answers[c] !== undefined)[k];
        if (bad === undefined && (call !== expected || (a.result.name !== undefined && a.result.name !== call.name))) bad = a;
      });
      if (bad === undefined) continue;
      const call = turn.calls[bad.call];
      out.push({
        index: bad.index,
        rule: 'result-order',
        id: call.id ?? call.name,
        message: `messages[${bad.index}]: The function results (i.e., the messages with role="function" ) must be put in the same order as the function_call messages. And the function names must match.The function results are currently ${pyList(answers.map((a) => a.result.name))}. But ${pyList(turn.calls.filter((_, c) => turn.answers[c] !== undefined).map((c) => c.name))} are expected.`,
      });
    }
    return out;
  },
};
