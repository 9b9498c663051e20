/**
 * Every Kubernetes API call the collector makes, as data: which verb on which
 * resource in which namespace, and which chart toggle turns it off. The Helm
 * chart's RBAC grants exactly these, and test/integration/k8s-chart.test.ts asks
 * the real apiserver's authorizer about each one (and about what must stay
 * refused). Keep this list in step with frontend.ts, inventory.ts,
 * cilium-config.ts, conditions.ts, cluster-describer.ts and dataplane-restart.ts: a call missing here is a call the
 * chart does not grant.
 */

/** Where a call goes: the collector's namespace, the sweep namespace, Cilium's namespace, kube-system, the dataplane agents' namespace (kube-system by default), or cluster-wide. */
export type Scope = 'own' | 'sweep' | 'cilium' | 'kube-system' | 'dataplane' | 'cluster';

export interface ApiCall {
  verb: 'get' | 'list' | 'watch' | 'create' | 'delete' | 'deletecollection' | 'patch' | 'update';
  group: string;
  resource: string;
  scope: Scope;
  name?: string;
  /** The values toggle that removes the need (and the grant), when there is one. */
  toggle?:
    | 'rbac.scaleSweep.enabled'
    | 'rbac.ciliumConfig.read'
    | 'rbac.ciliumConfig.write'
    | 'rbac.networkPolicy.enabled'
    | 'rbac.ciliumNetworkPolicy.enabled'
    | 'rbac.clusterDescription.read'
    | 'rbac.dataplaneRestart.enabled';
  /** Where in the collector it happens. */
  by: string;
}

const call = (
  verb: ApiCall['verb'],
  group: string,
  resource: string,
  scope: Scope,
  by: string,
  extra: Partial<ApiCall> = {},
): ApiCall => ({ verb, group, resource, scope, by, ...extra });

export const COLLECTOR_API_CALLS: readonly ApiCall[] = Object.freeze([
  call(
    'list',
    '',
    'nodes',
    'cluster',
    'inventory: node summary and coverage; cluster-describer: CNI annotations, nodeInfo',
  ),
  call('get', '', 'nodes', 'cluster', 'inventory'),
  call('watch', '', 'nodes', 'cluster', 'inventory'),
  call(
    'create',
    'authentication.k8s.io',
    'tokenreviews',
    'cluster',
    "auth/token-review: each agent's pod-bound token and its node",
  ),
  call('list', '', 'pods', 'own', 'inventory: agent pods'),
  call('watch', '', 'pods', 'own', 'inventory: agent pod informer'),
  call('get', '', 'pods', 'own', 'inventory'),
  ...(['own', 'sweep'] as const).flatMap((scope) => {
    const toggle = scope === 'sweep' ? { toggle: 'rbac.scaleSweep.enabled' as const } : {};
    const by = scope === 'own' ? "frontend: the run's fronting Service" : 'frontend: scale sweep dummies';
    return [
      call('create', '', 'services', scope, by, toggle),
      call('delete', '', 'services', scope, by, toggle),
      call('list', '', 'services', scope, `${by} (cleanup by label)`, toggle),
      call('deletecollection', '', 'services', scope, `${by} (cleanup by label)`, toggle),
      call('create', 'discovery.k8s.io', 'endpointslices', scope, by, toggle),
      call('delete', 'discovery.k8s.io', 'endpointslices', scope, by, toggle),
      call('list', 'discovery.k8s.io', 'endpointslices', scope, `${by} (cleanup by label)`, toggle),
      call('deletecollection', 'discovery.k8s.io', 'endpointslices', scope, `${by} (cleanup by label)`, toggle),
    ];
  }),
  call(
    'update',
    'discovery.k8s.io',
    'endpointslices',
    'own',
    "disruption phase: endpoint-removed (the run Service's slice)",
  ),
  call('get', '', 'configmaps', 'cilium', "cilium-config: bpf-lb-map-max preflight; cluster-describer: Cilium's mode", {
    name: 'cilium-config',
    toggle: 'rbac.ciliumConfig.read',
  }),
  call('get', '', 'configmaps', 'kube-system', "cluster-describer: kube-proxy's mode from kubeadm's ConfigMap", {
    name: 'kube-proxy',
    toggle: 'rbac.clusterDescription.read',
  }),
  call('patch', '', 'configmaps', 'cilium', 'cilium-config: raise and revert bpf-lb-map-max when allowed', {
    name: 'cilium-config',
    toggle: 'rbac.ciliumConfig.write',
  }),
  call('patch', 'apps', 'daemonsets', 'cilium', 'cilium-config: rollout restart of Cilium after a raise or revert', {
    name: 'cilium',
    toggle: 'rbac.ciliumConfig.write',
  }),
  call('get', 'apps', 'daemonsets', 'cilium', 'cilium-config: rollout status of Cilium after a restart', {
    name: 'cilium',
    toggle: 'rbac.ciliumConfig.write',
  }),
  call('create', 'networking.k8s.io', 'networkpolicies', 'own', "conditions: a policy condition's NetworkPolicies", {
    toggle: 'rbac.networkPolicy.enabled',
  }),
  call('delete', 'networking.k8s.io', 'networkpolicies', 'own', 'conditions: revert, cleanup and start-up leftovers', {
    toggle: 'rbac.networkPolicy.enabled',
  }),
  call('list', 'networking.k8s.io', 'networkpolicies', 'own', "conditions: the run's policies by label", {
    toggle: 'rbac.networkPolicy.enabled',
  }),
  call('create', 'cilium.io', 'ciliumnetworkpolicies', 'own', "conditions: an l7Policy condition's HTTP rule", {
    toggle: 'rbac.ciliumNetworkPolicy.enabled',
  }),
  call('delete', 'cilium.io', 'ciliumnetworkpolicies', 'own', 'conditions: revert, cleanup and start-up leftovers', {
    toggle: 'rbac.ciliumNetworkPolicy.enabled',
  }),
  call('list', 'cilium.io', 'ciliumnetworkpolicies', 'own', "conditions: the run's L7 rule by label", {
    toggle: 'rbac.ciliumNetworkPolicy.enabled',
  }),
  // Also granted with rbac.ciliumNetworkPolicy.enabled alone. Narrowed by the chart's ValidatingAdmissionPolicy to adding or removing cni-bench.io/policy-role on agent pods.
  call('patch', '', 'pods', 'own', "conditions: the policy role label on the run's agent pods", {
    toggle: 'rbac.networkPolicy.enabled',
  }),
  // No name: DaemonSet pod names are generated, so the grant covers every pod in that namespace.
  call(
    'list',
    '',
    'pods',
    'dataplane',
    "dataplane-restart: the client node's kube-proxy or cilium-agent pod, then its new pod",
    {
      toggle: 'rbac.dataplaneRestart.enabled',
    },
  ),
  call('delete', '', 'pods', 'dataplane', 'dataplane-restart: that pod, for its DaemonSet to recreate', {
    toggle: 'rbac.dataplaneRestart.enabled',
  }),
]);
