/**
 * The Cilium lab, in process, against real Cilium v1.20.2 (scripts/build-cilium.sh)
 * and the lab's own real control plane: a cilium-agent per node in that node's
 * network, mount and cgroup namespaces, kube-proxy replacement on; every lab
 * pod a Pod object wired by the real cilium-cni, so a ready Cilium endpoint
 * with its Kubernetes labels and an address from its Node's pod CIDR; pod to
 * pod across nodes; a Service (Service + EndpointSlice through the collector's
 * Kubernetes frontend) that Cilium programs and that a pod's connection
 * crosses; and afterwards nothing left: namespaces, processes, mounts, cgroups,
 * the BPF programs Cilium attached, root links. A start interrupted half way
 * leaves nothing either.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { createLogger } from '../../core/log.js';
import { run, spawnLongRunning } from '../../core/process.js';
import type { CiliumLab } from '../../lab/cilium/dataplane.js';
import { ciliumBuild } from '../../lab/k8s/tools.js';
import { inCgroup, Lab } from '../../lab/lab.js';
import {
  attachedPrograms,
  ciliumLeftovers,
  labIdProcesses,
  liveProgramIds,
  machineSysctls,
  NOTHING_LEFT,
} from '../support/helpers/cilium-state.js';
import { rootLinks } from '../support/helpers/host-state.js';
import { waitFor } from '../support/helpers/procs.js';
import { notRoot } from '../support/helpers/root.js';

const log = createLogger({ test: 'lab-cilium' }, 'warn');
const SERVER = "require('http').createServer((q,s)=>s.end('pod '+process.argv[1])).listen(8080,'0.0.0.0')";
const CLIENT =
  'fetch(process.argv[1],{signal:AbortSignal.timeout(5000)}).then(r=>r.text()).then(t=>process.stdout.write(t),e=>{process.stderr.write(String(e));process.exit(1)})';

let lab: Lab | undefined;
after(async () => {
  await lab?.destroy();
});

async function dbg(socket: string, args: string[]): Promise<string> {
  return (await run(ciliumBuild().dbg, ['-H', `unix://${socket}`, ...args], { tool: 'cilium-dbg', timeoutMs: 20_000 }))
    .stdout;
}

/** GET url from inside a pod, as a member of its node's pod cgroup (where Cilium's socket LB applies). */
async function getFromPod(l: Lab, node: number, pod: number, url: string): Promise<string> {
  const n = l.plan.nodes[node]!;
  const [file, args] = inCgroup(n.podCgroup!, 'ip', [
    'netns',
    'exec',
    n.pods[pod]!.ns,
    process.execPath,
    '-e',
    CLIENT,
    url,
  ]);
  return (await run(file, args, { tool: 'pod client', timeoutMs: 15_000 })).stdout;
}

test('cilium: real agents, pods as Cilium endpoints, pod to pod across nodes, a Service programmed by Cilium and crossed, nothing left', {
  skip: notRoot,
  timeout: 600_000,
}, async () => {
  const links = rootLinks();
  const sysctls = machineSysctls();
  lab = await Lab.create({ nodes: 2, log, proxy: { mode: 'cilium' }, shareCpus: true });
  const l = lab;
  const id = l.plan.id;
  const cilium = l.services as unknown as CiliumLab;
  const programs: number[] = [];
  try {
    for (const [i, agent] of cilium.ciliumAgents.entries()) {
      const status = await dbg(agent.socket, ['status']);
      assert.match(status, /KubeProxyReplacement:\s+True/, status);
      assert.match(status, /Routing:\s+Network: Native/, status);
      assert.match(status, /Cilium:\s+Ok/, status);
      const endpoints = JSON.parse(await dbg(agent.socket, ['endpoint', 'list', '-o', 'json'])) as {
        status: {
          state: string;
          networking?: { addressing?: { ipv4?: string }[] };
          labels?: { 'security-relevant'?: string[] };
        };
      }[];
      const node = l.plan.nodes[i]!;
      for (const pod of node.pods) {
        const ep = endpoints.find((e) => e.status.networking?.addressing?.some((a) => a.ipv4 === pod.ip));
        assert.ok(ep, `node ${i}: no Cilium endpoint for pod ${pod.ip} (${endpoints.length} endpoints)`);
        assert.equal(ep.status.state, 'ready');
        assert.ok(
          ep.status.labels?.['security-relevant']?.some((x) => x.startsWith('k8s:')),
          `endpoint ${pod.ip} has Kubernetes labels: ${JSON.stringify(ep.status.labels)}`,
        );
        const [net, bits] = node.podCidr.split('/');
        assert.equal(bits, '24');
        assert.ok(pod.ip.startsWith(`${net!.split('.').slice(0, 3).join('.')}.`), `${pod.ip} in ${node.podCidr}`);
      }
      const attached = attachedPrograms(id, i);
      assert.ok(
        attached.devices.includes('cilium_host') && attached.devices.some((d) => d.startsWith('lxc')),
        `node ${i}: Cilium's devices (${attached.devices.join(',')})`,
      );
      assert.ok(attached.cgroup.length > 0, `node ${i}: socket-LB programs on its cgroup`);
      programs.push(...attached.cgroup);
    }

    const server = l.plan.nodes[0]!.pods[0]!;
    const [sf, sa] = inCgroup(l.plan.nodes[0]!.podCgroup!, 'ip', [
      'netns',
      'exec',
      server.ns,
      process.execPath,
      '-e',
      SERVER,
      server.ip,
    ]);
    const srv = spawnLongRunning(sf, sa, { tool: 'pod server' });
    try {
      const direct = await waitFor(
        'pod to pod across nodes',
        async () => (await getFromPod(l, 1, 0, `http://${server.ip}:8080/`)) || undefined,
        30_000,
        500,
      );
      assert.equal(direct, `pod ${server.ip}`);

      const svc = await l.services.expose('cilium-test', 80, [{ ip: server.ip, port: 8080 }]);
      const client = cilium.ciliumAgents[1]!;
      await waitFor(
        'Cilium to program the Service on the client node',
        async () => (await dbg(client.socket, ['service', 'list'])).includes(`${svc.ip}:80`),
        30_000,
        250,
      );
      const services = await dbg(client.socket, ['service', 'list']);
      assert.match(
        services,
        new RegExp(
          `${svc.ip.replace(/\./g, '\\.')}:80/TCP\\s+ClusterIP\\s+1 => ${server.ip.replace(/\./g, '\\.')}:8080/TCP`,
        ),
        services,
      );
      assert.equal(await getFromPod(l, 1, 0, `http://${svc.ip}/`), `pod ${server.ip}`);
      await l.services.remove('cilium-test');
      await waitFor(
        'Cilium to drop the Service',
        async () => !(await dbg(client.socket, ['service', 'list'])).includes(`${svc.ip}:80`),
        30_000,
        250,
      );
    } finally {
      await srv.stop();
    }
    assert.equal(cilium.cluster.cni, 'cilium');
    assert.equal(cilium.cluster.cniMode, 'native routing');
    assert.equal(cilium.cluster.kubeProxyMode, 'none (Cilium kube-proxy replacement)');
  } finally {
    await l.destroy();
    lab = undefined;
  }
  assert.deepEqual(ciliumLeftovers(id), NOTHING_LEFT);
  assert.deepEqual(liveProgramIds(programs), [], 'the programs Cilium attached are freed');
  assert.equal(rootLinks(), links);
  assert.deepEqual(machineSysctls(), sysctls, 'the machine-wide sysctls Cilium would set are unchanged');
});

test('a Cilium lab interrupted while its agents start leaves nothing behind', {
  skip: notRoot,
  timeout: 300_000,
}, async () => {
  const id = `ab${Date.now().toString(36).slice(-6)}`;
  const abort = new AbortController();
  const creating = Lab.create({
    id,
    nodes: 2,
    log,
    proxy: { mode: 'cilium-vxlan' },
    shareCpus: true,
    signal: abort.signal,
  });
  await waitFor(
    'cilium-agent processes of the lab',
    () => labIdProcesses(id).some((p) => /cilium-agent/.test(p)),
    120_000,
    200,
  );
  abort.abort();
  await assert.rejects(creating, /interrupted/);
  assert.deepEqual(ciliumLeftovers(id), NOTHING_LEFT);
});
