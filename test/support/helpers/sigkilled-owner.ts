/**
 * For the leftover-cleanup tests: a child Node process imports one of the
 * harness's modules, creates something with it, prints its name and waits, so
 * the test can SIGKILL it (an owner that cannot clean up) and check what is
 * left behind.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { waitFor } from './procs.js';

export interface Owner {
  child: ChildProcess;
  /** The line the child printed: the name of what it created. */
  name: string;
  /** SIGKILLs the child and waits for it to exit. */
  kill(): Promise<void>;
}

/** Runs `create(m)` (a JavaScript expression over the imported module `m`, resolving to the name) in a child. */
export async function startOwner(moduleUrl: URL, create: string, what: string, timeoutMs: number): Promise<Owner> {
  const script = `
    import('${moduleUrl.href}').then(async (m) => {
      process.stdout.write((await ${create}) + '\\n');
      setInterval(() => {}, 1000);
    }).catch((e) => { console.error(e); process.exit(1); });`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  const name = await waitFor(what, () => (out.includes('\n') ? out.trim() : undefined), timeoutMs, 100);
  return {
    child,
    name,
    kill: async () => {
      child.kill('SIGKILL');
      if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.on('exit', r));
    },
  };
}
