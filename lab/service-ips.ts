/**
 * ClusterIP allocation for a lab's own Services, from 198.19.0.0/17 (the upper
 * half holds a sweep's dummy Services). A name keeps its ClusterIP for the
 * lab's lifetime: a Service re-created at a new IP right after the old one went
 * away makes new connections clash with the old ones' conntrack entries (same
 * endpoint tuple, still in TIME_WAIT), which showed up as short-connection runs
 * at a third of their rate.
 */
import { CniBenchError, ErrorCodes } from '../core/errors.js';

export class ServiceIps {
  private readonly ips = new Map<string, string>();
  private next = 10;

  allocate(name: string): string {
    const known = this.ips.get(name);
    if (known) return known;
    const n = this.next++;
    if (n >= 128 * 256) throw new CniBenchError(ErrorCodes.LAB, 'lab service range 198.19.0.0/17 exhausted');
    const ip = `198.19.${n >> 8}.${n & 255}`;
    this.ips.set(name, ip);
    return ip;
  }
}
