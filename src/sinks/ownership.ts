/**
 * The config as for a destination the state records this name delivering to: its ownership marker
 * may be gone (a Secret re-created by hand, a version added without tags, custom metadata
 * replaced), but it is still ours to write, and writing it restores the marker. Sink types that
 * carry no marker (files, programs) are returned as they are.
 */
export function claimed<C extends { type: string }>(config: C): C {
  return 'adopt' in config && config.adopt !== true ? { ...config, adopt: true } : config;
}
