/**
 * Whether one pod can open a TCP connection to another: the verification of
 * every policy condition. The probe is bash's /dev/tcp connect inside the
 * client pod's namespace under `timeout` (a constant script; the address and
 * port are arguments), and the far end a listener the lab starts in the server
 * pod's namespace that accepts and closes. A policy drop shows as a timeout,
 * a reject as "refused"; both are "blocked".
 */
import type { ProbeOutcome } from '../../core/policy-verify.js';
import { type LongRunning, run, spawnLongRunning } from '../../core/process.js';

export type { ProbeOutcome };

/** The port the lab's verification listener binds in the server pod (policies do not restrict ports). */
export const PROBE_PORT = 39_099;

export function probeArgv(podNs: string, ip: string, port: number, timeoutMs: number): string[] {
  return [
    'netns',
    'exec',
    podNs,
    'timeout',
    (timeoutMs / 1000).toFixed(3),
    'bash',
    '-c',
    'exec 3<>"/dev/tcp/$0/$1"',
    ip,
    String(port),
  ];
}

/** Pure: the outcome from the probe's exit code (timeout's 124 on expiry) and bash's message. */
export function classifyProbe(exitCode: number, stderr: string): ProbeOutcome {
  if (exitCode === 0) return 'connected';
  if (exitCode === 124) return 'timeout';
  if (/Connection refused/i.test(stderr)) return 'refused';
  if (/No route to host|Network is unreachable|Permission denied|Operation not permitted/i.test(stderr))
    return 'unreachable';
  return 'timeout';
}

export async function probe(podNs: string, ip: string, port: number, timeoutMs: number): Promise<ProbeOutcome> {
  const r = await run('ip', probeArgv(podNs, ip, port, timeoutMs), {
    tool: 'tcp-probe',
    okExitCodes: [0, 1, 124],
    timeoutMs: timeoutMs + 10_000,
  });
  return classifyProbe(r.exitCode, r.stderr);
}

const LISTENER =
  "const s=require('node:net').createServer((c)=>c.end());s.listen(Number(process.argv[1]),'0.0.0.0',()=>console.log('listening'))";

/** A listener that accepts and closes, in the server pod's namespace, until stopped. */
export async function startListener(podNs: string, port: number): Promise<LongRunning> {
  const l = spawnLongRunning('ip', ['netns', 'exec', podNs, process.execPath, '-e', LISTENER, String(port)], {
    tool: 'probe-listener',
  });
  // Up once it connects from inside its own namespace.
  for (let i = 0; i < 100; i++) {
    if ((await probe(podNs, '127.0.0.1', port, 1000)) === 'connected') return l;
    await new Promise((r) => setTimeout(r, 50));
  }
  await l.stop();
  throw new Error(`the verification listener in ${podNs} did not start on port ${port}`);
}
