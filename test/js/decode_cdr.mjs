// Decodes CDR messages with Foxglove's own libraries, for Go tests that
// cross-check calisym's codecs.
//
// usage: node decode_cdr.mjs input.json
//
// input.json holds [{"name": "pkg/msg/Type", "definition": "<ros2msg text>",
// "data": "<base64 CDR>"}, ...]. For each entry the script prints, as one
// JSON array on stdout, {"value": <decoded message>, "reencoded": "<base64>"}
// where value comes from @foxglove/rosmsg2-serialization's MessageReader
// (definitions parsed by @foxglove/rosmsg with ros2: true) and reencoded is
// that value written back by its MessageWriter. Values are made JSON-safe by
// jsonSafe (see json_safe.mjs).
import { readFile } from "node:fs/promises";
import rosmsg from "@foxglove/rosmsg";
import serialization from "@foxglove/rosmsg2-serialization";
import { jsonSafe } from "./json_safe.mjs";

const { parse } = rosmsg;
const { MessageReader, MessageWriter } = serialization;

const input = JSON.parse(await readFile(process.argv[2], "utf8"));
const out = [];
for (const entry of input) {
  const defs = parse(entry.definition, { ros2: true });
  const reader = new MessageReader(defs);
  const writer = new MessageWriter(defs);
  const data = Buffer.from(entry.data, "base64");
  const value = reader.readMessage(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  const reencoded = writer.writeMessage(value);
  out.push({
    name: entry.name,
    value: jsonSafe(value),
    reencoded: Buffer.from(reencoded.buffer, reencoded.byteOffset, reencoded.byteLength).toString("base64"),
    trailing: reader.lastReadHadTrailingBytes(),
  });
}
process.stdout.write(JSON.stringify(out));
