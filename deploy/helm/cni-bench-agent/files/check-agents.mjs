// `helm test`: every node that runs an agent pod of this release has that
// agent connected to the collector. Reads the DaemonSet and its pods from the
// Kubernetes API (its own ServiceAccount: get daemonsets, list pods in this
// namespace) and the agents from the collector's REST API (the release's
// token); retries until CHECK_TIMEOUT_SECONDS, then exits 1 naming every node
// whose agent is missing. Plain Node 24, no dependencies (runs from a ConfigMap).
import { readFileSync } from 'node:fs';
import tls from 'node:tls';

const env = (name, fallback) => {
  const v = process.env[name] ?? fallback;
  if (v === undefined || v === '') throw new Error(`${name} is not set`);
  return v;
};
const SA = '/var/run/secrets/kubernetes.io/serviceaccount';
const api =
  process.env.KUBE_API_URL ?? `https://${env('KUBERNETES_SERVICE_HOST')}:${env('KUBERNETES_SERVICE_PORT')}`;
const kubeToken = readFileSync(env('KUBE_TOKEN_FILE', `${SA}/token`), 'utf8').trim();
const namespace = env('CHECK_NAMESPACE');
const daemonSet = env('CHECK_DAEMONSET');
const selector = env('CHECK_AGENT_SELECTOR');
const collector = env('CHECK_COLLECTOR_URL').replace(/\/$/, '');
const restToken = readFileSync(env('CHECK_REST_TOKEN_FILE'), 'utf8').trim();
const timeoutMs = Number(env('CHECK_TIMEOUT_SECONDS', '120')) * 1000;
// rest.tls: trust the collector's CA as well as the apiserver's (NODE_EXTRA_CA_CERTS).
if (process.env.CHECK_COLLECTOR_CA_FILE)
  tls.setDefaultCACertificates([
    ...tls.getCACertificates('default'),
    readFileSync(process.env.CHECK_COLLECTOR_CA_FILE, 'utf8'),
  ]);

async function get(url, token) {
  const r = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
  if (!r.ok) throw new Error(`GET ${url}: ${r.status} ${(await r.text()).slice(0, 300)}`);
  return r.json();
}

async function check() {
  const ds = await get(`${api}/apis/apps/v1/namespaces/${namespace}/daemonsets/${daemonSet}`, kubeToken);
  const pods = await get(
    `${api}/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(selector)}`,
    kubeToken,
  );
  const { agents } = await get(`${collector}/v1/agents?limit=1000`, restToken);
  const connected = new Set(agents.filter((a) => a.connected).map((a) => a.nodeName));
  const nodes = [...new Set(pods.items.map((p) => p.spec?.nodeName).filter(Boolean))].sort();
  const desired = ds.status?.desiredNumberScheduled ?? 0;
  const problems = nodes.filter((n) => !connected.has(n)).map((n) => `${n}: agent not connected`);
  if (nodes.length < desired) problems.push(`${desired - nodes.length} of ${desired} nodes have no agent pod`);
  if (desired === 0) problems.push(`DaemonSet ${daemonSet} schedules no pod`);
  return { nodes, problems };
}

const deadline = Date.now() + timeoutMs;
let last;
for (;;) {
  try {
    last = await check();
  } catch (err) {
    // fetch() says only "fetch failed": the cause (a refused connection, an untrusted certificate) is the news.
    const cause = err.cause ? ` (${err.cause.code ?? err.cause.message})` : '';
    last = { nodes: [], problems: [`${err.message}${cause}`] };
  }
  if (!last.problems.length) {
    console.log(`ok: all ${last.nodes.length} agents connected (${last.nodes.join(', ')})`);
    process.exit(0);
  }
  if (Date.now() > deadline) break;
  await new Promise((r) => setTimeout(r, 2000));
}
console.error(`FAILED after ${timeoutMs / 1000} s:\n  ${last.problems.join('\n  ')}`);
process.exit(1);
