import type { JsonObject, JsonValue } from '../json.js';
import { bytesOf, mapEntry, numberOf, ProtobufError, readFields, stringOf, type WireField } from './wire.js';

/*
 * Go writes every non-pointer field, empty or not, and JSON's omitempty would leave the empty ones
 * out; so empty strings, zero numbers and zero times are dropped here as if they had not been sent.
 *
 * The protobuf form of a Secret, which client-go's typed clients send (`kubectl create secret`
 * does): the `k8s\0` envelope around a runtime.Unknown, whose raw bytes are a v1.Secret
 * (field numbers from k8s.io/api's and apimachinery's generated.proto).
 */

export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** The object of a protobuf body, as the JSON a client would have sent. */
export function decodeProtobufObject(body: Buffer): JsonObject {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new ProtobufError('provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]');
  }
  let apiVersion = '';
  let kind = '';
  let raw: Buffer = Buffer.alloc(0);
  for (const f of readFields(body.subarray(MAGIC.length))) {
    if (f.field === 1) {
      for (const t of readFields(bytesOf(f))) {
        if (t.field === 1) apiVersion = stringOf(t);
        if (t.field === 2) kind = stringOf(t);
      }
    } else if (f.field === 2) raw = bytesOf(f);
  }
  if (apiVersion !== 'v1' || kind !== 'Secret')
    throw new ProtobufError(`the double reads protobuf only for v1 Secrets, not ${apiVersion} ${kind}`);
  return { apiVersion, kind, ...decodeSecret(raw) };
}

function decodeSecret(raw: Buffer): JsonObject {
  const out: JsonObject = {};
  const data: JsonObject = {};
  const stringData: JsonObject = {};
  for (const f of readFields(raw)) {
    if (f.field === 1) out.metadata = decodeObjectMeta(bytesOf(f));
    else if (f.field === 2) {
      const { key, value } = mapEntry(f);
      data[key] = (value ? bytesOf(value) : Buffer.alloc(0)).toString('base64');
    } else if (f.field === 3) {
      if (stringOf(f)) out.type = stringOf(f);
    } else if (f.field === 4) {
      const { key, value } = mapEntry(f);
      stringData[key] = value ? stringOf(value) : '';
    } else if (f.field === 5) out.immutable = numberOf(f) !== 0;
  }
  if (Object.keys(data).length > 0) out.data = data;
  if (Object.keys(stringData).length > 0) out.stringData = stringData;
  return out;
}

function decodeObjectMeta(raw: Buffer): JsonObject {
  const out: JsonObject = {};
  const strings: Record<number, string> = { 1: 'name', 2: 'generateName', 3: 'namespace', 4: 'selfLink', 5: 'uid', 6: 'resourceVersion' };
  const labels: JsonObject = {};
  const annotations: JsonObject = {};
  const finalizers: JsonValue[] = [];
  const ownerReferences: JsonValue[] = [];
  const managedFields: JsonValue[] = [];
  for (const f of readFields(raw)) {
    const name = strings[f.field];
    if (name) {
      if (stringOf(f)) out[name] = stringOf(f);
    } else if (f.field === 7) {
      if (numberOf(f) !== 0) out.generation = numberOf(f);
    } else if (f.field === 8 || f.field === 9) {
      const time = decodeTime(bytesOf(f));
      if (time !== undefined) out[f.field === 8 ? 'creationTimestamp' : 'deletionTimestamp'] = time;
    } else if (f.field === 10) out.deletionGracePeriodSeconds = numberOf(f);
    else if (f.field === 11 || f.field === 12) {
      const { key, value } = mapEntry(f);
      (f.field === 11 ? labels : annotations)[key] = value ? stringOf(value) : '';
    } else if (f.field === 13) ownerReferences.push(decodeOwnerReference(bytesOf(f)));
    else if (f.field === 14) finalizers.push(stringOf(f));
    else if (f.field === 17) managedFields.push(decodeManagedFieldsEntry(bytesOf(f)));
  }
  if (Object.keys(labels).length > 0) out.labels = labels;
  if (Object.keys(annotations).length > 0) out.annotations = annotations;
  if (ownerReferences.length > 0) out.ownerReferences = ownerReferences;
  if (finalizers.length > 0) out.finalizers = finalizers;
  if (managedFields.length > 0) out.managedFields = managedFields;
  return out;
}

/** metav1.Time: whole seconds; the zero time is Go's zero value, sent for an unset field. */
function decodeTime(raw: Buffer): string | undefined {
  const seconds = readFields(raw).find((f) => f.field === 1);
  const value = seconds ? numberOf(seconds) : 0;
  return value === 0 ? undefined : new Date(value * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function decodeOwnerReference(raw: Buffer): JsonObject {
  const out: JsonObject = {};
  const names: Record<number, string> = { 1: 'kind', 3: 'name', 4: 'uid', 5: 'apiVersion' };
  for (const f of readFields(raw)) {
    if (names[f.field]) out[names[f.field]!] = stringOf(f);
    else if (f.field === 6) out.controller = numberOf(f) !== 0;
    else if (f.field === 7) out.blockOwnerDeletion = numberOf(f) !== 0;
  }
  return out;
}

function decodeManagedFieldsEntry(raw: Buffer): JsonObject {
  const out: JsonObject = {};
  const names: Record<number, string> = { 1: 'manager', 2: 'operation', 3: 'apiVersion', 6: 'fieldsType', 8: 'subresource' };
  for (const f of readFields(raw) as WireField[]) {
    if (names[f.field]) {
      if (stringOf(f)) out[names[f.field]!] = stringOf(f);
    } else if (f.field === 4) {
      const time = decodeTime(bytesOf(f));
      if (time !== undefined) out.time = time;
    } else if (f.field === 7) {
      const rawField = readFields(bytesOf(f)).find((r) => r.field === 1);
      out.fieldsV1 = rawField ? (JSON.parse(stringOf(rawField)) as JsonValue) : {};
    }
  }
  return out;
}
