/**
 * The Cilium preflight of a scale sweep against the live cluster: reads
 * `bpf-lb-map-max` from the cilium-config ConfigMap and refuses a sweep whose
 * largest step would overflow Cilium's LB map, saying the exact fix; or, only
 * when the operator allowed it, raises the value and puts the old one back at
 * the end. No cilium-config ConfigMap means no Cilium: nothing to check.
 */
import { type CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import { type LbMapPreflight, lbMapPreflight } from '../runs/cilium-preflight.js';
import { type Pacer, statusOf } from './pacer.js';

const NAME = 'cilium-config';
const KEY = 'bpf-lb-map-max';

export class CiliumConfig {
  /** The value before we changed it ('' when unset), while a change is in place. */
  private original: string | undefined;

  constructor(
    private readonly core: CoreV1Api,
    private readonly pacer: Pacer,
    private readonly namespace: string,
    private readonly log: Logger,
  ) {}

  /** Undefined when the cluster has no cilium-config. */
  async read(): Promise<Record<string, string> | undefined> {
    try {
      const cm = await this.core.readNamespacedConfigMap({ name: NAME, namespace: this.namespace });
      return cm.data ?? {};
    } catch (err) {
      if (statusOf(err).status === 404) return undefined;
      throw new CniBenchError(
        ErrorCodes.KUBERNETES,
        `read configmap ${this.namespace}/${NAME}: ${statusOf(err).status ?? (err as Error).message}`,
        { cause: err },
      );
    }
  }

  async ensureFits(
    services: number,
    endpointsPerService: number,
    allowChange: boolean,
  ): Promise<LbMapPreflight | undefined> {
    const data = await this.read();
    if (!data) return undefined;
    const check = lbMapPreflight(services, endpointsPerService, data);
    if (check.fits) return check;
    if (!allowChange) {
      throw new CniBenchError(
        ErrorCodes.VALIDATION,
        `serviceScale.steps: ${services} Services x (${endpointsPerService} endpoints + 1) need ${check.needed} Cilium LB map entries and bpf-lb-map-max is ${check.max}; the map would overflow and show as a false RPS collapse. Fix: ${check.fix}`,
        { details: { field: 'serviceScale.steps', needed: check.needed, max: check.max, fix: check.fix } },
      );
    }
    const suggested = /"bpf-lb-map-max":"(\d+)"/.exec(check.fix)?.[1] ?? String(check.needed);
    this.original = data[KEY] ?? '';
    await this.patch(suggested);
    this.log.warn('raised cilium bpf-lb-map-max for the sweep (cilium agents must restart to apply it)', {
      from: this.original || '(unset)',
      to: suggested,
    });
    return check;
  }

  /** Puts back what ensureFits changed. Never throws (logs). */
  async revert(): Promise<void> {
    if (this.original === undefined) return;
    const value = this.original;
    try {
      await this.patch(value === '' ? null : value);
      this.original = undefined;
    } catch (err) {
      this.log.error('cannot restore cilium bpf-lb-map-max', { value, error: (err as Error).message });
    }
  }

  private async patch(value: string | null): Promise<void> {
    await this.pacer.run(`patch configmap ${this.namespace}/${NAME}`, () =>
      this.core.patchNamespacedConfigMap(
        { name: NAME, namespace: this.namespace, body: { data: { [KEY]: value } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
  }
}
