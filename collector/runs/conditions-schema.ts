/**
 * The scenario's overhead conditions: each measurement is repeated under every
 * condition named here, after its baseline, and the report shows both side by
 * side (report/conditions.ts). Validated with the scenario; errors name the field.
 */
import { z } from 'zod';

export const DEFAULT_POLICY_COUNT_STEPS = [0, 100, 500, 1000];

export const conditionsSchema = z.strictObject({
  /** N NetworkPolicy objects selecting the server pod, the first allowing only the run's clients. */
  networkPolicy: z.strictObject({ policies: z.number().int().min(1).max(10_000).default(1) }).optional(),
  /** A sweep over the number of policies selecting the server pod; enforcement verified at each step. */
  policyCount: z
    .strictObject({
      steps: z
        .array(z.number().int().min(0).max(10_000))
        .min(1)
        .max(20)
        .default(DEFAULT_POLICY_COUNT_STEPS)
        .refine((s) => s.every((n, i) => i === 0 || n > (s[i - 1] as number)), 'steps must increase'),
    })
    .optional(),
  /** A CiliumNetworkPolicy with an HTTP rule allowing GET on urlPath only. */
  l7Policy: z
    .strictObject({
      urlPath: z
        .string()
        .regex(/^\/[A-Za-z0-9._~\-/]*$/, 'an absolute path of letters, digits and ._~-/')
        .default('/'),
    })
    .optional(),
  /** Hubble on against off. */
  hubble: z.strictObject({}).optional(),
  /** Transparent encryption (WireGuard or IPsec) on against off. */
  encryption: z.strictObject({}).optional(),
});

export type ConditionsSpec = z.output<typeof conditionsSchema>;
