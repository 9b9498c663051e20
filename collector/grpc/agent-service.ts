/**
 * The collector's AgentService: Register and the Session stream. It never binds
 * a port; main adds it to a server. Every sequenced message is stored before it
 * is acknowledged, so an agent only forgets what the collector has kept.
 */
import type { Server, ServerDuplexStream, sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js';
import type { Logger } from '../../core/log.js';
import {
  AgentServiceService,
  type AgentMessage,
  type CollectorMessage,
  type MonitorReport,
  type RegisterRequest,
  type RegisterResponse,
} from '../../gen/cnibench/v1/agent.js';
import type { AgentRegistry } from '../agents/registry.js';
import type { CollectorMetrics } from '../metrics.js';
import type { JobTracker } from '../runs/job-tracker.js';

export interface AgentServiceDeps {
  registry: AgentRegistry;
  tracker: JobTracker;
  metrics: CollectorMetrics;
  log: Logger;
  heartbeatIntervalMs: number;
  /** Whether a run is executing in this collector; agents' jobs of other runs are cancelled. */
  isRunActive: (runId: string) => boolean;
  /** Monitoring reports go to the monitor coordinator; they are acknowledged, not stored. */
  onMonitorReport?: (agentId: string, report: MonitorReport) => void;
}

export class AgentServiceImpl {
  constructor(private readonly deps: AgentServiceDeps) {}

  addToServer(server: Server): void {
    server.addService(AgentServiceService, {
      register: (call: ServerUnaryCall<RegisterRequest, RegisterResponse>, cb: sendUnaryData<RegisterResponse>) => this.register(call, cb),
      session: (call: ServerDuplexStream<AgentMessage, CollectorMessage>) => this.session(call),
    });
  }

  private register(call: ServerUnaryCall<RegisterRequest, RegisterResponse>, cb: sendUnaryData<RegisterResponse>): void {
    const req = call.request;
    if (!req.nodeName) {
      cb({ code: 3, details: 'node_name: required' });
      return;
    }
    const entry = this.deps.registry.register(req);
    this.deps.log.info('agent registered', { agent: entry.id, podIp: req.podIp, instance: req.instanceId });
    cb(null, { agentId: entry.id, heartbeatIntervalMs: this.deps.heartbeatIntervalMs, lastAckedSeq: entry.lastSeq });
  }

  private session(call: ServerDuplexStream<AgentMessage, CollectorMessage>): void {
    const { registry, tracker, metrics, log } = this.deps;
    let agentId: string | undefined;
    const send = (m: CollectorMessage): void => {
      call.write(m);
    };
    call.on('data', (msg: AgentMessage) => {
      const body = msg.body;
      if (!body) return;
      if (body.$case === 'hello') {
        agentId = body.value.agentId;
        try {
          registry.attach(agentId, send);
        } catch (err) {
          log.warn('session from unregistered agent', { agent: agentId, error: (err as Error).message });
          call.end();
          return;
        }
        for (const runId of body.value.activeRunIds) {
          if (!this.deps.isRunActive(runId)) send({ body: { $case: 'job', value: { jobId: `cancel-${runId}`, runId, kind: { $case: 'cancel', value: { jobId: '', runId } } } } });
        }
        return;
      }
      if (!agentId) return;
      registry.touch(agentId, body.$case === 'heartbeat' ? body.value : undefined);
      if (msg.seq === 0) return;
      const fresh = registry.accept(agentId, msg.seq);
      metrics.agentMessage(body.$case, !fresh);
      try {
        if (fresh && body.$case === 'monitorReport') this.deps.onMonitorReport?.(agentId, body.value);
        else if (fresh) tracker.onMessage(agentId, msg);
      } catch (err) {
        // Not acknowledged: the agent keeps it and resends on its next session.
        log.error('cannot store agent message', { agent: agentId, seq: msg.seq, error: (err as Error).message });
        call.end();
        return;
      }
      send({ body: { $case: 'ack', value: { seq: registry.lastSeq(agentId) } } });
    });
    const close = (): void => {
      if (agentId) registry.detach(agentId, send);
    };
    call.on('end', () => {
      close();
      call.end();
    });
    call.on('error', close);
    call.on('cancelled', close);
  }
}
