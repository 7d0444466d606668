/*
 * Secret Manager's documented rules, checked by the double on the calls that carry them, written
 * here from the API reference (google/cloud/secretmanager/v1/resources.proto and service.proto)
 * rather than taken from the sink, so that a mistake in one is not repeated in the other.
 */

/** CRC-32C, bit by bit (polynomial 0x1EDC6F41, reflected 0x82F63B78): slow, obviously right. */
export function crc32cBitwise(data: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of data) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

export const SECRET_ID = /^[A-Za-z0-9_-]{1,255}$/;
export const PROJECT_ID = /^[a-z][-a-z0-9]{4,28}[a-z0-9]$/;
const LABEL_KEY = /^[\p{Ll}\p{Lo}][\p{Ll}\p{Lo}\p{N}_-]{0,62}$/u;
const LABEL_VALUE = /^[\p{Ll}\p{Lo}\p{N}_-]{0,63}$/u;
const ANNOTATION_KEY = /^[a-zA-Z0-9](?:[a-zA-Z0-9._-]{0,61}[a-zA-Z0-9])?$/;
export const MAX_PAYLOAD_BYTES = 64 * 1024;
const MAX_LABELS = 64;
const MAX_ANNOTATION_BYTES = 16 * 1024;
const VERSION_ALIAS = /^[A-Za-z][A-Za-z0-9_-]{0,62}$/;
/** Location ids the double knows; a real project has its own list (gcloud secrets locations list). */
export const KNOWN_LOCATIONS = new Set([
  'us-central1',
  'us-east1',
  'us-east4',
  'us-west1',
  'europe-west1',
  'europe-west3',
  'europe-west4',
  'europe-north1',
  'asia-east1',
  'asia-northeast1',
  'australia-southeast1',
]);

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/** What is wrong with a secret's labels, as a field violation; undefined when nothing is. */
export function labelProblem(labels: Record<string, string>): string | undefined {
  const entries = Object.entries(labels);
  if (entries.length > MAX_LABELS) return `A secret may have at most ${MAX_LABELS} labels.`;
  for (const [key, value] of entries) {
    if (!LABEL_KEY.test(key) || bytes(key) > 128) return `Label key '${key}' violates format constraints.`;
    if (!LABEL_VALUE.test(value) || bytes(value) > 128) return `Label value '${value}' for key '${key}' violates format constraints.`;
  }
  return undefined;
}

export function annotationProblem(annotations: Record<string, string>): string | undefined {
  let total = 0;
  for (const [key, value] of Object.entries(annotations)) {
    if (!ANNOTATION_KEY.test(key) || bytes(key) > 128) return `Annotation key '${key}' violates format constraints.`;
    total += bytes(key) + bytes(value);
  }
  if (total >= MAX_ANNOTATION_BYTES) return 'The total size of annotation keys and values must be less than 16KiB.';
  return undefined;
}

export function aliasProblem(aliases: Record<string, unknown>): string | undefined {
  if (Object.keys(aliases).length > 50) return 'A secret may have at most 50 version aliases.';
  for (const alias of Object.keys(aliases))
    if (!VERSION_ALIAS.test(alias) || alias === 'latest' || alias === 'NEW') return `Version alias '${alias}' violates format constraints.`;
  return undefined;
}
