/**
 * The bus between instances on a real Redis: messages are validated on receipt, so a malformed one is
 * logged and dropped and never reaches a handler; a handler that throws does not stop the others.
 */
import t, { type Test } from 'tap';
import { Bus, registryMessage, type BusMessageOf } from '../../src/infra/bus.js';
import { fromAnnouncement, receiptsFromAnnouncement } from '../../src/infra/announce.js';
import { closeRedis, openRedis } from '../../src/infra/redis.js';
import { createLogger } from '../../src/config/log.js';
import { logCapture, uniqueName } from '../helpers/platform.js';
import { until } from '../helpers/wait.js';
import { TEST_REDIS_URL } from '../helpers/services.js';

const REDIS_URL = TEST_REDIS_URL;
/** The platform id the buses here stand for: every message on a bus carries its platform's. */
const PLATFORM = 'bus-test-platform';

async function bus(t: Test) {
  const prefix = uniqueName('bus');
  const redis = await openRedis(REDIS_URL, 'bus-test');
  const logs = logCapture();
  const receiver = new Bus(redis, prefix, PLATFORM, createLogger('info', logs.stream));
  t.teardown(async () => {
    await receiver.close();
    await closeRedis(redis);
  });
  return { redis, receiver, logs, channel: (type: 'registry' | 'signals' | 'receipts') => receiver.channel(type) };
}

const SIGNAL = {
  hrs_id: 'BERLA',
  category: 'availability',
  originator_id: 'mon-1',
  measured_at: '2026-11-23T10:00:00.000Z',
  received_at: '2026-11-23T10:00:01.000Z',
  payload: { station: { maintenance: false } },
};

t.test('malformed messages are logged and dropped; valid ones reach every handler', async (t) => {
  const { redis, receiver, logs, channel } = await bus(t);
  const heard: BusMessageOf<'signals'>[] = [];
  await receiver.on('signals', (message) => heard.push(message));
  const malformed = [
    'not json at all',
    JSON.stringify({ type: 'signals', from: 'x', platform: PLATFORM }),
    JSON.stringify({ type: 'signals', from: 'x', platform: PLATFORM, signals: [{ ...SIGNAL, payload: 'not an object' }] }),
    JSON.stringify({ type: 'signals', from: 'x', platform: PLATFORM, signals: [{ ...SIGNAL, hrs_id: 42 }] }),
    JSON.stringify({ type: 'registry', platform: PLATFORM, hrs_ids: [], tokens: true }),
    JSON.stringify({ type: 'nonsense', platform: PLATFORM }),
    'null',
  ];
  for (const raw of malformed) await redis.publish(channel('signals'), raw);
  const valid = { type: 'signals', from: 'x', signals: [SIGNAL] } as const;
  await redis.publish(channel('signals'), JSON.stringify({ ...valid, platform: PLATFORM }));
  await until('the valid message', () => (heard.length > 0 ? true : undefined), 5000);
  t.same(heard, [valid], 'only the valid message reached the handler');
  const warnings = logs.lines.filter((l) => l.msg === 'malformed bus message ignored' || l.msg === 'unreadable bus message ignored');
  t.equal(warnings.length, malformed.length, 'each malformed message is logged once');
  t.ok(warnings.every((w) => w.level === 40 && w.type === 'signals'), 'as warnings naming the channel');
  t.match(warnings.find((w) => w.msg === 'malformed bus message ignored'), { issues: Array });
});

t.test('a throwing handler is logged and the next one still runs', async (t) => {
  const { redis, receiver, logs, channel } = await bus(t);
  const heard: string[][] = [];
  await receiver.on('registry', () => {
    throw new Error('handler bug');
  });
  await receiver.on('registry', (message) => heard.push(message.hrs_ids));
  await redis.publish(channel('registry'), JSON.stringify({ ...registryMessage({ hrsIds: ['BERLA'], tokens: false }), platform: PLATFORM }));
  await until('the second handler', () => (heard.length > 0 ? true : undefined), 5000);
  t.same(heard, [['BERLA']]);
  t.ok(logs.lines.some((l) => l.msg === 'bus handler failed' && (l.err as { message: string }).message === 'handler bug'));
});

t.test('the registry message is built in one place', async (t) => {
  t.same(registryMessage({ hrsIds: ['BERLA'], tokens: true }), { type: 'registry', hrs_ids: ['BERLA'], tokens: true, registry: true });
  t.same(registryMessage({ tokens: true, registry: false }), { type: 'registry', hrs_ids: [], tokens: true, registry: false });
});

t.test('entries a later version sends are skipped, not the whole message', async (t) => {
  const signals = fromAnnouncement([SIGNAL, { ...SIGNAL, category: 'temperature' }, { ...SIGNAL, measured_at: 'yesterday' }]);
  t.same(signals, [
    { hrsId: 'BERLA', category: 'availability', originatorId: 'mon-1', datetime: Date.parse(SIGNAL.measured_at), receivedAt: Date.parse(SIGNAL.received_at), payload: SIGNAL.payload },
  ]);
  const receipt = { originator_id: 'mon-2', hrs_id: 'BERLA', assignment: 'testing' as const, datetime: SIGNAL.measured_at, received_datetime: SIGNAL.received_at };
  t.same(receiptsFromAnnouncement([{ ...receipt, category: 'usage' }, { ...receipt, category: 'temperature' }]), [{ ...receipt, category: 'usage' }]);
});

t.test('fromOthers: the messages of other instances reach the handler, this instance\'s own are dropped unread', async (t) => {
  const { redis, receiver, logs, channel } = await bus(t);
  const heard: BusMessageOf<'signals'>[] = [];
  await receiver.fromOthers('signals', (message) => heard.push(message));
  const sender = new Bus(redis, channel('signals').replace(/:bus:signals$/, ''), PLATFORM);
  t.teardown(() => sender.close());
  // Its own, as publish sends it (type and from first), whatever the object's key order.
  await receiver.publish({ signals: [SIGNAL], from: receiver.instanceId, type: 'signals' } as BusMessageOf<'signals'>);
  // Its own id in a message whose first bytes differ (another sender's layout): read, then left out by `from`.
  await redis.publish(channel('signals'), JSON.stringify({ signals: [SIGNAL], type: 'signals', platform: PLATFORM, from: receiver.instanceId }));
  // Its own prefix on a malformed message: dropped unread, so not even logged.
  await redis.publish(channel('signals'), `{"type":"signals","from":${JSON.stringify(receiver.instanceId)},"platform":${JSON.stringify(PLATFORM)},"signals":"broken`);
  await sender.publish({ type: 'signals', from: sender.instanceId, signals: [SIGNAL] });
  await until('the other instance\'s message', () => (heard.length > 0 ? true : undefined), 5000);
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.same(heard, [{ type: 'signals', from: sender.instanceId, signals: [SIGNAL] }], 'only the other instance\'s message reached the handler');
  t.equal(logs.lines.filter((l) => /bus message ignored/.test(String(l.msg))).length, 0, 'this instance\'s own message was not even parsed');

  // With a handler of every message beside it, this instance's own messages are read again.
  const all: BusMessageOf<'signals'>[] = [];
  await receiver.on('signals', (message) => all.push(message));
  await receiver.publish({ type: 'signals', from: receiver.instanceId, signals: [SIGNAL] });
  await until('its own message, for the handler of every message', () => (all.length > 0 ? true : undefined), 5000);
  t.equal(heard.length, 1, 'the others-only handler still left it out');
});
