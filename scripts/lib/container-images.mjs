// Every container image a rendered manifest runs, wherever its kind keeps its pod spec (a Pod, a
// Deployment's template, a CronJob's job template...): any containers, initContainers or
// ephemeralContainers list, found by walking the object.

const CONTAINER_LISTS = new Set(['containers', 'initContainers', 'ephemeralContainers']);

/**
 * @param {unknown} object a rendered Kubernetes object
 * @returns {{ container: string, image: string }[]}
 */
export function containerImages(object) {
  /** @type {{ container: string, image: string }[]} */
  const found = [];
  const visit = (/** @type {unknown} */ value) => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value !== null && typeof value === 'object')
      for (const [key, child] of Object.entries(value)) {
        if (CONTAINER_LISTS.has(key) && Array.isArray(child))
          for (const container of child) found.push({ container: String(container?.name), image: String(container?.image) });
        visit(child);
      }
  };
  visit(object);
  return found;
}
