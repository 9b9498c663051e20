/**
 * The real built CLI as a user meets it, run as a child process: every
 * command's and subcommand's --help/-h and --version on stdout with exit 0,
 * a bad flag or value on stderr with exit 2 naming the flag. Also the flag
 * schema (core/flags.ts) on its own: defaults, environment, frozen values.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { AGENT_ENV } from '../../../agent/config.js';
import { command as agents } from '../../../cli/agents-command.js';
import { command as cancel } from '../../../cli/cancel-command.js';
import { command as cleanup } from '../../../cli/cleanup-command.js';
import { command as cluster } from '../../../cli/cluster-command.js';
import { command as compare } from '../../../cli/compare-command.js';
import { command as doctor } from '../../../cli/doctor-command.js';
import { command as lab } from '../../../cli/lab-command.js';
import { command as monitor } from '../../../cli/monitor-command.js';
import { command as report } from '../../../cli/report-command.js';
import { command as runCmd } from '../../../cli/run-command.js';
import { command as runs } from '../../../cli/runs-command.js';
import { checkCommand, schemaCommand } from '../../../cli/scenario-command.js';
import { command as study } from '../../../cli/study-command.js';
import { command as sweep } from '../../../cli/sweep-command.js';
import { COLLECTOR_ENV } from '../../../collector/config.js';
import { isCniBenchError } from '../../../core/errors.js';
import { type CommandSpec, helpText, numberFlag, parseFlags, stringFlag, switchFlag } from '../../../core/flags.js';
import { VERSION } from '../../../core/version.js';
import { AGENT_MAIN, CLI_MAIN, COLLECTOR_MAIN } from '../../support/helpers/procs.js';

const run = promisify(execFile);

async function cli(args: string[], main = CLI_MAIN): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [main, ...args], {
      env: { ...process.env, CNI_BENCH_LOG_LEVEL: 'error' },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const COMMANDS: [string[], CommandSpec | undefined][] = [
  [[], undefined],
  [['lab'], lab.spec],
  [['lab', 'sweep'], sweep.spec],
  [['lab', 'study'], study.spec],
  [['lab', 'monitor'], monitor.spec],
  [['lab', 'cleanup'], cleanup.spec],
  [['compare'], compare.spec],
  [['doctor'], doctor.spec],
  [['run'], runCmd.spec],
  [['runs'], runs.spec],
  [['report'], report.spec],
  [['cancel'], cancel.spec],
  [['cluster'], cluster.spec],
  [['agents'], agents.spec],
  [['scenario', 'schema'], schemaCommand.spec],
  [['scenario', 'check'], checkCommand.spec],
];

for (const [words, spec] of COMMANDS) {
  const name = ['cni-bench', ...words].join(' ');
  test(`${name} --help and -h print its flags, defaults and an example on stdout, exit 0`, async () => {
    for (const h of ['--help', '-h']) {
      const r = await cli([...words, h]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, '');
      assert.ok(r.stdout.startsWith(`usage: ${name} `), r.stdout);
      assert.match(r.stdout, /\nexamples?:\n {2}cni-bench/);
      assert.match(r.stdout, /--version +print the version/);
      for (const [flag, f] of Object.entries(spec?.flags ?? {})) {
        assert.ok(r.stdout.includes(`--${flag}`), `${name} --help lacks --${flag}`);
        if (f.env) assert.ok(r.stdout.includes(`env ${f.env}`), `${name} --help lacks env ${f.env}`);
      }
    }
  });

  test(`${name} --version prints the version on stdout, exit 0; --bogus exits 2 naming it on stderr`, async () => {
    const v = await cli([...words, '--version']);
    assert.deepEqual([v.code, v.stderr], [0, '']);
    assert.ok(v.stdout.startsWith(`cni-bench ${VERSION} (node v`), v.stdout);
    const bad = await cli([...words, '--bogus']);
    assert.equal(bad.code, 2, bad.stderr);
    assert.equal(bad.stdout, '');
    assert.match(bad.stderr, /^cni-bench: --bogus: unknown flag \(see cni-bench.* --help\)\n$/);
  });
}

test('a bad value or a missing one exits 2 and names the flag; so does an unknown command', async () => {
  const cases: [string[], RegExp][] = [
    [['lab', '--nodes', 'x'], /^cni-bench: --nodes: must be an integer >= 2, got 'x'\n$/],
    [['lab', '--nodes'], /^cni-bench: --nodes: needs a value/],
    [['lab', '--proxy-mode', 'ipvs'], /^cni-bench: --proxy-mode: must be one of iptables, nftables, got 'ipvs'/],
    [['lab', 'sweep', '--steps', '0,,5'], /^cni-bench: --steps: must be a comma-separated list/],
    [
      ['lab', 'sweep', '--modes', 'iptables,ipvs'],
      /^cni-bench: --modes: must be one of iptables, nftables, kube-proxy-iptables, kube-proxy-nftables, cilium, cilium-vxlan, got 'ipvs'/,
    ],
    [
      ['lab', 'study', '--dataplanes', 'iptables,calico'],
      /^cni-bench: --dataplanes: must be one of iptables, nftables, kube-proxy-iptables, kube-proxy-nftables, cilium, cilium-vxlan, got 'calico'/,
    ],
    [
      ['lab', 'study', '--steps', '0,5000,2000'],
      /^cni-bench: invalid scenario: serviceScale\.steps\[2\]: steps must increase/,
    ],
    [['lab', 'monitor', '--interval', '0.1'], /^cni-bench: --interval: must be a number >= 0.5/],
    [['compare', 'a.json', 'b.json', '--noise-floor', 'lots'], /^cni-bench: --noise-floor: /],
    [['lab', 'stray'], /^cni-bench: stray: unexpected argument/],
    [['frobnicate'], /^cni-bench: unknown command 'frobnicate'/],
  ];
  for (const [args, re] of cases) {
    const r = await cli(args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, re, args.join(' '));
  }
});

for (const [name, main, env] of [
  ['cni-bench-agent', AGENT_MAIN, AGENT_ENV],
  ['cni-bench-collector', COLLECTOR_MAIN, COLLECTOR_ENV],
] as const) {
  test(`${name} --help/-h lists every flag with its environment variable; --version; a bad flag exits 2 naming it`, async () => {
    for (const h of ['--help', '-h']) {
      const r = await cli([h], main);
      assert.deepEqual([r.code, r.stderr], [0, '']);
      assert.ok(r.stdout.startsWith(`usage: ${name} [FLAGS]`), r.stdout);
      assert.match(r.stdout, /\nexamples?:\n {2}/);
      for (const variable of Object.values(env))
        assert.ok(r.stdout.includes(`env ${variable})`), `${name} --help lacks ${variable}`);
    }
    const v = await cli(['--version'], main);
    assert.deepEqual([v.code, v.stderr], [0, '']);
    assert.ok(v.stdout.startsWith(`${name} ${VERSION} (node v`), v.stdout);
    const bad = await cli(['--bogus'], main);
    assert.equal(bad.code, 2);
    assert.equal(bad.stdout, '');
    assert.match(bad.stderr, new RegExp(`^${name}: .*'--bogus'`));
  });
}

const spec = {
  usage: 'demo',
  summary: 'A demo.',
  flags: {
    count: numberFlag({ help: 'how many', default: 3, min: 1, integer: true }),
    db: stringFlag({ help: 'store', value: 'FILE', default: '/default.db', env: 'DEMO_DB' }),
    verbose: switchFlag({ help: 'say more' }),
  },
  examples: ['demo --count 2'],
} satisfies CommandSpec;

test('parseFlags: defaults, environment under flags, frozen values, errors naming the flag or variable', () => {
  const d = parseFlags(spec, []);
  assert.deepEqual({ ...d.values }, { count: 3, db: '/default.db', verbose: false });
  assert.ok(Object.isFrozen(d.values));
  assert.equal(parseFlags(spec, [], { DEMO_DB: '/env.db' }).values.db, '/env.db');
  assert.equal(parseFlags(spec, ['--db', '/flag.db'], { DEMO_DB: '/env.db' }).values.db, '/flag.db');
  assert.deepEqual(
    { ...parseFlags(spec, ['--count=7', '--verbose']).values },
    { count: 7, db: '/default.db', verbose: true },
  );
  assert.equal(parseFlags(spec, ['--count', 'x', '-h']).help, true);
  assert.throws(
    () => parseFlags(spec, ['--count', '1.5']),
    (e: unknown) => isCniBenchError(e, 'E_VALIDATION') && e.message === "--count: must be an integer >= 1, got '1.5'",
  );
  assert.throws(
    () => parseFlags(spec, ['--verbose=yes']),
    (e: unknown) => isCniBenchError(e, 'E_VALIDATION') && e.message.startsWith('--verbose: '),
  );
  const help = helpText(spec);
  assert.match(help, /--count N +how many \(default 3\)/);
  assert.match(help, /--db FILE +store \(default \/default\.db; env DEMO_DB\)/);
  assert.match(help, /--verbose +say more\n/);
});
