// jsonSafe turns a decoded ROS message into plain JSON values that Go can
// compare exactly: typed arrays become arrays, bigints become decimal
// strings, and non-finite numbers become the strings "NaN", "Infinity" and
// "-Infinity".
export function jsonSafe(v) {
  if (typeof v === "bigint") {
    return v.toString();
  }
  if (typeof v === "number") {
    return Number.isFinite(v) ? v : String(v);
  }
  if (ArrayBuffer.isView(v)) {
    return Array.from(v, jsonSafe);
  }
  if (Array.isArray(v)) {
    return v.map(jsonSafe);
  }
  if (v instanceof Map) {
    return Object.fromEntries([...v].map(([k, x]) => [String(k), jsonSafe(x)]));
  }
  if (v !== null && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, jsonSafe(x)]));
  }
  return v;
}
