import { randomUUID } from 'node:crypto';
import { inspect } from 'node:util';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { SinkError } from '../../src/errors.js';
import { Secret } from '../../src/secret.js';
import { claimed } from '../../src/sinks/ownership.js';
import type { SinkClient, SinkContent, SinkOpenContext, SinkType, TokenMeta } from '../../src/sinks/sink.js';
import { expectNoLeak } from '../helpers/leaks.js';
import { rawLog } from '../helpers/raw-log.js';

/**
 * What a sink type gives the contract suite. `setup` is called afresh before every test, so each
 * test has its own destinations (a new temporary folder, a new namespace, a new secret path prefix).
 */
export interface SinkContractSetup<C extends { type: string }> {
  /** The sink type under test, exactly as the registry holds it. */
  type: SinkType<C>;
  /**
   * Everything `type.open()` needs but the logger: `env`, and `reference` for the credentials the
   * client takes by reference. The suite supplies the logger itself, one that keeps every line as
   * the client wrote it (the product's logger scrubs known secrets from each line, which would hide
   * a leak from this suite), and watches `reference`: a credential it gave the client must not show
   * in a log line or an error either.
   */
  context: Omit<SinkOpenContext, 'logger'>;
  /** A new destination that does not exist yet; every call gives another one. */
  config(): Promise<C> | C;
  /** Whether read() of this destination gives back the token id, expiry, rotation id and time written with it. */
  carriesMetadata(config: C): boolean;
  /**
   * Puts content at the destination that token-rotator did not write, holding `secret` the way
   * another writer would (a hand-made file, a Secret made with kubectl), without any mark of ours.
   */
  plantForeign(config: C, secret: Secret): Promise<void>;
  /** Makes writes to the destination fail (a file where its folder must be, a denied path). */
  breakDestination(config: C): Promise<void>;
  /** Removes whatever the setup made (the temporary folder, the namespace). */
  cleanup?(): Promise<void>;
}

/**
 * What a sink type declares about itself; the contract registers the tests that apply to it, and
 * checks the declaration where it can be seen (a wrong one fails, never skips).
 */
export interface SinkTraits {
  /**
   * Whether the sink can mark what it owns (a label, a custom metadata field beside the value):
   *
   * - `marker`: it must refuse to overwrite an existing destination that does not carry its mark,
   *   with an error that names the destination, and leave it as it was; unless the config says
   *   `adopt: true`. An operator's secret is never silently replaced.
   * - `adopts`: it has nowhere to put a mark (a raw or env file), so whatever is there is taken as
   *   the current secret: read() gives it back as content, which is what the rotation adopts on a
   *   name's first run and compares (by fingerprint) to find drift later; a write then replaces it.
   */
  ownership: 'adopts' | 'marker';
  /** Whether its client checks a destination before any token is regenerated (`preflight`). */
  preflight: boolean;
}

/** Metadata of a test write; the same values in new objects for each call, as each run builds them. */
function contractMeta(over: Partial<TokenMeta> = {}): TokenMeta {
  return {
    name: 'contract',
    id: 'tok-contract-1',
    expiresAt: new Date('2027-01-31T00:00:00.000Z'),
    rotationId: 'rotation-contract-1',
    rotatedAt: new Date('2026-12-01T12:00:00.000Z'),
    ...over,
  };
}

/** An error everywhere it could be shown: message, String(), stack, inspect(), a log line, and each cause. */
function errorOutputs(error: unknown): Record<string, string> {
  const log = rawLog();
  log.logger.error({ err: error }, 'delivery failed');
  const outputs: Record<string, string> = {
    'String(error)': String(error),
    'inspect(error)': inspect(error, { depth: Infinity }),
    'the error as a log line': log.lines.join(''),
  };
  let at: unknown = error;
  for (let depth = 0; at !== undefined && at !== null && depth < 20; depth++) {
    const where = depth === 0 ? 'error' : `cause #${depth}`;
    const e = at as { message?: unknown; stack?: unknown; cause?: unknown };
    outputs[`${where}.message`] = String(e.message);
    outputs[`${where}.stack`] = String(e.stack);
    outputs[`String(${where})`] = String(at);
    at = e.cause;
  }
  return outputs;
}

/** A marker sink's config with the policy's `adopt: true`: take a foreign destination over. */
function adoptingConfig<C>(config: C): C {
  return { ...config, adopt: true };
}

/** Whatever a promise rejects with; fails the test when it resolves. */
async function rejectionOf(promise: Promise<unknown>, what: string): Promise<unknown> {
  const settled = await promise.then(
    (value) => ({ resolved: true as const, value }),
    (error: unknown) => ({ resolved: false as const, error }),
  );
  if (settled.resolved) expect.fail(`${what} should have failed, but answered ${inspect(settled.value)}`);
  return settled.error;
}

/** Asserts that `content` holds exactly `secret`, without printing either. */
function expectSecret(content: SinkContent | undefined, secret: Secret, what: string): void {
  expect(content, `${what}: read() should give content`).toBeDefined();
  expect(content?.secret, `${what}: read() should find a secret in the content`).toBeDefined();
  expect(content?.secret?.equals(secret), `${what}: read() should give back that very secret`).toBe(true);
}

/**
 * The contract every sink type keeps (src/sinks/sink.ts), run against real destinations. A new sink
 * type calls this from its own test file with a setup for its kind of destination.
 */
export function sinkContract<C extends { type: string }>(
  name: string,
  traits: SinkTraits,
  setup: () => Promise<SinkContractSetup<C>> | SinkContractSetup<C>,
): void {
  describe(`sink contract: ${name}`, () => {
    let s: SinkContractSetup<C>;
    let log: ReturnType<typeof rawLog>;
    /** Clients this test opened and has not closed yet: closed after it. */
    let open: Set<SinkClient<C>>;
    /** Every secret value a test handed the sink: none may show in its log. */
    let secrets: { canary: Secret; next: Secret; foreign: Secret; values: string[] };
    /** The credentials `context.reference` gave the client: kept out of logs and errors like the secrets. */
    let credentials: string[];

    beforeEach(async () => {
      s = await setup();
      log = rawLog();
      open = new Set();
      const id = randomUUID();
      const values = [`xaat-canary-sink-contract-${id}`, `xaat-canary-sink-contract-next-${id}`, `xaat-foreign-sink-contract-${id}`];
      secrets = { canary: new Secret(values[0]!), next: new Secret(values[1]!), foreign: new Secret(values[2]!), values };
      credentials = [];
    });

    afterEach(async () => {
      try {
        await Promise.all([...open].map((client) => client.close()));
        expectNoLeak(logLines(), [...secrets.values, ...credentials]);
      } finally {
        await s.cleanup?.();
      }
    });

    const logLines = () => Object.fromEntries(log.lines.map((line, i) => [`log line ${i + 1}`, line]));

    async function openClient(): Promise<SinkClient<C>> {
      const reference = (variable: string) => {
        const credential = s.context.reference(variable);
        if (credential) credentials.push(credential.reveal());
        return credential;
      };
      const client = await s.type.open({ ...s.context, reference, logger: log.logger });
      open.add(client);
      return client;
    }

    async function closeClient(client: SinkClient<C>): Promise<void> {
      open.delete(client);
      await client.close();
    }

    it('answers created for a new destination, unchanged for the same secret and meta, updated for another secret', async () => {
      const client = await openClient();
      const config = await s.config();
      expect(await client.write(config, secrets.canary, contractMeta(), {})).toBe('created');
      // Equal, not identical: a run after a crash writes the secret and meta it rebuilt.
      expect(await client.write(config, new Secret(secrets.canary.reveal()), contractMeta(), {})).toBe('unchanged');
      expect(await client.write(config, secrets.next, contractMeta({ id: 'tok-contract-2' }), {})).toBe('updated');
      expect(await client.write(config, secrets.next, contractMeta({ id: 'tok-contract-2' }), {})).toBe('unchanged');
      expectSecret(await client.read(config, {}), secrets.next, 'after the update');
    });

    it('reads undefined from a destination that does not exist', async () => {
      const client = await openClient();
      expect(await client.read(await s.config(), {})).toBeUndefined();
    });

    it('reads back the secret written, and the metadata written with it where the sink carries metadata', async () => {
      const client = await openClient();
      const config = await s.config();
      const meta = contractMeta();
      await client.write(config, secrets.canary, meta, {});
      const content = await client.read(config, {});
      expectSecret(content, secrets.canary, 'after a write');

      const neverExpires = contractMeta({ id: 'tok-contract-2', expiresAt: null, rotationId: 'rotation-contract-2' });
      await client.write(config, secrets.next, neverExpires, {});
      const second = await client.read(config, {});
      expectSecret(second, secrets.next, 'after a second write');

      if (s.carriesMetadata(config)) {
        // What a lost state is recovered from: the current id, and the newest rotation by its time.
        expect(content?.meta).toMatchObject({
          id: meta.id,
          expiresAt: meta.expiresAt?.toISOString(),
          rotationId: meta.rotationId,
          rotatedAt: meta.rotatedAt.toISOString(),
        });
        expect(second?.meta, 'a token that never expires reads back as expiresAt: null, not as unknown').toMatchObject({
          id: neverExpires.id,
          expiresAt: null,
          rotationId: neverExpires.rotationId,
        });
      } else {
        // A sink said to carry no metadata must not make some up: the rotation would trust it.
        expect(content?.meta?.id, 'carriesMetadata() is false, yet read() gives a token id').toBeUndefined();
        expect(content?.meta?.rotationId, 'carriesMetadata() is false, yet read() gives a rotation id').toBeUndefined();
      }
    });

    it('keeps two destinations apart: distinct targets, and a write to one leaves the other missing', async () => {
      const client = await openClient();
      const [one, other] = [await s.config(), await s.config()];
      expect(s.type.target(one)).not.toBe(s.type.target(other));
      await client.write(one, secrets.canary, contractMeta(), {});
      expect(await client.read(other, {})).toBeUndefined();
      expect(await client.write(other, secrets.next, contractMeta(), {})).toBe('created');
      expectSecret(await client.read(one, {}), secrets.canary, 'the first destination');
    });

    it('rejects a write with an AbortError when the signal is already aborted, and writes nothing', async () => {
      const client = await openClient();
      const config = await s.config();
      const error = await rejectionOf(
        client.write(config, secrets.canary, contractMeta(), { signal: AbortSignal.abort() }),
        'an aborted write',
      );
      expect((error as Error)?.name).toBe('AbortError');
      expect(await client.read(config, {}), 'an aborted write must not create the destination').toBeUndefined();

      await client.write(config, secrets.canary, contractMeta(), {});
      const again = await rejectionOf(
        client.write(config, secrets.next, contractMeta(), { signal: AbortSignal.abort() }),
        'an aborted write',
      );
      expect((again as Error)?.name).toBe('AbortError');
      expectSecret(await client.read(config, {}), secrets.canary, 'after an aborted write over it');
    });

    it('rejects a read with an AbortError when the signal is already aborted', async () => {
      const client = await openClient();
      const config = await s.config();
      const missing = await rejectionOf(client.read(config, { signal: AbortSignal.abort() }), 'an aborted read of a missing destination');
      expect((missing as Error)?.name).toBe('AbortError');
      await client.write(config, secrets.canary, contractMeta(), {});
      const present = await rejectionOf(client.read(config, { signal: AbortSignal.abort() }), 'an aborted read');
      expect((present as Error)?.name).toBe('AbortError');
    });

    // Ownership: a `marker` sink guarantees that a destination it did not write is never replaced
    // behind the operator's back; an `adopts` sink guarantees that what is there is read back as
    // content, so the rotation adopts it on a name's first run or reports it as drift afterwards.
    if (traits.ownership === 'marker') registerMarkerTests();
    else registerAdoptsTests();

    function registerMarkerTests(): void {
      it('marker ownership: refuses to overwrite a destination it does not own, naming it, and leaves it as it was', async () => {
        const client = await openClient();
        const config = await s.config();
        await s.plantForeign(config, secrets.foreign);
        expectSecret(await client.read(config, {}), secrets.foreign, 'the planted content');

        const error = await rejectionOf(client.write(config, secrets.canary, contractMeta(), {}), 'a write over a foreign destination');
        expect(String((error as Error)?.message)).toContain(s.type.describe(config));
        expectNoLeak(errorOutputs(error), [secrets.canary.reveal(), secrets.foreign.reveal(), ...credentials]);
        expectSecret(await client.read(config, {}), secrets.foreign, 'after the refused write');
      });

      it('marker ownership: takes a foreign destination over when its config says adopt', async () => {
        const client = await openClient();
        const config = await s.config();
        await s.plantForeign(config, secrets.foreign);
        const adopting = adoptingConfig(config);
        expect(await client.write(adopting, secrets.canary, contractMeta(), {})).toBe('updated');
        expectSecret(await client.read(adopting, {}), secrets.canary, 'after the adopting write');
        // Once written, it is ours: the config without adopt writes there again.
        expect(await client.write(config, secrets.next, contractMeta(), {})).toBe('updated');
      });

      it('marker ownership is per token name: a destination written for another token is refused, even as recorded, unless adopted', async () => {
        const client = await openClient();
        const config = await s.config();
        expect(await client.write(config, secrets.foreign, contractMeta({ name: 'alpha' }), {})).toBe('created');
        expect((await client.read(config, {}))?.meta?.name, 'the metadata names the token it was written for').toBe('alpha');
        const beta = contractMeta({ name: 'beta', id: 'tok-beta-1', rotationId: 'rotation-beta-1' });
        for (const as of [config, claimed(config)]) {
          const error = await rejectionOf(client.write(as, secrets.canary, beta, {}), "a write over another token's destination");
          expect(String((error as Error)?.message)).toMatch(/names another token, "alpha"/);
          expect(String((error as Error)?.message)).toContain(s.type.describe(config));
        }
        expectSecret(await client.read(config, {}), secrets.foreign, 'after the refused writes');
        // The policy's adopt: true takes it over for beta.
        expect(await client.write(adoptingConfig(config), secrets.canary, beta, {})).toBe('updated');
        expect((await client.read(config, {}))?.meta?.name).toBe('beta');
      });
    }

    function registerAdoptsTests(): void {
      it('adopts ownership: reads back foreign content as the current secret, and a write replaces it', async () => {
        const client = await openClient();
        const config = await s.config();
        await s.plantForeign(config, secrets.foreign);
        expectSecret(await client.read(config, {}), secrets.foreign, 'the planted content');
        expect(await client.write(config, secrets.canary, contractMeta(), {})).toBe('updated');
        expectSecret(await client.read(config, {}), secrets.canary, 'after the write over it');
      });
    }

    it('never puts the secret or a credential in describe(), target() or the config, before or after writing it', async () => {
      const client = await openClient();
      const config = await s.config();
      const show = () => ({
        describe: s.type.describe(config),
        target: s.type.target(config),
        config: inspect(config, { depth: Infinity }),
      });
      const before = show();
      await client.write(config, secrets.canary, contractMeta(), {});
      await client.read(config, {});
      expectNoLeak(show(), [...secrets.values, ...credentials]);
      expect(show(), 'writing must not change how the destination is described or identified').toEqual(before);
    });

    it('fails a write to a broken destination with a SinkError that names the destination', async () => {
      const client = await openClient();
      const config = await s.config();
      await s.breakDestination(config);
      const error = await rejectionOf(client.write(config, secrets.canary, contractMeta(), {}), 'a write to a broken destination');
      expect(error).toBeInstanceOf(SinkError);
      expect((error as SinkError).code).toBe('ERR_SINK');
      expect((error as SinkError).message).toContain(s.type.describe(config));
    });

    it('keeps the secret out of a failed write’s error: message, String(), inspect(), its log line and every cause', async () => {
      const client = await openClient();
      const config = await s.config();
      await s.breakDestination(config);
      const error = await rejectionOf(client.write(config, secrets.canary, contractMeta(), {}), 'a write to a broken destination');
      expectNoLeak(errorOutputs(error), [secrets.canary.reveal(), ...credentials]);
    });

    it('writes no secret and no credential to its log, whatever happens', async () => {
      const client = await openClient();
      const config = await s.config();
      await client.write(config, secrets.canary, contractMeta(), {});
      await client.write(config, secrets.canary, contractMeta(), {});
      await client.read(config, {});
      await client.write(config, secrets.next, contractMeta(), {}).catch(() => undefined);
      await client.write(config, secrets.canary, contractMeta(), { signal: AbortSignal.abort() }).catch(() => undefined);
      const foreign = await s.config();
      await s.plantForeign(foreign, secrets.foreign);
      await client.read(foreign, {});
      await client.write(foreign, secrets.canary, contractMeta(), {}).catch(() => undefined);
      const broken = await s.config();
      await s.breakDestination(broken);
      await client.write(broken, secrets.canary, contractMeta(), {}).catch(() => undefined);
      await client.read(broken, {}).catch(() => undefined);
      await closeClient(client);
      expectNoLeak(logLines(), [...secrets.values, ...credentials]);
    });

    it('closes after use without throwing, and a second client works on its own', async () => {
      const first = await openClient();
      const config = await s.config();
      await first.write(config, secrets.canary, contractMeta(), {});
      const second = await openClient();
      expect(second).not.toBe(first);
      expectSecret(await second.read(config, {}), secrets.canary, 'the second client reading what the first wrote');

      await expect(closeClient(first)).resolves.toBeUndefined();
      expect(await second.write(config, secrets.next, contractMeta({ id: 'tok-contract-2' }), {})).toBe('updated');
      expectSecret(await second.read(config, {}), secrets.next, 'the second client after the first closed');
      await expect(closeClient(second)).resolves.toBeUndefined();

      const third = await openClient();
      expectSecret(await third.read(config, {}), secrets.next, 'a client opened after both closed');
    });

    it(`declares its preflight truly (${traits.preflight ? 'has one' : 'has none'})`, async () => {
      expect(typeof (await openClient()).preflight).toBe(traits.preflight ? 'function' : 'undefined');
    });

    if (traits.preflight)
      it('preflight passes for a new destination without creating it and fails for a broken one', async () => {
        const client = await openClient();
        const config = await s.config();
        await expect(client.preflight!(config, {})).resolves.toBeUndefined();
        expect(await client.read(config, {}), 'preflight must not create the destination').toBeUndefined();
        const broken = await s.config();
        await s.breakDestination(broken);
        await rejectionOf(client.preflight!(broken, {}), 'preflight of a broken destination');
      });
  });
}
