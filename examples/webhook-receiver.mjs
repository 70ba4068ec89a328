// WEBHOOK_SECRET=whsec_… PORT=9000 node webhook-receiver.mjs   (after `npm install standardwebhooks`)
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

const webhook = new Webhook(process.env.WEBHOOK_SECRET);
const seen = new Set(); // a message sent again keeps its webhook-id: apply it once

createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  let message;
  try {
    message = webhook.verify(Buffer.concat(chunks).toString('utf8'), req.headers); // signature, timestamp within 5 min
  } catch {
    return res.writeHead(401).end();
  }
  if (!seen.has(req.headers['webhook-id'])) {
    seen.add(req.headers['webhook-id']);
    for (const change of message.data.changes ?? []) console.log(change.seq, change.type, change.hrs_id);
  }
  res.writeHead(204).end();
}).listen(Number(process.env.PORT ?? 9000));
