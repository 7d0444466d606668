/** A field of a protobuf message: its number and its value as the wire type gives it. */
export type WireField = { field: number; varint: bigint } | { field: number; bytes: Buffer } | { field: number; fixed: Buffer };

export class ProtobufError extends Error {}

/** Splits an encoded message into its fields (wire types 0, 1, 2 and 5; groups are refused). */
export function readFields(buffer: Buffer): WireField[] {
  const fields: WireField[] = [];
  let offset = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (offset >= buffer.length) throw new ProtobufError('proto: unexpected end of data');
      const byte = buffer[offset++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 63n) throw new ProtobufError('proto: integer overflow');
    }
  };
  while (offset < buffer.length) {
    const key = varint();
    const field = Number(key >> 3n);
    const wireType = Number(key & 7n);
    if (wireType === 0) fields.push({ field, varint: varint() });
    else if (wireType === 2) {
      const length = Number(varint());
      if (offset + length > buffer.length) throw new ProtobufError('proto: unexpected end of data');
      fields.push({ field, bytes: buffer.subarray(offset, offset + length) });
      offset += length;
    } else if (wireType === 1 || wireType === 5) {
      const size = wireType === 1 ? 8 : 4;
      fields.push({ field, fixed: buffer.subarray(offset, offset + size) });
      offset += size;
    } else {
      throw new ProtobufError(`proto: illegal wireType ${wireType}`);
    }
  }
  return fields;
}

export const bytesOf = (f: WireField): Buffer => ('bytes' in f ? f.bytes : Buffer.alloc(0));
export const stringOf = (f: WireField): string => bytesOf(f).toString('utf8');
export const numberOf = (f: WireField): number => ('varint' in f ? Number(BigInt.asIntN(64, f.varint)) : 0);

/** A `map<string, X>` entry: key is field 1, value field 2. */
export function mapEntry(f: WireField): { key: string; value: WireField | undefined } {
  const inner = readFields(bytesOf(f));
  const key = inner.find((e) => e.field === 1);
  return { key: key ? stringOf(key) : '', value: inner.find((e) => e.field === 2) };
}
