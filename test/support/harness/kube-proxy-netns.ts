/**
 * Throwaway network namespaces for running the real kube-proxy: named
 * cnibench-kp-<owner pid>-<random>, with lo up and an eth0 carrying the node's
 * IP (what a lab node has on its uplink; its veth peer is in the same
 * namespace), and nothing routed out.
 *
 * Nothing outlives the test process: delete() kills what runs inside and
 * removes the namespace; an exit hook does the same synchronously; and a
 * namespace whose owner pid is gone (SIGKILLed test) is removed by the next
 * create.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { run } from '../../../core/process.js';
import { deleteNamespaces, listNamespaces } from '../../../lab/netns.js';
import { alive } from './leftovers.js';

export const KP_NETNS_PREFIX = 'cnibench-kp-';
const OWNED = /^cnibench-kp-(\d+)-[0-9a-f]+$/;

export interface ThrowawayNetns {
  readonly name: string;
  /** The IP on its eth0 (the Node object's InternalIP). */
  readonly nodeIp: string;
  delete(): Promise<void>;
}

const live = new Set<string>();
let hookInstalled = false;

/** Synchronous last resort on exit: kill what runs in our namespaces and delete them. */
function deleteSync(name: string): void {
  try {
    const pids = execFileSync('ip', ['netns', 'pids', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    for (const pid of pids
      .split('\n')
      .map(Number)
      .filter((n) => n > 0))
      process.kill(pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
  try {
    execFileSync('ip', ['netns', 'delete', name], { stdio: 'ignore' });
  } catch {
    // Gone already.
  }
}

/** Removes cnibench-kp-* namespaces whose owning process is gone (or ours, no longer tracked). Returns how many. */
export async function removeLeftoverNetns(): Promise<number> {
  const stale = (await listNamespaces()).filter((ns) => {
    const owner = OWNED.exec(ns)?.[1];
    return owner !== undefined && !live.has(ns) && (Number(owner) === process.pid || !alive(Number(owner)));
  });
  await deleteNamespaces(stale);
  return stale.length;
}

export async function createThrowawayNetns(nodeIp = '198.18.0.1'): Promise<ThrowawayNetns> {
  await removeLeftoverNetns();
  const name = `${KP_NETNS_PREFIX}${process.pid}-${randomBytes(3).toString('hex')}`;
  if (!hookInstalled) {
    hookInstalled = true;
    process.on('exit', () => {
      for (const ns of live) deleteSync(ns);
    });
  }
  await run('ip', ['netns', 'add', name], { tool: 'ip', timeoutMs: 10_000 });
  live.add(name);
  const remove = async (): Promise<void> => {
    await deleteNamespaces([name]);
    live.delete(name);
  };
  try {
    // A veth pair with both ends inside (the kernel may lack the dummy driver), as a lab node's uplink.
    const lines = [
      'link set lo up',
      'link add eth0 type veth peer name eth0-peer',
      `addr add ${nodeIp}/24 dev eth0`,
      'link set eth0-peer up',
      'link set eth0 up',
    ];
    await run('ip', ['-n', name, '-batch', '-'], { input: `${lines.join('\n')}\n`, tool: 'ip', timeoutMs: 10_000 });
  } catch (err) {
    await remove();
    throw err;
  }
  return { name, nodeIp, delete: remove };
}
