import { sinkContract } from '../contracts/sink-contract.js';
import { type MemorySinkConfig, MemorySinkStore } from '../fakes/memory-sink.js';

/**
 * The in-memory sink the protocol tests deliver to is held to the same contract as the real sink
 * types: a fake that behaves otherwise would make those tests prove nothing.
 */
for (const keepsMeta of [true, false]) {
  sinkContract(`memory (${keepsMeta ? 'keeps metadata' : 'secret only, as a raw file'})`, { ownership: 'adopts', preflight: false }, () => {
    const store = new MemorySinkStore({ keepsMeta });
    let count = 0;
    return {
      type: store.type(),
      context: { env: {}, reference: () => undefined },
      config: (): MemorySinkConfig => ({ type: 'memory', key: `key-${(count += 1)}` }),
      carriesMetadata: () => keepsMeta,
      plantForeign: async (config: MemorySinkConfig, secret) => store.put(config.key, secret.reveal()),
      breakDestination: async (config: MemorySinkConfig) => store.failWrites(config.key),
    };
  });
}
