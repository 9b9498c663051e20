/** `cni-bench agents`: the agents a collector knows, connected or not, with their tools. */
import { type FlagValues, oneOfFlag } from '../core/flags.js';
import { mdText } from '../report/escape.js';
import { type CliContext, defineCommand } from './command.js';
import { REMOTE_NOTES, remoteFlags, withCollector } from './remote/connect.js';

interface AgentView {
  agentId: string;
  nodeName: string;
  podIp: string;
  kernel: string;
  agentVersion: string;
  connected: boolean;
  lastSeenMs: number | string;
  tools: string[];
  iptablesBackend: string;
}

const flags = {
  format: oneOfFlag<'md' | 'json'>(['md', 'json'], { help: 'a Markdown table or the JSON list', default: 'md' }),
  ...remoteFlags,
};

async function agents(v: FlagValues<typeof flags>, ctx: CliContext): Promise<number> {
  const { agents } = await withCollector(v, (c) => c.json<{ agents: AgentView[] }>('GET', 'v1/agents'));
  if (v.format === 'json') {
    ctx.stdout(`${JSON.stringify(agents, null, 2)}\n`);
    return 0;
  }
  const lines = [
    '| node | agent | connected | pod IP | kernel | version | iptables | tools |',
    '|---|---|---|---|---|---|---|---|',
    ...agents.map(
      (a) =>
        `| ${mdText(a.nodeName)} | ${mdText(a.agentId)} | ${a.connected ? 'yes' : 'no'} | ${mdText(a.podIp)} | ${mdText(a.kernel)} | ${mdText(a.agentVersion)} | ${mdText(a.iptablesBackend)} | ${mdText(a.tools.join(', '))} |`,
    ),
  ];
  ctx.stdout(`${lines.join('\n')}\n${agents.filter((a) => a.connected).length} of ${agents.length} connected\n`);
  return 0;
}

export const command = defineCommand({
  spec: {
    usage: 'cni-bench agents',
    summary: 'Lists the agents a collector knows: node, connection, kernel, version and the tools each found.',
    flags,
    examples: [
      'cni-bench agents --release cni-bench-agent --namespace cni-bench',
      'cni-bench agents --collector http://127.0.0.1:8080 --token-file ./token',
    ],
    notes: ['Exit codes: 0 listed, 1 the collector could not be reached or refused, 2 bad flags.', ...REMOTE_NOTES],
  },
  run: (values, _p, ctx) => agents(values, ctx),
});
