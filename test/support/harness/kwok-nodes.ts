/**
 * Fake nodes for the harness: Node objects that kwok manages (annotation
 * kwok.x-k8s.io/node=fake), so the scheduler places pods on them and kwok
 * marks those pods running with an IP from the harness pod range.
 */
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { KWOK_NODE_ANNOTATION } from './control-plane.js';

export function adminClient(kubeconfig: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  return kc;
}

/** Creates `count` fake nodes named <prefix>-0.. and waits until kwok reports them Ready. */
export async function addKwokNodes(
  kubeconfig: string,
  count: number,
  prefix = 'kwok-node',
  timeoutMs = 30_000,
): Promise<string[]> {
  const core = adminClient(kubeconfig).makeApiClient(CoreV1Api);
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  for (const name of names) {
    await core.createNode({
      body: {
        metadata: {
          name,
          annotations: { [KWOK_NODE_ANNOTATION]: 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
          labels: {
            'kubernetes.io/hostname': name,
            'kubernetes.io/os': 'linux',
            'kubernetes.io/arch': 'amd64',
            type: 'kwok',
          },
        },
      },
    });
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = await core.listNode({ labelSelector: 'type=kwok' });
    const ready = list.items.filter(
      (n) =>
        names.includes(n.metadata?.name ?? '') &&
        n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    );
    if (ready.length === count) return names;
    if (Date.now() > deadline)
      throw new Error(`harness: ${ready.length} of ${count} kwok nodes Ready after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
