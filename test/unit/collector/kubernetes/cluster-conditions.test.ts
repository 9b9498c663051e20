import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { ClusterConditions } from '../../../../collector/kubernetes/conditions.js';
import {
  encryptionRefusal,
  hubbleCommand,
  hubbleRefusal,
  l7Refusal,
} from '../../../../collector/kubernetes/conditions-cilium.js';
import { describeGet, l7Enforced, l7Open } from '../../../../collector/kubernetes/conditions-l7.js';
import { deniedPath, l7Policy, l7Ports, l7Selector, pathRegex } from '../../../../collector/kubernetes/l7-objects.js';
import { ALL_MANAGED, RUN_ID_LABEL } from '../../../../collector/kubernetes/objects.js';
import { DEFAULT_PACER, Pacer } from '../../../../collector/kubernetes/pacer.js';
import {
  clusterRunPolicies,
  labelledPodsSelector,
  matchLabelsOf,
  POLICY_ROLE_LABEL,
  policySelector,
  roleLabelPatch,
} from '../../../../collector/kubernetes/policy-objects.js';
import { blockedOutcome } from '../../../../collector/runs/condition-probes.js';
import { ErrorCodes, isCniBenchError } from '../../../../core/errors.js';
import { createLogger } from '../../../../core/log.js';
import { type ProbeEnd, type ProbeOutcome, waitForPolicyWith } from '../../../../core/policy-verify.js';

const AGENTS = { 'app.kubernetes.io/name': 'cni-bench-agent', 'app.kubernetes.io/instance': 'r' };

test('cluster policies: N-1 fillers then the one letting the client role in, all selecting the server role among the agents, all labelled for cleanup', () => {
  assert.deepEqual(clusterRunPolicies('cni-bench', 'r1', AGENTS, 0), []);
  const ps = clusterRunPolicies('cni-bench', 'r1', AGENTS, 3);
  assert.deepEqual(
    ps.map((p) => p.metadata?.name),
    ['cnib-r1-filler-1', 'cnib-r1-filler-2', 'cnib-r1-allow-clients'],
  );
  for (const p of ps) {
    assert.equal(p.metadata?.namespace, 'cni-bench');
    assert.equal(p.metadata?.labels?.[RUN_ID_LABEL], 'r1');
    assert.equal(p.metadata?.labels?.['app.kubernetes.io/managed-by'], 'cni-bench');
    assert.deepEqual(p.spec?.podSelector?.matchLabels, { ...AGENTS, [POLICY_ROLE_LABEL]: 'server' });
    assert.deepEqual(p.spec?.policyTypes, ['Ingress']);
  }
  assert.deepEqual(ps[2]?.spec?.ingress?.[0]?._from, [
    { podSelector: { matchLabels: { ...AGENTS, 'cni-bench.io/policy-role': 'client' } } },
  ]);
  assert.equal(JSON.stringify(ps).includes('ipBlock'), false, 'no CIDR rule: Cilium does not match pods by address');
  assert.deepEqual(ps[0]?.spec?.ingress?.[0]?.ports, [{ protocol: 'TCP', port: 10_001 }]);
});

test('the role label patch touches that one label only; the cleanup selector finds it on agent pods', () => {
  assert.deepEqual(roleLabelPatch('server'), { metadata: { labels: { 'cni-bench.io/policy-role': 'server' } } });
  assert.deepEqual(roleLabelPatch(null), { metadata: { labels: { 'cni-bench.io/policy-role': null } } });
  assert.equal(
    labelledPodsSelector(AGENTS),
    'app.kubernetes.io/name=cni-bench-agent,app.kubernetes.io/instance=r,cni-bench.io/policy-role',
  );
});

test('the policy selector is narrower than everything the collector manages, and per run', () => {
  assert.ok(policySelector().startsWith(ALL_MANAGED));
  assert.match(policySelector(), /cni-bench\.io\/object=policy-condition$/);
  assert.match(policySelector('r9'), /,cni-bench\.io\/run-id=r9$/);
});

test('the agent selector becomes matchLabels; a set-based selector is refused naming the field', () => {
  assert.deepEqual(matchLabelsOf('app.kubernetes.io/name=cni-bench-agent, app.kubernetes.io/instance==r'), AGENTS);
  assert.throws(
    () => matchLabelsOf('app in (a,b)'),
    (err) => isCniBenchError(err, ErrorCodes.VALIDATION) && /agentSelector/.test(err.message),
  );
});

test('Hubble without the opt-in is refused with the chart value and the exact commands; with it, refused as unverifiable', () => {
  const cfg = { 'enable-hubble': 'false' };
  const off = hubbleRefusal(cfg, 'kube-system', false);
  assert.match(off, /rbac\.ciliumConfig\.write=false/);
  assert.ok(off.includes(hubbleCommand('kube-system')));
  assert.equal(
    hubbleCommand('cilium'),
    `kubectl -n cilium patch configmap cilium-config --type merge -p '{"data":{"enable-hubble":"true"}}' && kubectl -n cilium rollout restart daemonset/cilium && kubectl -n cilium rollout status daemonset/cilium`,
  );
  assert.match(hubbleRefusal(undefined, 'kube-system', true), /no cilium-config in kube-system/);
});

test('L7 and encryption say what cilium-config has', () => {
  assert.match(l7Refusal({ 'enable-l7-proxy': 'false' }, 'kube-system'), /Envoy proxy is off/);
  assert.match(l7Refusal({}, 'kube-system'), /enable-l7-proxy=\(unset: on\).*rbac\.ciliumNetworkPolicy\.enabled=true/);
  assert.match(l7Refusal(undefined, 'kube-system'), /no cilium-config/);
  assert.match(encryptionRefusal({ 'enable-wireguard': 'true' }, 'kube-system'), /encryption WireGuard/);
  assert.match(encryptionRefusal({ 'enable-ipsec': 'true' }, 'kube-system'), /encryption IPsec/);
  assert.match(encryptionRefusal({}, 'kube-system'), /encryption none/);
});

test('a probe client that never connected was blocked: refused when the error says so, else a drop', () => {
  assert.equal(blockedOutcome('agent lab-n2: tcp-rr: never connected to 198.18.1.2:39099'), 'timeout');
  assert.equal(blockedOutcome('agent x: tcp-rr: no transaction completed; errors: {"ECONNREFUSED":4}'), 'refused');
  assert.equal(blockedOutcome('agent x: connect EHOSTUNREACH'), 'unreachable');
});

/** A dataplane in a table: which end connects, switched at a given poll. Pure logic of the shared loop. */
function scripted(blockDeniedAfter: number, allowedBlocked = false) {
  let calls = 0;
  return async (from: ProbeEnd): Promise<ProbeOutcome> => {
    calls++;
    if (from.name === 'denied') return calls > blockDeniedAfter ? 'timeout' : 'connected';
    return allowedBlocked ? 'timeout' : 'connected';
  };
}
const ENDS = {
  denied: { ns: 'd', name: 'denied' },
  allowed: [{ ns: 'a', name: 'client' }],
  serverIp: '198.18.0.10',
  port: 39_099,
};
const FAST = { fastMs: 1, confirmMs: 1, pauseMs: 1 };

test('the shared verification loop: enforced once the denied end is blocked and the clients connect', async () => {
  const s = await waitForPolicyWith(scripted(3), 'enforced', ENDS, Date.now(), 5000, undefined, FAST);
  assert.equal(s.denied, 'timeout');
  assert.equal(s.allowed, 'connected');
  assert.ok(s.polls >= 2);
  await assert.rejects(
    waitForPolicyWith(scripted(0, true), 'enforced', ENDS, Date.now(), 200, undefined, FAST),
    /policy not enforced .* the allowed client client cannot connect \(timeout\)/,
  );
  await assert.rejects(
    waitForPolicyWith(scripted(1e9), 'enforced', ENDS, Date.now(), 200, undefined, FAST),
    /the denied client denied still connects/,
  );
  const open = await waitForPolicyWith(scripted(1e9), 'open', ENDS, Date.now(), 200, undefined, FAST);
  assert.equal(open.denied, 'connected');
});

function driver(allowNetworkPolicy: boolean): ClusterConditions {
  const kc = new KubeConfig();
  // Nothing listens here: these cases refuse before any API call.
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return new ClusterConditions(kc, kc.makeApiClient(CoreV1Api), new Pacer(DEFAULT_PACER), {
    namespace: 'cni-bench',
    agentSelector: 'app.kubernetes.io/name=cni-bench-agent',
    ciliumNamespace: 'kube-system',
    allowCiliumConfigChange: false,
    allowNetworkPolicy,
    log: createLogger({ test: 'cluster-conditions' }, 'error'),
  });
}

const noProbe = async (): Promise<ProbeOutcome> => 'connected';
const TARGET = {
  runId: 'r1',
  serverPodIp: '198.18.1.2',
  clientPodIps: ['198.18.2.2'],
  probes: {
    allowed: [{ ns: 'lab-n1', name: 'agent-1' }],
    others: [],
    listen: async () => ({ stop: async () => undefined }),
    probe: noProbe,
  },
};

test('without the opt-in a policy condition is refused naming the chart value; without a spare agent, naming why', async () => {
  const signal = new AbortController().signal;
  await assert.rejects(
    driver(false).apply({ kind: 'networkPolicy', policies: 1 }, TARGET, signal),
    (err) =>
      isCniBenchError(err, ErrorCodes.VALIDATION) &&
      /rbac\.networkPolicy\.enabled=true/.test(err.message) &&
      /in cni-bench only/.test(err.message),
  );
  await assert.rejects(
    driver(true).apply({ kind: 'policyCount', policies: 100 }, TARGET, signal),
    (err) => isCniBenchError(err, ErrorCodes.VALIDATION) && /neither the server nor a client/.test(err.message),
  );
});

test('the L7 rule: on the server role, from the client role, GET on the measured path on every HTTP server port, other ports open to the clients', () => {
  const p = l7Policy('cni-bench', 'r1', AGENTS, '/index.html');
  assert.equal(p.apiVersion, 'cilium.io/v2');
  assert.equal(p.kind, 'CiliumNetworkPolicy');
  assert.equal(p.metadata.name, 'cnib-r1-l7');
  assert.equal(p.metadata.labels[RUN_ID_LABEL], 'r1');
  assert.match(l7Selector('r1'), /cni-bench\.io\/object=l7-condition,cni-bench\.io\/run-id=r1$/);
  const spec = p.spec as {
    endpointSelector: unknown;
    ingress: { fromEndpoints: unknown; toPorts?: { ports: { port: string }[]; rules: unknown }[] }[];
  };
  assert.deepEqual(spec.endpointSelector, { matchLabels: { ...AGENTS, [POLICY_ROLE_LABEL]: 'server' } });
  const clients = [{ matchLabels: { ...AGENTS, [POLICY_ROLE_LABEL]: 'client' } }];
  assert.deepEqual(spec.ingress[0], { fromEndpoints: clients });
  assert.deepEqual(spec.ingress[1]?.fromEndpoints, clients);
  // The verification's port and the catalogue's HTTP servers (http-echo 8080, fortio 8081).
  assert.deepEqual(l7Ports(), [8080, 8081, 39_098]);
  assert.deepEqual(
    spec.ingress[1]?.toPorts?.[0]?.ports.map((x) => x.port),
    ['8080', '8081', '39098'],
  );
  assert.deepEqual(spec.ingress[1]?.toPorts?.[0]?.rules, { http: [{ method: 'GET', path: '/index\\.html' }] });
  assert.equal(pathRegex('a+b'), '/a\\+b');
  assert.equal(deniedPath('/'), '/cni-bench-l7-denied');
  assert.equal(deniedPath('/cni-bench-l7-denied'), '/cni-bench-l7-denied-2');
});

test('the L7 verdict: in force only when the allowed path answers 2xx alone and the denied one never does', () => {
  const ok = { answered: 5, non2xx: 0 };
  const refused = { answered: 5, non2xx: 5 };
  const none = { answered: 0, non2xx: 0, error: 'ECONNREFUSED' };
  assert.equal(l7Enforced(ok, refused), true);
  assert.equal(l7Enforced(ok, ok), false, 'the rule not applied');
  assert.equal(l7Enforced(ok, { answered: 5, non2xx: 2 }), false, 'some denied GETs passed');
  assert.equal(l7Enforced(none, refused), false, 'the allowed path must answer');
  assert.equal(l7Enforced(ok, none), false, 'a dropped GET is not the proxy refusing it');
  assert.equal(l7Open(ok, ok), true);
  assert.equal(l7Open(ok, refused), false);
  assert.equal(describeGet(none), 'no answer (ECONNREFUSED)');
  assert.equal(describeGet(refused), '5 of 5 answers not 2xx');
  assert.equal(describeGet(ok), '5 answers, all 2xx');
});

test('without its opt-in an l7Policy condition is refused naming rbac.ciliumNetworkPolicy.enabled', async () => {
  await assert.rejects(
    driver(true).apply({ kind: 'l7Policy', urlPath: '/' }, TARGET, new AbortController().signal),
    (err) =>
      isCniBenchError(err, ErrorCodes.VALIDATION) &&
      /rbac\.ciliumNetworkPolicy\.enabled=true/.test(err.message) &&
      /ciliumnetworkpolicies in cni-bench only/.test(err.message),
  );
});
