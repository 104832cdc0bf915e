// Reads an MCAP file with Foxglove's own libraries, for Go tests that
// cross-check calisym's MCAP writer.
//
// usage: node read_mcap.mjs file.mcap
//
// The file is opened with @mcap/core's McapIndexedReader over a file handle,
// so its footer, summary, statistics, chunk indexes and message indexes must
// be right; messages are read in log-time order with CRC validation and each
// is decoded with @foxglove/rosmsg2-serialization's MessageReader from its
// channel's ros2msg schema. The script prints one JSON object: header,
// statistics, schemas, channels, chunk indexes, metadata records and the
// decoded messages. Chunks may be uncompressed, lz4 (decompressed by
// lz4FrameDecompress below) or zstd (decompress.mjs, as Foxglove does).
import { open } from "node:fs/promises";
import { McapIndexedReader } from "@mcap/core";
import rosmsg from "@foxglove/rosmsg";
import serialization from "@foxglove/rosmsg2-serialization";
import { fileReadable } from "./mcap_file.mjs";
import { decompressHandlers } from "./decompress.mjs";
import { jsonSafe } from "./json_safe.mjs";

const { parse } = rosmsg;
const { MessageReader } = serialization;

// lz4FrameDecompress decodes an LZ4 frame (the format MCAP's lz4 chunks
// use) into a buffer of the known decompressed size.
function lz4FrameDecompress(src, decompressedSize) {
  const out = new Uint8Array(Number(decompressedSize));
  const view = new DataView(src.buffer, src.byteOffset, src.byteLength);
  let ip = 0;
  let op = 0;
  while (ip < src.length) {
    const magic = view.getUint32(ip, true);
    ip += 4;
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      ip += 4 + view.getUint32(ip, true); // skippable frame
      continue;
    }
    if (magic !== 0x184d2204) {
      throw new Error(`lz4: bad frame magic 0x${magic.toString(16)}`);
    }
    const flg = src[ip];
    ip += 2; // FLG, BD
    const blockChecksum = (flg & 0x10) !== 0;
    const contentSize = (flg & 0x08) !== 0;
    const contentChecksum = (flg & 0x04) !== 0;
    const dictID = (flg & 0x01) !== 0;
    ip += (contentSize ? 8 : 0) + (dictID ? 4 : 0) + 1; // sizes, header checksum
    for (;;) {
      const size = view.getUint32(ip, true);
      ip += 4;
      if (size === 0) {
        break;
      }
      const n = size & 0x7fffffff;
      if (size & 0x80000000) {
        out.set(src.subarray(ip, ip + n), op);
        op += n;
      } else {
        op = lz4Block(src.subarray(ip, ip + n), out, op);
      }
      ip += n + (blockChecksum ? 4 : 0);
    }
    ip += contentChecksum ? 4 : 0;
  }
  if (op !== out.length) {
    throw new Error(`lz4: decompressed ${op} bytes, want ${out.length}`);
  }
  return out;
}

// lz4Block decodes one LZ4 block into out at op (matches may reach back
// into earlier blocks) and returns the new output offset.
function lz4Block(src, out, op) {
  let ip = 0;
  while (ip < src.length) {
    const token = src[ip++];
    let literals = token >> 4;
    if (literals === 15) {
      let b;
      do {
        b = src[ip++];
        literals += b;
      } while (b === 255);
    }
    out.set(src.subarray(ip, ip + literals), op);
    ip += literals;
    op += literals;
    if (ip >= src.length) {
      break; // the last sequence has literals only
    }
    const offset = src[ip] | (src[ip + 1] << 8);
    ip += 2;
    let match = token & 15;
    if (match === 15) {
      let b;
      do {
        b = src[ip++];
        match += b;
      } while (b === 255);
    }
    match += 4;
    for (let i = 0; i < match; i++, op++) {
      out[op] = out[op - offset];
    }
  }
  return op;
}

const fh = await open(process.argv[2], "r");
try {
  const readable = await fileReadable(fh);
  const reader = await McapIndexedReader.Initialize({ readable, decompressHandlers: await decompressHandlers({ lz4: lz4FrameDecompress }) });
  const text = new TextDecoder();
  const decoders = new Map();
  for (const [id, schema] of reader.schemasById) {
    decoders.set(id, new MessageReader(parse(text.decode(schema.data), { ros2: true })));
  }
  const messages = [];
  for await (const m of reader.readMessages({ validateCrcs: true })) {
    const channel = reader.channelsById.get(m.channelId);
    messages.push({
      topic: channel.topic,
      channelId: m.channelId,
      sequence: m.sequence,
      logTime: m.logTime,
      publishTime: m.publishTime,
      value: decoders.get(channel.schemaId).readMessage(m.data),
    });
  }
  const metadata = [];
  for await (const m of reader.readMetadata()) {
    metadata.push({ name: m.name, metadata: m.metadata });
  }
  const out = {
    header: reader.header,
    statistics: reader.statistics,
    schemas: [...reader.schemasById.values()].map((s) => ({ ...s, data: text.decode(s.data) })),
    channels: [...reader.channelsById.values()],
    chunkIndexes: reader.chunkIndexes.map((c) => ({
      compression: c.compression,
      messageStartTime: c.messageStartTime,
      messageEndTime: c.messageEndTime,
      indexedChannels: [...c.messageIndexOffsets.keys()],
    })),
    metadataIndexes: reader.metadataIndexes.map((m) => m.name),
    summaryOffsetOpcodes: [...reader.summaryOffsetsByOpcode.keys()],
    metadata,
    messages,
  };
  process.stdout.write(JSON.stringify(jsonSafe(out)));
} finally {
  await fh.close();
}
