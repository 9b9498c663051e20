/**
 * RunService over gRPC: the same RunsApi the REST server uses, translated to
 * protobuf messages, for operators only (call-auth.ts). Errors map through toWireStatus.
 */
import type { Server } from '@grpc/grpc-js';
import { type Run, RunServiceService } from '../../gen/cnibench/v1/run.js';
import type { Authenticator } from '../auth/principal.js';
import type { RunsApi, RunView } from '../runs/runs-api.js';
import { operatorUnary } from './call-auth.js';

export function toRunMessage(r: RunView): Run {
  return {
    id: r.id,
    state: r.state,
    reason: r.reason,
    createdMs: r.createdMs,
    startedMs: r.startedMs,
    endedMs: r.endedMs,
    scenarioJson: JSON.stringify(r.scenario),
    phases: r.phases.map((p) => ({
      index: p.index,
      name: p.name,
      state: p.state,
      error: p.error,
      startedMs: p.startedMs,
      endedMs: p.endedMs,
    })),
  };
}

export class RunServiceImpl {
  constructor(
    private readonly api: RunsApi,
    private readonly auth: Authenticator,
  ) {}

  addToServer(server: Server): void {
    const api = this.api;
    const unary = <Req, Res>(fn: (req: Req) => Res | Promise<Res>) => operatorUnary(this.auth, fn);
    server.addService(RunServiceService, {
      createRun: unary((req: { scenarioJson: string }) => toRunMessage(api.create(req.scenarioJson || '{}'))),
      listRuns: unary((req: { limit: number }) => ({ runs: api.list(req.limit).map(toRunMessage) })),
      getRun: unary((req: { id: string }) => toRunMessage(api.get(req.id))),
      getReport: unary((req: { id: string; format: string }) => api.report(req.id, req.format || 'json')),
      cancelRun: unary((req: { id: string }) => toRunMessage(api.cancel(req.id))),
      listAgents: unary(() => ({ agents: api.agents() })),
    });
  }
}
