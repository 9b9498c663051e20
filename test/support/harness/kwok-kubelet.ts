/**
 * A node whose "kubelet" answers the apiserver's port-forward: a second kwok
 * that manages only nodes annotated kwok.x-k8s.io/node=portforward, serves
 * the kubelet API over TLS on 127.0.0.1 (the node's InternalIP and Hostname,
 * with daemonEndpoints.kubeletEndpoint its port), and relays every
 * port-forward stream to pods of `namespace` on `podPort` to a local
 * process's `targetPort` (a ClusterPortForward in its config). kwok runs no
 * containers, so this is where a real kubelet would dial the pod: the rest of
 * the path (client -> apiserver -> node's kubelet endpoint, WebSocket/SPDY
 * upgrade, the streams' framing) is the real one.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { freePort } from '../helpers/procs.js';
import { TestCerts } from '../helpers/test-certs.js';
import { type Component, startComponent } from './component.js';
import { HARNESS_POD_CIDR, KWOK_NODE_ANNOTATION } from './control-plane.js';
import { kwokStages, toolPath } from './tools.js';

export interface KwokKubelet {
  node: string;
  port: number;
  component: Component;
  stop(): Promise<void>;
}

export async function startKwokKubelet(o: {
  dir: string;
  admin: KubeConfig;
  adminKubeconfig: string;
  node: string;
  labels: Record<string, string>;
  namespace: string;
  podPort: number;
  targetPort: number;
}): Promise<KwokKubelet> {
  const port = await freePort();
  const certs = new TestCerts('cnib-kwok-kubelet-');
  certs.ca('kubelet-ca');
  certs.leaf('kubelet', 'kubelet-ca', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  const forward = join(o.dir, `port-forward-${o.node}.yaml`);
  writeFileSync(
    forward,
    JSON.stringify({
      apiVersion: 'kwok.x-k8s.io/v1alpha1',
      kind: 'ClusterPortForward',
      metadata: { name: `forward-${o.namespace}` },
      spec: {
        selector: { matchNamespaces: [o.namespace] },
        forwards: [{ ports: [o.podPort], target: { port: o.targetPort, address: '127.0.0.1' } }],
      },
    }),
  );
  const component = startComponent(o.dir, `kwok-kubelet-${o.node}`, toolPath('kwok'), [
    `--kubeconfig=${o.adminKubeconfig}`,
    ...kwokStages().map((f) => `--config=${f}`),
    `--config=${forward}`,
    '--manage-all-nodes=false',
    `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=portforward`,
    // Pod IPs of this node: the top of the harness pod range, clear of the first kwok's.
    `--cidr=${HARNESS_POD_CIDR.replace('96.0/20', '111.0/24')}`,
    '--node-ip=127.0.0.1',
    `--node-port=${port}`,
    `--server-address=127.0.0.1:${port}`,
    `--tls-cert-file=${certs.file('kubelet.crt')}`,
    `--tls-private-key-file=${certs.file('kubelet.key')}`,
  ]);
  await o.admin.makeApiClient(CoreV1Api).createNode({
    body: {
      metadata: {
        name: o.node,
        annotations: { [KWOK_NODE_ANNOTATION]: 'portforward', 'node.alpha.kubernetes.io/ttl': '0' },
        labels: { 'kubernetes.io/hostname': o.node, 'kubernetes.io/os': 'linux', type: 'kwok', ...o.labels },
      },
      // The apiserver dials the first of Hostname, InternalIP...: both loopback, where this kwok listens.
      status: {
        addresses: [
          { type: 'Hostname', address: '127.0.0.1' },
          { type: 'InternalIP', address: '127.0.0.1' },
        ],
        daemonEndpoints: { kubeletEndpoint: { Port: port } },
      },
    },
  });
  return {
    node: o.node,
    port,
    component,
    stop: async () => {
      await component.stop();
      certs.remove();
    },
  };
}
