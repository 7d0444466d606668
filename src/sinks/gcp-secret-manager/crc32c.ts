/**
 * CRC-32C (Castagnoli), the checksum Secret Manager verifies on AddSecretVersion and returns with
 * every AccessSecretVersion (`SecretPayload.data_crc32c`). node:zlib only has CRC-32 (IEEE), a
 * different polynomial, so this is the table-driven reflected form of polynomial 0x1EDC6F41.
 */
const TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32c(data: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of data) crc = TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
