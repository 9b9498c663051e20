/**
 * The control-plane events a disruption phase fires into a live probe stream,
 * and which of them this collector can fire at all (refused before the run
 * starts, naming the field). The probed Service has two backends, a tcp-echo
 * in the server agent's pod and one in the peer agent's pod of the same node:
 * - services-added: N Services (one endpoint each) created at once through the
 *   frontend's scaler, as a big deployment would; removed after the phase;
 * - services-removed: N such Services created before the stream starts (and
 *   programmed), then all removed at once, as a big deployment deleted;
 * - endpoint-removed: the peer's endpoint taken out of the Service and its
 *   server stopped at the same moment, as a pod deleted without a grace
 *   period: errors last until every node's dataplane stopped sending there;
 * - backend-gone: the peer's server stopped and nothing else: its endpoint
 *   stays, so errors last until something removes it (nothing in a run does);
 * - backend-link-down: the peer's pod cut off without notice (the lab sets its
 *   veth down): no RST, its packets vanish; its endpoint stays, so new
 *   connections sent there time out for as long as nothing removes it; the
 *   link comes back at the phase's end;
 * - dataplane-restart: the dataplane agent of the client's node (where the
 *   Service is translated) restarted: do kept connections survive, do new ones fail.
 */
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { ServiceEndpoint, ServiceFrontend } from '../../core/service-frontend.js';
import type { AgentEntry } from '../agents/registry.js';
import type { RunPlan } from './plan.js';
import { changesServiceCount, type DisruptionEvent, type Scenario } from './scenario.js';

/** What an event needs of the run: the frontend's powers, a peer on the server's node. */
export function disruptionRefusal(
  event: DisruptionEvent,
  services: ServiceFrontend | undefined,
  plan: Pick<RunPlan, 'peer' | 'server'>,
): string | undefined {
  if (!services) return 'needs a service frontend (the lab, or a collector with Kubernetes access)';
  if ((event === 'endpoint-removed' || event === 'backend-gone' || event === 'backend-link-down') && !plan.peer)
    return `needs a second backend: a peer agent on the server's node '${plan.server.info.nodeName}' (none is connected)`;
  if (changesServiceCount(event) && !services.scale) return `${services.description} cannot create Services`;
  if (event === 'endpoint-removed' && !services.setEndpoints)
    return `${services.description} cannot change a Service's endpoints`;
  if (event === 'backend-link-down' && !services.cutEndpointLink)
    return `${services.description} cannot take a backend's link down (the lab can; a cluster collector does not touch nodes)`;
  if (event === 'dataplane-restart' && !services.restartDataplane)
    return (
      services.dataplaneRestartRefusal ??
      `${services.description} has no dataplane agent this collector may restart (the lab's emulated kube-proxy is rules, no process; use --dataplane kube-proxy-iptables, kube-proxy-nftables or cilium)`
    );
  return undefined;
}

/** Throws E_VALIDATION naming `measurements[i].event` for the first event this collector cannot fire. */
export function refuseDisruptions(scenario: Scenario, plan: RunPlan, services: ServiceFrontend | undefined): void {
  scenario.measurements.forEach((m, i) => {
    if (m.kind !== 'disruption' || !plan.measurements.some((x) => x.id === m.id)) return;
    const why = disruptionRefusal(m.event, services, plan);
    if (why)
      throw new CniBenchError(ErrorCodes.VALIDATION, `measurements[${i}].event: '${m.event}' ${why}`, {
        details: { field: `measurements[${i}].event` },
      });
  });
}

export interface EventContext {
  services: ServiceFrontend;
  runId: string;
  serviceName: string;
  /** The endpoint that stays and the one the event takes away (absent with one backend). */
  kept: ServiceEndpoint;
  removed?: ServiceEndpoint;
  client: AgentEntry;
  /** Stops the peer's server (its process killed; its pod and endpoint stay). */
  stopPeerServer(): void;
  /** The run's dummy Services must be removed by cleanup. */
  markScaled(): void;
  signal: AbortSignal;
}

/** Fires `event`; resolves with what was done (recorded in the phase) once the control plane took it. */
export async function fireEvent(
  event: DisruptionEvent,
  m: { services: number },
  c: EventContext,
): Promise<Record<string, unknown>> {
  if (event === 'services-added') {
    c.markScaled();
    const step = await (c.services.scale as NonNullable<ServiceFrontend['scale']>).setDummyServices(
      m.services,
      1,
      c.runId,
    );
    return { services: step.services, programmingMs: step.programmingMs };
  }
  if (event === 'services-removed') {
    const step = await (c.services.scale as NonNullable<ServiceFrontend['scale']>).setDummyServices(0, 1, c.runId);
    return { removed: m.services, services: step.services, programmingMs: step.programmingMs };
  }
  if (event === 'dataplane-restart')
    return (await c.services.restartDataplane?.(c.client.info.nodeName, c.signal)) ?? {};
  const gone = c.removed;
  if (!gone) throw new CniBenchError(ErrorCodes.INTERNAL, `${event}: no second backend`);
  if (event === 'endpoint-removed') {
    await c.services.setEndpoints?.(c.serviceName, [c.kept]);
    c.stopPeerServer();
    return { removed: `${gone.ip}:${gone.port}`, serverStopped: true };
  }
  if (event === 'backend-link-down')
    return await (c.services.cutEndpointLink as NonNullable<ServiceFrontend['cutEndpointLink']>)(gone);
  c.stopPeerServer();
  return { serverStopped: `${gone.ip}:${gone.port}`, endpointKept: true };
}
