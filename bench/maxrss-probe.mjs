// Preloaded (node --import) into a CLI run by the benchmarks when /usr/bin/time is absent: writes
// the process's peak resident memory (getrusage's ru_maxrss, kilobytes) to BENCH_MAXRSS_OUT at exit.
import { writeFileSync } from 'node:fs';

const out = process.env.BENCH_MAXRSS_OUT;
if (out) process.on('exit', () => writeFileSync(out, `${process.resourceUsage().maxRSS}\n`));
