/**
 * The lab's own Kubernetes control plane, for the Cilium dataplanes: real etcd,
 * kube-apiserver and kube-controller-manager (its node-IPAM controller hands
 * every Node its pod CIDR from the cluster CIDR; its service-account
 * controller makes the "default" ServiceAccounts) from the tools cache.
 *
 * All three run inside the lab's fabric namespace, so the lab's namespace
 * cleanup kills them wherever the lab died. The apiserver listens on the
 * fabric bridge (LAB_API_IP), which every lab node reaches over its eth0 with
 * no route added; the lab process in the root namespace reaches it through a
 * unix socket (forwarder.ts in the fabric namespace) and a loopback listener
 * of its own. Nothing listens in the root namespace beyond 127.0.0.1.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { type AddressInfo, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import { run } from '../../core/process.js';
import { CLUSTER_CIDR, type LabPlan, SERVICE_CIDR } from '../plan.js';
import { labRunDir } from '../state.js';
import { type Component, startComponent } from './component.js';
import { writeKubeconfig } from './kubeconfig.js';
import { pipeServer } from './pipe.js';
import { type ClientCert, createClientCert, createPki, type Pki } from './pki.js';
import { labToolPath } from './tools.js';

/** The apiserver's address on the fabric bridge: inside 198.18.0.0/15, clear of the nodes (198.18.0.1..200). */
export const LAB_API_IP = '198.18.0.254';
export const LAB_API_PORT = 6443;
/** The collector's retries and backoff (collector/kubernetes/pacer.ts), with the lab apiserver's own rate. */
export const LAB_PACER = {
  qps: 2000,
  burst: 2000,
  parallelism: 32,
  maxRetries: 8,
  baseDelayMs: 200,
  maxDelayMs: 10_000,
};
const FORWARDER = fileURLToPath(new URL('./forwarder.js', import.meta.url));

export interface LabControlPlaneOptions {
  /** Directory for certificates, etcd data and logs (the lab's run directory). */
  dir: string;
  fabricNs: string;
  clusterCidr: string;
  serviceCidr: string;
  /** Pod CIDR size per node. */
  nodeCidrMask: number;
}

export interface LabControlPlane {
  dir: string;
  /** The apiserver as the lab process (root namespace) reaches it. */
  server: string;
  /** The apiserver as lab nodes reach it. */
  labServer: string;
  caCert: string;
  admin: ClientCert;
  /** Kubeconfig (root-namespace URL) of a system:masters user. */
  adminKubeconfig: string;
  /** A kubeconfig for in-lab clients with its certificates embedded (the file needs no other path). */
  labKubeconfigText(): string;
  /** GET a path as admin; the body as text (throws on a status other than 200). */
  getText(path: string): Promise<string>;
  components(): readonly Component[];
  stop(): Promise<void>;
}

/** Pure: a single-member etcd on 127.0.0.1 (the lab's and the test harness's). */
export function etcdArgs(o: { name: string; dataDir: string; clientPort: number; peerPort: number }): string[] {
  return [
    `--name=${o.name}`,
    `--data-dir=${o.dataDir}`,
    `--listen-client-urls=http://127.0.0.1:${o.clientPort}`,
    `--advertise-client-urls=http://127.0.0.1:${o.clientPort}`,
    `--listen-peer-urls=http://127.0.0.1:${o.peerPort}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${o.peerPort}`,
    `--initial-cluster=${o.name}=http://127.0.0.1:${o.peerPort}`,
    '--unsafe-no-fsync',
    '--log-level=warn',
  ];
}

/**
 * Pure: kube-apiserver with serving certificates, client-certificate authentication and Node,RBAC authorization,
 * bound to one address (the lab's and the test harness's).
 */
export function apiserverArgs(o: {
  dir: string;
  pki: Pki;
  etcdClientPort: number;
  address: string;
  port: number;
  serviceCidr: string;
}): string[] {
  return [
    `--etcd-servers=http://127.0.0.1:${o.etcdClientPort}`,
    `--bind-address=${o.address}`,
    `--advertise-address=${o.address}`,
    '--endpoint-reconciler-type=none',
    `--secure-port=${o.port}`,
    `--cert-dir=${join(o.dir, 'apiserver')}`,
    `--tls-cert-file=${o.pki.serverCert}`,
    `--tls-private-key-file=${o.pki.serverKey}`,
    `--client-ca-file=${o.pki.caCert}`,
    '--authorization-mode=Node,RBAC',
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${o.pki.saPub}`,
    `--service-account-signing-key-file=${o.pki.saKey}`,
    `--service-cluster-ip-range=${o.serviceCidr}`,
    '--allow-privileged=true',
    '--profiling=false',
    // A sweep's thousands of dummies go in one delete-collection call: let the apiserver delete them in parallel.
    '--delete-collection-workers=8',
  ];
}

/** Pure: the flags of the lab's three components, reviewable in one place. */
export function controlPlaneArgs(
  o: LabControlPlaneOptions,
  pki: Pki,
  labKubeconfig: string,
): { etcd: string[]; apiserver: string[]; kcm: string[] } {
  return {
    etcd: etcdArgs({ name: 'lab', dataDir: join(o.dir, 'etcd'), clientPort: 2379, peerPort: 2380 }),
    apiserver: apiserverArgs({
      dir: o.dir,
      pki,
      etcdClientPort: 2379,
      address: LAB_API_IP,
      port: LAB_API_PORT,
      serviceCidr: o.serviceCidr,
    }),
    kcm: [
      `--kubeconfig=${labKubeconfig}`,
      `--authentication-kubeconfig=${labKubeconfig}`,
      `--authorization-kubeconfig=${labKubeconfig}`,
      `--root-ca-file=${pki.caCert}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      '--secure-port=10257',
      // Only what the lab needs: pod CIDRs per Node, and the "default" ServiceAccounts pods need.
      '--controllers=node-ipam-controller,serviceaccount-controller',
      '--allocate-node-cidrs=true',
      `--cluster-cidr=${o.clusterCidr}`,
      `--node-cidr-mask-size=${o.nodeCidrMask}`,
      `--service-cluster-ip-range=${o.serviceCidr}`,
      '--profiling=false',
    ],
  };
}

/** Root-namespace loopback listener piping every connection to the fabric's unix socket. */
async function loopbackBridge(socketPath: string): Promise<{ server: Server; open: Set<Socket>; port: number }> {
  const { server, open } = pipeServer(() => connect(socketPath));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return { server, open, port: (server.address() as AddressInfo).port };
}

/** GET a path with a client certificate; the body as text (throws on a status other than 200). */
export function httpsGetText(server: string, pki: Pki, user: ClientCert, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${server}${path}`,
      { ca: readFileSync(pki.caCert), cert: readFileSync(user.cert), key: readFileSync(user.key), timeout: 5000 },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(body)
            : reject(new Error(`GET ${path}: HTTP ${res.statusCode}: ${body.slice(0, 200)}`)),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${path}: timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/** Polls `ok` until it holds; throws when a component exits first (with its last lines) or on timeout. */
export async function waitUntil(
  what: string,
  components: readonly Component[],
  ok: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const dead = components.find((c) => c.exitCode() !== undefined);
    if (dead)
      throw new Error(`${dead.name} exited with ${dead.exitCode()} while waiting for ${what}:\n${dead.tail(15)}`);
    try {
      if (await ok()) return;
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(200);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last: ${last})` : ''}`);
}

function embeddedKubeconfig(server: string, pki: Pki, user: ClientCert): string {
  const b64 = (f: string): string => readFileSync(f).toString('base64');
  return `${JSON.stringify(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'lab', cluster: { server, 'certificate-authority-data': b64(pki.caCert) } }],
      users: [{ name: 'user', user: { 'client-certificate-data': b64(user.cert), 'client-key-data': b64(user.key) } }],
      contexts: [{ name: 'lab', context: { cluster: 'lab', user: 'user' } }],
      'current-context': 'lab',
    },
    null,
    2,
  )}\n`;
}

export async function startLabControlPlane(o: LabControlPlaneOptions): Promise<LabControlPlane> {
  mkdirSync(o.dir, { recursive: true, mode: 0o700 });
  const components: Component[] = [];
  let bridge: Awaited<ReturnType<typeof loopbackBridge>> | undefined;
  const socketPath = join(o.dir, 'apiserver.sock');
  const stop = async (): Promise<void> => {
    for (const c of [...components].reverse()) await c.stop();
    for (const s of bridge?.open ?? []) s.destroy();
    if (bridge) await new Promise<void>((resolve) => bridge?.server.close(() => resolve()));
    rmSync(socketPath, { force: true });
  };
  const inFabric = (name: string, binary: string, args: string[]): Component => {
    const c = startComponent(o.dir, name, 'ip', ['netns', 'exec', o.fabricNs, binary, ...args]);
    components.push(c);
    return c;
  };
  try {
    await run('ip', ['-n', o.fabricNs, 'addr', 'add', `${LAB_API_IP}/24`, 'dev', 'br0'], {
      tool: 'ip',
      timeoutMs: 10_000,
    });
    const pki = createPki(o.dir, [LAB_API_IP]);
    const admin = createClientCert(pki, 'admin', 'cni-bench-lab-admin', ['system:masters']);
    const labServer = `https://${LAB_API_IP}:${LAB_API_PORT}`;
    const labKubeconfig = writeKubeconfig(join(o.dir, 'lab-admin.kubeconfig'), labServer, pki.caCert, admin);
    const args = controlPlaneArgs(o, pki, labKubeconfig);
    inFabric('etcd', labToolPath('etcd'), args.etcd);
    inFabric('kube-apiserver', labToolPath('kube-apiserver'), args.apiserver);
    inFabric('forwarder', process.execPath, [FORWARDER, socketPath, `${LAB_API_IP}:${LAB_API_PORT}`]);
    await waitUntil(
      'the apiserver forwarder',
      components,
      async () => components.some((c) => c.name === 'forwarder' && c.tail(3).includes('forwarder: listening')),
      15_000,
    );
    bridge = await loopbackBridge(socketPath);
    const server = `https://127.0.0.1:${bridge.port}`;
    const adminKubeconfig = writeKubeconfig(join(o.dir, 'admin.kubeconfig'), server, pki.caCert, admin);
    const getText = (path: string): Promise<string> => httpsGetText(server, pki, admin, path);
    await waitUntil('kube-apiserver /readyz', components, async () => (await getText('/readyz')) === 'ok', 90_000);
    inFabric('kube-controller-manager', labToolPath('kube-controller-manager'), args.kcm);
    return {
      dir: o.dir,
      server,
      labServer,
      caCert: pki.caCert,
      admin,
      adminKubeconfig,
      labKubeconfigText: () => embeddedKubeconfig(labServer, pki, admin),
      getText,
      components: () => components,
      stop,
    };
  } catch (err) {
    const logs = components.map((c) => `--- ${c.name} (last lines)\n${c.tail(15)}`).join('\n');
    await stop();
    throw new CniBenchError(ErrorCodes.LAB, `lab control plane did not start: ${(err as Error).message}\n${logs}`, {
      cause: err,
    });
  }
}

/** The control plane of lab `plan` in its fabric namespace, with the lab's pod and Service ranges (a /24 per node). */
export function startPlanControlPlane(plan: LabPlan): Promise<LabControlPlane> {
  return startLabControlPlane({
    dir: join(labRunDir(plan.id), 'k8s'),
    fabricNs: plan.fabricNs,
    clusterCidr: CLUSTER_CIDR,
    serviceCidr: SERVICE_CIDR,
    nodeCidrMask: 24,
  });
}
