import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { signatureHeaders } from '../../src/http/webhook-signature.js';
import { README_ROLE } from '../doubles/gcp-secret-manager/iam.js';
import { sinkPolicy } from '../doubles/vault/vault-here.js';
import { type CodeBlock, codeBlocks, docPages, repositoryRoot } from '../helpers/doc-pages.js';

/**
 * Blocks the docs give readers to copy, of which the tests hold their own copy (what the doubles
 * grant, how the receiver checks): each is marked on its page with `<!-- test: NAME -->`, and must
 * stay what the tests prove, so that the docs and the tests cannot drift apart.
 */
const marked = new Map<string, CodeBlock>(
  docPages().flatMap((page) =>
    codeBlocks(page)
      .filter((block) => block.marker?.startsWith('test: '))
      .map((block) => [block.marker!.slice('test: '.length), block] as const),
  ),
);

function block(name: string): string {
  const found = marked.get(name);
  expect(found, `a block marked <!-- test: ${name} --> in the docs`).toBeDefined();
  return found!.text;
}

/** A function's body lines, trimmed, from `name(` to the `}` at the start of a line. */
function bodyOf(source: string, name: string): string[] {
  const start = source.indexOf(`function ${name}(`);
  const open = source.indexOf('{\n', start);
  const end = source.indexOf('\n}', open);
  return source
    .slice(open + 2, end)
    .split('\n')
    .map((line) => line.trim());
}

const CHECKED = ['gcp-role', 'vault-policy', 'webhook-headers', 'webhook-receiver'];

describe('the blocks the tests hold a copy of', () => {
  it('are each marked on a page, and no marked block goes unchecked', () => {
    expect([...marked.keys()].sort()).toEqual([...CHECKED].sort());
  });

  it("gcp-role: the custom role's permissions are the ones the Secret Manager double grants the rotator", () => {
    const permissions = /--permissions[\s\\]+(\S+)/.exec(block('gcp-role'))?.[1]?.split(',');
    expect(permissions).toEqual([...README_ROLE]);
  });

  it('vault-policy: the minimal Vault policy is the one the Vault double grants the rotator', () => {
    expect(block('vault-policy').trim()).toBe(sinkPolicy('secret', 'apps/ingest').trim());
  });

  it('webhook-headers: the headers named are the ones the rotator signs with', () => {
    const names = [...block('webhook-headers').matchAll(/^([\w-]+):/gm)].map((m) => m[1]!.toLowerCase());
    expect(names.sort()).toEqual(Object.keys(signatureHeaders('{}', 'key', new Date())).sort());
  });

  it("webhook-receiver: the receiver's check is the tests' receiver's, word for word but for the types", () => {
    const helper = readFileSync(join(repositoryRoot, 'test/helpers/signed-webhook-receiver.ts'), 'utf8');
    const page = block('webhook-receiver');
    expect(bodyOf(page, 'verifyTokenRotatorWebhook')).toEqual(bodyOf(helper, 'verifyTokenRotatorWebhook'));
    const tolerance = /const TOLERANCE_SECONDS = (\d+);/;
    expect(tolerance.exec(page)?.[1]).toBe(tolerance.exec(helper)?.[1]);
  });

  it('webhook-receiver: as given, it accepts what the rotator signs, and refuses it changed or late', async () => {
    const module = (await import(`data:text/javascript,${encodeURIComponent(block('webhook-receiver'))}`)) as {
      verifyTokenRotatorWebhook(headers: Record<string, string>, rawBody: Buffer, key: string, nowSeconds?: number): boolean;
    };
    const body = '{"event":"rotated","token":"ingest"}';
    const at = new Date('2026-01-01T00:00:00Z');
    const now = at.getTime() / 1000;
    const headers = signatureHeaders(body, 'shared-key', at);
    expect(module.verifyTokenRotatorWebhook(headers, Buffer.from(body), 'shared-key', now + 299)).toBe(true);
    expect(module.verifyTokenRotatorWebhook(headers, Buffer.from(body.replace('ingest', 'other')), 'shared-key', now)).toBe(false);
    expect(module.verifyTokenRotatorWebhook(headers, Buffer.from(body), 'shared-key', now + 301)).toBe(false);
    expect(module.verifyTokenRotatorWebhook(headers, Buffer.from(body), 'another-key', now)).toBe(false);
  });
});
