import type { Sameness } from '../sink.js';

/** A secret's ARN: `arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/ingest-AbCdEf`. */
export const SECRET_ARN = /^arn:(aws[a-z-]*):secretsmanager:([a-z0-9-]+):(\d{12}):secret:([A-Za-z0-9/_+=.@-]+)$/;

/** The six characters AWS appends to a secret's name in its ARN (a full ARN); a partial ARN has none. */
const RANDOM_SUFFIX = /-[A-Za-z0-9]{6}$/;

const PREFIX = 'aws-secrets-manager:';

/** What a sink's `secretId` and region say of the secret, as far as they say it. */
export interface AwsSecretSpelling {
  secretId: string;
  /** The sink's region, else the ARN's. */
  region: string | undefined;
  /** AWS_REGION when the sink names neither region nor ARN: where the SDK looks. Never part of the target. */
  environmentRegion?: string | undefined;
}

interface Identity {
  /**
   * Every name the spelling may stand for, the likeliest first: an ARN's last part without a
   * `-XXXXXX` ending, and with it, since a partial ARN of `my-secret` ends as a full ARN of `my` would.
   */
  names: readonly string[];
  region: string | undefined;
  /** Only an ARN says the account; a name is in the credentials' account, which only AWS knows. */
  account: string | undefined;
}

function identityOf(spelling: AwsSecretSpelling): Identity {
  const arn = SECRET_ARN.exec(spelling.secretId);
  if (!arn) return { names: [spelling.secretId], region: spelling.region ?? spelling.environmentRegion, account: undefined };
  const last = arn[4]!;
  const names = RANDOM_SUFFIX.test(last) ? [last.replace(RANDOM_SUFFIX, ''), last] : [last];
  return { names, region: arn[2], account: arn[3] };
}

/**
 * `aws-secrets-manager:eu-west-1:prod/ingest` for a name (the region empty when the SDK's chain
 * decides), `aws-secrets-manager:eu-west-1:123456789012:prod/ingest` for a full or a partial ARN:
 * one secret, one token, so the key is no part of it. A name has no `:`, so the two never meet.
 */
export function awsSecretTarget(spelling: AwsSecretSpelling): string {
  const arn = SECRET_ARN.exec(spelling.secretId);
  if (!arn) return `${PREFIX}${spelling.region ?? ''}:${spelling.secretId}`;
  const { names, region, account } = identityOf(spelling);
  return `${PREFIX}${region}:${account}:${names[0]}`;
}

/** A target written before ARNs were reduced to their secret: `aws-secrets-manager:eu-west-1:arn:aws:…` named it by the whole ARN. */
export function upgradeAwsSecretTarget(stored: string): string {
  if (!stored.startsWith(PREFIX)) return stored;
  const rest = stored.slice(PREFIX.length);
  const colon = rest.indexOf(':');
  const secretId = rest.slice(colon + 1);
  return colon >= 0 && SECRET_ARN.test(secretId) ? awsSecretTarget({ secretId, region: rest.slice(0, colon) || undefined }) : stored;
}

/** Only spellings of one name can be one secret. */
export const awsSecretKeys = (spelling: AwsSecretSpelling): readonly string[] => identityOf(spelling).names;

/**
 * A name and an ARN of it in one region are one secret (the name's account, the credentials', is
 * taken to be the ARN's: refusing is safe, writing twice is not); two ARNs in two accounts, or two
 * regions, are two. A name whose region neither the sink nor AWS_REGION gives (an AWS profile's) may
 * be anywhere: only AWS can say.
 */
export function compareAwsSecrets(a: AwsSecretSpelling, b: AwsSecretSpelling): Sameness | undefined {
  const x = identityOf(a);
  const y = identityOf(b);
  const name = x.names.find((n) => y.names.includes(n));
  if (name === undefined) return undefined;
  if (x.account !== undefined && y.account !== undefined && x.account !== y.account) return undefined;
  if (x.region !== undefined && y.region !== undefined && x.region !== y.region) return undefined;
  const region = x.region ?? y.region;
  if (x.region === undefined || y.region === undefined) {
    // Two names without a region share a target: one of them has a region here.
    return {
      verdict: 'unknown',
      why: `both are the secret ${name} if the region the AWS SDK takes from its profile is ${region} (set region on the sink to say)`,
    };
  }
  return { verdict: 'same', why: `both are the secret ${name} in ${region}` };
}
