/**
 * The tool catalogue: every tool's facts (one file each) and the views the
 * rest of the code derives from them. Adding a tool is its facts file here, its
 * driver file agent/drivers/<name>.ts (agent/drivers/registry.ts finds it by
 * that name), and one line in TOOLS below; test/unit/core/tool-catalogue.test.ts
 * fails while a driver and an entry do not match. See docs/adding-a-tool.md.
 */
import { parseError } from '../errors.js';
import { fortio } from './fortio.js';
import { fortioTcp } from './fortio-tcp.js';
import { httpEcho } from './http-echo.js';
import { httpOpenLoop } from './http-open-loop.js';
import { iperf3 } from './iperf3.js';
import { netperf } from './netperf.js';
import { netserver } from './netserver.js';
import { probeStream } from './probe-stream.js';
import { readers } from './readers.js';
import { sockperf } from './sockperf.js';
import { tcpEcho } from './tcp-echo.js';
import { tcpRr } from './tcp-rr.js';
import type { BinaryFacts, ClientFacts, MeasurementKind, ServerFacts, ToolFacts } from './tool-facts.js';
import { wrk } from './wrk.js';

export type {
  BinaryFacts,
  BinarySource,
  ClientFacts,
  MeasurementKind,
  ServerFacts,
  ToolFacts,
  VersionProbe,
} from './tool-facts.js';

/** Every tool; this order is the order binaries are discovered and checked in. */
export const TOOLS: readonly ToolFacts[] = Object.freeze([
  iperf3,
  wrk,
  sockperf,
  fortio,
  netperf,
  netserver,
  fortioTcp,
  httpEcho,
  httpOpenLoop,
  tcpRr,
  tcpEcho,
  probeStream,
]);

const byName: ReadonlyMap<string, ToolFacts> = new Map(TOOLS.map((t) => [t.name, t]));

/** A tool's facts, or undefined for a name the catalogue does not know. */
export function findTool(name: string): ToolFacts | undefined {
  return byName.get(name);
}

/** Every binary a node may need: the tools' own (once each, tools sharing one), then the readers. */
export const BINARIES: readonly BinaryFacts[] = Object.freeze([
  ...new Set(TOOLS.flatMap((t) => (t.binary ? [t.binary] : []))),
  ...readers,
]);

/** The binary a tool needs on the node's PATH (its own name for a tool the catalogue does not know); undefined for a built-in. */
export function binaryOf(tool: string): string | undefined {
  const t = byName.get(tool);
  if (!t) return tool;
  return t.binary?.binary;
}

/** The executable that runs a tool: its binary, or for a built-in the Node running this process. */
export function executableOf(tool: ToolFacts): string {
  return tool.binary?.binary ?? process.execPath;
}

/** The version in a binary's answer to its probe; an answer that is not a version is E_PARSE naming the binary. */
export function parseVersion(b: BinaryFacts, output: string): string {
  const m = b.probe.pattern.exec(output);
  if (!m?.[1]) throw parseError(b.binary, output, `no version matching ${b.probe.pattern}`);
  return m[1];
}

type Client = ToolFacts & { client: ClientFacts };
type Server = ToolFacts & { server: ServerFacts };

export const CLIENTS: readonly Client[] = TOOLS.filter((t): t is Client => t.client !== undefined);
export const SERVERS: readonly Server[] = TOOLS.filter((t): t is Server => t.server !== undefined);

const rank = (t: Client): number => t.client.autoRank ?? Number.POSITIVE_INFINITY;

/** Clients of a kind, in the order 'auto' tries them (then those it never picks). */
export function clientsOf(kind: MeasurementKind): Client[] {
  return CLIENTS.filter((t) => t.client.kind === kind).sort((a, b) => rank(a) - rank(b));
}

/** Servers of a kind, native first (the built-in last: every node has it). */
export function serversOf(kind: MeasurementKind): Server[] {
  return SERVERS.filter((t) => t.server.serves === kind || t.server.alsoServes?.includes(kind)).sort(
    (a, b) => Number(a.builtIn) - Number(b.builtIn),
  );
}

/** The tools' names as a non-empty tuple, for a zod enum. */
export function names(tools: readonly ToolFacts[]): [string, ...string[]] {
  const all = tools.map((t) => t.name);
  if (all.length === 0) throw new Error('tool catalogue: an empty list of tools');
  return all as [string, ...string[]];
}

/** "a", "a or b", "a, b or c": tool names in a sentence. */
export function orList(tools: readonly ToolFacts[]): string {
  const all = tools.map((t) => t.name);
  return all.length <= 1 ? (all[0] ?? '') : `${all.slice(0, -1).join(', ')} or ${all.at(-1)}`;
}
