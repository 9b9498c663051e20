/** Lab tests need root (network namespaces, iptables); elsewhere they are skipped with the reason. */
export const notRoot: string | false =
  process.getuid?.() === 0 ? false : 'lab tests need root (network namespaces and iptables)';

/**
 * The long Cilium suites (a sweep to 6,000 Services on Cilium, the study, the LB-map raise with its agent
 * restarts) take 10-25 minutes on 2 cores, mostly in the apiserver writes Cilium's Services need; with them the
 * suite would pass CI's 90 minutes. They run with CNI_BENCH_LONG_TESTS=1 (`npm run test:long`), not in `npm test`.
 */
export const notLong: string | false =
  notRoot ||
  (process.env.CNI_BENCH_LONG_TESTS === '1'
    ? false
    : 'a long Cilium suite: it runs with CNI_BENCH_LONG_TESTS=1 (npm run test:long), outside npm test and CI');

/**
 * A suite whose verdict is a measured difference too small for a shared 2-core machine to give every time: it
 * runs with the long suites (CNI_BENCH_LONG_TESTS=1), on a machine whose nodes' CPUs nothing else uses.
 */
export const notQuietMachine: string | false =
  notRoot ||
  (process.env.CNI_BENCH_LONG_TESTS === '1'
    ? false
    : 'a measured verdict that needs a quiet machine: it runs with CNI_BENCH_LONG_TESTS=1 (npm run test:long), outside npm test and CI');
