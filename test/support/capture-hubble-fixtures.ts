/**
 * Captures test/fixtures/hubble/ from real cilium-agents v1.20.2 (as root,
 * after scripts/build-cilium.sh): a 2-node `cilium` lab, cilium-config's
 * enable-hubble set to true and the agents restarted (CiliumLab.restartAgents,
 * what the hubble condition does), five TCP connection attempts from pod
 * lab-n1-p1 to pod cni-bench-agent-0 (port 39099, nothing listening: SYN and
 * RST), then each agent's raw gRPC answers on hubble.sock and its
 * /v1/debuginfo. Run: node dist/test/support/capture-hubble-fixtures.js
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, credentials } from '@grpc/grpc-js';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { flowsRequest, hubbleSocket } from '../../agent/observe/hubble-observer.js';
import { createLogger } from '../../core/log.js';
import type { CiliumLab } from '../../lab/cilium/dataplane.js';
import { Lab } from '../../lab/lab.js';

const out = join(process.cwd(), 'test', 'fixtures', 'hubble');
mkdirSync(out, { recursive: true });

function rawCall(socket: string, path: string, req: Uint8Array, stream: boolean): Promise<Buffer[]> {
  const c = new Client(`unix://${socket}`, credentials.createInsecure());
  const id = (b: Buffer): Buffer => b;
  const ser = (b: Uint8Array): Buffer => Buffer.from(b);
  return new Promise<Buffer[]>((resolve, reject) => {
    if (!stream) {
      c.makeUnaryRequest(path, ser, id, req, (err, b) => (err || !b ? reject(err) : resolve([b])));
      return;
    }
    const got: Buffer[] = [];
    const call = c.makeServerStreamRequest(path, ser, id, req, { deadline: Date.now() + 15_000 });
    call.on('data', (b: Buffer) => got.push(b));
    call.on('error', reject);
    call.on('end', () => resolve(got));
  }).finally(() => c.close());
}

const log = createLogger({ component: 'capture' }, 'info');
const lab = await Lab.create({ nodes: 2, proxy: { mode: 'cilium' }, log });
try {
  const s = lab.services as CiliumLab;
  const kc = new KubeConfig();
  kc.loadFromFile(s.controlPlane?.adminKubeconfig ?? '');
  const core = kc.makeApiClient(CoreV1Api);
  const cm = await core.readNamespacedConfigMap({ name: 'cilium-config', namespace: 'kube-system' });
  await core.replaceNamespacedConfigMap({
    name: 'cilium-config',
    namespace: 'kube-system',
    body: { ...cm, data: { ...cm.data, 'enable-hubble': 'true' } },
  });
  await s.restartAgents();
  const server = lab.plan.nodes[0]?.pods[0];
  const client = lab.plan.nodes[1]?.pods[1];
  if (!server || !client) throw new Error('no pods');
  for (let i = 0; i < 5; i++) {
    try {
      execFileSync(
        'ip',
        ['netns', 'exec', client.ns, 'timeout', '1', 'bash', '-c', 'exec 3<>"/dev/tcp/$0/$1"', server.ip, '39099'],
        { stdio: 'ignore' },
      );
    } catch {
      // refused: the flows are what is wanted
    }
  }
  await new Promise((r) => setTimeout(r, 2000));
  for (const a of s.ciliumAgents) {
    const sock = hubbleSocket(a.socket);
    const [status] = await rawCall(sock, '/observer.Observer/ServerStatus', new Uint8Array(), false);
    writeFileSync(join(out, `server-status-${a.nodeName}.bin`), status as Buffer);
    const flows = await rawCall(sock, '/observer.Observer/GetFlows', flowsRequest(server.ip, 20), true);
    // One GetFlowsResponse message a line, base64.
    writeFileSync(join(out, `get-flows-${a.nodeName}.b64`), flows.map((f) => `${f.toString('base64')}\n`).join(''));
    if (a.nodeName === 'lab-n0')
      writeFileSync(
        join(out, 'debuginfo-hubble-on.json'),
        execFileSync('curl', ['-s', '--unix-socket', a.socket, 'http://localhost/v1/debuginfo']),
      );
    console.log(a.nodeName, 'flows', flows.length, 'server', server.ip, 'client', client.ip);
  }
} finally {
  await lab.destroy();
}
