// Reads an MCAP file written by `calisym replay` with Foxglove's own
// libraries, for Go tests that check the predictions it holds.
//
// usage: node read_replay.mjs file.mcap [topic ...]
//
// The file is opened with @mcap/core's McapIndexedReader (so its summary,
// statistics and indexes must be right); messages are read in log-time
// order with CRC validation and those on the given topics (all when none
// is given) are decoded with @foxglove/rosmsg2-serialization from their
// channel's ros2msg schema. Chunks may be uncompressed or zstd (replay's
// default), decompressed as Foxglove does (decompress.mjs). Output, one JSON object:
// {"profile", "messageCount", "channels": [{topic, schemaName,
// messageEncoding, schemaEncoding}], "messages": [{topic, logTime, value}]}
// with 64-bit integers as decimal strings and typed arrays as arrays.
import { open } from "node:fs/promises";
import { McapIndexedReader } from "@mcap/core";
import rosmsg from "@foxglove/rosmsg";
import serialization from "@foxglove/rosmsg2-serialization";
import { fileReadable } from "./mcap_file.mjs";
import { decompressHandlers } from "./decompress.mjs";
import { jsonSafe } from "./json_safe.mjs";

const { parse } = rosmsg;
const { MessageReader } = serialization;

const [file, ...topics] = process.argv.slice(2);
if (!file) {
  console.error("usage: node read_replay.mjs file.mcap [topic ...]");
  process.exit(2);
}
const fh = await open(file, "r");
try {
  const readable = await fileReadable(fh);
  const reader = await McapIndexedReader.Initialize({ readable, decompressHandlers: await decompressHandlers() });
  const text = new TextDecoder();
  const decoders = new Map();
  for (const [id, schema] of reader.schemasById) {
    decoders.set(id, new MessageReader(parse(text.decode(schema.data), { ros2: true })));
  }
  const channels = [...reader.channelsById.values()].map((c) => ({
    topic: c.topic,
    schemaName: reader.schemasById.get(c.schemaId)?.name,
    messageEncoding: c.messageEncoding,
    schemaEncoding: reader.schemasById.get(c.schemaId)?.encoding,
  }));
  const wanted = new Set(topics);
  const messages = [];
  for await (const m of reader.readMessages({ validateCrcs: true })) {
    const channel = reader.channelsById.get(m.channelId);
    if (wanted.size > 0 && !wanted.has(channel.topic)) {
      continue;
    }
    messages.push({ topic: channel.topic, logTime: m.logTime, value: decoders.get(channel.schemaId).readMessage(m.data) });
  }
  const out = {
    profile: reader.header.profile,
    messageCount: reader.statistics?.messageCount,
    channels,
    messages,
  };
  process.stdout.write(JSON.stringify(jsonSafe(out)) + "\n");
} finally {
  await fh.close();
}
