import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The client's own redirect endpoint: a loopback listener, as a real client would run. */
export interface CallbackListener {
  readonly redirectUri: string;
  /** Every URL the browser was sent to on the redirect URI, in order. */
  readonly received: URL[];
  close(): Promise<void>;
}

export async function listenForCallbacks(): Promise<CallbackListener> {
  const received: URL[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    // Chromium also asks for /favicon.ico, possibly after the callback.
    if (url.pathname !== '/callback') {
      res.writeHead(404).end();
      return;
    }
    received.push(url);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('Signed in; you may close this window.');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    redirectUri: `http://127.0.0.1:${port}/callback`,
    received,
    close: () => new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
