/**
 * The lab most lab suites run: two nodes (each on a core of its own where the
 * machine has two), kube-proxy's iptables rules on the legacy backend, a store
 * in the test's folder, and agents given 30 s to register on a loaded machine.
 */
export function iptablesLab(dbPath: string) {
  return { nodes: 2, proxy: { mode: 'iptables', iptablesBackend: 'legacy' }, dbPath, agentWaitMs: 30_000 } as const;
}
