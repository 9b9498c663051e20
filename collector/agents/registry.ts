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
  lastSeq: number;
  lastSeenMs: number;
  connected: boolean;
  lost: boolean;
  outboxDropped: number;
  send: ((m: CollectorMessage) => void) | undefined;
}

export class AgentRegistry extends EventEmitter<{ lost: [agentId: string]; registered: [agentId: string]; attached: [agentId: string]; detached: [agentId: string] }> {
  private readonly agents = new Map<string, AgentEntry>();

  constructor(
    private readonly metrics: CollectorMetrics,
    private readonly livenessTimeoutMs: number,
  ) {
    super();
  }

  /** Records (or refreshes) an agent; a new instance of the same node restarts sequence tracking. */
  register(req: RegisterRequest, now = Date.now()): AgentEntry {
    const id = req.agentName || req.nodeName;
    const prev = this.agents.get(id);
    const sameInstance = prev?.info.instanceId === req.instanceId;
    const entry: AgentEntry = {
      id,
      info: req,
      lastSeq: sameInstance && prev ? prev.lastSeq : 0,
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

  /** True when `seq` is new for this agent instance (and records it). */
  accept(id: string, seq: number): boolean {
    const a = this.agents.get(id);
    if (!a || seq <= a.lastSeq) return false;
    a.lastSeq = seq;
    return true;
  }

  lastSeq(id: string): number {
    return this.agents.get(id)?.lastSeq ?? 0;
  }

  send(id: string, m: CollectorMessage): void {
    const a = this.agents.get(id);
    if (!a?.send) throw new CniBenchError(ErrorCodes.AGENT_LOST, `agent '${id}' is not connected`, { details: { agent: id } });
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
    return lost;
  }

  private updateGauges(): void {
    const all = [...this.agents.values()];
    this.metrics.setAgents(all.filter((a) => a.connected).length, all.length);
  }
}
