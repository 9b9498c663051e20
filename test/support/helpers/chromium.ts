/**
 * A real headless Chromium driven over the DevTools protocol (Node's own
 * WebSocket; no browser library): opens a page, records every console
 * message, uncaught exception, log entry (CSP violations land there) and
 * network request, evaluates an expression in the page, and takes a
 * screenshot. `chromiumPath()` is undefined where no Chromium is installed,
 * so a test can skip naming why; scripts/setup.sh --test installs it.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function chromiumPath(): string | undefined {
  for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
    try {
      return execFileSync('sh', ['-c', 'command -v "$0"', name], { encoding: 'utf8' }).trim() || undefined;
    } catch {
      // not this one
    }
  }
  return undefined;
}

export interface PageVisit {
  /** console.error/warn calls, uncaught exceptions and error-level log entries, as text. */
  errors: string[];
  /** Every URL the page asked for (the page itself included). */
  requests: string[];
  value: unknown;
  png: Buffer;
}

type Msg = { id?: number; method?: string; params?: Record<string, any>; result?: any; error?: any };

/** Loads `url` in a fresh headless Chromium, waits for load, evaluates `expression` (JSON-able result), screenshots the full page. */
export async function visit(url: string, expression: string, timeoutMs = 150_000): Promise<PageVisit> {
  const bin = chromiumPath();
  if (!bin) throw new Error('chromium is not installed');
  const profile = mkdtempSync(join(tmpdir(), 'cnib-chromium-'));
  const child: ChildProcess = spawn(
    bin,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-extensions',
      '--disable-background-networking',
      '--remote-debugging-port=0',
      `--user-data-dir=${profile}`,
      '--window-size=1000,800',
      'about:blank',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  // Every wait below also ends when the browser does (killed at the timeout, or crashed), never hangs.
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const died = new Promise<never>((_, reject) =>
    child.on('exit', (code, sig) =>
      reject(new Error(`chromium exited (${code ?? sig}) within ${timeoutMs} ms: ${stderr.slice(-2000)}`)),
    ),
  );
  died.catch(() => undefined);
  const alive = <T>(p: Promise<T>): Promise<T> => Promise.race([p, died]);
  try {
    const browserWs = await alive(
      new Promise<string>((resolve) => {
        child.stderr?.on('data', () => {
          const m = /DevTools listening on (ws:\/\/\S+)/.exec(stderr);
          if (m) resolve(m[1] as string);
        });
      }),
    );
    const port = new URL(browserWs).port;
    const list = (await alive(fetch(`http://127.0.0.1:${port}/json/list`).then((r) => r.json()))) as {
      type: string;
      webSocketDebuggerUrl: string;
    }[];
    const target = list.find((t) => t.type === 'page');
    if (!target) throw new Error('chromium has no page target');
    const ws = new WebSocket(target.webSocketDebuggerUrl);
    await alive(
      new Promise((resolve, reject) => {
        ws.onopen = resolve;
        ws.onerror = reject;
      }),
    );
    let next = 0;
    const pending = new Map<number, (m: Msg) => void>();
    const errors: string[] = [];
    const requests: string[] = [];
    let loaded: () => void = () => undefined;
    const load = new Promise<void>((r) => {
      loaded = r;
    });
    ws.onmessage = (ev) => {
      const m = JSON.parse(String(ev.data)) as Msg;
      if (m.id !== undefined) pending.get(m.id)?.(m);
      else if (m.method === 'Page.loadEventFired') loaded();
      else if (m.method === 'Runtime.consoleAPICalled' && ['error', 'warning', 'assert'].includes(m.params?.type))
        errors.push(
          `console.${m.params?.type}: ${JSON.stringify(m.params?.args?.map((a: any) => a.value ?? a.description))}`,
        );
      else if (m.method === 'Runtime.exceptionThrown')
        errors.push(
          `exception: ${m.params?.exceptionDetails?.exception?.description ?? m.params?.exceptionDetails?.text}`,
        );
      else if (m.method === 'Log.entryAdded' && ['error', 'warning'].includes(m.params?.entry?.level))
        errors.push(`log.${m.params?.entry?.level}: ${m.params?.entry?.text} ${m.params?.entry?.url ?? ''}`);
      else if (m.method === 'Network.requestWillBeSent') requests.push(String(m.params?.request?.url));
    };
    const call = (method: string, params: Record<string, unknown> = {}): Promise<any> =>
      alive(
        new Promise((resolve, reject) => {
          const id = ++next;
          pending.set(id, (m) =>
            m.error ? reject(new Error(`${method}: ${JSON.stringify(m.error)}`)) : resolve(m.result),
          );
          ws.send(JSON.stringify({ id, method, params }));
        }),
      );
    for (const d of ['Page', 'Runtime', 'Log', 'Network']) await call(`${d}.enable`);
    await call('Page.navigate', { url });
    await alive(load);
    const evaluated = await call('Runtime.evaluate', { expression, returnByValue: true });
    const shot = await call('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true });
    await call('Browser.close').catch(() => undefined);
    ws.close();
    return {
      errors,
      requests,
      value: evaluated.result?.value,
      png: Buffer.from(String(shot.data), 'base64'),
    };
  } finally {
    clearTimeout(timer);
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => {
        const t = setTimeout(() => {
          child.kill('SIGKILL');
          r(undefined);
        }, 5000);
        child.once('exit', () => {
          clearTimeout(t);
          r(undefined);
        });
      });
    }
    rmSync(profile, { recursive: true, force: true });
  }
}

/** Collects what the charts drew: per chart its title, its series with their points, crossover marks and bars. */
export const CHART_PROBE = `JSON.stringify([...document.querySelectorAll('svg.chart')].map((svg) => ({
  title: svg.getAttribute('aria-label'),
  kind: svg.classList.contains('line-chart') ? 'line' : 'bar',
  series: [...svg.querySelectorAll('g.series')].map((g) => ({
    name: g.getAttribute('data-series'),
    points: [...g.querySelectorAll('circle.point')].map((c) => ({ x: c.getAttribute('data-x'), y: Number(c.getAttribute('data-y')) })),
    intervals: g.querySelectorAll('line.ci').length,
    drawn: g.getBoundingClientRect().width > 0,
  })),
  crossovers: [...svg.querySelectorAll('g.crossover')].map((g) => Number(g.getAttribute('data-x'))),
  bars: [...svg.querySelectorAll('rect.bar')].map((r) => ({ series: r.getAttribute('data-series'), value: Number(r.getAttribute('data-value')), width: r.getBoundingClientRect().width })),
  barIntervals: svg.querySelectorAll('line.ci').length,
})))`;
