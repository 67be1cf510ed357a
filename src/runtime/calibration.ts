/**
 * Calibration from what the provider billed: a response that carries usage (`usage.prompt_tokens`
 * for OpenAI Chat, `usage.input_tokens` for Responses and Anthropic, `usageMetadata.promptTokenCount`
 * for Gemini) says how many input tokens the view really cost. The ratio of ctxfold's estimate to
 * that figure is kept per model, so an operator sees how far the count is off, and, when asked,
 * the budget is scaled down by it (never up).
 */

/** One request's estimate against the provider's billed input tokens. */
export interface CalibrationSample {
  readonly chatId: string;
  readonly model: string;
  /** ctxfold's count of the view sent (`report.tokensAfter`, request extras included). */
  readonly estimated: number;
  /** The input tokens the provider reported for it. */
  readonly billed: number;
  /** `estimated / billed`: below 1 means ctxfold counted low. */
  readonly ratio: number;
}

/** Calibration so far, per model: how many responses carried usage and the mean ratio estimate/billed. */
export interface CalibrationStats {
  readonly samples: number;
  readonly byModel: Readonly<Record<string, { readonly samples: number; readonly ratio: number }>>;
}

/** The input tokens a provider response reports, or undefined when it carries no usage. */
export function billedInputTokens(response: unknown): number | undefined {
  if (typeof response !== 'object' || response === null) return undefined;
  const r = response as { usage?: { prompt_tokens?: unknown; input_tokens?: unknown; inputTokens?: unknown }; usageMetadata?: { promptTokenCount?: unknown } };
  const figure = r.usage?.prompt_tokens ?? r.usage?.input_tokens ?? r.usage?.inputTokens ?? r.usageMetadata?.promptTokenCount;
  return typeof figure === 'number' && Number.isFinite(figure) && figure > 0 ? figure : undefined;
}

/** Most models whose calibration is kept (least recently updated go first). */
const MAX_MODELS = 256;

/** Keeps the running mean of estimate/billed per model, bounded in the number of models. */
export class Calibration {
  private readonly models = new Map<string, { samples: number; sum: number }>();
  private total = 0;

  /** Records one response; returns the sample, or undefined when the figures cannot be compared. */
  record(chatId: string, model: string, estimated: number, billed: number): CalibrationSample | undefined {
    if (!(estimated > 0) || !(billed > 0)) return undefined;
    const ratio = estimated / billed;
    const entry = this.models.get(model) ?? { samples: 0, sum: 0 };
    this.models.delete(model);
    entry.samples++;
    entry.sum += ratio;
    this.models.set(model, entry);
    if (this.models.size > MAX_MODELS) this.models.delete(this.models.keys().next().value!);
    this.total++;
    return { chatId, model, estimated, billed, ratio };
  }

  /**
   * The factor a budget for `model` is scaled by: the mean estimate/billed ratio when ctxfold has
   * been counting low (below 1), else 1; 1 until `minSamples` responses were seen.
   */
  correction(model: string, minSamples = 3): number {
    const entry = this.models.get(model);
    if (!entry || entry.samples < minSamples) return 1;
    return Math.min(1, entry.sum / entry.samples);
  }

  /** What has been seen so far. */
  stats(): CalibrationStats {
    const byModel: Record<string, { samples: number; ratio: number }> = {};
    for (const [model, e] of this.models) byModel[model] = { samples: e.samples, ratio: e.sum / e.samples };
    return { samples: this.total, byModel };
  }
}
