/**
 * Station photos are decoded, not only sniffed: bytes that merely start like an image (a PNG signature
 * alone, `RIFF....WEBP<script>`), a truncated JPEG and a decompression bomb are refused in the portal's
 * error format and nothing is stored; real images are re-encoded (metadata and trailing bytes gone,
 * turned upright) and served as valid images with `nosniff`, by the portal and by export; photos stored
 * before this check are checked when an instance starts (re-encoded, or removed when they do not decode).
 */
import t, { type Test } from 'tap';
import { deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { TOKENS } from '../helpers/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, portalFixture, signedIn, type PortalClient } from '../helpers/portal.js';
import { MAX_PHOTO_BYTES } from '../../src/registry/file/photo.js';

const PHOTO = '/portal/v1/stations/BERLA/photo';

/** A coloured picture of that size and format, made by the image library. */
function picture(width: number, height: number, format: 'png' | 'jpeg' | 'webp'): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 90 } } }).toFormat(format).toBuffer();
}

/** A PNG chunk: length, type, data, CRC. */
function chunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

function crc32(bytes: Buffer): number {
  let c = 0xffffffff;
  for (const byte of bytes) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

/** A grey 1-bit PNG of that size whose pixel data is all zeros, deflated: a few bytes per million pixels. */
function bomb(width: number, height: number, rows = height): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = 0; // greyscale
  const raw = Buffer.alloc(rows * (1 + Math.ceil(width / 8)));
  return Buffer.concat([
    Buffer.from('89504e470d0a1a0a', 'hex'),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A JPEG padded with comment segments to exactly `size` bytes: valid, and all but the picture is padding. */
function paddedJpeg(jpeg: Buffer, size: number): Buffer {
  const segments: Buffer[] = [];
  let missing = size - jpeg.length;
  while (missing > 0) {
    const length = Math.min(65535, missing - 2);
    if (length < 2) throw new Error('cannot pad by so little');
    const segment = Buffer.alloc(2 + length, 0x20);
    segment[0] = 0xff;
    segment[1] = 0xfe;
    segment.writeUInt16BE(length, 2);
    segments.push(segment);
    missing -= segment.length;
  }
  return Buffer.concat([jpeg.subarray(0, 2), ...segments, jpeg.subarray(2)]);
}

async function platform(t: Test): Promise<{ p: TestPlatform; staff: PortalClient }> {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  await grantPortalRoles(p);
  return { p, staff: await signedIn(p, ACCOUNTS.staff) };
}

const exported = (p: TestPlatform, path = '/v2/hrs/BERLA/photo') => fetch(`${p.url}${path}`, { headers: { Authorization: `Bearer ${TOKENS.export_v2}` } });

t.test('bytes that only start like an image are refused, named, and nothing is stored', async (t) => {
  const { p, staff } = await platform(t);
  const jpeg = await sharp({ create: { width: 400, height: 300, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 40 } } }).jpeg().toBuffer();
  const cases: [string, Buffer, number, string, RegExp][] = [
    ['the PNG signature alone', Buffer.from('89504e470d0a1a0a', 'hex'), 422, 'invalid_image', /not a valid PNG image: it cannot be decoded/],
    ['RIFF....WEBP and a script', Buffer.from('RIFF\x24\x00\x00\x00WEBP<script>alert(document.cookie)</script>', 'latin1'), 422, 'invalid_image', /not a valid WebP image/],
    ['a JPEG cut at 80 %', jpeg.subarray(0, Math.floor(jpeg.length * 0.8)), 422, 'invalid_image', /not a valid JPEG image/],
    ['a JPEG header alone', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0xff, 0xd9]), 422, 'invalid_image', /not a valid JPEG image/],
    ['a PNG of 100000 × 100000 pixels declared, one row given', bomb(100_000, 100_000, 1), 422, 'image_too_large', /100000 × 100000 pixels; a photo may have at most 40000000 pixels/],
    ['a real bomb: 20000 × 20000 zero pixels in a few kB', bomb(20_000, 20_000), 422, 'image_too_large', /20000 × 20000 pixels/],
    ['a GIF', Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1'), 415, 'unsupported_media_type', /not a JPEG, PNG or WebP image/],
  ];
  for (const [what, bytes, status, code, detail] of cases) {
    const res = await staff.send('PUT', PHOTO, bytes);
    t.equal(res.status, status, `${what}: ${status}`);
    t.match(res.headers.get('content-type'), /^application\/problem\+json/, `${what}: the portal's error format`);
    t.equal(res.body.code, code, what);
    t.match(res.body.detail, detail, what);
  }
  t.ok(bomb(20_000, 20_000).length < 200_000, 'the bomb is small on the wire');
  t.equal((await staff.call('GET', PHOTO)).status, 404, 'nothing stored');
  t.equal((await exported(p)).status, 404, 'nothing published');
  t.same((await staff.call('GET', '/portal/v1/stations/BERLA')).body.photo, null);
});

t.test('the pixel cap: a photo of 8000 × 5000 pixels is taken, one of 40,000,005 pixels refused from its header', async (t) => {
  const { p, staff } = await platform(t);
  const over = await staff.send('PUT', PHOTO, bomb(3015, 13267));
  t.equal(over.status, 422, '3015 × 13267 = 40,000,005 pixels: refused');
  t.equal(over.body.code, 'image_too_large');
  t.match(over.body.detail, /^The photo is 3015 × 13267 pixels; a photo may have at most 40000000 pixels \(8000 × 5000\)/, 'its size and the cap named');
  t.equal((await staff.call('GET', PHOTO)).status, 404, 'nothing stored');
  const at = await staff.send('PUT', PHOTO, bomb(8000, 5000));
  t.equal(at.status, 200, '8000 × 5000 = 40,000,000 pixels: taken');
  const served = await exported(p);
  t.equal(served.status, 200, 'and published');
  const meta = await sharp(Buffer.from(await served.arrayBuffer())).metadata();
  t.same([meta.format, meta.width, meta.height], ['png', 8000, 5000], 'whole, re-encoded');
});

t.test('real PNG, JPEG and WebP images are taken, re-encoded without metadata or payload, and served as images with nosniff', async (t) => {
  const { p, staff } = await platform(t);
  const png = Buffer.concat([await picture(64, 48, 'png'), Buffer.from('<script>alert(1)</script>')]);
  // A JPEG 40 wide and 20 high whose EXIF says to turn it a quarter clockwise, with a copyright line.
  const jpeg = await sharp({ create: { width: 40, height: 20, channels: 3, background: '#3a6' } })
    .jpeg()
    .withMetadata({ orientation: 6, exif: { IFD0: { Copyright: 'SECRET-EXIF-LINE' } } })
    .toBuffer();
  t.ok(jpeg.includes('SECRET-EXIF-LINE'), 'the upload carries EXIF');
  const webp = await sharp({ create: { width: 30, height: 10, channels: 4, background: { r: 0, g: 0, b: 255, alpha: 0.5 } } }).webp({ lossless: true }).toBuffer();
  const cases: [string, Buffer, string, string, number, number][] = [
    ['PNG with trailing bytes', png, 'image/png', 'png', 64, 48],
    ['JPEG with EXIF orientation', jpeg, 'image/jpeg', 'jpeg', 20, 40],
    ['lossless WebP with alpha', webp, 'image/webp', 'webp', 30, 10],
  ];
  for (const [what, bytes, mediaType, format, width, height] of cases) {
    const put = await staff.send('PUT', PHOTO, bytes);
    t.equal(put.status, 200, `${what}: taken`);
    t.equal(put.body.photo.media_type, mediaType, what);
    for (const [who, res] of [['portal', await fetch(`${p.url}${PHOTO}`, { headers: { Origin: p.url, Cookie: staff.cookie! } })], ['export', await exported(p)]] as const) {
      t.equal(res.status, 200, `${what}: served by the ${who}`);
      t.equal(res.headers.get('content-type'), mediaType, `${what} (${who})`);
      t.equal(res.headers.get('x-content-type-options'), 'nosniff', `${what} (${who}): nosniff`);
      const served = Buffer.from(await res.arrayBuffer());
      t.equal(served.length, put.body.photo.bytes, `${what} (${who}): the bytes the answer described`);
      const meta = await sharp(served, { failOn: 'warning' }).metadata();
      t.equal(meta.format, format, `${what} (${who}): a valid ${format}`);
      t.same([meta.width, meta.height], [width, height], `${what} (${who}): upright`);
      await sharp(served, { failOn: 'warning' }).raw().toBuffer();
      t.notOk(served.includes('<script>') || served.includes('SECRET-EXIF-LINE'), `${what} (${who}): no payload, no metadata`);
      t.equal(meta.exif, undefined, `${what} (${who}): no EXIF`);
    }
    if (format === 'webp') t.equal((await sharp(Buffer.from(await (await exported(p)).arrayBuffer())).raw().toBuffer({ resolveWithObject: true })).info.channels, 4, 'alpha kept');
  }
  const again = await staff.send('PUT', PHOTO, webp);
  t.equal(again.status, 200, 'the same image again');
  const audit = await staff.call('GET', '/portal/v1/stations/BERLA/audit');
  t.equal(audit.body.entries.filter((e: any) => e.action === 'photo.set').length, 3, 'a re-upload of the same image changes nothing (re-encoding is stable)');
});

t.test('the 5 MiB cap: an image of exactly 5 MiB is taken (and served smaller), one that grows when re-encoded is taken at a lower quality, one byte more is a 413', async (t) => {
  const { p, staff } = await platform(t);
  const jpeg = paddedJpeg(await picture(80, 60, 'jpeg'), MAX_PHOTO_BYTES);
  t.equal(jpeg.length, MAX_PHOTO_BYTES);
  const put = await staff.send('PUT', PHOTO, jpeg);
  t.equal(put.status, 200, 'exactly 5 MiB');
  t.ok(put.body.photo.bytes < 10_000, `the padding is gone (${put.body.photo.bytes} bytes)`);
  const served = Buffer.from(await (await exported(p)).arrayBuffer());
  t.same([(await sharp(served).metadata()).width, served.length], [80, put.body.photo.bytes]);
  // A busy JPEG taken at quality 80, just under the cap: at quality 90 it would not fit, so it is stored at 80.
  const busy = await sharp({ create: { width: 3300, height: 2450, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 60 } } }).jpeg({ quality: 80 }).toBuffer();
  t.ok(busy.length < MAX_PHOTO_BYTES && (await sharp(busy).jpeg({ quality: 90 }).toBuffer()).length > MAX_PHOTO_BYTES, `${busy.length} bytes, more than 5 MiB at quality 90`);
  const taken = await staff.send('PUT', PHOTO, busy);
  t.equal(taken.status, 200, 'taken all the same');
  t.ok(taken.body.photo.bytes <= MAX_PHOTO_BYTES, `stored in ${taken.body.photo.bytes} bytes`);
  t.equal((await sharp(Buffer.from(await (await exported(p)).arrayBuffer())).metadata()).width, 3300);
  const over = await staff.send('PUT', PHOTO, Buffer.concat([jpeg, Buffer.from([0])]));
  t.equal(over.status, 413);
  t.equal(over.body.code, 'payload_too_large');
});

t.test('photos stored before the check are checked when an instance starts: re-encoded, or removed', async (t) => {
  const first = await startTestPlatform(t, { fixture: portalFixture() });
  const good = Buffer.concat([await picture(16, 16, 'png'), Buffer.from('<script>alert(1)</script>')]);
  const fake = Buffer.from('RIFF\x24\x00\x00\x00WEBP<script>alert(document.cookie)</script>', 'latin1');
  const store = async (hrsId: string, bytes: Buffer, mediaType: string) => {
    await first.sql`UPDATE stations SET photo = ${bytes}, photo_media_type = ${mediaType}, photo_sha256 = sha256(${bytes}), photo_checked = false WHERE hrs_id = ${hrsId}`;
  };
  await store('BERLA', good, 'image/png');
  await store('HAMBG', fake, 'image/webp');
  await first.parts.registry.reload();
  t.equal((await exported(first)).status, 404, 'an unchecked photo is never served');
  t.equal((await exported(first, '/v2/hrs/HAMBG/photo')).status, 404);

  const second = await startTestPlatform(t, { sameStoreAs: first });
  const served = await exported(second);
  t.equal(served.status, 200, 'the image is served once checked');
  const bytes = Buffer.from(await served.arrayBuffer());
  t.equal((await sharp(bytes, { failOn: 'warning' }).metadata()).format, 'png');
  t.notOk(bytes.includes('<script>'), 're-encoded: the payload is gone');
  t.equal((await exported(second, '/v2/hrs/HAMBG/photo')).status, 404, 'the fake one is gone');
  const [row] = await second.sql<{ photo: Buffer | null; photo_checked: boolean }[]>`SELECT photo, photo_checked FROM stations WHERE hrs_id = 'HAMBG'`;
  t.same(row, { photo: null, photo_checked: true }, 'removed from the database');
  const warned = second.logs.lines.find((l) => l.msg === 'stored photo removed: it is not an image the platform takes');
  t.equal(warned?.hrs_id, 'HAMBG', 'a warning names the station');
  t.equal(warned?.code, 'invalid_image');
});
