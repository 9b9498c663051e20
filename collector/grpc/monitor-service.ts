/**
 * MonitorService over gRPC: the same monitoring view REST `GET /v1/monitor`
 * serves. It never binds a port; the collector adds it to its server.
 */
import type { Server, sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js';
import { MonitorServiceService, type GetMonitorRequest, type MonitorSnapshot } from '../../gen/cnibench/v1/monitor.js';

export class MonitorServiceImpl {
  constructor(private readonly snapshot: () => MonitorSnapshot) {}

  addToServer(server: Server): void {
    server.addService(MonitorServiceService, {
      getMonitor: (_call: ServerUnaryCall<GetMonitorRequest, MonitorSnapshot>, cb: sendUnaryData<MonitorSnapshot>) => cb(null, this.snapshot()),
    });
  }
}
