/**
 * A seeded generator of long tool-calling conversations in OpenAI Chat format, for the demo, the
 * tests and the benchmark. Same options, same messages: the only randomness is a mulberry32 PRNG
 * seeded by the caller. Shape, like real agent logs: one system prompt, then turns of a user
 * request, zero to two rounds of 1..parallelMax parallel tool calls with their results (some of
 * them bulky: 2k–20k characters), and the assistant's answer. Text mixes English, Chinese and
 * JSON. Call ids are unique inside a turn and now and then reuse an id of an earlier turn.
 */
import type { OpenAIChatMessage, OpenAIToolCall } from '../formats/openai-chat.js';

/** Options of `generateConversation`. */
export interface ConversationOptions {
  /** Exact number of messages returned (the last turn is shortened to fit; it may end on a user request). */
  readonly messages: number;
  /** PRNG seed: the same seed and options give the same conversation. */
  readonly seed: number;
  /** Most tool calls one assistant message makes at once. Default 4. */
  readonly parallelMax?: number;
  /** Every this-many-th tool result is bulky (2k–20k characters). Default 20. */
  readonly bulkyEvery?: number;
}

/** mulberry32: a tiny, fast 32-bit PRNG; returns floats in [0, 1) determined by `seed` alone. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ID_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const CITIES = ['Shanghai', 'Beijing', 'Paris', 'New York', 'Berlin', 'Tokyo', '深圳', '杭州', 'London', 'Singapore'];
const USERS = ['mia_li_3668', 'omar_davis_3817', 'chen_wei_8812', 'sofia_rossi_1402', 'liam_kim_5520'];
const EN_ASKS = [
  'Can you check my reservation and tell me if the flight is still on time?',
  'Please look up the weather for both cities and compare them.',
  'I need the total of last month\'s orders, grouped by status.',
  'Find the config file that sets the retry limit and show me the value.',
  'What changed in the deployment logs since yesterday?',
  'Book the cheapest option, but only if it leaves after 9am.',
];
const ZH_ASKS = [
  '帮我查一下这个订单现在是什么状态？',
  '请比较一下这两个城市明天的天气。',
  '把上个月的销售数据按地区汇总一下，谢谢。',
  '能不能找到日志里所有超时的请求？',
  '我想改签到下周一的航班，可以吗？',
];
const EN_ANSWERS = [
  'Here is what I found. The first result matches your request; the others are close alternatives.',
  'Done. I checked every source you mentioned and summarized the differences below.',
  'The data shows a clear trend: most of the delay comes from the second step of the pipeline.',
  'I could not find an exact match, so I listed the nearest options with their prices.',
];
const ZH_ANSWERS = [
  '我已经查好了：第一个结果最符合你的要求，其余的是备选方案。',
  '根据返回的数据，大部分延迟来自第二个步骤。',
  '没有找到完全匹配的记录，下面列出了最接近的几个选项。',
];
const LOG_LEVELS = ['INFO', 'WARN', 'ERROR', 'DEBUG'];

/** The tools the generated assistant calls: a name, its arguments, and a result of a given size. */
interface ToolSpec {
  readonly name: string;
  args(r: Rand): Record<string, unknown>;
  result(r: Rand, bulkyChars: number): string;
}

/** A PRNG with the few draws the generator needs. */
class Rand {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  float(): number {
    return this.next();
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  id(): string {
    let s = 'call_';
    for (let k = 0; k < 24; k++) s += ID_CHARS[Math.floor(this.next() * ID_CHARS.length)];
    return s;
  }
}

/** Repeats `item()` until the text is at least `chars` long (0: just once). */
function fill(chars: number, open: string, close: string, item: () => string): string {
  const parts: string[] = [];
  let length = open.length + close.length;
  do {
    const s = item();
    parts.push(s);
    length += s.length + 1;
  } while (length < chars);
  return open + parts.join(',') + close;
}

const TOOLS: readonly ToolSpec[] = [
  {
    name: 'search_flights',
    args: (r) => ({ origin: r.pick(CITIES), destination: r.pick(CITIES), date: `2024-05-${String(r.int(1, 28)).padStart(2, '0')}` }),
    result: (r, bulky) => fill(bulky || r.int(80, 350), '{"flights":[', ']}', () =>
      JSON.stringify({ flight_number: `HAT${r.int(100, 999)}`, status: r.pick(['available', 'delayed', 'cancelled']), price: r.int(80, 1800), seats_left: r.int(0, 30), departure: `${String(r.int(0, 23)).padStart(2, '0')}:${r.pick(['00', '15', '30', '45'])}` })),
  },
  {
    name: 'get_reservation_details',
    args: (r) => ({ reservation_id: r.id().slice(5, 11).toUpperCase() }),
    result: (r, bulky) => fill(bulky || r.int(60, 300), `{"user_id":"${r.pick(USERS)}","cabin":"economy","passengers":[`, `],"payment_history":[{"payment_id":"credit_card_${r.int(1000000, 9999999)}","amount":${r.int(50, 900)}}]}`, () =>
      JSON.stringify({ first_name: r.pick(['Mia', 'Omar', '伟', 'Sofia', 'Liam']), last_name: r.pick(['Li', 'Davis', '陈', 'Rossi', 'Kim']), dob: `19${r.int(50, 99)}-0${r.int(1, 9)}-1${r.int(0, 9)}` })),
  },
  {
    name: 'get_weather',
    args: (r) => ({ city: r.pick(CITIES), unit: r.pick(['celsius', 'fahrenheit']) }),
    result: (r, bulky) => fill(bulky || r.int(60, 250), '{"forecast":[', ']}', () =>
      JSON.stringify({ hour: r.int(0, 23), temp: r.int(-5, 35), sky: r.pick(['sunny', 'cloudy', '多云', '小雨', 'rain']), wind_kmh: r.int(0, 40) })),
  },
  {
    name: 'run_sql',
    args: (r) => ({ query: `SELECT region, status, SUM(amount) FROM orders WHERE month = ${r.int(1, 12)} GROUP BY region, status` }),
    result: (r, bulky) => fill(bulky || r.int(60, 300), '{"rows":[', `],"elapsed_ms":${r.int(3, 900)}}`, () =>
      `[${JSON.stringify(r.pick(['华东', '华北', 'EMEA', 'NA', 'APAC']))},${JSON.stringify(r.pick(['paid', 'refunded', 'pending']))},${r.int(100, 99999)}]`),
  },
  {
    name: 'read_file',
    args: (r) => ({ path: r.pick(['/etc/app/config.yaml', 'logs/deploy.log', 'src/retry.ts', 'docs/使用说明.md']) }),
    result: (r, bulky) => {
      const lines: string[] = [];
      let length = 0;
      const target = bulky || r.int(80, 400);
      while (length < target) {
        const line = `2024-05-${String(r.int(1, 28)).padStart(2, '0')}T${String(r.int(0, 23)).padStart(2, '0')}:${String(r.int(10, 59))}:07Z ${r.pick(LOG_LEVELS)} worker-${r.int(1, 9)} ${r.pick(['request timed out after 30s', 'retry 2/5 scheduled', '连接已重置，正在重试', 'deployed build #' + r.int(100, 999), 'cache miss for key user:' + r.int(1, 9999)])}`;
        lines.push(line);
        length += line.length + 1;
      }
      return lines.join('\n');
    },
  },
  {
    name: 'search_docs',
    args: (r) => ({ query: r.pick(['retry policy', '退款规则', 'baggage allowance', '改签费用']), lang: r.pick(['en', 'zh']) }),
    result: (r, bulky) => fill(bulky || r.int(80, 400), '{"hits":[', ']}', () =>
      JSON.stringify({ title: r.pick(['Refund policy', '退改签说明', 'Retry and backoff', '行李规定']), snippet: r.pick(EN_ANSWERS) + ' ' + r.pick(ZH_ANSWERS), score: Math.round(r.float() * 1000) / 1000 })),
  },
];

/** Draws 1..max with smaller counts likelier (about half the turns make a single call). */
function parallelCount(r: Rand, max: number): number {
  let k = 1;
  while (k < max && r.chance(0.45)) k++;
  return k;
}

function userText(r: Rand): string {
  const roll = r.float();
  if (roll < 0.45) return r.pick(EN_ASKS);
  if (roll < 0.8) return r.pick(ZH_ASKS);
  // Mixed text with an inline JSON snippet, as users paste them.
  return `${r.pick(ZH_ASKS)} ${r.pick(EN_ASKS)} Context: ${JSON.stringify({ user_id: r.pick(USERS), city: r.pick(CITIES), budget: r.int(100, 2000) })}`;
}

function answerText(r: Rand): string {
  const parts = [r.pick(EN_ANSWERS)];
  for (let k = r.int(0, 3); k > 0; k--) parts.push(r.chance(0.5) ? r.pick(ZH_ANSWERS) : r.pick(EN_ANSWERS));
  if (r.chance(0.3)) parts.push('```json\n' + JSON.stringify({ best: `HAT${r.int(100, 999)}`, price: r.int(80, 1800), 备注: r.pick(ZH_ANSWERS) }, null, 2) + '\n```');
  return parts.join('\n\n');
}

const SYSTEM_PROMPT = [
  'You are a careful travel and operations assistant. Use the tools to look things up; never invent a reservation, price or log line.',
  'When several lookups are independent, call the tools in parallel. Answer in the language the user wrote in.',
  '你是一名细心的助手：需要查询时调用工具，不要编造数据；用户用中文提问时用中文回答。',
  'Policy: refunds within 24 hours of booking are free; changes to basic economy are not allowed; 行李额度以舱位为准。',
].join('\n');

/**
 * Generates a valid OpenAI Chat conversation of exactly `options.messages` messages (the final
 * turn is shortened to fit, so it may end with a user request or skip its tool round). Every
 * call is answered by the results right after it, ids are unique inside a turn, and about 4% of
 * calls reuse an id an earlier turn used, as recorded logs do.
 */
export function generateConversation(options: ConversationOptions): OpenAIChatMessage[] {
  const total = options.messages;
  if (!Number.isInteger(total) || total < 0) throw new RangeError(`messages must be an integer >= 0, got ${total}`);
  const parallelMax = Math.max(1, options.parallelMax ?? 4);
  const bulkyEvery = Math.max(1, options.bulkyEvery ?? 20);
  const r = new Rand(options.seed);
  const out: OpenAIChatMessage[] = [];
  if (total === 0) return out;
  out.push({ role: 'system', content: SYSTEM_PROMPT });
  const earlierIds: string[] = [];
  let results = 0;

  while (out.length < total) {
    out.push({ role: 'user', content: userText(r) });
    let left = total - out.length;
    if (left === 0) break;
    const turnIds: string[] = [];
    for (let rounds = r.float() < 0.25 ? 0 : r.chance(0.75) ? 1 : 2; rounds > 0 && left >= 3; rounds--) {
      // A round needs the call message, its results and room for the answer after it.
      const k = Math.min(parallelCount(r, parallelMax), left - 2);
      const calls: OpenAIToolCall[] = [];
      const used = new Set<string>();
      for (let c = 0; c < k; c++) {
        let id = r.id();
        if (earlierIds.length > 0 && r.chance(0.04)) {
          const old = r.pick(earlierIds);
          if (!used.has(old)) id = old;
        }
        used.add(id);
        const tool = r.pick(TOOLS);
        calls.push({ id, type: 'function', function: { name: tool.name, arguments: JSON.stringify(tool.args(r)) } });
      }
      out.push({ role: 'assistant', content: r.chance(0.2) ? r.pick(['Let me check that.', '我先查一下。', 'Looking these up in parallel.']) : null, tool_calls: calls });
      const answers = calls.map((call) => {
        results++;
        const tool = TOOLS.find((t) => t.name === call.function.name)!;
        const bulky = results % bulkyEvery === 0 ? r.int(2000, 20000) : 0;
        return { role: 'tool', tool_call_id: call.id, content: tool.result(r, bulky) } as OpenAIChatMessage;
      });
      // Parallel results do not always come back in call order.
      if (answers.length > 1 && r.chance(0.2)) answers.reverse();
      out.push(...answers);
      turnIds.push(...used);
      left -= k + 1;
    }
    out.push({ role: 'assistant', content: answerText(r) });
    for (const id of turnIds) earlierIds.push(id);
    if (earlierIds.length > 512) earlierIds.splice(0, earlierIds.length - 256);
  }
  return out;
}

/**
 * The requests a chat server receives while this conversation happens: each assistant message
 * is the reply to one request carrying every message before it. Returns those history lengths
 * (`messages.slice(0, end)` is the request body's history), in order.
 */
export function modelRequestEnds(messages: readonly OpenAIChatMessage[]): number[] {
  const ends: number[] = [];
  for (let i = 0; i < messages.length; i++) if (messages[i].role === 'assistant') ends.push(i);
  return ends;
}
