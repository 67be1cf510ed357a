import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A server listening on 127.0.0.1: its port, and how to stop it. */
export interface Loopback {
  readonly port: number;
  /** `http://127.0.0.1:PORT/v1`: what an OpenAI-style client takes as `baseURL`. */
  readonly baseURL: string;
  /** Ends every open connection (hanging requests included) and resolves once the server has closed. */
  close(): Promise<void>;
}

/**
 * Starts `server` on a free port of 127.0.0.1 (loopback only) and tracks its sockets, so that
 * `close()` never waits on a keep-alive or hanging connection. Rejects when listening fails.
 */
export async function listenOnLoopback(server: Server): Promise<Loopback> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    baseURL: `http://127.0.0.1:${port}/v1`,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
