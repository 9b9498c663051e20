/**
 * Hubble's own observer, asked over each cilium-agent's hubble.sock (gRPC,
 * service observer.Observer, as `hubble observe --server unix://…` asks it):
 * ServerStatus for the seen-flows counter (read live, where the agent's
 * /v1/debuginfo status is a periodic snapshot), GetFlows for the flows to the
 * measured server, which shows Hubble saw the measured traffic itself. Only
 * the fields read here are declared (numbers from Cilium v1.20.2's
 * api/v1/observer/observer.proto and api/v1/flow/flow.proto); protobuf skips
 * the rest. The decoders are pure and tested on captured bytes.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Client, credentials, type ServiceError } from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { CniBenchError, ErrorCodes, parseError } from '../../core/errors.js';

const TOOL = 'hubble observer';

const root = protobuf.Root.fromJSON({
  nested: {
    ServerStatusResponse: {
      fields: {
        numFlows: { type: 'uint64', id: 1 },
        maxFlows: { type: 'uint64', id: 2 },
        seenFlows: { type: 'uint64', id: 3 },
        uptimeNs: { type: 'uint64', id: 4 },
      },
    },
    FlowFilter: {
      fields: {
        sourceIp: { rule: 'repeated', type: 'string', id: 1 },
        destinationIp: { rule: 'repeated', type: 'string', id: 3 },
      },
    },
    GetFlowsRequest: {
      fields: { number: { type: 'uint64', id: 1 }, whitelist: { rule: 'repeated', type: 'FlowFilter', id: 6 } },
    },
    IP: { fields: { source: { type: 'string', id: 1 }, destination: { type: 'string', id: 2 } } },
    Flow: {
      fields: { verdict: { type: 'int32', id: 2 }, IP: { type: 'IP', id: 5 }, nodeName: { type: 'string', id: 11 } },
    },
    GetFlowsResponse: { fields: { flow: { type: 'Flow', id: 1 }, nodeName: { type: 'string', id: 1000 } } },
  },
});
const ServerStatusResponse = root.lookupType('ServerStatusResponse');
const GetFlowsRequest = root.lookupType('GetFlowsRequest');
const GetFlowsResponse = root.lookupType('GetFlowsResponse');

export interface HubbleServerStatus {
  /** Flows in the ring buffer now. */
  numFlows: number;
  maxFlows: number;
  /** Every flow the observer has seen since it started: the counter a Hubble condition must see move. */
  seenFlows: number;
  uptimeNs: number;
}

/** One flow as GetFlows returns it (only what the verification reads). */
export interface HubbleFlow {
  source: string;
  destination: string;
  /** flow.Verdict: 1 FORWARDED, 2 DROPPED, ... */
  verdict: number;
  nodeName: string;
}

const VERDICTS = ['VERDICT_UNKNOWN', 'FORWARDED', 'DROPPED', 'ERROR', 'AUDIT', 'REDIRECTED', 'TRACED', 'TRANSLATED'];

export function verdictName(v: number): string {
  return VERDICTS[v] ?? `verdict ${v}`;
}

function decode(type: protobuf.Type, bytes: Uint8Array, what: string): Record<string, unknown> {
  try {
    return type.toObject(type.decode(bytes), { longs: Number, defaults: true }) as Record<string, unknown>;
  } catch (err) {
    throw parseError(TOOL, Buffer.from(bytes).toString('base64'), `${what}: ${(err as Error).message}`);
  }
}

/** Pure: a ServerStatusResponse message. A truncated message is a parse error naming the observer. */
export function parseServerStatus(bytes: Uint8Array): HubbleServerStatus {
  const m = decode(ServerStatusResponse, bytes, 'ServerStatusResponse');
  return {
    numFlows: m.numFlows as number,
    maxFlows: m.maxFlows as number,
    seenFlows: m.seenFlows as number,
    uptimeNs: m.uptimeNs as number,
  };
}

/** Pure: one GetFlowsResponse message; null for a response that carries no flow (node status, lost events). */
export function parseFlowsResponse(bytes: Uint8Array): HubbleFlow | null {
  const m = decode(GetFlowsResponse, bytes, 'GetFlowsResponse');
  const flow = m.flow as { verdict: number; IP?: { source: string; destination: string } | null } | null;
  if (!flow) return null;
  return {
    source: flow.IP?.source ?? '',
    destination: flow.IP?.destination ?? '',
    verdict: flow.verdict,
    nodeName: m.nodeName as string,
  };
}

/** Pure: the GetFlowsRequest for the last `number` flows to `destinationIp`. */
export function flowsRequest(destinationIp: string, number: number): Uint8Array {
  return GetFlowsRequest.encode(
    GetFlowsRequest.create({ number, whitelist: [{ destinationIp: [destinationIp] }] }),
  ).finish();
}

/** hubble.sock beside the agent's API socket (both in the agent's /var/run/cilium, hubble-socket-path's default). */
export function hubbleSocket(agentSocket: string): string {
  return join(dirname(agentSocket), 'hubble.sock');
}

const identity = (b: Buffer): Buffer => b;
const raw = (b: Uint8Array): Buffer => Buffer.from(b);

function client(socket: string): Client {
  if (!existsSync(socket))
    throw new CniBenchError(ErrorCodes.TOOL_FAILED, `${TOOL}: no Hubble socket at ${socket} (Hubble is not serving)`);
  return new Client(`unix://${socket}`, credentials.createInsecure());
}

function wireError(socket: string, err: ServiceError | Error): CniBenchError {
  return new CniBenchError(ErrorCodes.TOOL_FAILED, `${TOOL} on ${socket}: ${err.message}`, { cause: err });
}

/** The observer's live counters; throws (naming the observer) when the socket is absent or does not answer. */
export async function hubbleServerStatus(socket: string, timeoutMs = 10_000): Promise<HubbleServerStatus> {
  const c = client(socket);
  return new Promise<HubbleServerStatus>((resolve, reject) => {
    c.makeUnaryRequest(
      '/observer.Observer/ServerStatus',
      raw,
      identity,
      new Uint8Array(),
      { deadline: Date.now() + timeoutMs },
      (err, bytes) => {
        if (err || !bytes) return reject(wireError(socket, err ?? new Error('no answer')));
        try {
          resolve(parseServerStatus(bytes));
        } catch (e) {
          reject(e);
        }
      },
    );
  }).finally(() => c.close());
}

/** The last `number` flows the observer holds whose destination is `destinationIp`. */
export async function hubbleFlowsTo(
  socket: string,
  destinationIp: string,
  number: number,
  timeoutMs = 15_000,
): Promise<HubbleFlow[]> {
  const c = client(socket);
  return new Promise<HubbleFlow[]>((resolve, reject) => {
    const flows: HubbleFlow[] = [];
    let failed: Error | undefined;
    const call = c.makeServerStreamRequest(
      '/observer.Observer/GetFlows',
      raw,
      identity,
      flowsRequest(destinationIp, number),
      { deadline: Date.now() + timeoutMs },
    );
    call.on('data', (bytes: Buffer) => {
      try {
        const f = parseFlowsResponse(bytes);
        if (f) flows.push(f);
      } catch (e) {
        failed = e as Error;
        call.cancel();
      }
    });
    call.on('error', (err: ServiceError) => {
      if (failed) reject(failed);
      else reject(wireError(socket, err));
    });
    call.on('end', () => (failed ? reject(failed) : resolve(flows)));
  }).finally(() => c.close());
}
