// Connects to a Foxglove WebSocket server with Foxglove's own client
// (@foxglove/ws-protocol over the `ws` package), subscribes to one topic,
// decodes the payloads of the first N messages as Foxglove does by the
// channel's encoding — ROS 2 CDR (cdr, ros2msg) with
// @foxglove/rosmsg2-serialization, ROS 1 (ros1, ros1msg) with
// @foxglove/rosmsg-serialization; any other pair fails — and prints what it
// saw as one JSON object on stdout.
//
// usage: node foxglove_client.mjs <ws-url> <topic> <count> [timeout-ms]
//
// Output: {"serverInfo": {...}, "channel": {...}, "times": ["<ns>", ...],
//          "messages": [{"timestamp": "<ns>", "message": {...}}, ...]}
// Timestamps are decimal strings (they are 64-bit); typed arrays become
// plain arrays.
import wsProtocol from "@foxglove/ws-protocol";
import rosmsg from "@foxglove/rosmsg";
import rosmsg2 from "@foxglove/rosmsg2-serialization";
import rosmsg1 from "@foxglove/rosmsg-serialization";
import WebSocket from "ws";

const { FoxgloveClient } = wsProtocol;
const { parse } = rosmsg;
const { MessageReader } = rosmsg2;
const { MessageReader: ROS1MessageReader } = rosmsg1;

const [url, topic, countArg, timeoutArg] = process.argv.slice(2);
if (!url || !topic || !countArg) {
  console.error("usage: node foxglove_client.mjs <ws-url> <topic> <count> [timeout-ms]");
  process.exit(2);
}
const count = Number(countArg);
const timeoutMs = Number(timeoutArg ?? 20000);

function fail(message) {
  console.error(`foxglove_client: ${message}`);
  process.exit(1);
}

const timer = setTimeout(() => fail(`timed out after ${timeoutMs} ms`), timeoutMs);

const ws = new WebSocket(url, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]);
const client = new FoxgloveClient({ ws });

const out = { serverInfo: undefined, channel: undefined, times: [], messages: [] };
let subscriptionId;
let reader;
const statuses = [];

client.on("error", (err) => fail(`client error: ${err?.message ?? err}`));
client.on("close", (event) => {
  if (out.messages.length < count) {
    fail(`connection closed after ${out.messages.length}/${count} messages (code ${event?.code})`);
  }
});
client.on("serverInfo", (info) => {
  out.serverInfo = info;
});
client.on("status", (status) => {
  statuses.push(status);
  if (status.level >= 2) {
    fail(`server error status: ${status.message}`);
  }
});
client.on("advertise", (channels) => {
  if (subscriptionId !== undefined) {
    return;
  }
  const channel = channels.find((c) => c.topic === topic);
  if (!channel) {
    return;
  }
  if (channel.encoding === "cdr" && channel.schemaEncoding === "ros2msg") {
    reader = new MessageReader(parse(channel.schema, { ros2: true }));
  } else if (channel.encoding === "ros1" && channel.schemaEncoding === "ros1msg") {
    reader = new ROS1MessageReader(parse(channel.schema));
  } else {
    fail(`channel ${channel.id} on ${topic} has encoding ${channel.encoding} (schema ${channel.schemaEncoding}), want cdr (ros2msg) or ros1 (ros1msg)`);
  }
  out.channel = channel;
  subscriptionId = client.subscribe(channel.id);
});
client.on("time", (event) => {
  out.times.push(String(event.timestamp));
});
client.on("message", (event) => {
  if (event.subscriptionId !== subscriptionId) {
    fail(`message for unknown subscription ${event.subscriptionId}`);
  }
  if (out.messages.length >= count) {
    return;
  }
  const message = reader.readMessage(event.data);
  out.messages.push({ timestamp: String(event.timestamp), message });
  if (out.messages.length === count) {
    clearTimeout(timer);
    process.stdout.write(
      JSON.stringify(out, (_key, value) => {
        if (typeof value === "bigint") {
          return String(value);
        }
        if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
          return Array.from(value);
        }
        return value;
      }) + "\n",
    );
    client.close();
  }
});
