import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';

/** The first byte of a TLS handshake record; plain HTTP starts with a method's letter. */
const TLS_HANDSHAKE = 0x16;

export interface DualProtocolServer {
  port: number;
  close(): Promise<void>;
}

/**
 * One port that speaks both plain HTTP and HTTPS, told apart by a connection's first byte: the
 * double's `url` is http (simple for tests and token-rotator), while client-go (kubectl) only
 * sends a bearer token over TLS, so its kubeconfig points at https on the same port.
 */
export async function listenDualProtocol(
  host: string,
  port: number,
  tls: { cert: string; key: string },
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<DualProtocolServer> {
  const http = createHttpServer(handler);
  const https = createHttpsServer({ cert: tls.cert, key: tls.key }, handler);
  http.keepAliveTimeout = 1000;
  https.keepAliveTimeout = 1000;
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.once('data', (first) => {
      socket.pause();
      socket.unshift(first);
      (first[0] === TLS_HANDSHAKE ? https : http).emit('connection', socket);
      process.nextTick(() => socket.resume());
    });
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
