/**
 * A real Kubernetes control plane on 127.0.0.1 for the Kubernetes-facing tests:
 * etcd, kube-apiserver with serving certificates, client-certificate
 * authentication and Node,RBAC authorization, optionally kube-controller-manager
 * and kube-scheduler (DaemonSet and Deployment controllers, pod placement), and
 * kwok, which turns Node objects into fake nodes and runs their pods in name.
 *
 * Everything lives in one labelled directory (cni-bench-cp-*) under the OS temp
 * folder; stop() kills the processes and removes it. A harness whose test
 * process died is cleaned up by the next start (see leftovers.ts).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../helpers/procs.js';
import { type Component, startComponent } from './component.js';
import { writeKubeconfig } from './kubeconfig.js';
import { HARNESS_PREFIX, registerHarness, removeLeftoverHarnesses, unregisterHarness } from './leftovers.js';
import { type ClientCert, createClientCert, createPki, type Pki } from './pki.js';
import { kwokStages, toolPath } from './tools.js';

/** The apiserver's Service range: the lab's (198.19.0.0/16), inside the benchmarking range. */
export const HARNESS_SERVICE_CIDR = '198.19.0.0/16';
/** Pod IPs kwok hands out: inside 198.18.0.0/15, clear of the lab's node and endpoint ranges. */
export const HARNESS_POD_CIDR = '198.18.96.0/20';
export const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';

export interface ControlPlaneOptions {
  /** Run kube-controller-manager and kube-scheduler (needed for workloads to get pods). */
  controllers?: boolean;
  /** Run kwok, managing nodes annotated kwok.x-k8s.io/node=fake. */
  kwok?: boolean;
}

export interface ControlPlane {
  dir: string;
  server: string;
  caCert: string;
  /** Kubeconfig of a system:masters user. */
  adminKubeconfig: string;
  admin: ClientCert;
  /** Milliseconds from start to a ready apiserver (and controllers, kwok). */
  startMs: number;
  /** Writes a kubeconfig for a client-certificate user (RBAC applies to it). */
  kubeconfigFor(user: string, groups?: string[]): string;
  /** GET a path as admin and parse the JSON answer. */
  get(path: string): Promise<unknown>;
  stop(): Promise<void>;
}

export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  removeLeftoverHarnesses();
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), HARNESS_PREFIX));
  const components: Component[] = [];
  const stop = async (): Promise<void> => {
    for (const c of [...components].reverse()) await c.stop();
    unregisterHarness(dir);
    rmSync(dir, { recursive: true, force: true });
  };
  registerHarness(dir, () => components);
  try {
    const pki = createPki(dir);
    const admin = createClientCert(pki, 'admin', 'cni-bench-harness-admin', ['system:masters']);
    const [etcdClient, etcdPeer, apiPort] = await Promise.all([freePort(), freePort(), freePort()]);
    const server = `https://127.0.0.1:${apiPort}`;
    const adminKubeconfig = writeKubeconfig(join(dir, 'admin.kubeconfig'), server, pki.caCert, admin);

    components.push(startComponent(dir, 'etcd', toolPath('etcd'), etcdArgs(dir, etcdClient, etcdPeer)));
    components.push(
      startComponent(dir, 'kube-apiserver', toolPath('kube-apiserver'), apiserverArgs(dir, pki, etcdClient, apiPort)),
    );
    const get = (path: string): Promise<unknown> => adminGet(server, pki, admin, path);
    await waitUntil(
      'kube-apiserver /readyz',
      components,
      async () => (await adminGetText(server, pki, admin, '/readyz')) === 'ok',
      60_000,
    );

    if (opts.controllers) {
      const [kcmPort, schedPort] = await Promise.all([freePort(), freePort()]);
      components.push(
        startComponent(
          dir,
          'kube-controller-manager',
          toolPath('kube-controller-manager'),
          kcmArgs(pki, adminKubeconfig, kcmPort),
        ),
      );
      components.push(
        startComponent(dir, 'kube-scheduler', toolPath('kube-scheduler'), schedulerArgs(adminKubeconfig, schedPort)),
      );
      // The service-account controller creating "default" in kube-system shows the controllers are up.
      await waitUntil(
        'kube-controller-manager',
        components,
        async () => Boolean(await get('/api/v1/namespaces/kube-system/serviceaccounts/default')),
        60_000,
      );
    }
    if (opts.kwok) {
      const kwokPort = await freePort();
      components.push(startComponent(dir, 'kwok', toolPath('kwok'), kwokArgs(adminKubeconfig, kwokPort)));
    }
    return {
      dir,
      server,
      caCert: pki.caCert,
      adminKubeconfig,
      admin,
      startMs: Date.now() - started,
      kubeconfigFor: (user, groups = []) => {
        const name = `user-${user.replace(/[^a-z0-9-]/gi, '-')}`;
        return writeKubeconfig(
          join(dir, `${name}.kubeconfig`),
          server,
          pki.caCert,
          createClientCert(pki, name, user, groups),
        );
      },
      get,
      stop,
    };
  } catch (err) {
    const logs = components.map((c) => `--- ${c.name} (last lines)\n${c.tail(15)}`).join('\n');
    await stop();
    throw new Error(`harness: control plane did not start: ${(err as Error).message}\n${logs}`, { cause: err });
  }
}

function etcdArgs(dir: string, client: number, peer: number): string[] {
  return [
    '--name=harness',
    `--data-dir=${join(dir, 'etcd')}`,
    `--listen-client-urls=http://127.0.0.1:${client}`,
    `--advertise-client-urls=http://127.0.0.1:${client}`,
    `--listen-peer-urls=http://127.0.0.1:${peer}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
    `--initial-cluster=harness=http://127.0.0.1:${peer}`,
    '--unsafe-no-fsync',
    '--log-level=warn',
  ];
}

function apiserverArgs(dir: string, pki: Pki, etcdClient: number, port: number): string[] {
  return [
    `--etcd-servers=http://127.0.0.1:${etcdClient}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    '--endpoint-reconciler-type=none',
    `--secure-port=${port}`,
    `--cert-dir=${join(dir, 'apiserver')}`,
    `--tls-cert-file=${pki.serverCert}`,
    `--tls-private-key-file=${pki.serverKey}`,
    `--client-ca-file=${pki.caCert}`,
    '--authorization-mode=Node,RBAC',
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${pki.saPub}`,
    `--service-account-signing-key-file=${pki.saKey}`,
    `--service-cluster-ip-range=${HARNESS_SERVICE_CIDR}`,
    '--allow-privileged=true',
    '--profiling=false',
  ];
}

function kcmArgs(pki: Pki, kubeconfig: string, port: number): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    `--service-account-private-key-file=${pki.saKey}`,
    `--root-ca-file=${pki.caCert}`,
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    '--controllers=*,-certificatesigningrequest-signing-controller,-node-ipam-controller',
    '--concurrent-daemonset-syncs=2',
  ];
}

function schedulerArgs(kubeconfig: string, port: number): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
  ];
}

function kwokArgs(kubeconfig: string, port: number): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    ...kwokStages().map((f) => `--config=${f}`),
    '--manage-all-nodes=false',
    `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=fake`,
    `--cidr=${HARNESS_POD_CIDR}`,
    '--node-ip=198.18.95.1',
    `--server-address=127.0.0.1:${port}`,
  ];
}

async function waitUntil(
  what: string,
  components: Component[],
  ok: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const dead = components.find((c) => c.exitCode() !== undefined);
    if (dead) throw new Error(`${dead.name} exited with ${dead.exitCode()} while waiting for ${what}`);
    try {
      if (await ok()) return;
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(200);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last: ${last})` : ''}`);
}

function adminGetText(server: string, pki: Pki, admin: ClientCert, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${server}${path}`,
      { ca: readFileSync(pki.caCert), cert: readFileSync(admin.cert), key: readFileSync(admin.key), timeout: 5000 },
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

async function adminGet(server: string, pki: Pki, admin: ClientCert, path: string): Promise<unknown> {
  return JSON.parse(await adminGetText(server, pki, admin, path));
}
