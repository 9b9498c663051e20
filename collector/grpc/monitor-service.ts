/**
 * MonitorService over gRPC: the same monitoring view REST `GET /v1/monitor`
 * serves, for operators only (call-auth.ts). It never binds a port; the
 * collector adds it to its server.
 */
import type { Server } from '@grpc/grpc-js';
import { type GetMonitorRequest, MonitorServiceService, type MonitorSnapshot } from '../../gen/cnibench/v1/monitor.js';
import type { Authenticator } from '../auth/principal.js';
import { operatorUnary } from './call-auth.js';

export class MonitorServiceImpl {
  constructor(
    private readonly snapshot: () => MonitorSnapshot,
    private readonly auth: Authenticator,
  ) {}

  addToServer(server: Server): void {
    server.addService(MonitorServiceService, {
      getMonitor: operatorUnary(this.auth, (_req: GetMonitorRequest) => this.snapshot()),
    });
  }
}
