/**
 * Overhead conditions: a named change to the dataplane (NetworkPolicy objects,
 * Hubble, L7 policy, encryption) that a run applies, verifies in the dataplane,
 * measures under and reverts. The orchestrator only sees this interface; the
 * lab implements it against its own apiserver and nodes (lab/policy/), a
 * cluster collector against the cluster. A condition counts only once
 * verified: apply() throws (a CniBenchError with the reason) when it cannot
 * show the condition in force, and revert() when it cannot show it gone.
 */

import type { HubbleReading } from '../gen/cnibench/v1/agent.js';
import type { ProbeEnd, Prober } from './policy-verify.js';

export const CONDITION_KINDS = ['networkPolicy', 'policyCount', 'l7Policy', 'hubble', 'encryption'] as const;
export type ConditionKind = (typeof CONDITION_KINDS)[number];

/** One condition to put in place: `policies` for the NetworkPolicy kinds, `urlPath` (allowed by the L7 rule) for l7Policy. */
export interface ConditionRequest {
  kind: ConditionKind;
  policies?: number;
  urlPath?: string;
}

/** Who is measured: the server's pod and the pods allowed to reach it (the run's clients). */
export interface ConditionTarget {
  runId: string;
  serverPodIp: string;
  clientPodIps: string[];
  /** Probes through the run's agents, given by the orchestrator (a cluster collector verifies with these). */
  probes?: ConditionProbes;
}

/**
 * Verification through the agents: a TCP listener on the server's agent, TCP
 * connects from any agent. `allowed` are the run's clients; `others` the
 * connected agents that are neither server nor client (the denied end).
 */
export interface ConditionProbes {
  allowed: ProbeEnd[];
  others: ProbeEnd[];
  /** Starts a listener that accepts and closes on `port` in the server agent's pod; stop() ends it. */
  listen(port: number, signal?: AbortSignal): Promise<{ stop(): Promise<void> }>;
  probe: Prober;
  /**
   * Every connected agent's Hubble reading of its node (state from its
   * cilium-agent, the observer's counters, and the last `flows` flows to
   * `flowsTo`); `reading` undefined when the agent did not answer in time.
   */
  hubble?(flowsTo: string, flows: number): Promise<NodeHubble[]>;
  /** Starts the built-in HTTP server (2xx on every path but /missing) on `port` in the server agent's pod (L7 checks). */
  listenHttp?(port: number, signal?: AbortSignal): Promise<{ stop(): Promise<void> }>;
  /** GET http://ip:port<path> from `from` for about `seconds`: what came back (L7 checks). */
  httpGet?(from: ProbeEnd, ip: string, port: number, path: string, seconds: number): Promise<HttpProbeResult>;
}

export interface NodeHubble {
  /** The agent's pod (or id), as verification sentences name it. */
  agent: string;
  /** The run's server agent: its observer is the one that must see the clients' flows. */
  server: boolean;
  reading: HubbleReading | undefined;
}

/** What HTTP GETs from an agent got: answers, how many were not 2xx, or why none came. */
export interface HttpProbeResult {
  answered: number;
  non2xx: number;
  /** Why no answer came (the client's error), when answered is 0. */
  error?: string;
}

/** What showed the condition in force (or gone), recorded in the phase. */
export interface ConditionEvidence {
  /** One sentence: how the dataplane showed it. */
  how: string;
  /** Created (or deleted) until the dataplane showed it, where that is observable (policy kinds). */
  enforcementMs?: number;
  /** Wall time of the API calls that made (or removed) it. */
  apiMs?: number;
  facts: Record<string, number | string | boolean>;
}

export interface ConditionDriver {
  readonly description: string;
  /** Puts the condition in place and verifies it in the dataplane; throws with the reason when it cannot. */
  apply(req: ConditionRequest, target: ConditionTarget, signal: AbortSignal): Promise<ConditionEvidence>;
  /** Removes what apply() made (also after a failed apply) and verifies it is gone; throws when it cannot. */
  revert(req: ConditionRequest, target: ConditionTarget): Promise<ConditionEvidence>;
}

/** Short label of a condition, as phase names and report tables show it. */
export function conditionLabel(req: ConditionRequest): string {
  switch (req.kind) {
    case 'networkPolicy':
      return `networkPolicy x${req.policies ?? 1}`;
    case 'policyCount':
      return `${(req.policies ?? 0).toLocaleString('en-US')} policies`;
    case 'l7Policy':
      return `l7Policy GET ${req.urlPath ?? '/'}`;
    default:
      return req.kind;
  }
}
