import { cloneJson, type JsonObject, metadataOf, stringAt } from './json.js';
import type { ResourceType } from './resource-types.js';

/**
 * The double's etcd: objects by resource, namespace and name, and one resourceVersion counter for
 * the whole server (every write takes the next value, so versions increase across all objects).
 * It holds what it is given; callers clone on the way in and out.
 */
export class ObjectStore {
  private objects = new Map<string, JsonObject>();
  private revision = 1000;

  /** The version the next write gets. */
  nextResourceVersion(): string {
    this.revision += 1;
    return String(this.revision);
  }

  /** The newest version written, which a list reports as its own. */
  currentResourceVersion(): string {
    return String(this.revision);
  }

  get(type: ResourceType, namespace: string | undefined, name: string): JsonObject | undefined {
    return this.objects.get(key(type, namespace, name));
  }

  /** In key order (namespace, then name), as etcd lists them. */
  list(type: ResourceType, namespace: string | undefined): JsonObject[] {
    const { group, resource } = type.viewOf ?? type;
    const prefix = namespace === undefined || !type.namespaced ? `${group}/${resource}/` : `${group}/${resource}/${namespace}/`;
    return [...this.objects]
      .filter(([k]) => k.startsWith(prefix))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, object]) => object);
  }

  put(type: ResourceType, object: JsonObject): void {
    const metadata = metadataOf(object);
    this.objects.set(key(type, stringAt(metadata, 'namespace'), stringAt(metadata, 'name') ?? ''), object);
  }

  remove(type: ResourceType, namespace: string | undefined, name: string): boolean {
    return this.objects.delete(key(type, namespace, name));
  }

  /** Runs `work` and then puts every object and the version counter back (a dry run). */
  rolledBack<T>(work: () => T): T {
    const objects = new Map(this.objects);
    const revision = this.revision;
    try {
      return work();
    } finally {
      this.objects = objects;
      this.revision = revision;
    }
  }

  snapshot(type: ResourceType, namespace: string | undefined, name: string): JsonObject | undefined {
    const object = this.get(type, namespace, name);
    return object ? cloneJson(object) : undefined;
  }
}

/** A view (see ResourceType.viewOf) shares the key of the resource it shows. */
function key(type: ResourceType, namespace: string | undefined, name: string): string {
  const { group, resource } = type.viewOf ?? type;
  return type.namespaced ? `${group}/${resource}/${namespace ?? ''}/${name}` : `${group}/${resource}/${name}`;
}
