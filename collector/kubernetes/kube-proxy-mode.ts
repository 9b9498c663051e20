/**
 * kube-proxy's mode from the ConfigMap kubeadm writes for it: kube-system/kube-proxy,
 * key "config.conf", a KubeProxyConfiguration (cmd/kubeadm/app/constants
 * KubeProxyConfigMap, KubeProxyConfigMapKey; cmd/kubeadm/app/phases/addons/proxy/manifests.go).
 * An empty or absent `mode` is iptables on Linux: kube-proxy's
 * platformApplyDefaults (cmd/kube-proxy/app/server_linux.go, v1.37) sets it;
 * kubeadm v1.37 writes "iptables" itself (cmd/kubeadm/app/componentconfigs/kubeproxy.go).
 * Pure. What cannot be read is a coded error naming the ConfigMap and key, so
 * a broken config is never reported as the default mode.
 */
import { loadYaml } from '@kubernetes/client-node';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';

export const KUBE_PROXY_CONFIGMAP = { namespace: 'kube-system', name: 'kube-proxy', key: 'config.conf' } as const;

/** The modes kube-proxy v1.37 accepts (pkg/proxy/apis/config/types.go ProxyMode*). */
const MODES = new Set(['iptables', 'ipvs', 'nftables', 'kernelspace']);

export interface KubeProxyMode {
  mode: string;
  evidence: string;
}

const WHERE = `configmap ${KUBE_PROXY_CONFIGMAP.namespace}/${KUBE_PROXY_CONFIGMAP.name} key ${KUBE_PROXY_CONFIGMAP.key}`;

function bad(reason: string, cause?: unknown): CniBenchError {
  const { namespace, name, key } = KUBE_PROXY_CONFIGMAP;
  return new CniBenchError(ErrorCodes.PARSE, `${WHERE}: ${reason}`, {
    ...(cause === undefined ? {} : { cause }),
    details: { configMap: `${namespace}/${name}`, key, reason },
  });
}

function parse(text: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = loadYaml<unknown>(text);
  } catch (err) {
    throw bad(`not YAML (${(err as Error).message.split('\n')[0]})`, err);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc))
    throw bad(`not a YAML mapping (got ${JSON.stringify(String(doc)).slice(0, 60)})`);
  return doc as Record<string, unknown>;
}

/**
 * Pure: the mode the ConfigMap's KubeProxyConfiguration sets. Throws a PARSE
 * CniBenchError (details: configMap, key) when the key is missing, is not
 * YAML, is not a KubeProxyConfiguration, or names a mode kube-proxy rejects.
 */
export function kubeProxyModeOf(data: Readonly<Record<string, string>>): KubeProxyMode {
  const text = data[KUBE_PROXY_CONFIGMAP.key];
  if (text === undefined) throw bad(`missing (keys: ${Object.keys(data).sort().join(', ') || 'none'})`);
  const doc = parse(text);
  if (doc.kind !== 'KubeProxyConfiguration')
    throw bad(`kind is ${JSON.stringify(doc.kind ?? null)}, not KubeProxyConfiguration`);
  const mode = doc.mode ?? '';
  if (typeof mode !== 'string') throw bad(`mode is ${JSON.stringify(mode)}, not a string`);
  if (mode === '') return { mode: 'iptables', evidence: `${WHERE}: mode empty, kube-proxy's Linux default iptables` };
  if (!MODES.has(mode)) throw bad(`mode '${mode}' is not one kube-proxy accepts (${[...MODES].join(', ')})`);
  return { mode, evidence: `${WHERE}: mode ${mode}` };
}
