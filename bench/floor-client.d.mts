// Types of what the bench smoke test uses from floor-client.mjs (the bench itself is plain JavaScript).

export interface FloorClientEmulator {
  store: { get(id: string): { id: string; name: string; secret: string } | undefined };
}

export interface FloorClientResult {
  ms: number;
  cpuMs: number | undefined;
  code: number | string | null;
  ok: boolean;
  stderrTail: string | undefined;
  count: number;
  rotated: number;
  delivered: number;
  syncs: { journal: number; folder: number } | undefined;
  kinds: Record<'checkGet' | 'verifyGet' | 'post' | 'oauthToken' | 'discovery' | 'other' | 'status429', number>;
  peakInflight: number;
  connections: number;
}

/** One floor-client run over `count` due tokens against a fresh counted emulator, in a child process. */
export function floorClientRun(options: {
  count: number;
  latencyMs: number;
  concurrency?: number;
  inspect?: (out: string, emulator: FloorClientEmulator) => Promise<void>;
}): Promise<FloorClientResult>;
