/**
 * The lab's public entry: what the CLI and the benchmarks may use of the lab.
 * A Lab (namespaces, kube-proxy rules, agents), the sessions that run a
 * collector against one, the cleanup of killed labs, and the kube-proxy rule
 * renderers the nftables benchmark times. Everything else in lab/ is private
 * to it (test/unit/boundaries.test.ts holds every other folder to that).
 */

export { CILIUM_DATAPLANES, type CiliumDataplane } from './cilium/config.js';
export { removeLeftovers } from './cleanup.js';
export { onNodeCpus } from './cpu-sets.js';
export { dummyClusterIp, dummyRange } from './dummy-services.js';
export { renderNftBase, renderNftServicesAdd } from './kube-proxy-nftables.js';
export { Lab, type LabMonitorOptions, type LabOptions } from './lab.js';
export { type MonitorLab, type MonitorLabOptions, startMonitorLab } from './monitor-session.js';
export type { LabNode } from './plan.js';
export {
  dataplaneProxy,
  LAB_DATAPLANES,
  type LabDataplane,
  type LabProxyOptions,
  PROXY_MODES,
  type ProxyMode,
} from './proxy.js';
export type { IptablesBackend } from './proxy-iptables.js';
export { isKubeProxyMode, KUBE_PROXY_DATAPLANES, type KubeProxyDataplane } from './proxy-kube-proxy.js';
export { type LabSessionOptions, runInLab, runScenariosInLab } from './session.js';
export { lbMapMaxFor } from './sweep-plan.js';
