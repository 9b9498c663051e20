/**
 * The Node/V8 flags the agent runs with (chart `agent.nodeFlags`, the plain
 * manifests, the lab and the host probe responder use these), chosen for
 * memory because an agent runs on every node, all the time, mostly idle:
 *
 * - `--max-semi-space-size=1` (MiB): the young generation stays about 3 MiB
 *   instead of growing towards V8's 16 MiB semi-spaces; the agent allocates
 *   little and steadily, so the extra scavenges cost nothing measurable.
 * - `--jitless`: no optimizing compilers, so no compiled code, compiler memory
 *   or the binary's compiler pages. The agent's hot paths are I/O and
 *   regular expressions (parsing iptables-save and nft output), which run
 *   at the same speed interpreted (a 55,000-line iptables-save parses in
 *   67 ms jitless against 71 ms with the JIT on this machine). It also turns
 *   off WebAssembly, which the agent does not use.
 * - `--no-enable-source-maps` (the image's entrypoint turns them on): about
 *   1 MiB of source maps held for stack traces; the agent's errors are coded
 *   and its compiled files map line for line to the TypeScript closely enough.
 *
 * Measured with `npm run bench:monitor-cost` (docs/findings/2026-12-05-monitor-cost.md). The load
 * generators the agent runs (wrk, iperf3, and the built-in Node clients and
 * servers) are child processes started without these flags: a measurement
 * tool keeps the JIT.
 */
export const AGENT_NODE_FLAGS: readonly string[] = Object.freeze([
  '--jitless',
  '--max-semi-space-size=1',
  '--no-enable-source-maps',
]);
