// Preloaded (node --expose-gc --import) into the daemon of the heap benchmark: on SIGUSR2, a full
// garbage collection, then one JSON line to BENCH_HEAP_PROBE: the live heap, and the resident memory
// just before and after the collection. Nothing else changes in the daemon.
import { appendFileSync } from 'node:fs';

const out = process.env.BENCH_HEAP_PROBE;
if (out && typeof globalThis.gc === 'function') {
  process.on('SIGUSR2', () => {
    const rssBefore = process.memoryUsage.rss();
    globalThis.gc();
    const { heapUsed, rss } = process.memoryUsage();
    appendFileSync(out, JSON.stringify({ at: Date.now(), rssBefore, heapUsed, rss }) + '\n');
  });
}
