/**
 * What this machine can and cannot put in place, found by trying it in a
 * throwaway network namespace (never assumed from a version number): the
 * nftables `queue` statement kube-network-policies needs, WireGuard links,
 * IPsec with the AEAD cipher Cilium uses, and Cilium's Envoy for L7 policy.
 * Each answer is a sentence the report shows when a condition cannot run.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findOnPath, run } from '../../core/process.js';

export interface Support {
  ok: boolean;
  /** Why not (the tool's own message included), or what worked. */
  reason: string;
}

async function inThrowawayNs<T>(fn: (ns: string) => Promise<T>): Promise<T> {
  const ns = `cnibprobe-${randomBytes(3).toString('hex')}`;
  await run('ip', ['netns', 'add', ns], { tool: 'ip', timeoutMs: 10_000 });
  try {
    return await fn(ns);
  } finally {
    await run('ip', ['netns', 'del', ns], { tool: 'ip', timeoutMs: 10_000 }).catch(() => undefined);
  }
}

function firstLine(s: string): string {
  return s.trim().split('\n').filter(Boolean).slice(0, 2).join(' ').slice(0, 200);
}

/** Can nftables queue packets to userspace (nft_queue, kernel CONFIG_NFT_QUEUE)? kube-network-policies' only rule needs it. */
export function nftQueueSupport(): Promise<Support> {
  return inThrowawayNs(async (ns) => {
    const file = join(tmpdir(), `${ns}.nft`);
    writeFileSync(
      file,
      'table inet t {\n chain c {\n  type filter hook postrouting priority 95;\n  queue num 100 bypass\n }\n}\n',
    );
    try {
      const r = await run('ip', ['netns', 'exec', ns, 'nft', '-f', file], {
        tool: 'nft',
        okExitCodes: [0, 1],
        timeoutMs: 10_000,
      });
      return r.exitCode === 0
        ? { ok: true, reason: 'nftables queue statement accepted' }
        : {
            ok: false,
            reason: `this kernel cannot queue packets from nftables (no nft_queue, CONFIG_NFT_QUEUE): nft says "${firstLine(r.stderr)}"`,
          };
    } finally {
      unlinkSync(file);
    }
  });
}

export function wireguardSupport(): Promise<Support> {
  return inThrowawayNs(async (ns) => {
    const r = await run('ip', ['-n', ns, 'link', 'add', 'wg0', 'type', 'wireguard'], {
      tool: 'ip',
      okExitCodes: [0, 1, 2],
      timeoutMs: 10_000,
    });
    return r.exitCode === 0
      ? { ok: true, reason: 'a WireGuard link can be created' }
      : { ok: false, reason: `WireGuard is absent from this kernel: ip says "${firstLine(r.stderr)}"` };
  });
}

/** IPsec as Cilium sets it up: an xfrm state with rfc4106(gcm(aes)), the AEAD its default key uses. */
export function ipsecSupport(): Promise<Support> {
  return inThrowawayNs(async (ns) => {
    const key = `0x${'ab'.repeat(20)}`;
    const r = await run(
      'ip',
      [
        '-n',
        ns,
        'xfrm',
        'state',
        'add',
        'src',
        '198.18.250.1',
        'dst',
        '198.18.250.2',
        'proto',
        'esp',
        'spi',
        '0x100',
        'reqid',
        '1',
        'mode',
        'tunnel',
        'aead',
        'rfc4106(gcm(aes))',
        key,
        '128',
      ],
      { tool: 'ip', okExitCodes: [0, 1, 2, 255], timeoutMs: 10_000 },
    );
    return r.exitCode === 0
      ? { ok: true, reason: 'an xfrm state with rfc4106(gcm(aes)) can be created' }
      : {
          ok: false,
          reason: `IPsec: this kernel's xfrm lacks the AEAD cipher rfc4106(gcm(aes)) Cilium uses: ip says "${firstLine(r.stderr)}"`,
        };
  });
}

/** Cilium's L7 policy runs in its Envoy proxy (cilium-envoy); is there a build of it next to the agent or on PATH? */
export async function envoySupport(ciliumDir: string | undefined): Promise<Support> {
  const beside = ciliumDir ? join(ciliumDir, 'cilium-envoy') : undefined;
  const found = (beside && existsSync(beside) ? beside : undefined) ?? (await findOnPath('cilium-envoy'));
  return found
    ? { ok: true, reason: `cilium-envoy at ${found}` }
    : {
        ok: false,
        reason:
          "L7 policy is enforced by Cilium's Envoy proxy, and this machine has no cilium-envoy build (none beside the agent, none on PATH); the lab runs the agents with --enable-l7-proxy=false, so an HTTP rule cannot be enforced here",
      };
}
