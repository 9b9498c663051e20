/**
 * Finds which measurement and dataplane tools this node has, with versions, so
 * the collector can refuse a scenario that needs a missing tool before it runs.
 */
import { asCniBenchError } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import { findOnPath, run } from '../../core/process.js';
import type { ToolInfo } from '../../gen/cnibench/v1/agent.js';
import { versionProbes } from './versions.js';

export async function discoverTools(log: Logger): Promise<ToolInfo[]> {
  const found = await Promise.all(
    versionProbes.map(async (probe): Promise<ToolInfo | undefined> => {
      const path = await findOnPath(probe.binary);
      if (!path) return undefined;
      try {
        const r = await run(path, probe.args, { tool: probe.tool, timeoutMs: 5000, okExitCodes: [0, 1, 2] });
        return { name: probe.tool, version: probe.parse(`${r.stdout}\n${r.stderr}`), path };
      } catch (err) {
        log.warn('tool version probe failed', { tool: probe.tool, error: asCniBenchError(err).message });
        return { name: probe.tool, version: 'unknown', path };
      }
    }),
  );
  return found.filter((t): t is ToolInfo => t !== undefined);
}
