// fileReadable adapts an open node:fs/promises FileHandle to the
// IReadable that @mcap/core's McapIndexedReader reads from, failing on a
// short read instead of returning fewer bytes.
export async function fileReadable(fh) {
  const { size } = await fh.stat();
  return {
    size: async () => BigInt(size),
    read: async (offset, length) => {
      const buf = new Uint8Array(Number(length));
      const { bytesRead } = await fh.read(buf, 0, buf.length, Number(offset));
      if (bytesRead !== buf.length) {
        throw new Error(`short read at ${offset}: ${bytesRead} of ${buf.length}`);
      }
      return buf;
    },
  };
}
