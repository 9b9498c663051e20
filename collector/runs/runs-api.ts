/**
 * The run operations, implemented once and offered over REST and gRPC. Every
 * method either returns plain data or throws a coded error that the transport
 * maps with toWireStatus.
 */
import { randomBytes } from 'node:crypto';
import type { ClusterDescription } from '../../core/cluster.js';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { ServiceFrontend } from '../../core/service-frontend.js';
import type { AgentStatus } from '../../gen/cnibench/v1/run.js';
import { type CompareRequest, compareReports } from '../../report/compare.js';
import { renderComparison } from '../../report/compare-render.js';
import { buildReport, type ReportModel } from '../../report/report.js';
import { parseReportFormat, renderReport } from '../../report/report-formats.js';
import type { AgentRegistry } from '../agents/registry.js';
import { type PhaseRecord, type RunRecord, type Store, TERMINAL_STATES } from '../store/store.js';
import type { Orchestrator } from './orchestrator.js';
import { parseScenario } from './scenario.js';

export interface RunView extends RunRecord {
  phases: Omit<PhaseRecord, 'runId'>[];
}

/** Sortable, unique, short: time in base 36 plus random bits. */
export function newRunId(now = Date.now()): string {
  return `r${now.toString(36)}${randomBytes(3).toString('hex')}`;
}

export class RunsApi {
  constructor(
    private readonly store: Store,
    private readonly orchestrator: Orchestrator,
    private readonly registry: AgentRegistry,
    private readonly services?: ServiceFrontend,
  ) {}

  /**
   * The cluster's description as the collector detects it now (in Kubernetes:
   * from the API server, read again when the last reading is over 5 s old),
   * before any run: what a run started now would be labelled with, less what
   * only the run's agents add (their kernel and dataplane).
   */
  async cluster(): Promise<{ serviceFrontend: string; description: Partial<ClusterDescription> }> {
    await this.services?.refreshCluster?.(5000);
    return { serviceFrontend: this.services?.description ?? 'none', description: this.services?.cluster ?? {} };
  }

  /**
   * Validates (400 naming the field), plans against connected agents (422),
   * stores and starts the run. One run at a time (409): runs share agents,
   * server ports and Services, and a second load would distort the first.
   */
  create(scenarioInput: unknown, env: Readonly<Record<string, string | undefined>> = {}): RunView {
    const scenario = parseScenario(scenarioInput, env);
    const busy = this.orchestrator.activeRunId();
    if (busy)
      throw new CniBenchError(ErrorCodes.CONFLICT, `run '${busy}' is in progress; runs are exclusive`, {
        details: { running: busy },
      });
    const plan = this.orchestrator.plan(scenario);
    const id = newRunId();
    this.store.insertRun({
      id,
      state: 'pending',
      reason: '',
      createdMs: Date.now(),
      startedMs: 0,
      endedMs: 0,
      scenario,
      cluster: {},
    });
    this.orchestrator.start(id, scenario, plan);
    return this.get(id);
  }

  list(limit = 50): RunView[] {
    const n = Number.isInteger(limit) && limit > 0 ? Math.min(limit, 1000) : 50;
    return this.store.listRuns(n).map((r) => this.view(r));
  }

  /**
   * One page of runs, newest first; `after` is the position of the previous
   * page's last run (createdMs, id), as a page token carries it.
   */
  page(
    limit: number,
    after?: { createdMs: number; id: string },
  ): { runs: RunView[]; next?: { createdMs: number; id: string } } {
    const rows = this.store.listRuns(limit + 1, after);
    const runs = rows.slice(0, limit).map((r) => this.view(r));
    const last = runs[runs.length - 1];
    return rows.length > limit && last ? { runs, next: { createdMs: last.createdMs, id: last.id } } : { runs };
  }

  get(id: string): RunView {
    if (!id) throw new CniBenchError(ErrorCodes.VALIDATION, 'id: required', { details: { field: 'id' } });
    if (id.length > 128)
      throw new CniBenchError(ErrorCodes.VALIDATION, 'id: longer than 128 characters', { details: { field: 'id' } });
    const run = this.store.getRun(id);
    if (!run)
      throw new CniBenchError(ErrorCodes.NOT_FOUND, `id: run '${id}' not found`, { details: { field: 'id', id } });
    return this.view(run);
  }

  /**
   * Asks a running run to stop and returns at once with its state; the cleanup
   * on the agents finishes in the background (the run then ends 'cancelled').
   * A client never waits on agents that do not answer.
   */
  cancel(id: string): RunView {
    const run = this.get(id);
    if (TERMINAL_STATES.has(run.state))
      throw new CniBenchError(ErrorCodes.CONFLICT, `run '${id}' already ended (${run.state})`, {
        details: { id, state: run.state },
      });
    if (this.orchestrator.requestCancel(id))
      this.store.updateRun(id, { reason: 'cancel requested: stopping jobs on the agents' });
    return this.get(id);
  }

  reportModel(id: string): ReportModel {
    const run = this.get(id);
    return buildReport(run, this.store.phases(id), this.store.results(id), this.store.samples(id));
  }

  /** The report in md, json, html or csv (report/report-formats.ts); a bad format is a 400 naming `format`. */
  report(id: string, format: string): { contentType: string; body: string } {
    const f = parseReportFormat('format', format);
    return renderReport(this.reportModel(id), f);
  }

  /** Runs side by side with a verdict per measurement (the first run is the baseline). */
  compare(q: CompareRequest): { contentType: string; body: string } {
    return renderComparison(
      compareReports(
        q.runs.map((id) => this.reportModel(id)),
        q,
      ),
      q.format,
    );
  }

  /** The gRPC message type doubles as the REST shape, so both APIs list agents alike. */
  agents(): AgentStatus[] {
    return this.registry.list().map((a) => ({
      agentId: a.id,
      nodeName: a.info.nodeName,
      podIp: a.info.podIp,
      hostIp: a.info.hostIp,
      kernel: a.info.kernel,
      agentVersion: a.info.agentVersion,
      connected: a.connected,
      lastSeenMs: a.lastSeenMs,
      tools: a.info.tools.map((t) => `${t.name}@${t.version}`),
      iptablesBackend: a.info.dataplane?.iptablesBackend ?? '',
      kubeServices: a.info.dataplane?.kubeServices ?? false,
      outboxDropped: a.outboxDropped,
      nodeFacts: a.info.nodeFacts,
    }));
  }

  private view(run: RunRecord): RunView {
    return { ...run, phases: this.store.phases(run.id).map(({ runId: _r, ...p }) => p) };
  }
}
