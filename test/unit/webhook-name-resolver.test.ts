/**
 * The resolver of webhook host names (src/infra/name-resolver.ts) against a DNS server of the test's
 * own on 127.0.0.1 (c-ares asks it instead of /etc/resolv.conf's): A and AAAA answers together, a
 * name without an address refused as such, a name whose server never answers failing with ETIMEOUT
 * within its bound, at most `concurrency` names at once with `waiting` more in line and the next
 * refused at once (EBUSY), and `localhost` without any query. (That libuv's threads are left alone is
 * shown where it matters, with PostgreSQL behind a host name: test/system/webhooks-hung-names.test.ts.)
 */
import t, { type Test } from 'tap';
import { createSocket, type Socket } from 'node:dgram';
import type { LookupAddress } from 'node:dns';
import type { AddressInfo } from 'node:net';
import { boundedResolver } from '../../src/infra/name-resolver.js';

/** The question's name and type (1 A, 28 AAAA) and where the question ends. */
function question(packet: Buffer): { name: string; type: number; end: number } {
  const labels: string[] = [];
  let at = 12;
  for (; packet[at]! > 0; at += packet[at]! + 1) labels.push(packet.subarray(at + 1, at + 1 + packet[at]!).toString('latin1'));
  return { name: labels.join('.'), type: packet.readUInt16BE(at + 1), end: at + 5 };
}

/** An answer to `packet`: its rcode (0, or 3 for NXDOMAIN) and these A or AAAA records. */
function answer(packet: Buffer, rcode: number, records: Buffer[], type: number): Buffer {
  const q = question(packet);
  const header = Buffer.alloc(12);
  packet.copy(header, 0, 0, 2);
  header.writeUInt16BE(0x8180 | rcode, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(records.length, 6);
  const rrs = records.map((rdata) => {
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0);
    rr.writeUInt16BE(type, 2);
    rr.writeUInt16BE(1, 4);
    rr.writeUInt32BE(60, 6);
    rr.writeUInt16BE(rdata.length, 10);
    return Buffer.concat([rr, rdata]);
  });
  return Buffer.concat([header, packet.subarray(12, q.end), ...rrs]);
}

const ZONE: Record<string, { a?: number[][]; aaaa?: number[][] }> = {
  'public.hooks.test': { a: [[93, 184, 216, 34]], aaaa: [[0x26, 0x06, 0x47, 0, ...Array(11).fill(0), 1]] },
  'v4only.hooks.test': { a: [[93, 184, 216, 35]] },
};

/** A DNS server on a free port: names of ZONE answered, `*.hang.test` never, anything else NXDOMAIN. */
async function dnsServer(t: Test): Promise<{ port: number; asked: string[] }> {
  const asked: string[] = [];
  const server: Socket = createSocket('udp4');
  server.on('message', (packet, peer) => {
    const q = question(packet);
    asked.push(`${q.name}/${q.type === 1 ? 'A' : 'AAAA'}`);
    if (q.name.endsWith('.hang.test')) return;
    const entry = ZONE[q.name];
    const records = (q.type === 1 ? entry?.a : entry?.aaaa) ?? [];
    server.send(answer(packet, entry ? 0 : 3, records.map((r) => Buffer.from(r)), q.type), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => server.bind(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  return { port: (server.address() as AddressInfo).port, asked };
}

const resolve = (resolver: ReturnType<typeof boundedResolver>, name: string, family: 0 | 4 | 6 = 0) =>
  new Promise<{ code?: string; message?: string; addresses?: LookupAddress[]; ms: number }>((done) => {
    const started = performance.now();
    resolver(name, family, (err, addresses) => done(err ? { code: err.code, message: err.message, ms: performance.now() - started } : { addresses, ms: performance.now() - started }));
  });

t.test('answers, a name without an address, a name that never answers, localhost', async (t) => {
  const dns = await dnsServer(t);
  const resolver = boundedResolver({ timeoutMs: 500, servers: [`127.0.0.1:${dns.port}`] });
  t.same((await resolve(resolver, 'public.hooks.test')).addresses, [{ address: '93.184.216.34', family: 4 }, { address: '2606:4700::1', family: 6 }], 'A and AAAA together');
  t.same((await resolve(resolver, 'public.hooks.test', 6)).addresses, [{ address: '2606:4700::1', family: 6 }], 'one family when asked for one');
  t.same((await resolve(resolver, 'v4only.hooks.test')).addresses, [{ address: '93.184.216.35', family: 4 }], 'no AAAA: the A records');
  t.equal((await resolve(resolver, 'nowhere.hooks.test')).code, 'ENOTFOUND', 'NXDOMAIN: ENOTFOUND');
  const hung = await resolve(resolver, 'x.hang.test');
  t.equal(hung.code, 'ETIMEOUT', 'a server that never answers: ETIMEOUT');
  t.match(hung.message, /no answer for x\.hang\.test within 500 ms/);
  t.ok(hung.ms >= 450 && hung.ms < 5000, `within its bound, generously (${Math.round(hung.ms)} ms)`);
  const before = dns.asked.length;
  t.same((await resolve(resolver, 'localhost')).addresses, [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }], 'localhost: loopback');
  t.same((await resolve(resolver, 'Receiver.LOCALHOST.', 4)).addresses, [{ address: '127.0.0.1', family: 4 }], 'a name under .localhost, any case, a final dot');
  t.equal(dns.asked.length, before, 'without any query');
});

t.test('at most `concurrency` names at once, `waiting` more in line, the next refused at once; a turn freed is taken', async (t) => {
  const dns = await dnsServer(t);
  const resolver = boundedResolver({ timeoutMs: 800, concurrency: 2, waiting: 1, servers: [`127.0.0.1:${dns.port}`] });
  let settled = 0;
  const hung = ['a', 'b', 'c'].map((n) => resolve(resolver, `${n}.hang.test`).finally(() => settled++));
  const refused = await resolve(resolver, 'public.hooks.test');
  t.equal(refused.code, 'EBUSY', 'a fourth name is refused');
  t.equal(settled, 0, 'at once: before any of the three hung ones gave up');
  const [a, b, c] = await Promise.all(hung);
  t.same([a!.code, b!.code, c!.code], ['ETIMEOUT', 'ETIMEOUT', 'ETIMEOUT'], 'the waiting one times out with the others: its wait counts');
  t.same((await resolve(resolver, 'public.hooks.test', 4)).addresses, [{ address: '93.184.216.34', family: 4 }], 'the turns are given back');
});
