/**
 * Which drivers exist, by tool name, found by naming: every tool in the
 * catalogue (core/tool-catalogue/index.ts, TOOLS) that has a client or server
 * has its driver in agent/drivers/<tool name>.ts, which exports a driver whose
 * `tool` is that name. So adding a tool is its catalogue file, its driver file
 * and one line (TOOLS); nothing here changes. A catalogue entry without its
 * driver fails every import of this module, naming the file it looked for.
 */
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import { TOOLS, type ToolFacts } from '../../core/tool-catalogue/index.js';
import type { ClientDriver, ServerDriver } from './driver.js';

type AnyDriver = Partial<ClientDriver & ServerDriver> & { tool: string };

const isDriver = (v: unknown, name: string): v is AnyDriver =>
  typeof v === 'object' && v !== null && (v as { tool?: unknown }).tool === name;

/** The driver in agent/drivers/<tool>.js, checked against what the catalogue says the tool is. */
async function load(t: ToolFacts): Promise<AnyDriver> {
  const file = `agent/drivers/${t.name}.js`;
  const mod: Record<string, unknown> = await import(`./${t.name}.js`).catch((err: Error) => {
    throw new CniBenchError(
      ErrorCodes.INTERNAL,
      `tool catalogue: ${t.name} has no driver file ${file}: ${err.message}`,
    );
  });
  const driver = Object.values(mod).find((v) => isDriver(v, t.name));
  const missing = !driver
    ? 'no exported driver with that tool name'
    : t.client && typeof driver.buildClientArgs !== 'function'
      ? 'a client in the catalogue, but no buildClientArgs'
      : t.server && typeof driver.buildServerArgs !== 'function'
        ? 'a server in the catalogue, but no buildServerArgs'
        : undefined;
  if (missing || !driver)
    throw new CniBenchError(ErrorCodes.INTERNAL, `tool catalogue: ${file} for ${t.name}: ${missing}`);
  return driver;
}

const withDrivers = TOOLS.filter((t) => t.client !== undefined || t.server !== undefined);
const loaded = await Promise.all(withDrivers.map(async (t) => [t, await load(t)] as const));

export const clientDrivers: ReadonlyMap<string, ClientDriver> = new Map(
  loaded.filter(([t]) => t.client !== undefined).map(([t, d]) => [t.name, d as ClientDriver]),
);
export const serverDrivers: ReadonlyMap<string, ServerDriver> = new Map(
  loaded.filter(([t]) => t.server !== undefined).map(([t, d]) => [t.name, d as ServerDriver]),
);
