/**
 * The cluster's l7Policy condition (rbac.ciliumNetworkPolicy.enabled): one
 * labelled CiliumNetworkPolicy (l7-objects.ts) with an HTTP rule on the pod in
 * the server role, verified through the agents, never assumed: the built-in
 * HTTP server in the server's pod answers 2xx on every path, so the rule is in
 * force only when a client's GET on the measured path gets 2xx and its GET on
 * another path gets a non-2xx (Cilium's proxy answers 403). Where the cluster
 * has no working proxy (no Envoy, or enable-l7-proxy=false) that never
 * happens, and the phase fails with what the probes saw and what cilium-config
 * says. Revert deletes by the run's label and is verified by the denied path
 * answering 2xx again.
 */
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import type { ConditionEvidence, ConditionProbes, ConditionTarget, HttpProbeResult } from '../../core/conditions.js';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { ProbeEnd } from '../../core/policy-verify.js';
import { CNP, deniedPath, L7_PROBE_PORT, l7Policy, l7Ports, l7Selector } from './l7-objects.js';
import { deleteListed, type Pacer, statusOf } from './pacer.js';

/** How long the rule may take to be enforced (or gone) before the condition fails. */
const L7_DEADLINE_MS = 60_000;
/** Each check sends GETs for this long from one client. */
const GET_SECONDS = 1;

/** Pure: one probe's answer as a phrase. */
export function describeGet(r: HttpProbeResult): string {
  if (!r.answered) return `no answer (${r.error ?? 'unknown'})`;
  return r.non2xx === 0 ? `${r.answered} answers, all 2xx` : `${r.non2xx} of ${r.answered} answers not 2xx`;
}

/** Pure: the rule is in force when the allowed path answers 2xx only and the denied one never does. */
export function l7Enforced(allowed: HttpProbeResult, denied: HttpProbeResult): boolean {
  return allowed.answered > 0 && allowed.non2xx === 0 && denied.answered > 0 && denied.non2xx === denied.answered;
}

/** Pure: no rule in the way: both paths answer 2xx only. */
export function l7Open(allowed: HttpProbeResult, denied: HttpProbeResult): boolean {
  return [allowed, denied].every((r) => r.answered > 0 && r.non2xx === 0);
}

interface Ends {
  probes: Required<Pick<ConditionProbes, 'listenHttp' | 'httpGet'>>;
  client: ProbeEnd;
  serverIp: string;
}

export class ClusterL7 {
  private readonly api: CustomObjectsApi;

  constructor(
    kc: KubeConfig,
    private readonly pacer: Pacer,
    private readonly namespace: string,
    private readonly agents: Record<string, string>,
  ) {
    this.api = kc.makeApiClient(CustomObjectsApi);
  }

  /**
   * Creates the run's rule (the role labels already on the pods) and verifies it;
   * `config` is cilium-config's data, quoted when the rule cannot be verified.
   */
  async apply(
    urlPath: string,
    target: ConditionTarget,
    config: Record<string, string>,
    signal: AbortSignal,
  ): Promise<ConditionEvidence> {
    const ends = this.ends(target);
    const allowedPath = urlPath.startsWith('/') ? urlPath : `/${urlPath}`;
    const denied = deniedPath(allowedPath);
    const server = await ends.probes.listenHttp(L7_PROBE_PORT, signal);
    try {
      const get = (path: string) => ends.probes.httpGet(ends.client, ends.serverIp, L7_PROBE_PORT, path, GET_SECONDS);
      const before = await Promise.all([get(allowedPath), get(denied)]);
      if (!l7Open(...before))
        throw new CniBenchError(
          ErrorCodes.VALIDATION,
          `l7Policy: before the rule, GET ${allowedPath} from ${ends.client.name} got ${describeGet(before[0])} and GET ${denied} got ${describeGet(before[1])}; both must answer 2xx for the check to mean anything`,
        );
      await this.deleteBy(l7Selector(target.runId));
      const began = Date.now();
      const body = l7Policy(this.namespace, target.runId, this.agents, allowedPath);
      await this.pacer.run(`create ciliumnetworkpolicy ${this.namespace}/${body.metadata.name}`, () =>
        this.api.createNamespacedCustomObject({ ...CNP, namespace: this.namespace, body }),
      );
      const apiMs = Date.now() - began;
      let last = before;
      let polls = 0;
      while (Date.now() - began < L7_DEADLINE_MS) {
        if (signal.aborted) throw new CniBenchError(ErrorCodes.CANCELLED, 'cancelled while verifying an L7 rule');
        polls++;
        last = await Promise.all([get(allowedPath), get(denied)]);
        if (l7Enforced(...last))
          return {
            how: `CiliumNetworkPolicy ${body.metadata.name} allows GET ${allowedPath} on ports ${l7Ports().join(', ')}: from ${ends.client.name}, GET ${allowedPath} got ${describeGet(last[0])}, GET ${denied} got ${describeGet(last[1])} (the server answers 2xx on every path: the proxy refused it)`,
            enforcementMs: Date.now() - began,
            apiMs,
            facts: { polls, allowedPath, deniedPath: denied, deniedNon2xx: last[1].non2xx },
          };
      }
      const proxy = config['enable-l7-proxy'] ?? '(unset: on)';
      throw new CniBenchError(
        ErrorCodes.VALIDATION,
        `l7Policy: HTTP rule not enforced ${L7_DEADLINE_MS / 1000} s after the CiliumNetworkPolicy was created: from ${ends.client.name}, GET ${denied} got ${describeGet(last[1])} and GET ${allowedPath} got ${describeGet(last[0])}; a denied path must get the proxy's 403 and the allowed one 2xx. cilium-config has enable-l7-proxy=${proxy}${proxy === 'false' ? ": Cilium's Envoy proxy is off, so no HTTP rule can be enforced" : ''}`,
      );
    } finally {
      await server.stop();
    }
  }

  /** Deletes the run's rule and verifies the denied path answers 2xx again. */
  async revert(urlPath: string, target: ConditionTarget, unlabel: () => Promise<number>): Promise<ConditionEvidence> {
    const began = Date.now();
    const deleted = await this.deleteBy(l7Selector(target.runId));
    const unlabelled = await unlabel();
    const apiMs = Date.now() - began;
    const ends = this.ends(target);
    const allowedPath = urlPath.startsWith('/') ? urlPath : `/${urlPath}`;
    const denied = deniedPath(allowedPath);
    const server = await ends.probes.listenHttp(L7_PROBE_PORT);
    try {
      const get = (path: string) => ends.probes.httpGet(ends.client, ends.serverIp, L7_PROBE_PORT, path, GET_SECONDS);
      let last: HttpProbeResult[] = [];
      while (Date.now() - began < L7_DEADLINE_MS) {
        last = await Promise.all([get(allowedPath), get(denied)]);
        if (l7Open(last[0] as HttpProbeResult, last[1] as HttpProbeResult))
          return {
            how: `${deleted} CiliumNetworkPolicy deleted by the run's label and the role label taken off ${unlabelled} pods; GET ${denied} from ${ends.client.name} answers 2xx again`,
            enforcementMs: Date.now() - began,
            apiMs,
            facts: { deleted, unlabelled },
          };
      }
      throw new CniBenchError(
        ErrorCodes.VALIDATION,
        `l7Policy revert: ${L7_DEADLINE_MS / 1000} s after the rule was deleted, GET ${denied} from ${ends.client.name} got ${last[1] ? describeGet(last[1]) : 'nothing'}`,
      );
    } finally {
      await server.stop();
    }
  }

  /** Deletes the L7 rules `selector` matches; returns how many there were (0 when the cluster has no such API). */
  async deleteBy(labelSelector: string): Promise<number> {
    const namespace = this.namespace;
    // A 404 inside the call (the pacer wraps statuses): the cluster has no CiliumNetworkPolicy API, so nothing to delete.
    const list = (await this.pacer.run(`list ciliumnetworkpolicies ${namespace}`, () =>
      this.api.listNamespacedCustomObject({ ...CNP, namespace, labelSelector }).catch((err: unknown) => {
        if (statusOf(err).status === 404) return { items: [] };
        throw err;
      }),
    )) as { items?: { metadata?: { name?: string } }[] };
    return deleteListed(
      this.pacer,
      `ciliumnetworkpolicy ${namespace}`,
      (list.items ?? []).map((p) => p.metadata?.name ?? ''),
      (name) => this.api.deleteNamespacedCustomObject({ ...CNP, namespace, name }),
    );
  }

  private ends(target: ConditionTarget): Ends {
    const p = target.probes;
    if (!p?.listenHttp || !p.httpGet)
      throw new CniBenchError(ErrorCodes.INTERNAL, 'an L7 condition needs HTTP probes through the agents');
    const client = p.allowed[0];
    if (!client)
      throw new CniBenchError(ErrorCodes.VALIDATION, 'the run has no client agent to verify an L7 rule with');
    return {
      probes: { listenHttp: p.listenHttp.bind(p), httpGet: p.httpGet.bind(p) },
      client,
      serverIp: target.serverPodIp,
    };
  }
}
