/**
 * A backend pod cut off without notice: its veth's node end set down, so what
 * is sent to it vanishes (no RST, no ECONNREFUSED) while its process and its
 * endpoint stay, as when the link of the node it runs on goes down. Only the
 * pod's link goes: the lab's two backends share node 0, and the agents reach
 * the collector over a unix socket, so no control connection is cut. What
 * differs from a whole node gone: the pod's node still routes for it, so once
 * its neighbour entry for the pod fails (seconds to a minute) that node may
 * answer with ICMP host unreachable, as a client node on the same L2 segment
 * as a dead node would. The routes the node had through the veth (Cilium's
 * per-endpoint route) go with the link and are put back when it comes up.
 */
import { CniBenchError, ErrorCodes } from '../core/errors.js';
import { run } from '../core/process.js';
import type { ServiceEndpoint } from '../core/service-frontend.js';
import type { LabPlan } from './plan.js';

interface Cut {
  ns: string;
  hostIf: string;
  routes: string[][];
}

/** Pure: each route of `ip -o route show dev X` as the arguments `ip route replace` takes back (the dev added by the caller). */
export function routesToRestore(stdout: string): string[][] {
  return stdout
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => l.split(/\s+/).filter((t) => t !== 'linkdown' && t !== 'dead'));
}

function ip(args: string[]): Promise<{ stdout: string }> {
  return run('ip', args, { tool: 'ip', timeoutMs: 10_000 });
}

export class PodLinks {
  private readonly cuts: Cut[] = [];

  constructor(private readonly plan: LabPlan) {}

  /** Sets the node end of the pod at `endpoint.ip` down; resolves with what it did. */
  async cut(endpoint: ServiceEndpoint): Promise<Record<string, unknown>> {
    for (const node of this.plan.nodes) {
      const pod = node.pods.find((p) => p.ip === endpoint.ip);
      if (!pod) continue;
      const r = await ip(['-n', node.ns, '-o', 'route', 'show', 'dev', pod.hostIf]);
      const cut: Cut = { ns: node.ns, hostIf: pod.hostIf, routes: routesToRestore(r.stdout) };
      this.cuts.push(cut);
      await ip(['-n', node.ns, 'link', 'set', 'dev', pod.hostIf, 'down']);
      return {
        linkDown: `${pod.hostIf} on ${node.name} (the node end of pod ${endpoint.ip}'s veth)`,
        serverRunning: true,
        endpointKept: true,
        routesToRestore: cut.routes.length,
      };
    }
    throw new CniBenchError(ErrorCodes.NOT_FOUND, `lab: no pod with address ${endpoint.ip}`);
  }

  /** Every cut link up again with its routes; never throws (the namespaces may be gone), returns what failed. */
  async restoreAll(): Promise<string[]> {
    const failed: string[] = [];
    for (const c of this.cuts.splice(0)) {
      try {
        await ip(['-n', c.ns, 'link', 'set', 'dev', c.hostIf, 'up']);
        for (const route of c.routes) await ip(['-n', c.ns, 'route', 'replace', ...route, 'dev', c.hostIf]);
      } catch (err) {
        failed.push(`${c.hostIf} in ${c.ns}: ${(err as Error).message}`);
      }
    }
    return failed;
  }
}
