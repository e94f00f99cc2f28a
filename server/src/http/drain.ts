import type { Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';

/**
 * While draining, a kept-alive connection idle this long is closed by us. A
 * proxy must give up its idle connections sooner (deploy/nginx.conf:
 * `keepalive_timeout 3s`), so any connection idle this long is not one the
 * proxy may still pick; the 2 s between the two cover the time our answer
 * takes to reach the proxy and its idle timer firing late on a busy machine.
 * Connections of clients with longer idle timeouts than the proxy's (a health
 * checker, a client calling us directly) are what this closes.
 */
export const DRAIN_IDLE_MS = 5_000;
const SWEEP_EVERY_MS = 250;

interface ConnectionState {
  /** Requests on it whose answer is not finished. */
  inFlight: number;
  /** When it last became idle (accepted, or its last answer finished). */
  idleSince: number;
}

export interface Drainer {
  /**
   * Stop accepting connections and wait until every open one is gone:
   * answers not yet begun carry `Connection: close`, so the peer closes a
   * connection after its next answer; a connection left idle is closed by
   * the peer's own idle timeout, or by us once idle for `DRAIN_IDLE_MS`.
   * After `timeoutMs` every connection still open is cut.
   */
  drain(timeoutMs: number): Promise<void>;
}

/**
 * Rolling restarts behind a reverse proxy without a failed request. A proxy
 * keeps connections to us alive and writes its next request onto one of them
 * whenever it likes; we cannot know whether a request is already on its way
 * (in the network, in our socket's receive buffer, or there but not yet read
 * while our event loop is busy). Closing a kept-alive connection the proxy
 * still holds as reusable therefore races it: the request written onto it is
 * reset, and nginx answers 502 and, for a POST, cannot send it again (it may
 * have been applied). Node's `server.close()` closes every idle connection at
 * once, and `closeIdleConnections()` does the same; closing those idle for a
 * second, as we once did, lost a POST now and then on a loaded machine.
 *
 * So the peer closes: the listener alone is closed (new connections are
 * refused, which a proxy retries elsewhere for every method, nothing having
 * been sent); each answer not yet begun carries `Connection: close`, after
 * which the proxy closes that connection and never writes onto it again
 * (RFC 9112 §9.6); a connection the proxy leaves idle is closed by the
 * proxy's own idle timeout (nginx's upstream `keepalive_timeout`). Only a
 * connection idle for longer than any proxy in front of us keeps one
 * (`DRAIN_IDLE_MS`) is closed by us, and when `timeoutMs` passes whatever is
 * still open is cut.
 */
export function trackConnections(server: Server): Drainer {
  const connections = new Map<Socket, ConnectionState>();
  /** Answers not finished; those whose headers are not sent yet get `Connection: close` when the drain begins. */
  const answers = new Set<ServerResponse>();
  let draining = false;
  server.on('connection', (socket: Socket) => {
    connections.set(socket, { inFlight: 0, idleSince: Date.now() });
    socket.once('close', () => connections.delete(socket));
  });
  // Before the app's own listener, which may answer at once (headers then can no longer change).
  server.prependListener('request', (req, res) => {
    if (draining) res.setHeader('Connection', 'close');
    answers.add(res);
    const state = connections.get(req.socket);
    if (state) state.inFlight++;
    let settled = false;
    const done = () => {
      if (settled) return;
      settled = true;
      answers.delete(res);
      if (!state) return;
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
      for (const res of answers) if (!res.headersSent) res.setHeader('Connection', 'close');
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
