/**
 * The real kube-proxy (k8s.io/kubernetes v1.37.2) runs inside a throwaway
 * network namespace against the harness apiserver, in iptables and nftables
 * mode, programs real Services and EndpointSlices, and the lab's emulation
 * (lab/kube-proxy-iptables.ts, lab/kube-proxy-nftables.ts) written for the same
 * Services into a second namespace must come out the same: the per-Service
 * structure exactly, and the whole ruleset up to a short list of normalizations
 * that do not change packet handling (IPTABLES_NORMALIZATIONS,
 * NFT_NORMALIZATIONS), asserted so that anything new the real kube-proxy
 * writes fails here.
 *
 * What the real kube-proxy writes and the emulation leaves out, and whether it
 * matters for the benchmark's per-packet cost:
 *  - iptables: KUBE-PROXY-CANARY in mangle/nat/filter (empty, never jumped to:
 *    no cost); the nfacct counter match on KUBE-FORWARD's INVALID rule (reached
 *    only by INVALID packets, which are dropped); the whole ip6tables ruleset
 *    (IPv6 only). Before this test the emulation also left out the filter
 *    table (KUBE-FORWARD on every forwarded packet, the ctstate-NEW jumps to
 *    KUBE-PROXY-FIREWALL / KUBE-SERVICES / KUBE-EXTERNAL-SERVICES, KUBE-NODEPORTS
 *    and KUBE-FIREWALL on INPUT/OUTPUT): that is per-packet work, so renderBase
 *    writes it now.
 *  - nftables: table ip6 kube-proxy (IPv6 hooks only: no cost to IPv4);
 *    hairpin-connections elements for endpoints local to the node (the lab's
 *    Services carry no locality; the set is looked up per new DNATed
 *    connection either way, and only a pod reaching itself through its own
 *    Service is affected). Before this test the emulation wrote v1.34's layout:
 *    a masquerade check in every service chain, a numgen vmap to one chain per
 *    endpoint and a hairpin check plus DNAT there (3-4 chains per new
 *    connection); v1.37 checks masquerade once in `services` and DNATs in the
 *    service chain itself (`numgen random mod N map`), so the emulation does too.
 *  - both: NAT chains run for the first packet of a connection only; the
 *    filter chains run for every packet.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, type TestContext, test } from 'node:test';
import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { parseIptablesSave } from '../../agent/samplers/iptables-save.js';
import { parseNftRuleset } from '../../agent/samplers/nft.js';
import { type LabService, sepChain, svcChain } from '../../lab/kube-proxy-iptables.js';
import { nftServiceChain } from '../../lab/kube-proxy-nftables.js';
import { listNamespaces, namespacePids } from '../../lab/netns.js';
import { createAll, ensureNamespace, kubeConfigFrom } from '../support/harness/apply.js';
import { type ControlPlane, HARNESS_SERVICE_CIDR, startControlPlane } from '../support/harness/control-plane.js';
import {
  KP_CLUSTER_CIDR,
  KP_USER,
  type KubeProxyMode,
  type RealKubeProxy,
  startKubeProxy,
} from '../support/harness/kube-proxy.js';
import {
  chainsDiffering,
  chainsOnlyIn,
  IPTABLES_NORMALIZATIONS,
  normalizeTables,
  parseSave,
  serviceView,
} from '../support/harness/kube-proxy-iptables-structure.js';
import {
  createThrowawayNetns,
  KP_NETNS_PREFIX,
  removeLeftoverNetns,
  type ThrowawayNetns,
} from '../support/harness/kube-proxy-netns.js';
import {
  NFT_NORMALIZATIONS,
  nftObjectsOnlyIn,
  nftServiceView,
  normalizeNftTable,
  parseNftTables,
} from '../support/harness/kube-proxy-nft-structure.js';
import { COMPARED_SERVICES, serviceObjects } from '../support/harness/kube-proxy-objects.js';
import {
  applyEmulation,
  backendOf,
  type IptablesBackend,
  listNftRuleset,
  saveIptables,
} from '../support/harness/kube-proxy-rules.js';
import { repoRoot } from '../support/helpers/fixtures.js';
import { waitFor } from '../support/helpers/procs.js';
import { notRoot } from '../support/helpers/root.js';
import { startOwner } from '../support/helpers/sigkilled-owner.js';

const NODE_IP = '198.18.0.1';
const SERVICES = COMPARED_SERVICES;
const CLUSTER_IPS = SERVICES.map((s) => s.clusterIp);
/** Set to 1 to rewrite test/fixtures/kube-proxy-real/ from this run. */
const UPDATE_FIXTURES = process.env.CNI_BENCH_UPDATE_FIXTURES === '1';
const FIXTURES = join(repoRoot, 'test', 'fixtures', 'kube-proxy-real');

/** Root-namespace and module-wide state kube-proxy must not touch (what exists of it: nf_conntrack may not be loaded yet). */
const HOST_STATE = [
  '/proc/sys/net/netfilter/nf_conntrack_max',
  '/sys/module/nf_conntrack/parameters/hashsize',
  '/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_established',
  '/proc/sys/net/ipv4/conf/all/route_localnet',
];
const hostState = (paths = HOST_STATE): Record<string, string> =>
  Object.fromEntries(paths.filter((p) => existsSync(p)).map((p) => [p, readFileSync(p, 'utf8').trim()]));

let cp: ControlPlane;

before(async () => {
  if (notRoot) return;
  cp = await startControlPlane({});
  const kc = kubeConfigFrom(cp.adminKubeconfig);
  for (const ns of new Set(SERVICES.map((s) => s.namespace))) await ensureNamespace(kc, ns);
  await createAll(kc, SERVICES.flatMap(serviceObjects));
});

after(async () => {
  await cp?.stop();
  if (notRoot) return;
  const left = (await listNamespaces()).filter((ns) => ns.startsWith(`${KP_NETNS_PREFIX}${process.pid}-`));
  assert.deepEqual(left, [], 'no cnibench-kp namespace of this test is left');
});

test('kube-proxy authenticates as system:kube-proxy, which bootstrap RBAC binds to system:node-proxier', {
  skip: notRoot,
}, async () => {
  const rbac = kubeConfigFrom(cp.adminKubeconfig).makeApiClient(RbacAuthorizationV1Api);
  const binding = await rbac.readClusterRoleBinding({ name: 'system:node-proxier' });
  assert.equal(binding.roleRef.name, 'system:node-proxier');
  assert.ok(
    binding.subjects?.some((s) => s.kind === 'User' && s.name === KP_USER),
    JSON.stringify(binding.subjects),
  );
});

/** Runs the real kube-proxy in a fresh namespace, polls `read` until `ready`, hands that dump to `use`, and removes it all. */
async function withRealKubeProxy<T>(
  mode: KubeProxyMode,
  read: (ns: string) => Promise<T>,
  ready: (dump: T) => boolean,
  use: (dump: T) => Promise<void>,
): Promise<void> {
  const ns = await createThrowawayNetns(NODE_IP);
  let kp: RealKubeProxy | undefined;
  const host = hostState();
  try {
    kp = await startKubeProxy(cp, { mode, netns: ns.name, nodeName: `kp-node-${mode}`, nodeIp: NODE_IP });
    const started = Date.now();
    const proxy = kp;
    const dump = await waitFor(
      `kube-proxy (${mode}) to program ${SERVICES.length} Services`,
      async () => {
        if (proxy.exitCode() !== undefined)
          throw new Error(`kube-proxy exited with ${proxy.exitCode()}:\n${proxy.tail(30)}`);
        const d = await read(ns.name);
        return ready(d) ? d : undefined;
      },
      60_000,
      250,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n--- kube-proxy log (last lines)\n${proxy.tail(30)}`, { cause: err });
    });
    process.stdout.write(
      `# kube-proxy ${mode}: rules for ${SERVICES.length} Services ${Date.now() - started} ms after start\n`,
    );
    assert.ok(kp.bridge.connections() >= 1, 'kube-proxy reached the apiserver through the bridge');
    assert.doesNotMatch(readFileSync(kp.logPath, 'utf8'), /forbidden/i, 'RBAC allowed everything kube-proxy asked for');
    await use(dump);
  } finally {
    try {
      await kp?.stop();
    } finally {
      await ns.delete();
    }
  }
  assert.deepEqual(
    hostState(Object.keys(host)),
    host,
    'conntrack limits, timeouts and the root namespace sysctls are unchanged',
  );
}

async function withEmulation<T>(
  mode: KubeProxyMode,
  backend: IptablesBackend | undefined,
  read: (ns: string) => Promise<T>,
): Promise<T> {
  const ns: ThrowawayNetns = await createThrowawayNetns(NODE_IP);
  try {
    await applyEmulation(mode, ns.name, SERVICES, {
      nodeIp: NODE_IP,
      serviceCidr: HARNESS_SERVICE_CIDR,
      clusterCidr: KP_CLUSTER_CIDR,
      ...(backend ? { backend } : {}),
    });
    return await read(ns.name);
  } finally {
    await ns.delete();
  }
}

function writeFixture(name: string, text: string): void {
  if (!UPDATE_FIXTURES) return;
  mkdirSync(FIXTURES, { recursive: true });
  writeFileSync(join(FIXTURES, name), text);
}

test('iptables: the emulation writes the chains, rules and probabilities the real kube-proxy writes', {
  skip: notRoot,
  timeout: 180_000,
}, async (t: TestContext) => {
  const hasAll = (save: string): boolean => {
    const rules = parseSave(save).nat?.['KUBE-SERVICES'] ?? [];
    return CLUSTER_IPS.every((ip) => rules.some((r) => r.includes(`-d ${ip}/32 `)));
  };
  await withRealKubeProxy(
    'iptables',
    (ns) => saveIptables(ns),
    hasAll,
    async (realSave) => {
      writeFixture('iptables-save.txt', realSave);
      const backend = backendOf(realSave);
      const emuSave = await withEmulation('iptables', backend, (ns) => saveIptables(ns, backend));
      const real = parseSave(realSave);
      const emu = parseSave(emuSave);

      // Per Service: chain names (hashes of namespace/name:port + protocol [+ endpoint]), KUBE-SERVICES, SVC and SEP rules.
      const rv = serviceView(real, CLUSTER_IPS);
      const ev = serviceView(emu, CLUSTER_IPS);
      assert.deepEqual(Object.keys(rv.svc).sort(), SERVICES.map(svcChain).sort());
      assert.deepEqual(
        Object.keys(rv.sep).sort(),
        SERVICES.flatMap((s) => s.endpoints.map((ep) => sepChain(s, ep))).sort(),
      );
      assert.deepEqual(ev.kubeServices, rv.kubeServices);
      assert.deepEqual(ev.svc, rv.svc);
      assert.deepEqual(ev.sep, rv.sep);
      const four = SERVICES[2] as LabService;
      const probs = (rv.svc[svcChain(four)] ?? []).map((r) => / --probability (\S+)/.exec(r)?.[1]).filter(Boolean);
      assert.deepEqual(
        probs,
        ['0.25000000000', '0.33333333349', '0.50000000000'],
        'statistic probabilities 1/4, 1/3, 1/2, in order',
      );

      // The whole ruleset, up to the listed normalizations; and exactly these chains differ before normalizing.
      for (const table of ['mangle', 'filter', 'nat']) {
        assert.deepEqual(
          normalizeTables(emu, CLUSTER_IPS, HARNESS_SERVICE_CIDR)[table],
          normalizeTables(real, CLUSTER_IPS, HARNESS_SERVICE_CIDR)[table],
          `table ${table}`,
        );
      }
      assert.deepEqual(chainsOnlyIn(real, emu).sort(), [
        'filter/KUBE-PROXY-CANARY',
        'mangle/KUBE-PROXY-CANARY',
        'nat/KUBE-PROXY-CANARY',
      ]);
      assert.deepEqual(chainsOnlyIn(emu, real), ['mangle/KUBE-IPTABLES-HINT']);
      const mayDiffer = ['filter/KUBE-FORWARD', 'filter/KUBE-SERVICES', 'nat/KUBE-SERVICES'];
      assert.deepEqual(
        chainsDiffering(real, emu).filter((c) => !mayDiffer.includes(c)),
        [],
        'only the chains the normalizations touch differ',
      );

      // The agent's sampler reads the real dump: one KUBE-SERVICES rule per Service plus the nodeports rule.
      const summary = parseIptablesSave(realSave);
      assert.equal(summary.kubeServicesRules, SERVICES.length + 1);
      assert.deepEqual(
        summary.serviceChains.map((c) => c.chain).sort(),
        [...Object.keys(rv.svc), ...Object.keys(rv.sep)].sort(),
      );
      t.diagnostic(`backend ${backend}; normalized: ${IPTABLES_NORMALIZATIONS.join(' | ')}`);
    },
  );
});

test('nftables: the emulation writes the service-ips map, service chains and numgen DNAT maps the real kube-proxy writes', {
  skip: notRoot,
  timeout: 180_000,
}, async (t: TestContext) => {
  const hasAll = (dump: { json: string }): boolean => {
    const table = parseNftTables(dump.json)['ip kube-proxy'];
    return table !== undefined && nftServiceView(table, CLUSTER_IPS).serviceIps.length === SERVICES.length;
  };
  await withRealKubeProxy('nftables', listNftRuleset, hasAll, async (realDump) => {
    writeFixture('nft-list-ruleset.json', realDump.json);
    writeFixture('nft-list-ruleset.txt', realDump.text);
    const emuDump = await withEmulation('nftables', undefined, listNftRuleset);
    const realTables = parseNftTables(realDump.json);
    const emuTables = parseNftTables(emuDump.json);
    assert.deepEqual(Object.keys(realTables).sort(), ['ip kube-proxy', 'ip6 kube-proxy']);
    assert.deepEqual(Object.keys(emuTables), ['ip kube-proxy']);
    const real = realTables['ip kube-proxy'] as NonNullable<(typeof realTables)[string]>;
    const emu = emuTables['ip kube-proxy'] as NonNullable<(typeof emuTables)[string]>;

    // Per Service: service-ips elements, the chains they go to (named as kube-proxy names them) and their one DNAT rule.
    const rv = nftServiceView(real, CLUSTER_IPS);
    const ev = nftServiceView(emu, CLUSTER_IPS);
    assert.deepEqual(Object.keys(rv.serviceChains).sort(), SERVICES.map(nftServiceChain).sort());
    assert.deepEqual(ev.serviceIps, rv.serviceIps);
    assert.deepEqual(ev.clusterIps, rv.clusterIps);
    assert.deepEqual(ev.serviceChains, rv.serviceChains);
    assert.deepEqual(
      [rv.endpointChains, ev.endpointChains],
      [[], []],
      'no per-endpoint chains without session affinity',
    );
    for (const s of SERVICES) {
      const [rule, ...more] = rv.serviceChains[nftServiceChain(s)] ?? [];
      assert.equal(more.length, 0, `${s.name}: one rule`);
      if (s.endpoints.length === 1) assert.doesNotMatch(rule ?? '', /numgen/, `${s.name}: a plain dnat`);
      else
        assert.match(
          rule ?? '',
          new RegExp(`"numgen":\\{"mode":"random","mod":${s.endpoints.length},`),
          `${s.name}: numgen over ${s.endpoints.length}`,
        );
    }

    // The whole table, up to the listed normalizations.
    assert.deepEqual(
      normalizeNftTable(emu, CLUSTER_IPS, HARNESS_SERVICE_CIDR),
      normalizeNftTable(real, CLUSTER_IPS, HARNESS_SERVICE_CIDR),
    );
    assert.deepEqual([nftObjectsOnlyIn(real, emu), nftObjectsOnlyIn(emu, real)], [[], []]);

    // The agent's sampler reads the real dump.
    assert.equal(parseNftRuleset(realDump.json).serviceIps, SERVICES.length);
    t.diagnostic(`normalized: ${NFT_NORMALIZATIONS.join(' | ')}`);
  });
});

test('a namespace whose owner was SIGKILLed, and what runs in it, is removed by the next create', {
  skip: notRoot,
  timeout: 60_000,
}, async () => {
  const owner = await startOwner(
    new URL('../support/harness/kube-proxy-netns.js', import.meta.url),
    'm.createThrowawayNetns().then((ns) => ns.name)',
    'the child namespace',
    30_000,
  );
  const name = owner.name;
  const sleeper = spawn('ip', ['netns', 'exec', name, 'sleep', '600'], { stdio: 'ignore', detached: true });
  sleeper.unref();
  await waitFor('a process in it', async () => (await namespacePids(name)).length > 0, 10_000, 100);
  await owner.kill();
  assert.ok((await listNamespaces()).includes(name), 'a SIGKILLed owner cannot clean up; the namespace is still there');
  assert.ok((await removeLeftoverNetns()) >= 1);
  assert.equal((await listNamespaces()).includes(name), false);
  await waitFor(
    'the process in it to die',
    () => sleeper.exitCode !== null || sleeper.signalCode !== null || undefined,
    10_000,
    100,
  );
});
