/**
 * The reference study's measurement matrix, the default of every run: TCP
 * throughput with 1, 8 and 16 streams on every path, UDP at a target rate,
 * HTTP RPS keep-alive c64/c256 and short-connection c64 pod-to-pod and via
 * Service, TCP_RR and TCP_CRR latency, and HTTP latency at a fixed 1000 QPS
 * (fortio, and the built-in open-loop client that corrects for coordinated omission).
 * Tools are 'auto': the plan picks the native tool the client node has.
 */
export const PATHS = ['pod-to-pod', 'pod-to-pod-same-node', 'service', 'host-to-host', 'pod-to-host'] as const;
export type PathName = (typeof PATHS)[number];

/** Input shape of one measurement (see scenario.ts for the schema). */
export type MeasurementInput = Record<string, unknown> & { kind: 'throughput' | 'http' | 'rr'; path: PathName };

export const DEFAULT_MEASUREMENTS: readonly MeasurementInput[] = Object.freeze([
  ...PATHS.flatMap((path) => [1, 8, 16].map((streams): MeasurementInput => ({ kind: 'throughput', path, streams }))),
  { kind: 'throughput', path: 'pod-to-pod', protocol: 'udp', streams: 1, udpTargetMbps: 1000 },
  ...(['pod-to-pod', 'service'] as const).flatMap((path) => [
    { kind: 'http', path, mode: 'keepalive', connections: 64 } as MeasurementInput,
    { kind: 'http', path, mode: 'keepalive', connections: 256 } as MeasurementInput,
    { kind: 'http', path, mode: 'short-connection', connections: 64 } as MeasurementInput,
  ]),
  { kind: 'rr', path: 'pod-to-pod', mode: 'rr' },
  { kind: 'rr', path: 'pod-to-pod', mode: 'crr' },
  // Fixed rate twice: fortio (native, as in the study; times each request from when it was sent)
  // and the built-in open-loop client (from each request's intended start: stalls are not hidden).
  { kind: 'http', path: 'service', mode: 'keepalive', connections: 16, qps: 1000 },
  { kind: 'http', path: 'service', mode: 'keepalive', connections: 16, qps: 1000, tool: 'http-open-loop' },
]);

/** Defaults of a sweep: the study's steps; short-connection and keep-alive RPS and TCP_CRR through one fronting Service. */
export const DEFAULT_SCALE_STEPS = [0, 5000, 10_000, 20_000, 30_000];
export const DEFAULT_SCALE_MEASUREMENTS: readonly MeasurementInput[] = Object.freeze([
  { kind: 'http', path: 'service', mode: 'keepalive', connections: 64 },
  { kind: 'http', path: 'service', mode: 'short-connection', connections: 64 },
  { kind: 'rr', path: 'service', mode: 'crr' },
]);
