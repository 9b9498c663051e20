/**
 * RunService over gRPC: the same RunsApi the REST server uses, translated to
 * protobuf messages. Errors map through toWireStatus.
 */
import { Metadata, type Server, type sendUnaryData, type ServerUnaryCall, type ServiceError } from '@grpc/grpc-js';
import { toWireStatus } from '../../core/errors.js';
import { RunServiceService, type Run } from '../../gen/cnibench/v1/run.js';
import type { RunsApi, RunView } from '../runs/runs-api.js';

export function toRunMessage(r: RunView): Run {
  return {
    id: r.id,
    state: r.state,
    reason: r.reason,
    createdMs: r.createdMs,
    startedMs: r.startedMs,
    endedMs: r.endedMs,
    scenarioJson: JSON.stringify(r.scenario),
    phases: r.phases.map((p) => ({ index: p.index, name: p.name, state: p.state, error: p.error, startedMs: p.startedMs, endedMs: p.endedMs })),
  };
}

function toServiceError(err: unknown): Partial<ServiceError> {
  const w = toWireStatus(err);
  const metadata = new Metadata();
  metadata.set('cni-bench-error-code', w.code);
  return { code: w.grpc, details: w.message, metadata };
}

/** Adapts a (possibly async) function to a unary handler. */
function unary<Req, Res>(fn: (req: Req) => Res | Promise<Res>) {
  return (call: ServerUnaryCall<Req, Res>, cb: sendUnaryData<Res>): void => {
    Promise.resolve()
      .then(() => fn(call.request))
      .then(
        (res) => cb(null, res),
        (err: unknown) => cb(toServiceError(err)),
      );
  };
}

export class RunServiceImpl {
  constructor(private readonly api: RunsApi) {}

  addToServer(server: Server): void {
    const api = this.api;
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
