/**
 * The shape of one tool's facts. A tool is what a scenario, a job and a report
 * name ("fortio-tcp"); a binary is what a node has on its PATH ("fortio"). Two
 * tools may share a binary, and the agent's built-ins need none: they run with
 * the agent's own Node. Everything here is data, so agent, collector and cli
 * derive their lists from it instead of each keeping its own.
 */

/** The kinds of measurement a scenario asks for (collector/runs/scenario.ts). */
export type MeasurementKind = 'throughput' | 'http' | 'rr' | 'disruption';

/** How to ask a binary for its version: `binary ...args`, version = first group of `pattern` over stdout and stderr. */
export interface VersionProbe {
  readonly args: readonly string[];
  readonly pattern: RegExp;
}

/**
 * Where a binary comes from on Debian bookworm: a package (scripts/setup.sh and
 * the Dockerfile install it; a unit test holds both to this), or a script that
 * builds or fetches it (scripts/setup.sh runs it; a unit test holds setup to
 * that) and a stage of the Dockerfile for the image.
 */
export type BinarySource =
  | { readonly debian: string; readonly build?: undefined }
  | { readonly debian?: undefined; readonly build: string; readonly dockerStage: string };

export interface BinaryFacts {
  readonly binary: string;
  readonly source: BinarySource;
  readonly probe: VersionProbe;
  /** A node without it is broken (doctor exits 1); optional: something else stands in, or only a person uses it. */
  readonly required: boolean;
  /** What it is used for; doctor prints it where the binary is missing. */
  readonly why: string;
  /** The agent reports its version when it registers (the collector plans by it, reports print it). */
  readonly announced: boolean;
}

/** What a client can measure; the plan's 'auto' choice and the scenario's refusals are read from here. */
export interface ClientFacts {
  readonly kind: MeasurementKind;
  /** The server tool it talks to; absent for HTTP clients, which take the scenario's `server`. */
  readonly serverTool?: string;
  /**
   * The order in which 'auto' tries the clients of a kind (lower first: the
   * study's tool, then other native ones, built-ins last, which every node has);
   * null: 'auto' never picks it, only a scenario that names it.
   */
  readonly autoRank: number | null;
  /** rr: can open a new connection per transaction (TCP_CRR). */
  readonly crr: boolean;
  /** http: can hold a fixed request rate (qps > 0). */
  readonly fixedRate: boolean;
  /** Can run as fast as it goes (http qps 0; every rr and throughput tool does). */
  readonly maxRate: boolean;
  /** Connections it drives at once; undefined: as many as asked. */
  readonly maxConnections?: number;
  /** Can measure through a one-port Service (false: it also opens a data connection on a second port). */
  readonly throughService: boolean;
}

export interface ServerFacts {
  /** The measurement its clients make; HTTP servers are what a scenario's `server` picks from. */
  readonly serves: MeasurementKind;
  /** Further kinds its clients make against it (tcp-echo: the disruption probe stream beside TCP_RR). */
  readonly alsoServes?: readonly MeasurementKind[];
  /** Where it listens (pod or host network) and the port its run Service exposes. */
  readonly port: number;
  readonly servicePort: number;
  /** A second port its clients connect to (netserver's data connection). */
  readonly dataPort?: number;
  /** One thread of work: it saturates at one core (the server-saturation guard); else it uses every core. */
  readonly singleThreaded: boolean;
}

export interface ToolFacts {
  readonly name: string;
  /** Ships inside the agent (agent/builtins/), runs with the agent's Node: every node has it, no binary, no version probe. */
  readonly builtIn: boolean;
  readonly binary?: BinaryFacts;
  readonly client?: ClientFacts;
  readonly server?: ServerFacts;
}

/** Frozen facts, so no importer can change what the others read. */
export function toolFacts<T extends ToolFacts>(facts: T): T {
  for (const part of [facts.binary, facts.client, facts.server]) if (part) Object.freeze(part);
  return Object.freeze(facts);
}
