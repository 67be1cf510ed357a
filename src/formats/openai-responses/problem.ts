import { MAX_NESTING, nestedDeeperThan } from '../../core/nesting.js';
import { IN_PLACE_TYPES, MESSAGE_ROLES, OUTPUT_OF, OUTPUT_TYPES } from './items.js';
import { describe } from '../describe.js';

/**
 * Why a value is not an item of a Responses `input` list: a field relative to the item and the
 * rule it breaks. Known item types are checked for the fields ctxfold reads (a call's `call_id`,
 * `name` and arguments, an output's `call_id`); an item of a type this version does not know is
 * accepted and read as kind `other`, so a new API item type never makes a history unreadable.
 */

type Obj = Record<string, unknown>;
type Problem = { readonly field: string; readonly rule: string };

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function mustBeString(item: Obj, field: string): Problem | undefined {
  return typeof item[field] === 'string' ? undefined : { field: `.${field}`, rule: `must be a string, got ${describe(item[field])}` };
}

/** A content list: an array of objects, each with a string `type`. */
function partsProblem(list: unknown[], field: string): Problem | undefined {
  for (let k = 0; k < list.length; k++) {
    const part = list[k];
    if (!isObj(part)) return { field: `${field}[${k}]`, rule: `must be a content part object, got ${describe(part)}` };
    if (typeof part.type !== 'string') return { field: `${field}[${k}].type`, rule: `must be a string, got ${describe(part.type)}` };
  }
  return undefined;
}

function messageProblem(item: Obj): Problem | undefined {
  const role = item.role;
  if (typeof role !== 'string') return { field: '.role', rule: `must be a string, got ${describe(role)}` };
  if (!MESSAGE_ROLES.includes(role)) return { field: '.role', rule: `unknown role ${JSON.stringify(role)} (expected ${MESSAGE_ROLES.join(', ')})` };
  const c = item.content;
  if (typeof c === 'string') return undefined;
  if (!Array.isArray(c)) return { field: '.content', rule: `must be a string or an array of content parts, got ${describe(c)}` };
  return partsProblem(c, '.content');
}

function outputProblem(item: Obj, type: string): Problem | undefined {
  // A local shell output names its call in `id` in the API reference; clients also send `call_id`.
  if (type === 'local_shell_call_output' && item.call_id === undefined) return mustBeString(item, 'id');
  const p = mustBeString(item, 'call_id');
  if (p) return p;
  if (type === 'function_call_output' || type === 'custom_tool_call_output') {
    const out = item.output;
    if (Array.isArray(out)) return partsProblem(out, '.output');
    if (typeof out !== 'string') return { field: '.output', rule: `must be a string or an array of content parts, got ${describe(out)}` };
  }
  return undefined;
}

function callProblem(item: Obj, type: string): Problem | undefined {
  const p = mustBeString(item, 'call_id');
  if (p) return p;
  if (type === 'function_call') return mustBeString(item, 'name') ?? mustBeString(item, 'arguments');
  if (type === 'custom_tool_call') return mustBeString(item, 'name') ?? mustBeString(item, 'input');
  return undefined;
}

/** Why `value` is not a Responses input item (see the file comment); undefined when it is one. */
export function itemProblem(value: unknown): Problem | undefined {
  if (!isObj(value)) return { field: '', rule: `must be an input item object, got ${describe(value)}` };
  if (nestedDeeperThan(value)) return { field: '', rule: `is nested more than ${MAX_NESTING} levels deep; ctxfold does not read values this deep` };
  const type = value.type;
  if (type === undefined) {
    if (value.role === undefined) return { field: '.type', rule: 'must be an item type, or the item a message with a role; got neither' };
    return messageProblem(value);
  }
  if (typeof type !== 'string') return { field: '.type', rule: `must be a string, got ${describe(type)}` };
  if (type === 'message') return messageProblem(value);
  if (Object.hasOwn(OUTPUT_OF, type)) return callProblem(value, type);
  if (OUTPUT_TYPES.includes(type)) return outputProblem(value, type);
  switch (type) {
    case 'reasoning':
      if (value.summary !== undefined && !Array.isArray(value.summary)) return { field: '.summary', rule: `must be an array of summary parts, got ${describe(value.summary)}` };
      return undefined;
    case 'compaction':
      return mustBeString(value, 'encrypted_content');
    case 'item_reference':
      return mustBeString(value, 'id');
    case 'mcp_approval_response':
      return mustBeString(value, 'approval_request_id');
    default:
      if (IN_PLACE_TYPES.includes(type) && value.id !== undefined && typeof value.id !== 'string') return { field: '.id', rule: `must be a string, got ${describe(value.id)}` };
      return undefined;
  }
}
