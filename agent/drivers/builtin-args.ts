/**
 * What the built-in tools' drivers share: where a built-in's script is (run
 * with the agent's own Node binary), and the target and duration every
 * built-in client takes first, so each driver writes only its own flags.
 */
import { fileURLToPath } from 'node:url';
import type { ClientSpec } from './driver.js';

/** The compiled script of agent/builtins/<name>.ts. */
export function builtinScript(name: string): string {
  return fileURLToPath(new URL(`../builtins/${name}.js`, import.meta.url));
}

/** `script --host H --port P --duration S`, then the client's `own` flags. */
export function builtinClientArgs(script: string, s: ClientSpec, own: string[]): string[] {
  return [
    script,
    '--host',
    s.targetHost,
    '--port',
    String(s.targetPort),
    '--duration',
    String(s.durationSeconds),
    ...own,
  ];
}
