import { describe } from '@jest/globals';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** True when `redis-server` is on PATH. */
export const HAS_REDIS_SERVER = spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).status === 0;

const HOW_TO_ENABLE = '`apt-get install -y redis-server` enables them';

if (!HAS_REDIS_SERVER && !process.env.CI) {
  process.stderr.write(`Redis tests skipped: redis-server is not on PATH; ${HOW_TO_ENABLE}\n`);
}

/**
 * `describe` when redis-server is on PATH, `describe.skip` otherwise (after the one line above).
 * Under CI (`process.env.CI` set) it is always `describe`: a missing redis-server fails the suite
 * in `startRedisServer`, it is never skipped.
 */
export const redisDescribe: (name: string, fn: () => void) => void = HAS_REDIS_SERVER || process.env.CI ? describe : describe.skip;

/** A redis-server this test started on 127.0.0.1. */
export interface RedisServer {
  readonly port: number;
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  /** The running server's pid (changes on restart). */
  readonly pid: () => number;
  /** SIGKILL, as a crash or an OOM kill would end it; resolves once it has exited. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data directory (with `persist`, the data written before a kill is back). */
  restart(): Promise<void>;
  /** Stops it (SIGKILL if it does not exit within a second) and removes its data directory. Idempotent. */
  stop(): Promise<void>;
}

/** Options of `startRedisServer`. */
export interface RedisServerOptions {
  /**
   * Keep an append-only file, written and fsynced before each reply (`--appendfsync always`), so what
   * Redis acknowledged survives a kill and restart. Default false: `--save '' --appendonly no`, nothing on disk.
   */
  readonly persist?: boolean;
}

/** A port free on 127.0.0.1 right now (the OS picks it). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Starts redis-server on `port`; resolves once it accepts connections, rejects with its output if it exits first. */
function launch(port: number, dir: string, persist: boolean): Promise<ChildProcess> {
  const args = [
    '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '',
    '--appendonly', persist ? 'yes' : 'no', '--daemonize', 'no', '--loglevel', 'notice', '--protected-mode', 'yes',
    // `always`: the file is written and fsynced before Redis replies. With the default `everysec`,
    // a busy machine can see Redis postpone the write past its reply, and a kill then loses an
    // acknowledged commit (a later job commits that version again).
    ...(persist ? ['--appendfsync', 'always'] : []),
  ];
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`redis-server on port ${port} was not ready within 60 s: ${output}`));
    }, 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        child.stdout!.resume(); // keep draining its log so it never blocks on a full pipe
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString('utf8'); });
    child.once('error', (error) => { clearTimeout(timer); reject(error); });
    child.once('exit', (code, signal) => { clearTimeout(timer); reject(new Error(`redis-server on port ${port} exited (code ${code}, signal ${signal}): ${output}`)); });
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * Starts a real redis-server on a free loopback port with a throwaway data directory. Throws when
 * redis-server is not on PATH, saying how to install it (under CI that fails the suite).
 */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  if (!HAS_REDIS_SERVER) throw new Error(`redis-server is not on PATH${process.env.CI ? ' and CI is set: the Redis tests never skip in CI' : ''}; ${HOW_TO_ENABLE}`);
  const dir = mkdtempSync(join(tmpdir(), 'ctxfold-redis-'));
  const persist = options.persist ?? false;
  let port = 0;
  let child: ChildProcess | undefined;
  // Another process may take the free port between the check and redis binding it: try again.
  for (let attempt = 0; child === undefined; attempt++) {
    port = await freePort();
    try {
      child = await launch(port, dir, persist);
    } catch (error) {
      if (attempt >= 2) {
        rmSync(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }
  let current: ChildProcess = child;
  let stopped = false;
  const kill = async () => {
    current.kill('SIGKILL');
    await exited(current);
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    pid: () => current.pid!,
    kill,
    async restart() {
      await kill();
      current = await launch(port, dir, persist);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      current.kill('SIGTERM');
      const timer = setTimeout(() => current.kill('SIGKILL'), 1000);
      await exited(current);
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
