import t from 'tap';
import { HAPROXY, missing } from '../helpers/deploy.js';
import { haproxyDeployment, streamsThroughProxy } from '../helpers/deploy-streams.js';

/** The status stream, the admins' feed and the map's stream through deploy/haproxy.cfg (see test/helpers/deploy-streams.ts). */

t.test('the three WebSocket streams through HAProxy (deploy/haproxy.cfg)', { skip: missing(HAPROXY) }, async (t) => {
  await streamsThroughProxy(t, await haproxyDeployment(t));
});
