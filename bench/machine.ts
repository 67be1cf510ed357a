/** What the results were measured on, and the versions of everything compared. */
import { readFileSync } from 'node:fs';
import { cpus, totalmem, platform, release } from 'node:os';
import { join } from 'node:path';

/** Machine description recorded with every run. */
export interface MachineInfo {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGB: number;
  readonly node: string;
  readonly platform: string;
}

/** Reads the CPU model, core count, memory and Node version of this machine. */
export function machineInfo(): MachineInfo {
  const list = cpus();
  return {
    cpu: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGB: Math.round(totalmem() / 1e8) / 10,
    node: process.version,
    platform: `${platform()} ${release()}`,
  };
}

/** Version of an installed package, read from its package.json under `root`/node_modules (or the project's own). */
export function packageVersion(root: string, name?: string): string {
  const file = name ? join(root, 'node_modules', name, 'package.json') : join(root, 'package.json');
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'not installed';
  }
}
