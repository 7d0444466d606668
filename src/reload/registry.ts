import type { Reference } from '../common/reference.js';
import type { ReloadType } from './reload.js';
import type { RolloutReloadConfig } from './rollout/rollout-config.js';
import { rolloutReloadType } from './rollout/rollout-reload-type.js';
import type { WebhookReloadConfig } from './webhook/webhook-config.js';
import { webhookReloadType } from './webhook/webhook-reload-type.js';

/** Every reload type, checked by the compiler: a new one is one entry here and one folder. */
export const reloadTypes = {
  rollout: rolloutReloadType,
  webhook: webhookReloadType,
} satisfies { [K in ReloadConfig['type']]: ReloadType<Extract<ReloadConfig, { type: K }>> };

export type ReloadConfig = RolloutReloadConfig | WebhookReloadConfig;

/** Widened so that each type's methods take any config: every caller looks a type up by its own config's `type`. */
export const reloadTypesByName = reloadTypes as unknown as Readonly<Record<ReloadConfig['type'], ReloadType<ReloadConfig>>>;

export function isReloadType(type: unknown): type is ReloadConfig['type'] {
  return typeof type === 'string' && Object.hasOwn(reloadTypes, type);
}

export const describeReload = (config: ReloadConfig) => reloadTypesByName[config.type].describe(config);

export const reloadReferences = (config: ReloadConfig): Reference[] => reloadTypesByName[config.type].references?.(config) ?? [];
