// decompressHandlers returns the chunk decompressors that @mcap/core's
// readers take (decompressHandlers), as Foxglove registers them: zstd
// through @foxglove/wasm-zstd, Foxglove's own WebAssembly build of the
// reference library (Node has no zstd before version 22). Extra handlers
// (lz4 in read_mcap.mjs) are added to it.
import zstd from "@foxglove/wasm-zstd";

export async function decompressHandlers(extra = {}) {
  await zstd.isLoaded;
  return {
    zstd: (data, decompressedSize) => zstd.decompress(data, Number(decompressedSize)),
    ...extra,
  };
}
