/**
 * Test support: start the real binaries (collector, agents, CLI) as child
 * processes from dist/, find free ports, and wait for conditions with a deadline.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

export const DIST = fileURLToPath(new URL('../../../', import.meta.url));
export const AGENT_MAIN = `${DIST}agent/main.js`;
export const COLLECTOR_MAIN = `${DIST}collector/main.js`;
export const CLI_MAIN = `${DIST}cli/main.js`;

export interface Proc {
  child: ChildProcess;
  /** stdout and stderr interleaved. */
  output: () => string;
  stdout: () => string;
  exited: Promise<number | null>;
}

/** Starts `node <script> args` and keeps its stdout+stderr for assertions and failure messages. */
export function startNode(script: string, args: string[], env: NodeJS.ProcessEnv = {}): Proc {
  const child = spawn(process.execPath, ['--enable-source-maps', script, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let stdout = '';
  // Decoded as text streams: a chunk boundary may split a multi-byte character (the reports' ⚠).
  child.stdout?.setEncoding('utf8');
  child.stderr?.setEncoding('utf8');
  child.stdout?.on('data', (d: string) => {
    out += d;
    stdout += d;
  });
  child.stderr?.on('data', (d: string) => (out += d));
  // After 'exit', its output may still be in flight: wait for 'close' too, but not for ever (after a
  // SIGKILL, processes it left behind may still hold the pipes open).
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code, sig) => {
      const status = code ?? (sig ? 128 : null);
      void Promise.race([closed, sleep(3000)]).then(() => resolve(status));
    }),
  );
  return { child, output: () => out, stdout: () => stdout, exited };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs: number,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    await sleep(everyMs);
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`,
  );
}

export async function stop(p: Proc | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill(signal);
  const t = setTimeout(() => p.child.kill('SIGKILL'), 5000);
  await p.exited;
  clearTimeout(t);
}

export async function getJson(url: string, init?: RequestInit): Promise<{ status: number; body: any }> {
  const r = await fetch(url, init);
  const text = await r.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON (Markdown report, metrics).
  }
  return { status: r.status, body };
}
