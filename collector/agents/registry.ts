/**
 * The collector's view of its agents: what each registered, whether its session
 * is open, when it was last heard from, and the highest sequence number stored
 * for its current instance (for deduplication and acknowledgement). Agents that
 * stay silent past the liveness timeout are declared lost.
 */
import { EventEmitter } from 'node:events';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { CollectorMessage, Heartbeat, RegisterRequest } from '../../gen/cnibench/v1/agent.js';
import type { CollectorMetrics } from '../metrics.js';

export interface AgentEntry {
  id: string;
  info: RegisterRequest;
  /** Highest sequence number accepted (stored or on its way to the store). */
  lastSeq: number;
  /** Highest sequence number committed with everything before it: what the agent may forget. */
  ackedSeq: number;
  lastSeenMs: number;
  connected: boolean;
  lost: boolean;
  outboxDropped: number;
  send: ((m: CollectorMessage) => void) | undefined;
}

/**
 * Largest forward jump of a sequence number the collector accepts. An agent's
 * numbers only jump over what its outbox dropped, and the outbox holds at most
 * 10,000 messages by default (the agent refuses limits above SEQ_WINDOW).
 */
export const SEQ_WINDOW = 1_000_000;

export class AgentRegistry extends EventEmitter<{
  lost: [agentId: string];
  registered: [agentId: string];
  attached: [agentId: string];
  detached: [agentId: string];
}> {
  private readonly agents = new Map<string, AgentEntry>();

  constructor(
    private readonly metrics: CollectorMetrics,
    private readonly livenessTimeoutMs: number,
    private readonly maxAgents = 10_000,
    /** Lost agents are forgotten after this long (their metrics series too). */
    private readonly expireAfterMs = Math.max(600_000, livenessTimeoutMs * 10),
  ) {
    super();
  }

  /** Forgets agents lost for longer than expireAfterMs; returns how many. */
  expire(now = Date.now()): number {
    let n = 0;
    for (const a of [...this.agents.values()]) {
      if (a.lost && now - a.lastSeenMs > this.expireAfterMs) {
        this.agents.delete(a.id);
        this.metrics.agentForgotten(a.id);
        n++;
      }
    }
    if (n) this.updateGauges();
    return n;
  }

  /**
   * Records (or refreshes) an agent; a new instance of the same node restarts
   * sequence tracking. The caller has checked that the caller speaks for
   * `req.nodeName` (`verified`: by its own identity). An agent id stays bound
   * to the node that first registered it, and without identities a live
   * instance cannot be displaced by another (it must go silent first).
   */
  register(req: RegisterRequest, verified: boolean, now = Date.now()): AgentEntry {
    const id = req.agentName || req.nodeName;
    if (id !== req.nodeName && !id.startsWith(`${req.nodeName}-`)) {
      throw new CniBenchError(
        ErrorCodes.FORBIDDEN,
        `agent_name: must be the node name or start with '${req.nodeName.slice(0, 64)}-'`,
        { details: { field: 'agent_name' } },
      );
    }
    const prev = this.agents.get(id);
    if (prev && prev.info.nodeName !== req.nodeName) {
      throw new CniBenchError(ErrorCodes.FORBIDDEN, `agent_name: '${id.slice(0, 64)}' belongs to another node`, {
        details: { field: 'agent_name' },
      });
    }
    const sameInstance = prev?.info.instanceId === req.instanceId;
    if (
      prev &&
      !sameInstance &&
      !verified &&
      prev.connected &&
      !prev.lost &&
      now - prev.lastSeenMs <= this.livenessTimeoutMs
    ) {
      throw new CniBenchError(
        ErrorCodes.CONFLICT,
        `node_name: agent '${id.slice(0, 64)}' is connected as another instance; it must stop reporting first`,
        { details: { field: 'node_name' } },
      );
    }
    if (!prev && this.agents.size >= this.maxAgents) {
      this.expire(now);
      if (this.agents.size >= this.maxAgents)
        throw new CniBenchError(
          ErrorCodes.CONFLICT,
          `node_name: the registry holds ${this.maxAgents} agents, its maximum`,
          { details: { field: 'node_name' } },
        );
    }
    const entry: AgentEntry = {
      id,
      info: req,
      lastSeq: sameInstance && prev ? prev.lastSeq : 0,
      ackedSeq: sameInstance && prev ? prev.ackedSeq : 0,
      lastSeenMs: now,
      connected: prev?.connected ?? false,
      lost: false,
      outboxDropped: prev?.outboxDropped ?? 0,
      send: prev?.send,
    };
    this.agents.set(id, entry);
    this.updateGauges();
    this.emit('registered', id);
    return entry;
  }

  attach(id: string, send: (m: CollectorMessage) => void): AgentEntry {
    const a = this.agents.get(id);
    if (!a) throw new CniBenchError(ErrorCodes.NOT_FOUND, `agent '${id}' has not registered`);
    a.send = send;
    a.connected = true;
    a.lost = false;
    a.lastSeenMs = Date.now();
    this.updateGauges();
    this.emit('attached', id);
    return a;
  }

  /** Detaches only if `send` is still the current session (a newer one may have replaced it). */
  detach(id: string, send: (m: CollectorMessage) => void): void {
    const a = this.agents.get(id);
    if (!a || a.send !== send) return;
    a.send = undefined;
    a.connected = false;
    this.updateGauges();
    this.emit('detached', id);
  }

  touch(id: string, hb?: Heartbeat): void {
    const a = this.agents.get(id);
    if (!a) return;
    a.lastSeenMs = Date.now();
    if (hb) {
      a.outboxDropped = hb.outboxDropped;
      this.metrics.agentOutboxDropped(id, hb.outboxDropped);
    }
  }

  /**
   * 'new' when `seq` is new for this agent instance and within SEQ_WINDOW of
   * the last one (and records it), 'duplicate' when already held, 'out-of-window'
   * for a jump no agent makes (its outbox holds fewer): such a number is never
   * recorded, so it cannot make later genuine messages look old.
   */
  accept(id: string, seq: number): 'new' | 'duplicate' | 'out-of-window' {
    const a = this.agents.get(id);
    if (!a || seq <= a.lastSeq) return 'duplicate';
    if (seq - a.lastSeq > SEQ_WINDOW) return 'out-of-window';
    a.lastSeq = seq;
    return 'new';
  }

  lastSeq(id: string): number {
    return this.agents.get(id)?.lastSeq ?? 0;
  }

  /** `seq` and everything before it from instance `instanceId` has committed; returns the acknowledged position. */
  committed(id: string, instanceId: string, seq: number): number {
    const a = this.agents.get(id);
    if (!a || a.info.instanceId !== instanceId) return 0;
    if (seq > a.ackedSeq) a.ackedSeq = seq;
    return a.ackedSeq;
  }

  ackedSeq(id: string): number {
    return this.agents.get(id)?.ackedSeq ?? 0;
  }

  /**
   * A transaction failed: what was accepted but not committed becomes new again,
   * so the agent's resend is stored rather than taken for a duplicate.
   */
  rollback(id: string, instanceId: string): void {
    const a = this.agents.get(id);
    if (a && a.info.instanceId === instanceId) a.lastSeq = a.ackedSeq;
  }

  send(id: string, m: CollectorMessage): void {
    const a = this.agents.get(id);
    if (!a?.send)
      throw new CniBenchError(ErrorCodes.AGENT_LOST, `agent '${id}' is not connected`, { details: { agent: id } });
    a.send(m);
  }

  get(id: string): AgentEntry | undefined {
    return this.agents.get(id);
  }

  list(): AgentEntry[] {
    return [...this.agents.values()].sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Agents that can take jobs now. */
  available(): AgentEntry[] {
    return this.list().filter((a) => a.connected && !a.lost);
  }

  /**
   * The collector itself stood still (stopped, starved of CPU, its host
   * suspended): nobody could have been heard meanwhile, so every agent not yet
   * lost gets a fresh liveness timeout rather than being declared lost for the
   * collector's own silence. Agents that are really gone are declared lost one
   * timeout later.
   */
  collectorStalled(now = Date.now()): void {
    for (const a of this.agents.values()) if (!a.lost) a.lastSeenMs = Math.max(a.lastSeenMs, now);
  }

  /** Declares silent agents lost; returns their ids. */
  sweep(now = Date.now()): string[] {
    const lost: string[] = [];
    for (const a of this.agents.values()) {
      if (!a.lost && now - a.lastSeenMs > this.livenessTimeoutMs) {
        a.lost = true;
        a.connected = false;
        a.send = undefined;
        lost.push(a.id);
        this.metrics.agentLost();
        this.emit('lost', a.id);
      }
    }
    if (lost.length) this.updateGauges();
    this.expire(now);
    return lost;
  }

  private updateGauges(): void {
    const all = [...this.agents.values()];
    this.metrics.setAgents(all.filter((a) => a.connected).length, all.length);
  }
}
