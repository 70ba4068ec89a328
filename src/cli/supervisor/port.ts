import { createServer } from 'node:net';

/**
 * Whether HOST:PORT is free, checked by listening on it alone for a moment and letting it go again:
 * the server processes of `hrs serve --processes` then share it (SO_REUSEPORT), and a port another
 * process listens on (shared or not) is refused with the message `hrs serve` gives today. Resolves
 * with the port, the one the system chose for PORT=0 (every process must listen on the same one).
 */
export function freePortOrRefuse(host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', () => reject(new Error(`cannot listen on ${host}:${port} (address in use or not available)`)));
    server.listen({ host, port, exclusive: true }, () => {
      const bound = (server.address() as { port: number }).port;
      server.close(() => resolve(bound));
    });
  });
}
