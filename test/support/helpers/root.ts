/** Lab tests need root (network namespaces, iptables); elsewhere they are skipped with the reason. */
export const notRoot: string | false =
  process.getuid?.() === 0 ? false : 'lab tests need root (network namespaces and iptables)';
