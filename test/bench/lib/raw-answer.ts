import { get as httpGet } from 'node:http';

/** An answer's body exactly as sent (fetch would decode a gzip-encoded one); rejects unless 200. */
export function rawAnswer(port: number, path: string, headers: Record<string, string>): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    httpGet({ host: '127.0.0.1', port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks)) : reject(new Error(`${path} answered ${res.statusCode}`))));
      res.on('error', reject);
    }).on('error', reject);
  });
}
