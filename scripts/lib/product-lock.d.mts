// Types of product-lock.mjs, for the tests that import it (the scripts are plain JavaScript).

export interface LockEntry {
  [key: string]: unknown;
  version?: string;
  link?: boolean;
  resolved?: string;
  dev?: boolean;
  optional?: boolean;
  devOptional?: boolean;
  peer?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  devDependencies?: Record<string, string>;
}

export interface Lock {
  [key: string]: unknown;
  lockfileVersion?: number;
  packages?: Record<string, LockEntry>;
}

export interface Manifest {
  [key: string]: unknown;
  name?: string;
  workspaces?: unknown;
  devDependencies?: Record<string, string>;
}

/** The product's package.json (no `workspaces`) and its lock reduced to its own dependency closure. */
export function productLock(manifest: Manifest, lock: Lock, options?: { omitDev?: boolean }): { manifest: Manifest; lock: Lock };
