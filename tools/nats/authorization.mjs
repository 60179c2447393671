// Source of deploy/nats/authorization.conf: one NATS user per service with the subjects it may
// publish and subscribe (DESIGN.md §3, libs/bus/README.md "Subject catalogue").
// `node tools/nats/authorization.mjs` rewrites the file (`--print` writes it to stdout); a test
// checks it is up to date.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Reading bucket B (stream KV_B): stream info, ordered consumers (watch, keys), gets, flow control. */
function kvRead(bucket) {
  const s = `KV_${bucket}`;
  return [
    `$JS.API.STREAM.INFO.${s}`,
    // creating the empty bucket when the reader starts first; nobody may delete, purge or update it
    `$JS.API.STREAM.CREATE.${s}`,
    `$JS.API.CONSUMER.CREATE.${s}`,
    `$JS.API.CONSUMER.CREATE.${s}.>`,
    `$JS.API.CONSUMER.INFO.${s}.>`,
    `$JS.API.CONSUMER.DELETE.${s}.>`,
    `$JS.API.DIRECT.GET.${s}`,
    `$JS.API.DIRECT.GET.${s}.>`,
    `$JS.API.STREAM.MSG.GET.${s}`,
    `$JS.FC.${s}.>`,
  ];
}
/** Writing bucket B: puts and deletes are publishes on $KV.B.<key>. */
const kvWrite = (bucket) => [...kvRead(bucket), `$KV.${bucket}.>`];

export const Buckets = { config: 'dbproxy-config', configHistory: 'dbproxy-config-history', topology: 'dbproxy-topology', mysqlEdgeIds: 'dbproxy_mysqledge_ids' };
const JS_INFO = '$JS.API.INFO';
const HEARTBEAT = 'dbproxy.edges.heartbeat'; // libs/runtime/src/heartbeat.ts: every service process
const EDGE_ADMIN = 'dbproxy.edges.*.*.admin'; // config-api asks one edge instance (sessions, pools, kill, pause)
const REFRESH = 'dbproxy.topology.*.refresh';
const EDGE_READS = ['dbproxy.topology.*', 'dbproxy.health.>', 'dbproxy.bgd.>'];
const INBOX = '_INBOX.>';
const CACHE_INVALIDATE = 'dbproxy.cache.invalidate'; // mysql-edge's result cache ([mysql.cache]): bumped table generations

/** Per service: publish and subscribe allow lists, and whether it answers requests. */
export const ServicePermissions = {
  'config-api': {
    why: 'the only writer of the configuration KV and its history; asks edges over their admin subject',
    publish: [JS_INFO, ...kvWrite(Buckets.config), ...kvWrite(Buckets.configHistory), HEARTBEAT, EDGE_ADMIN],
    subscribe: [INBOX, HEARTBEAT, 'dbproxy.health.>', 'dbproxy.topology.*'],
    responds: false,
  },
  topology: {
    why: 'publishes health and topology (and its KV copy); answers refresh requests; applies blue/green actions',
    publish: [JS_INFO, ...kvRead(Buckets.config), ...kvWrite(Buckets.topology), 'dbproxy.topology.*', 'dbproxy.health.>', HEARTBEAT],
    subscribe: [INBOX, REFRESH, 'dbproxy.bgd.>'],
    responds: true,
  },
  'bgd-monitor': {
    why: 'the only publisher of blue/green state and actions',
    publish: [JS_INFO, ...kvRead(Buckets.config), 'dbproxy.bgd.*.state', 'dbproxy.bgd.actions', HEARTBEAT],
    subscribe: [INBOX],
    responds: false,
  },
  'xa-coordinator': {
    why: 'the only one that subscribes to (answers) dbproxy.xa.execute',
    publish: [JS_INFO, ...kvRead(Buckets.config), HEARTBEAT],
    subscribe: [INBOX, 'dbproxy.xa.execute'],
    responds: true,
  },
  'mysql-edge': {
    why: 'reads config and topology; asks xa-coordinator and topology; KILL across edges (its own KV); result-cache generations across edges',
    publish: [JS_INFO, ...kvRead(Buckets.config), ...kvRead(Buckets.topology), ...kvWrite(Buckets.mysqlEdgeIds), REFRESH, 'dbproxy.xa.execute', 'dbproxy.mysqledge.kill.*', CACHE_INVALIDATE, HEARTBEAT],
    subscribe: [INBOX, ...EDGE_READS, 'dbproxy.mysqledge.kill.*', CACHE_INVALIDATE, EDGE_ADMIN],
    responds: true,
  },
  'pg-edge': {
    why: 'reads config and topology; cancel requests across edges',
    publish: [JS_INFO, ...kvRead(Buckets.config), ...kvRead(Buckets.topology), REFRESH, 'dbproxy.pgedge.cancel', HEARTBEAT],
    subscribe: [INBOX, ...EDGE_READS, 'dbproxy.pgedge.cancel', EDGE_ADMIN],
    responds: true,
  },
  'redis-edge': {
    why: 'reads config and topology',
    publish: [JS_INFO, ...kvRead(Buckets.config), ...kvRead(Buckets.topology), REFRESH, HEARTBEAT],
    subscribe: [INBOX, ...EDGE_READS, EDGE_ADMIN],
    responds: true,
  },
};

/** `NATS_MYSQL_EDGE_PASSWORD` for mysql-edge: the variable nats-server reads the password from. */
export const passwordVariable = (service) => `NATS_${service.toUpperCase().replaceAll('-', '_')}_PASSWORD`;

const list = (subjects, indent) => subjects.map((s) => `${indent}"${s}"`).join(',\n');

export function renderAuthorization() {
  const users = Object.entries(ServicePermissions).map(
    ([service, p]) => `    # ${service}: ${p.why}
    {
      user: "${service}"
      password: $${passwordVariable(service)}
      permissions: {
        publish: { allow: [
${list(p.publish, '          ')}
        ] }
        subscribe: { allow: [
${list(p.subscribe, '          ')}
        ] }${p.responds ? '\n        # may answer the requests it receives (one reply to each reply subject)\n        allow_responses: true' : ''}
      }
    }`,
  );
  return `# GENERATED by tools/nats/authorization.mjs (edit that file, then run it): do not edit by hand.
# Who may do what on dbproxy's NATS: one user per service, each allowed only the subjects it uses.
# Passwords come from nats-server's environment ($NATS_<SERVICE>_PASSWORD); nothing secret is here.
# JetStream KV bucket B is stream KV_B: reading it takes $JS.API requests about KV_B only, writing it
# is publishing on $KV.B.>. Replies go to the requester's _INBOX.>; services that answer requests
# have allow_responses instead of a right to publish on _INBOX. A denied publish or subscribe is
# refused by the server ("Permissions Violation"); no user may delete, purge or update a stream.
authorization {
  timeout: 2
  users = [
${users.join('\n')}
  ]
}
`;
}

/** k8s/nats-config.yaml: the ConfigMap holding deploy/nats's two files (kustomize cannot read outside k8s/). */
export function renderK8sConfigMap(serverConf) {
  const indent = (text) => text.replace(/\n$/, '').split('\n').map((l) => (l ? `    ${l}` : '')).join('\n');
  return `# GENERATED by tools/nats/authorization.mjs from deploy/nats/: do not edit by hand.
apiVersion: v1
kind: ConfigMap
metadata:
  name: nats-config
  namespace: dbproxy
data:
  nats-server.conf: |
${indent(serverConf)}
  authorization.conf: |
${indent(renderAuthorization())}
`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1] && process.argv[2] === '--print') {
  process.stdout.write(renderAuthorization());
} else if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const target = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'deploy', 'nats', 'authorization.conf');
  writeFileSync(target, renderAuthorization());
  const k8s = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'k8s', 'nats-config.yaml');
  writeFileSync(k8s, renderK8sConfigMap(readFileSync(join(dirname(target), 'nats-server.conf'), 'utf8')));
  console.log(`wrote ${target} and ${k8s}`);
}
