import { connect, createServer, type Server } from 'node:net';

/**
 * A TCP relay between a listening end and a target, each a port on 127.0.0.1 or a Unix socket path:
 * the network namespace helpers (./netns.ts, ./netns-inside.ts) join a namespace's ports and this
 * machine's through Unix sockets, which cross network namespaces where TCP does not.
 */

/** A port on 127.0.0.1, or a Unix socket path. */
export type End = number | string;

const endpoint = (at: End) => (typeof at === 'number' ? { port: at, host: '127.0.0.1' } : { path: at });

/** Listens on `listen`; each connection is piped to a new one to `target`, and both end together. */
export function relay(listen: End, target: End): Promise<Server> {
  const server = createServer((inbound) => {
    const outbound = connect(endpoint(target));
    inbound.pipe(outbound).pipe(inbound);
    const end = () => (inbound.destroy(), outbound.destroy());
    inbound.on('error', end).on('close', end);
    outbound.on('error', end).on('close', end);
  });
  return new Promise((resolve, reject) => server.once('error', reject).listen(endpoint(listen), () => resolve(server)));
}
