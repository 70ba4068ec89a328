import t from 'tap';
import { NGINX, missing } from '../helpers/deploy.js';
import { nginxDeployment, streamsThroughProxy } from '../helpers/deploy-streams.js';

/** The status stream, the admins' feed and the map's stream through deploy/nginx.conf (see test/helpers/deploy-streams.ts). */

t.test('the three WebSocket streams through nginx (deploy/nginx.conf)', { skip: missing(NGINX) }, async (t) => {
  await streamsThroughProxy(t, await nginxDeployment(t));
});
