import type { Rule, Violation } from '../../core/validate/rules.js';
import type { OpenAIChatMessage } from './types.js';

/** Rules of OpenAI Chat Completions that only its message shape has (the shared ones live in core/validate/rules.ts). */

/** OpenAI: a tool message names the call it answers. */
export const toolMessageHasId: Rule<OpenAIChatMessage> = {
  id: 'result-missing-id',
  check({ messages }) {
    const out: Violation[] = [];
    messages.forEach((m, index) => {
      if (m.role === 'tool' && typeof m.tool_call_id !== 'string') {
        out.push({ index, rule: 'result-missing-id', message: `messages[${index}]: Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.` });
      }
    });
    return out;
  },
};

/** OpenAI legacy: a function message names its function, and only assistants make function calls. */
export const legacyFunctionShape: Rule<OpenAIChatMessage> = {
  id: 'function-missing-name',
  check({ messages }) {
    const out: Violation[] = [];
    messages.forEach((m, index) => {
      if (m.role === 'function' && (typeof m.name !== 'string' || m.name === '')) {
        out.push({ index, rule: 'function-missing-name', message: `messages[${index}]: Missing parameter 'name': messages with role 'function' must have a 'name'.` });
      }
      if ((m.function_call || (Array.isArray(m.tool_calls) && m.tool_calls.length > 0)) && m.role !== 'assistant') {
        out.push({ index, rule: 'function-call-not-assistant', message: `messages[${index}]: Invalid parameter: only messages with role 'assistant' can have a function call.` });
      }
    });
    return out;
  },
};

/** OpenAI: content may be null only on an assistant message that makes calls. */
export const contentPresent: Rule<OpenAIChatMessage> = {
  id: 'content-null',
  check({ messages }) {
    const out: Violation[] = [];
    messages.forEach((m, index) => {
      const makesCalls = (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) || !!m.function_call;
      if ((m.content === null || m.content === undefined) && !(m.role === 'assistant' && makesCalls)) {
        out.push({ index, rule: 'content-null', message: `messages[${index}]: Invalid value for 'content': expected a string, got null.` });
      }
    });
    return out;
  },
};
