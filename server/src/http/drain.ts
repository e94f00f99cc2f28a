import type { Server } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';

/** A kept-alive connection this long without a request is closed by a drain; one used since is left to its peer. */
export const DRAIN_IDLE_MS = 1_000;
const SWEEP_EVERY_MS = 100;

interface ConnectionState {
  /** Requests on it whose answer is not finished. */
  inFlight: number;
  /** When it last became idle (accepted, or its last answer finished). */
  idleSince: number;
}

export interface Drainer {
  /**
   * Stop accepting connections and wait until every open one is gone:
   * answers from now on carry `Connection: close`, so a connection ends
   * after its next answer; one idle for `DRAIN_IDLE_MS` is closed by us.
   * After `timeoutMs` every connection is cut.
   */
  drain(timeoutMs: number): Promise<void>;
}

/**
 * Rolling restarts behind a reverse proxy without a failed request. A proxy
 * keeps connections to us alive and reuses the one it used last: closing an
 * idle connection at the moment the proxy writes a request onto it resets
 * that request (nginx answers 502 and, for a POST, cannot retry it). Node's
 * `server.close()` closes every idle connection at once, and
 * `closeIdleConnections()` sweeps do the same, so either races the proxy.
 * Instead: the listener alone is closed; each connection still in use ends
 * after its next answer, on our `Connection: close` (the proxy then never
 * reuses it); only connections the proxy left idle for `DRAIN_IDLE_MS`,
 * which it is least likely to pick next, are closed by us.
 */
export function trackConnections(server: Server): Drainer {
  const connections = new Map<Socket, ConnectionState>();
  let draining = false;
  server.on('connection', (socket: Socket) => {
    connections.set(socket, { inFlight: 0, idleSince: Date.now() });
    socket.once('close', () => connections.delete(socket));
  });
  // Before the app's own listener, which may answer at once (headers then can no longer change).
  server.prependListener('request', (req, res) => {
    const state = connections.get(req.socket);
    if (draining) res.setHeader('Connection', 'close');
    if (!state) return;
    state.inFlight++;
    let settled = false;
    const done = () => {
      if (settled) return;
      settled = true;
      state.inFlight--;
      state.idleSince = Date.now();
    };
    res.once('finish', done);
    res.once('close', done);
  });
  const closeLongIdle = () => {
    const now = Date.now();
    for (const [socket, state] of connections) {
      if (state.inFlight === 0 && now - state.idleSince >= DRAIN_IDLE_MS) socket.destroy();
    }
  };
  return {
    drain(timeoutMs) {
      draining = true;
      return new Promise<void>((resolve) => {
        // net.Server's close: stop listening and call back once the last connection is gone,
        // without http.Server's own sweep of idle connections (see above).
        NetServer.prototype.close.call(server, () => {
          clearInterval(sweep);
          clearTimeout(deadline);
          resolve();
        });
        const sweep = setInterval(closeLongIdle, SWEEP_EVERY_MS);
        const deadline = setTimeout(() => server.closeAllConnections(), timeoutMs);
        closeLongIdle();
      });
    },
  };
}
