// Reads the robot a `calisym replay` MCAP carries for Foxglove's 3D panel,
// with Foxglove's own libraries and the URDF loader three.js viewers use,
// for Go tests that check it.
//
// usage: node read_robot.mjs file.mcap [topic ...]
//
// The file is opened with @mcap/core's McapIndexedReader; the messages on
// /robot_description, /tf_static, /tf and the topics given are decoded with
// @foxglove/rosmsg2-serialization from their channels' ros2msg schemas,
// and the robot description is parsed by urdf-loader (three.js), with
// @xmldom/xmldom as the DOMParser that Node lacks. Meshes are not loaded
// (the test needs the kinematic tree). Output, one JSON object:
// {"channels": [{topic, schemaName, metadata}], "messages": [{topic,
// logTime, value}], "urdf": {name, links: [...], joints: [{name, type,
// parent, child}]}} with 64-bit integers as decimal strings.
import { open } from "node:fs/promises";
import { McapIndexedReader } from "@mcap/core";
import rosmsg from "@foxglove/rosmsg";
import serialization from "@foxglove/rosmsg2-serialization";
import { DOMParser } from "@xmldom/xmldom";
import URDFLoader from "urdf-loader";
import { fileReadable } from "./mcap_file.mjs";
import { jsonSafe } from "./json_safe.mjs";

const { parse } = rosmsg;
const { MessageReader } = serialization;

// urdf-loader parses with the browser's DOMParser (and tests its input
// against Document and Element), and asks each link whether it is a child
// with querySelector('child[link="NAME"]'); xmldom has no selectors, so
// this one form is provided and any other refused.
function installDOM() {
  const doc = new DOMParser().parseFromString("<a/>", "text/xml");
  globalThis.DOMParser = DOMParser;
  globalThis.Document = doc.constructor;
  globalThis.Element = doc.documentElement.constructor;
  const proto = Object.getPrototypeOf(doc.documentElement);
  proto.querySelector = function (selector) {
    const m = /^([A-Za-z_][\w-]*)\[([A-Za-z_][\w-]*)="([^"]*)"\]$/.exec(selector);
    if (!m) {
      throw new Error(`read_robot: unsupported selector ${selector}`);
    }
    const [, tag, attr, value] = m;
    for (const el of Array.from(this.getElementsByTagName(tag))) {
      if (el.getAttribute(attr) === value) {
        return el;
      }
    }
    return null;
  };
}

const [file, ...extra] = process.argv.slice(2);
if (!file) {
  console.error("usage: node read_robot.mjs file.mcap [topic ...]");
  process.exit(2);
}
const topics = new Set(["/robot_description", "/tf_static", "/tf", ...extra]);
const fh = await open(file, "r");
try {
  const readable = await fileReadable(fh);
  const reader = await McapIndexedReader.Initialize({ readable });
  const text = new TextDecoder();
  const decoders = new Map();
  for (const [id, schema] of reader.schemasById) {
    decoders.set(id, new MessageReader(parse(text.decode(schema.data), { ros2: true })));
  }
  const channels = [...reader.channelsById.values()].map((c) => ({
    topic: c.topic,
    schemaName: reader.schemasById.get(c.schemaId)?.name,
    metadata: c.metadata,
  }));
  const messages = [];
  let description;
  for await (const m of reader.readMessages({ validateCrcs: true, topics: [...topics] })) {
    const channel = reader.channelsById.get(m.channelId);
    const value = decoders.get(channel.schemaId).readMessage(m.data);
    if (channel.topic === "/robot_description") {
      description = value.data;
    }
    messages.push({ topic: channel.topic, logTime: m.logTime, value });
  }
  if (description === undefined) {
    throw new Error("no message on /robot_description");
  }
  installDOM();
  const loader = new URDFLoader();
  loader.loadMeshCb = (_path, _manager, _material, onComplete) => onComplete(null);
  const robot = loader.parse(description);
  const urdf = {
    name: robot.robotName,
    links: Object.keys(robot.links),
    joints: Object.values(robot.joints).map((j) => ({
      name: j.name,
      type: j.jointType,
      parent: j.parent?.name,
      child: j.children.find((c) => c.isURDFLink)?.name,
    })),
  };
  process.stdout.write(JSON.stringify(jsonSafe({ channels, messages, urdf })) + "\n");
} finally {
  await fh.close();
}
