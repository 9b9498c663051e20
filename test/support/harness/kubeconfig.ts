/** Moved to lab/k8s/kubeconfig.ts (the lab's control plane uses it too); the harness keeps this path. */
export * from '../../../lab/k8s/kubeconfig.js';
