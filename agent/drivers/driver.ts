/**
 * The one interface every load-generator driver implements. A driver is pure:
 * it turns a typed spec into an argument array and turns the tool's stdout into
 * a normalized measurement. Running the process is core/process.ts's job, so
 * drivers can be tested on captured output alone; what a tool is (its binary,
 * what it measures, its server and ports) is data in the tool catalogue
 * (core/tool-catalogue/), which the job runner reads beside the driver.
 */
import type { Measurement } from '../../gen/cnibench/v1/agent.js';

export interface ClientSpec {
  targetHost: string;
  targetPort: number;
  durationSeconds: number;
  /** Throughput tools: parallel streams, "tcp" or "udp", and the UDP sender rate (bit/s, 0 = tool default). */
  streams?: number;
  protocol?: 'tcp' | 'udp';
  targetBitsPerSecond?: number;
  /** HTTP tools. */
  connections?: number;
  threads?: number;
  keepalive?: boolean;
  path?: string;
  /** HTTP requests per second in all; 0/undefined = as fast as possible. */
  qps?: number;
  /** Request/response tools: TCP_CRR when true, and the message sizes. */
  connectPerTransaction?: boolean;
  requestBytes?: number;
  responseBytes?: number;
  /** Disruption probe stream: attempts per second of each kind, kept connections, per-attempt timeout, bin width. */
  rate?: number;
  keptConnections?: number;
  timeoutMs?: number;
  binMs?: number;
  /** Wall clock of the stream's first attempt (0: at once). */
  streamStartAtMs?: number;
}

export interface ServerSpec {
  port: number;
}

export interface ClientDriver {
  /** Name used in scenarios and reports, e.g. "iperf3": its catalogue entry's. */
  readonly tool: string;
  /** Exit codes after which stdout still goes to `parse` (a tool that reports its own errors in its output). */
  readonly okExitCodes?: readonly number[];
  buildClientArgs(spec: ClientSpec): string[];
  /**
   * Threads of work the client can keep busy (its CPU ceiling before the
   * client-cpu-saturated guard fires); Infinity for tools that use every core.
   * Default 1.
   */
  cpuThreads?(spec: ClientSpec): number;
  /** Throws a CniBenchError(E_PARSE or E_TOOL_FAILED) naming the tool; never returns zeros for garbage. */
  parse(stdout: string, spec: ClientSpec): Measurement;
}

export interface ServerDriver {
  readonly tool: string;
  buildServerArgs(spec: ServerSpec): string[];
}
