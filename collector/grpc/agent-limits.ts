/**
 * Maxima for what agents send: names, ids, lists and repeated fields. A value
 * past its limit is refused naming the field, before anything is kept. The
 * limits sit far above what a real agent sends (a node has a few dozen tools,
 * a sample a few thousand chains).
 */
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { AgentMessage, RegisterRequest } from '../../gen/cnibench/v1/agent.js';
import { MAX_NODE_NAME } from '../auth/principal.js';

export const AGENT_LIMITS = {
  nodeName: MAX_NODE_NAME,
  shortText: 256,
  tools: 64,
  labels: 64,
  id: 128,
  activeRunIds: 64,
  sampleChains: 50_000,
  sampleErrors: 256,
  resultRawOutput: 4 * 1024 * 1024,
} as const;

/** A DNS-1123 subdomain, as Kubernetes node names are. */
const NODE_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

function refuse(field: string, message: string): never {
  throw new CniBenchError(ErrorCodes.VALIDATION, `${field}: ${message}`, { details: { field } });
}

function text(field: string, v: string, max: number = AGENT_LIMITS.shortText): void {
  if (v.length > max) refuse(field, `longer than ${max} characters`);
}

export function checkRegistration(r: RegisterRequest): void {
  if (!r.nodeName) refuse('node_name', 'required');
  text('node_name', r.nodeName, AGENT_LIMITS.nodeName);
  if (!NODE_NAME.test(r.nodeName)) refuse('node_name', 'must be a lowercase DNS subdomain (a-z, 0-9, - and .)');
  if (r.agentName) {
    text('agent_name', r.agentName, AGENT_LIMITS.nodeName);
    if (!NODE_NAME.test(r.agentName)) refuse('agent_name', 'must be a lowercase DNS subdomain (a-z, 0-9, - and .)');
  }
  for (const f of ['podName', 'podIp', 'hostIp', 'kernel', 'agentVersion', 'instanceId'] as const)
    text(
      f.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
      r[f],
    );
  if (r.tools.length > AGENT_LIMITS.tools) refuse('tools', `more than ${AGENT_LIMITS.tools} entries`);
  r.tools.forEach((t, i) => {
    text(`tools[${i}].name`, t.name, 64);
    text(`tools[${i}].version`, t.version);
    text(`tools[${i}].path`, t.path, 4096);
  });
  const labels = Object.entries(r.labels);
  if (labels.length > AGENT_LIMITS.labels) refuse('labels', `more than ${AGENT_LIMITS.labels} entries`);
  for (const [k, v] of labels) {
    text('labels', k, 317);
    text(`labels[${k.slice(0, 64)}]`, v, 63);
  }
}

/** Bounds a Session message's ids and repeated fields. */
export function checkAgentMessage(m: AgentMessage): void {
  const b = m.body;
  if (!b) return;
  if (!Number.isSafeInteger(m.seq) || m.seq < 0) refuse('seq', 'must be a non-negative integer below 2^53');
  switch (b.$case) {
    case 'hello':
      text('hello.agent_id', b.value.agentId, AGENT_LIMITS.nodeName);
      text('hello.instance_id', b.value.instanceId);
      if (b.value.activeRunIds.length > AGENT_LIMITS.activeRunIds)
        refuse('hello.active_run_ids', `more than ${AGENT_LIMITS.activeRunIds} entries`);
      return;
    case 'result':
      text('result.job_id', b.value.jobId, AGENT_LIMITS.id);
      text('result.run_id', b.value.runId, AGENT_LIMITS.id);
      text('result.raw_output', b.value.rawOutput, AGENT_LIMITS.resultRawOutput);
      return;
    case 'jobEvent':
      text('job_event.job_id', b.value.jobId, AGENT_LIMITS.id);
      text('job_event.run_id', b.value.runId, AGENT_LIMITS.id);
      text('job_event.message', b.value.message, 64 * 1024);
      return;
    case 'sample':
      text('sample.run_id', b.value.runId, AGENT_LIMITS.id);
      text('sample.sampling_job_id', b.value.samplingJobId, AGENT_LIMITS.id);
      if (b.value.chains.length > AGENT_LIMITS.sampleChains)
        refuse('sample.chains', `more than ${AGENT_LIMITS.sampleChains} entries`);
      if (b.value.errors.length > AGENT_LIMITS.sampleErrors)
        refuse('sample.errors', `more than ${AGENT_LIMITS.sampleErrors} entries`);
      return;
    default:
      return;
  }
}
