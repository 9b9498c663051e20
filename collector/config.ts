/**
 * The collector's configuration: one schema with defaults beside each field,
 * read once from flags over environment into a frozen object.
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { parseWith } from '../core/validate.js';

export const collectorConfigSchema = z.strictObject({
  /** gRPC listen address: host:port (port 0 picks one) or unix:/path. */
  grpcListen: z.string().min(1).default('0.0.0.0:7070'),
  /** REST + /metrics listen host and port (port 0 picks one). */
  httpHost: z.string().min(1).default('0.0.0.0'),
  httpPort: z.coerce.number().int().min(0).max(65535).default(8080),
  /** SQLite file; ':memory:' keeps nothing. */
  dbPath: z.string().min(1).default('/var/lib/cni-bench/collector.db'),
  heartbeatIntervalMs: z.coerce.number().int().min(100).default(2000),
  /** An agent silent this long is declared lost and its jobs fail. */
  livenessTimeoutMs: z.coerce.number().int().min(500).default(10_000),
});

export type CollectorConfig = Readonly<z.output<typeof collectorConfigSchema>>;

export function collectorConfig(input: z.input<typeof collectorConfigSchema>): CollectorConfig {
  return parseWith(collectorConfigSchema, input, 'collector config');
}

/** The environment variables the collector reads, by config field (manifests are checked against this list). */
export const COLLECTOR_ENV = {
  grpcListen: 'CNI_BENCH_GRPC_LISTEN',
  httpHost: 'CNI_BENCH_HTTP_HOST',
  httpPort: 'CNI_BENCH_HTTP_PORT',
  dbPath: 'CNI_BENCH_DB',
  heartbeatIntervalMs: 'CNI_BENCH_HEARTBEAT_INTERVAL_MS',
  livenessTimeoutMs: 'CNI_BENCH_LIVENESS_TIMEOUT_MS',
} as const;

export function loadCollectorConfig(argv: string[], env: NodeJS.ProcessEnv): CollectorConfig {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      'grpc-listen': { type: 'string' },
      'http-host': { type: 'string' },
      'http-port': { type: 'string' },
      db: { type: 'string' },
      'heartbeat-interval-ms': { type: 'string' },
      'liveness-timeout-ms': { type: 'string' },
    },
  });
  const pick = (flag: string | undefined, envName: string): string | undefined => flag ?? env[envName];
  const raw = Object.fromEntries(
    Object.entries({
      grpcListen: pick(values['grpc-listen'], COLLECTOR_ENV.grpcListen),
      httpHost: pick(values['http-host'], COLLECTOR_ENV.httpHost),
      httpPort: pick(values['http-port'], COLLECTOR_ENV.httpPort),
      dbPath: pick(values.db, COLLECTOR_ENV.dbPath),
      heartbeatIntervalMs: pick(values['heartbeat-interval-ms'], COLLECTOR_ENV.heartbeatIntervalMs),
      livenessTimeoutMs: pick(values['liveness-timeout-ms'], COLLECTOR_ENV.livenessTimeoutMs),
    }).filter(([, v]) => v !== undefined),
  );
  return parseWith(collectorConfigSchema, raw, 'collector config');
}
