// Minimal zstd *encoder* producing a valid frame made of raw (stored) blocks.
// Any zstd decoder accepts it; it is only used so that the "base64+zstd"
// account encoding can be served without a compression library.
const MAX_BLOCK = 128 * 1024;

export function zstdFrameRaw(data) {
  const blocks = Math.max(1, Math.ceil(data.length / MAX_BLOCK));
  const out = new Uint8Array(4 + 1 + 8 + blocks * 3 + data.length);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, 0xfd2fb528, true); // magic
  out[4] = 0xe0; // FCS field 8 bytes, single segment, no checksum, no dict
  dv.setBigUint64(5, BigInt(data.length), true);
  let off = 13;
  for (let b = 0; b < blocks; b++) {
    const start = b * MAX_BLOCK;
    const chunk = data.subarray(start, Math.min(data.length, start + MAX_BLOCK));
    const last = b === blocks - 1 ? 1 : 0;
    const header = last | (0 << 1) | (chunk.length << 3); // Raw_Block
    out[off] = header & 0xff;
    out[off + 1] = (header >> 8) & 0xff;
    out[off + 2] = (header >> 16) & 0xff;
    off += 3;
    out.set(chunk, off);
    off += chunk.length;
  }
  return out;
}
