/**
 * Run inside a test's network namespace (test/helpers/netns.ts starts it with `ip netns exec`): a
 * resolver on 127.0.0.1:53 that reads every query and answers none (the namespace's resolv.conf names
 * it), and relays between the namespace's TCP ports and Unix sockets in a folder both sides see (Unix
 * sockets named by a path cross network namespaces; TCP does not). Its one argument is the plan as JSON:
 * `{ "forwards": [{ "listen": 5432 | "/path", "target": "/path" | 8080 }] }`. Prints `ready` once all
 * listen, and `query NAME` for each query it swallows.
 */
import { createSocket } from 'node:dgram';
import { relay, type End } from './relay.js';

const plan = JSON.parse(process.argv[2] ?? '{}') as { forwards: { listen: End; target: End }[] };

/** The name a DNS query asks for (its question's labels, after the 12-byte header). */
function questionName(packet: Buffer): string {
  const labels: string[] = [];
  for (let at = 12; at < packet.length && packet[at]! > 0 && packet[at]! < 64; at += packet[at]! + 1) {
    labels.push(packet.subarray(at + 1, at + 1 + packet[at]!).toString('latin1'));
  }
  return labels.join('.');
}

const swallow = createSocket('udp4');
swallow.on('message', (packet) => process.stdout.write(`query ${questionName(packet)}\n`));
await new Promise<void>((resolve, reject) => swallow.once('error', reject).bind(53, '127.0.0.1', resolve));
await Promise.all(plan.forwards.map((f) => relay(f.listen, f.target)));
process.stdout.write('ready\n');
