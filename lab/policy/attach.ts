/**
 * Gives a lab's service frontend its ConditionDriver: on Cilium the agents
 * enforce NetworkPolicy from the lab's own apiserver; on iptables and nftables
 * labs only when asked (`policyEnforcer`), since that starts a control plane
 * and kube-router in every node. Returns what must be stopped with the lab.
 */
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import { CiliumLab } from '../cilium/dataplane.js';
import { CILIUM_VERSION, TOOLS_DIR } from '../k8s/tools.js';
import type { LabPlan } from '../plan.js';
import type { LabProxy } from '../proxy.js';
import { isKubeProxyMode } from '../proxy-kube-proxy.js';
import { LabConditions } from './conditions.js';
import { KUBE_ROUTER_VERSION, PolicyEnforcer } from './enforcer.js';

export async function attachConditions(
  plan: LabPlan,
  services: LabProxy,
  policyEnforcer: boolean,
  log: Logger,
): Promise<PolicyEnforcer | undefined> {
  const frontend: LabProxy = services;
  if (services instanceof CiliumLab) {
    const cp = services.controlPlane;
    if (!cp) return undefined;
    const kc = new KubeConfig();
    kc.loadFromFile(cp.adminKubeconfig);
    frontend.conditions = new LabConditions({
      kc,
      core: kc.makeApiClient(CoreV1Api),
      plan,
      enforcer: `Cilium ${CILIUM_VERSION} (eBPF)`,
      cilium: true,
      ciliumDir: `${TOOLS_DIR}/cilium-${CILIUM_VERSION}`,
      ciliumAgents: () => services.ciliumAgents,
      restartCilium: (signal) => services.restartAgents(signal),
      enforcerPids: () => services.ciliumAgents.map((a) => a.pid),
      log,
    });
    return undefined;
  }
  if (!policyEnforcer || services.mode === 'external') return undefined;
  if (isKubeProxyMode(services.mode))
    throw new CniBenchError(
      ErrorCodes.VALIDATION,
      `policyEnforcer: not available on the '${services.mode}' dataplane yet (its enforcer would start a second control plane beside the lab's own); use --dataplane iptables or nftables`,
      { details: { field: 'policyEnforcer' } },
    );
  const e = await PolicyEnforcer.start(plan, log);
  services.conditions = new LabConditions({
    kc: e.kc,
    core: e.core,
    plan,
    enforcer: `kube-router ${KUBE_ROUTER_VERSION} policy controller (iptables + ipset)`,
    cilium: false,
    enforcerPids: () => e.pids,
    log,
  });
  return e;
}
