/**
 * `helm test`'s check (issue 17 item 7) on the harness cluster: the chart
 * installed on a real apiserver with kwok nodes, the hook's own ServiceAccount
 * and Role created from the chart, and its script (files/check-agents.mjs)
 * run with that ServiceAccount's real token against the apiserver and against
 * a real collector whose real agents register under the kwok nodes' names. It
 * passes with every agent connected and fails naming the node whose agent was
 * stopped; with rest.tls it trusts the collector's CA as the hook mounts it.
 * Substitute, named: the script runs as a local process, not in the hook Pod:
 * kwok runs no containers and this machine has no container runtime, so no
 * kubelet here can start the Pod (`helm test` itself would wait on a Pod that
 * never runs). The Pod as rendered is checked by test/unit/helm-chart-user.test.ts.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { CHART_DIR, createAll, helm, kubeConfigFrom, renderChart } from '../support/harness/apply.js';
import { type ControlPlane, startControlPlane } from '../support/harness/control-plane.js';
import { addKwokNodes } from '../support/harness/kwok-nodes.js';
import { type CollectorMain, startCollectorMain } from '../support/helpers/collector-main.js';
import { AGENT_MAIN, freePort, type Proc, startNode, stop, waitFor } from '../support/helpers/procs.js';
import { TestCerts } from '../support/helpers/test-certs.js';

const NS = 'cni-bench-t';
const RELEASE = 'cni-bench-agent';
const SCRIPT = join(CHART_DIR, 'files/check-agents.mjs');
const tmp = mkdtempSync(join(tmpdir(), 'cnib-helm-test-'));
let cp: ControlPlane;
let admin: KubeConfig;
let nodes: string[];
let collector: CollectorMain;
const agents = new Map<string, Proc>();
const restToken = join(tmp, 'rest-token');
const kubeToken = join(tmp, 'kube-token');
let validKubeToken = '';

async function check(
  timeoutSeconds: number,
  extra: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    PATH: process.env.PATH ?? '',
    KUBE_API_URL: cp.server,
    KUBE_TOKEN_FILE: kubeToken,
    NODE_EXTRA_CA_CERTS: cp.caCert,
    CHECK_NAMESPACE: NS,
    CHECK_DAEMONSET: 'cni-bench-agent',
    CHECK_AGENT_SELECTOR: `app.kubernetes.io/name=cni-bench-agent,app.kubernetes.io/instance=${RELEASE}`,
    CHECK_COLLECTOR_URL: collector.http,
    CHECK_REST_TOKEN_FILE: restToken,
    CHECK_TIMEOUT_SECONDS: String(timeoutSeconds),
    ...extra,
  };
  try {
    const r = await promisify(execFile)(process.execPath, [SCRIPT], { env, timeout: 120_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

before(async () => {
  cp = await startControlPlane({ controllers: true, kwok: true });
  admin = kubeConfigFrom(cp.adminKubeconfig);
  nodes = await addKwokNodes(cp.adminKubeconfig, 2);
  helm(cp, ['install', RELEASE, CHART_DIR, '--namespace', NS, '--create-namespace', '--wait', '--timeout', '120s']);
  // The hook's identity as the chart renders it (helm test would create these before its Pod).
  const hook = renderChart(RELEASE, NS, [], [], ['--show-only', 'templates/tests/agents-connected.yaml']);
  await createAll(
    admin,
    hook.filter((o) => ['ServiceAccount', 'Role', 'RoleBinding'].includes(o.kind ?? '')),
  );
  const tr = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    name: 'cni-bench-test-agents',
    namespace: NS,
    body: { spec: { audiences: ['https://kubernetes.default.svc.cluster.local'], expirationSeconds: 3600 } },
  });
  validKubeToken = tr.status?.token ?? '';
  writeFileSync(kubeToken, validKubeToken, { mode: 0o600 });
  writeFileSync(restToken, 'a-test-token-of-the-operator-0123456789', { mode: 0o600 });
  collector = await startCollectorMain(['--rest-token-file', restToken]);
  for (const node of nodes) {
    const health = await freePort();
    agents.set(
      node,
      startNode(AGENT_MAIN, [
        '--collector',
        collector.grpc,
        '--node-name',
        node,
        '--pod-ip',
        '127.0.0.1',
        '--health-port',
        String(health),
      ]),
    );
  }
});

after(async () => {
  await Promise.all([...agents.values()].map((a) => stop(a)));
  await stop(collector?.proc);
  await cp?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

test('the helm test check (its script as a local process, not the hook Pod: kwok runs no containers) passes with every agent connected and fails naming the node whose agent is gone', async () => {
  const ok = await check(120);
  assert.equal(ok.code, 0, `${ok.stdout}\n${ok.stderr}`);
  assert.match(ok.stdout, new RegExp(`^ok: all 2 agents connected \\(${[...nodes].sort().join(', ')}\\)`));
  const gone = nodes[1] as string;
  await stop(agents.get(gone));
  await waitFor(
    `${gone} to show disconnected`,
    async () => {
      const r = await fetch(`${collector.http}/v1/agents`, {
        headers: { authorization: 'Bearer a-test-token-of-the-operator-0123456789' },
      });
      const body = (await r.json()) as { agents: { nodeName: string; connected: boolean }[] };
      return body.agents.some((a) => a.nodeName === gone && !a.connected);
    },
    60_000,
    250,
  );
  const failed = await check(3);
  assert.equal(failed.code, 1, failed.stdout);
  assert.match(failed.stderr, new RegExp(`FAILED after 3 s:\\n {2}${gone}: agent not connected`));
  assert.doesNotMatch(failed.stderr, new RegExp(`${nodes[0]}:`));
});

test('the helm test check (script run locally): a token the apiserver does not accept fails it, never passes it', async () => {
  writeFileSync(kubeToken, 'not-a-token');
  const r = await check(2);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /401/);
});

test('the helm test check with rest.tls (script run locally): it trusts the collector CA from CHECK_COLLECTOR_CA_FILE beside the apiserver CA, and fails on TLS without it', async () => {
  writeFileSync(kubeToken, validKubeToken, { mode: 0o600 }); // the test before spoilt it
  const certs = new TestCerts('cnib-helm-test-tls-');
  let tlsCollector: CollectorMain | undefined;
  try {
    certs.ca('ca');
    certs.leaf('server', 'ca', 'subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n');
    tlsCollector = await startCollectorMain([
      '--rest-token-file',
      restToken,
      '--rest-tls',
      'true',
      '--tls-cert-file',
      certs.file('server.crt'),
      '--tls-key-file',
      certs.file('server.key'),
    ]);
    const url = tlsCollector.http.replace('127.0.0.1', 'localhost');
    assert.match(url, /^https:\/\/localhost:\d+/);
    // No agent is connected to this collector: with its CA the check gets that far and names the nodes.
    const trusted = await check(2, { CHECK_COLLECTOR_URL: url, CHECK_COLLECTOR_CA_FILE: certs.file('ca.crt') });
    assert.equal(trusted.code, 1, trusted.stdout);
    assert.match(trusted.stderr, new RegExp(`${nodes[0]}: agent not connected`));
    const untrusted = await check(2, { CHECK_COLLECTOR_URL: url });
    assert.equal(untrusted.code, 1, untrusted.stdout);
    assert.match(untrusted.stderr, /fetch failed \((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)\)/);
    assert.doesNotMatch(untrusted.stderr, /agent not connected/);
  } finally {
    await stop(tlsCollector?.proc);
    certs.remove();
  }
});
