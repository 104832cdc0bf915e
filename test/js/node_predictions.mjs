// Connects to calisym's predictor node served over the Foxglove WebSocket
// protocol with Foxglove's own client (@foxglove/ws-protocol over `ws`),
// subscribes to the given topics, decodes their ROS 2 CDR messages with
// @foxglove/rosmsg2-serialization and prints what it saw as one JSON object
// once `count` messages have arrived on the first topic.
//
// usage: node node_predictions.mjs <ws-url> <count> <timeout-ms> <topic> [topic ...]
//
// Output: {"serverInfo": {...}, "advertised": [{id, topic, encoding,
// schemaName, schemaEncoding}], "messages": [{"topic", "timestamp",
// "message"}]} with 64-bit integers as decimal strings and typed arrays as
// plain arrays.
import wsProtocol from "@foxglove/ws-protocol";
import rosmsg from "@foxglove/rosmsg";
import rosmsg2 from "@foxglove/rosmsg2-serialization";
import WebSocket from "ws";
import { jsonSafe } from "./json_safe.mjs";

const { FoxgloveClient } = wsProtocol;
const { parse } = rosmsg;
const { MessageReader } = rosmsg2;

const [url, countArg, timeoutArg, ...topics] = process.argv.slice(2);
if (!url || !countArg || !timeoutArg || topics.length === 0) {
  console.error("usage: node node_predictions.mjs <ws-url> <count> <timeout-ms> <topic> [topic ...]");
  process.exit(2);
}
const count = Number(countArg);

function fail(message) {
  console.error(`node_predictions: ${message}`);
  process.exit(1);
}

const timer = setTimeout(() => fail(`timed out after ${timeoutArg} ms`), Number(timeoutArg));
const client = new FoxgloveClient({ ws: new WebSocket(url, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]) });
const out = { serverInfo: undefined, advertised: [], messages: [] };
const subs = new Map(); // subscription id -> {topic, reader}
let done = false;

client.on("error", (err) => fail(`client error: ${err?.message ?? err}`));
client.on("close", () => {
  if (!done) {
    fail(`connection closed after ${out.messages.length} messages`);
  }
});
client.on("serverInfo", (info) => {
  out.serverInfo = info;
});
client.on("advertise", (channels) => {
  for (const c of channels) {
    out.advertised.push({ id: c.id, topic: c.topic, encoding: c.encoding, schemaName: c.schemaName, schemaEncoding: c.schemaEncoding });
    if (!topics.includes(c.topic) || [...subs.values()].some((s) => s.topic === c.topic)) {
      continue;
    }
    if (c.encoding !== "cdr" || c.schemaEncoding !== "ros2msg") {
      fail(`channel ${c.topic}: encoding ${c.encoding}, schema encoding ${c.schemaEncoding}`);
    }
    const reader = new MessageReader(parse(c.schema, { ros2: true }));
    subs.set(client.subscribe(c.id), { topic: c.topic, reader });
  }
});
client.on("message", (event) => {
  if (done) {
    return;
  }
  const sub = subs.get(event.subscriptionId);
  if (!sub) {
    fail(`message for unknown subscription ${event.subscriptionId}`);
  }
  out.messages.push({ topic: sub.topic, timestamp: String(event.timestamp), message: jsonSafe(sub.reader.readMessage(event.data)) });
  if (out.messages.filter((m) => m.topic === topics[0]).length >= count) {
    done = true;
    clearTimeout(timer);
    process.stdout.write(JSON.stringify(out) + "\n");
    client.close();
  }
});
