/**
 * Report rows for the unit tests of pure report code (comparisons, sweeps,
 * the study, CPU cost): one place that knows every field a row has, so a test
 * names only what it is about.
 */
import type { PathMtu } from '../../../gen/cnibench/v1/agent.js';
import type { ReportRow } from '../../../report/report.js';

/** A succeeded wrk row through the Service, no rounds or metrics, with `over` on top. */
export function reportRow(over: Partial<ReportRow>): ReportRow {
  return {
    id: '',
    measurement: '',
    path: 'service',
    tool: 'wrk',
    toolVersion: '',
    value: null,
    unit: 'req/s',
    status: 'succeeded',
    error: '',
    details: {},
    dnatConnections: null,
    socketLbTranslated: null,
    warnings: [],
    rounds: 0,
    metrics: [],
    dataplane: [],
    ...over,
  };
}

/** A path MTU reading that reached the far end at 1500 (10 probes), with `over` on top. */
export function pathMtuReading(over: Partial<PathMtu>): PathMtu {
  return {
    target: '198.18.16.10',
    effectiveMtu: 1500,
    localMtu: 1500,
    blackHole: false,
    announcedMtu: 0,
    probes: 10,
    error: '',
    announcedFrom: '',
    ...over,
  };
}
