import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { readEnvironment, readSettings } from '../../src/config/env.js';
import { ConfigError } from '../../src/errors.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const OAUTH = {
  ROTATOR_API_URL: 'https://api.axiom.co',
  ROTATOR_OAUTH_ISSUER: 'https://login.example.com',
  ROTATOR_OAUTH_CLIENT_ID: 'rotator',
  ROTATOR_OAUTH_CLIENT_SECRET: 'canary-client-secret-0001',
};

function issuesOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('readSettings', () => {
  it('reads OAuth client credentials with defaults', () => {
    const settings = readSettings(OAUTH, '/work');
    expect(settings.apiUrl.href).toBe('https://api.axiom.co/');
    expect(settings.auth).toMatchObject({ kind: 'oauth', clientId: 'rotator', method: 'client_secret_basic' });
    expect(settings.stateDir).toBe('/work/.token-rotator');
    expect(settings.httpTimeoutMs).toBe(30_000);
    expect(settings.concurrency).toBe(16);
  });

  it('keeps the client secret out of anything printable', () => {
    const settings = readSettings(OAUTH, '/work');
    expect(JSON.stringify(settings)).not.toContain('canary-client-secret-0001');
    expect(String(settings.auth.kind === 'oauth' && settings.auth.clientSecret)).toBe('[REDACTED]');
  });

  it('reads a static bearer with an org id', () => {
    const settings = readSettings(
      { ROTATOR_API_URL: 'https://api.axiom.co', ROTATOR_ACCESS_TOKEN: 'xapt-canary-0002', ROTATOR_ORG_ID: 'acme' },
      '/w',
    );
    expect(settings.auth.kind).toBe('static');
    expect(settings.orgId).toBe('acme');
  });

  it.each([
    ['ROTATOR_API_URL', 'http://api.example.com'],
    ['ROTATOR_OAUTH_ISSUER', 'http://10.0.0.5:8080'],
  ])('refuses plain http for %s on a host that is not loopback, naming the variable', (name, value) => {
    expect(issuesOf(() => readSettings({ ...OAUTH, [name]: value }, '/w'))).toEqual([
      `env.${name}: plain http:// is only allowed for loopback hosts (127.0.0.1, ::1, localhost); use https://`,
    ]);
  });

  it.each(['http://127.0.0.1:8080', 'http://127.3.4.5', 'http://localhost:9', 'http://[::1]:80'])(
    'accepts plain http on loopback: %s',
    (url) => {
      expect(readSettings({ ...OAUTH, ROTATOR_API_URL: url }, '/w').apiUrl.protocol).toBe('http:');
    },
  );

  it('reports every problem at once', () => {
    expect(
      issuesOf(() =>
        readSettings(
          {
            ROTATOR_OAUTH_TOKEN_URL: 'ftp://x',
            ROTATOR_OAUTH_AUTH_METHOD: 'magic',
            ROTATOR_LOG_LEVEL: 'loud',
            ROTATOR_CONCURRENCY: '0',
            ROTATOR_HTTP_TIMEOUT: 'soon',
          },
          '/w',
        ),
      ),
    ).toEqual([
      'env.ROTATOR_API_URL: required',
      'env.ROTATOR_CONCURRENCY: must be a whole number from 1 to 64',
      'env.ROTATOR_HTTP_TIMEOUT: must be a duration from 1s to 10m, such as 30s',
      'env.ROTATOR_LOG_LEVEL: must be one of: fatal, error, warn, info, debug, trace, silent',
      'env.ROTATOR_OAUTH_AUTH_METHOD: must be one of: client_secret_basic, client_secret_post, private_key_jwt',
      'env.ROTATOR_OAUTH_CLIENT_ID: required with OAuth',
      'env.ROTATOR_OAUTH_CLIENT_SECRET: required with client_secret_basic (or set ROTATOR_OAUTH_CLIENT_SECRET_FILE)',
      'env.ROTATOR_OAUTH_TOKEN_URL: must be an https:// URL',
    ]);
  });

  it('records Kubernetes Events unless ROTATOR_KUBERNETES_EVENTS=off, and names any other value', () => {
    expect(readSettings(OAUTH, '/w').kubernetesEvents).toBe(true);
    expect(readSettings({ ...OAUTH, ROTATOR_KUBERNETES_EVENTS: 'off' }, '/w').kubernetesEvents).toBe(false);
    expect(issuesOf(() => readSettings({ ...OAUTH, ROTATOR_KUBERNETES_EVENTS: 'false' }, '/w'))).toEqual([
      'env.ROTATOR_KUBERNETES_EVENTS: must be one of: on, off',
    ]);
  });

  it('reads an HTTP timeout of up to 10 minutes', () => {
    expect(readSettings({ ...OAUTH, ROTATOR_HTTP_TIMEOUT: '10m' }, '/w').httpTimeoutMs).toBe(600_000);
    expect(readSettings({ ...OAUTH, ROTATOR_HTTP_TIMEOUT: '1s' }, '/w').httpTimeoutMs).toBe(1000);
  });

  // The timeout is a timer: past 2^31-1 ms (about 24.8 days) Node fires it at once, so no request could succeed.
  it.each(['10m1s', '30d', '20000000w', '999ms'])('refuses an HTTP timeout of %s, naming what is allowed', (value) => {
    expect(issuesOf(() => readSettings({ ...OAUTH, ROTATOR_HTTP_TIMEOUT: value }, '/w'))).toEqual([
      'env.ROTATOR_HTTP_TIMEOUT: must be a duration from 1s to 10m, such as 30s',
    ]);
  });

  it('refuses both a static token and OAuth', () => {
    expect(issuesOf(() => readSettings({ ...OAUTH, ROTATOR_ACCESS_TOKEN: 'xaat-1234567890' }, '/w'))[0]).toMatch(
      /^env.ROTATOR_ACCESS_TOKEN: set either a static access token or OAuth/,
    );
  });

  it('needs a private key for private_key_jwt, not a secret', () => {
    const { ROTATOR_OAUTH_CLIENT_SECRET: _, ...rest } = OAUTH;
    expect(issuesOf(() => readSettings({ ...rest, ROTATOR_OAUTH_AUTH_METHOD: 'private_key_jwt' }, '/w'))).toEqual([
      'env.ROTATOR_OAUTH_PRIVATE_KEY_FILE: required with ROTATOR_OAUTH_AUTH_METHOD=private_key_jwt',
    ]);
  });
});

describe('readEnvironment', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await makeTempDir();
    await writeFile(join(dir, 'client-secret'), 'canary-from-file-0003\n');
    await writeFile(join(dir, 'rotator.env'), 'ROTATOR_API_URL=https://from-file.example\nROTATOR_ORG_ID=from-file\n');
    await writeFile(join(dir, '.env'), 'ROTATOR_ORG_ID=from-dot-env\n');
    await writeFile(join(dir, 'unreadable'), 'x');
    await chmod(join(dir, 'unreadable'), 0o000);
  });
  afterAll(async () => {
    await chmod(join(dir, 'unreadable'), 0o600);
  });

  it('reads NAME_FILE in place of NAME, without the trailing newline', () => {
    const env = readEnvironment(
      { ROTATOR_OAUTH_CLIENT_SECRET_FILE: join(dir, 'client-secret') },
      { envFile: undefined, cwd: '/nonexistent' },
    );
    expect(env.ROTATOR_OAUTH_CLIENT_SECRET).toBe('canary-from-file-0003');
  });

  it('lets the real environment win over the env file', () => {
    const env = readEnvironment({ ROTATOR_ORG_ID: 'from-env' }, { envFile: 'rotator.env', cwd: dir });
    expect(env.ROTATOR_ORG_ID).toBe('from-env');
    expect(env.ROTATOR_API_URL).toBe('https://from-file.example');
  });

  it('reads ./.env when no env file is named', () => {
    expect(readEnvironment({}, { envFile: undefined, cwd: dir }).ROTATOR_ORG_ID).toBe('from-dot-env');
  });

  it('refuses NAME and NAME_FILE together, and names a file it cannot read', () => {
    expect(
      issuesOf(() =>
        readEnvironment(
          {
            ROTATOR_ACCESS_TOKEN: 'x',
            ROTATOR_ACCESS_TOKEN_FILE: join(dir, 'client-secret'),
            ROTATOR_OAUTH_CLIENT_SECRET_FILE: join(dir, 'missing'),
          },
          { envFile: 'nope.env', cwd: dir },
        ),
      ),
    ).toEqual([
      '--dotenv nope.env: cannot read: ENOENT',
      'env.ROTATOR_ACCESS_TOKEN_FILE: both ROTATOR_ACCESS_TOKEN and ROTATOR_ACCESS_TOKEN_FILE are set; set one',
      `env.ROTATOR_OAUTH_CLIENT_SECRET_FILE: cannot read ${join(dir, 'missing')}: ENOENT`,
    ]);
  });
});
