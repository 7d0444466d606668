import type { ResourceType } from '../resource-types.js';
import { coreEventView } from './core-event-view.js';
import { eventStrategy } from './event-strategy.js';
import type { KindStrategy } from './kind-strategy.js';
import { leaseStrategy } from './lease-strategy.js';
import { namespaceStrategy } from './namespace-strategy.js';
import { secretStrategy } from './secret-strategy.js';
import { daemonSetStrategy, deploymentStrategy, statefulSetStrategy } from './workload-strategies.js';

export { DecodeError, type KindStrategy, type TableColumn } from './kind-strategy.js';

const STRATEGIES: readonly KindStrategy[] = [
  namespaceStrategy,
  secretStrategy,
  leaseStrategy,
  deploymentStrategy,
  statefulSetStrategy,
  daemonSetStrategy,
  eventStrategy,
  coreEventView,
];

export function strategyFor(type: ResourceType): KindStrategy {
  const strategy = STRATEGIES.find((s) => s.type === type);
  if (!strategy) throw new Error(`no strategy for ${type.resource}`);
  return strategy;
}
