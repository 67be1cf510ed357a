/**
 * How hard property tests try: `CTXFOLD_PROPERTY_RUNS` when set, else 2000 runs under CI and 300
 * locally. The seed is fixed so a failure reproduces; fast-check prints the path to replay it.
 */
export function propertyRuns(): number {
  const fromEnv = process.env.CTXFOLD_PROPERTY_RUNS;
  if (fromEnv !== undefined && fromEnv !== '') {
    const n = Number(fromEnv);
    if (!Number.isInteger(n) || n < 1) throw new Error(`CTXFOLD_PROPERTY_RUNS must be a positive integer, got ${JSON.stringify(fromEnv)}`);
    return n;
  }
  return process.env.CI ? 2000 : 300;
}

/** The fixed seed of every property in the suite; `CTXFOLD_PROPERTY_SEED` overrides it to explore. */
export const PROPERTY_SEED = 20240515;

/** fast-check parameters for one property: the seed and the configured number of runs. */
export function propertyParams(): { seed: number; numRuns: number } {
  const fromEnv = Number(process.env.CTXFOLD_PROPERTY_SEED);
  return { seed: Number.isInteger(fromEnv) && process.env.CTXFOLD_PROPERTY_SEED !== '' ? fromEnv : PROPERTY_SEED, numRuns: propertyRuns() };
}

/**
 * fast-check parameters for the per-format properties: 1000 runs under CI (the formats' floor),
 * 200 locally; `CTXFOLD_FORMAT_PROPERTY_RUNS` when set, else `CTXFOLD_PROPERTY_RUNS` when set; the
 * same fixed seed as every property.
 */
export function formatPropertyParams(): { seed: number; numRuns: number } {
  const base = propertyParams();
  const own = process.env.CTXFOLD_FORMAT_PROPERTY_RUNS;
  if (own !== undefined && own !== '') {
    const n = Number(own);
    if (!Number.isInteger(n) || n < 1) throw new Error(`CTXFOLD_FORMAT_PROPERTY_RUNS must be a positive integer, got ${JSON.stringify(own)}`);
    return { ...base, numRuns: n };
  }
  if (process.env.CTXFOLD_PROPERTY_RUNS) return base;
  return { ...base, numRuns: process.env.CI ? 1000 : 200 };
}
