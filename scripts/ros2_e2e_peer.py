#!/usr/bin/env python3
"""The rclpy peer of the end-to-end ROS 2 test (test/ros2_e2e_test.go).

    python3 scripts/ros2_e2e_peer.py PLAN.json RESULT.json

Run where a ROS 2 and the test's workspace (calisym, and the robots'
interface packages) are sourced, next to a running calisym_ros2. It joins
late, as a viewer opened after the node would: it first waits for the
latched outputs (/robot_description, /tf_static; reliable, transient
local), then plays the plan's recorded inputs on a fixed grid (each step's
messages back to back, as a driver publishes them, every `period_s` of the
wall clock, whether or not the last prediction is done), and records each
prediction, the /diagnostics the node publishes and the send -> receipt
latency of every prediction: the wall time from publishing the state a
prediction starts from (its header.stamp) to receiving that prediction.

Plan (JSON, written by the Go test):
  prediction_topic   the node's PredictedTrajectory topic
  period_s           time between steps
  steps              list of steps, each a list of messages:
    {"topic", "type": "pkg/msg/Type", "cdr": base64 CDR, "stamp": bool}
        recorded bytes, published as they are (rclpy publishes bytes
        serialized); "stamp": true sets the header stamp (the first field)
        to the step's time on the grid
    {"topic", "type", "fields": {...}}
        built here: nav_msgs/msg/Odometry from pose and twist lists,
        crazyflie_interfaces/msg/LogDataGeneric from values (stamped on
        the grid)
  latched            [topic, ...] that must arrive before the first step
  latched_wait_s     how long to wait for them
  match_wait_s       how long to wait for the node to subscribe
  drain_s            how long to listen after the last step

Nothing here starts or stops the node; the test does.
"""

import base64
import importlib
import json
import os
import struct
import sys
import threading
import time

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy


def msg_class(name):
    pkg, kind, typ = name.split("/")
    return getattr(importlib.import_module("%s.%s" % (pkg, kind)), typ)


def percentile(sorted_values, q):
    if not sorted_values:
        return None
    k = min(len(sorted_values) - 1, max(0, int(round(q / 100.0 * (len(sorted_values) - 1)))))
    return sorted_values[k]


def restamp(cdr, ns):
    """CDR with the header stamp (the first field: int32 sec, uint32
    nanosec after the 4-byte encapsulation header) set to ns."""
    little = cdr[1] & 1
    fmt = "<iI" if little else ">iI"
    return cdr[:4] + struct.pack(fmt, ns // 1_000_000_000, ns % 1_000_000_000) + cdr[12:]


def build(msg, ns, cls):
    f = msg["fields"]
    m = cls()
    m.header.stamp.sec, m.header.stamp.nanosec = ns // 1_000_000_000, ns % 1_000_000_000
    if msg["type"] == "nav_msgs/msg/Odometry":
        m.header.frame_id = f.get("frame_id", "world")
        m.child_frame_id = f.get("child_frame_id", "base_link")
        p, o, v, w = f["position"], f["orientation"], f["linear"], f["angular"]
        m.pose.pose.position.x, m.pose.pose.position.y, m.pose.pose.position.z = p
        (m.pose.pose.orientation.x, m.pose.pose.orientation.y,
         m.pose.pose.orientation.z, m.pose.pose.orientation.w) = o
        m.twist.twist.linear.x, m.twist.twist.linear.y, m.twist.twist.linear.z = v
        m.twist.twist.angular.x, m.twist.twist.angular.y, m.twist.twist.angular.z = w
    elif msg["type"] == "crazyflie_interfaces/msg/LogDataGeneric":
        m.timestamp = int(f.get("timestamp", 0))
        m.values = [float(x) for x in f["values"]]
    else:
        raise SystemExit("ros2_e2e_peer: cannot build %s" % msg["type"])
    return m


def main():
    plan_path, result_path = sys.argv[1], sys.argv[2]
    with open(plan_path) as f:
        plan = json.load(f)
    rclpy.init()
    node = rclpy.create_node("calisym_e2e_peer")
    lock = threading.Lock()
    latched = {}
    sent = {}          # stamp ns -> wall time of the publication
    received = []      # (stamp ns, wall time, horizon, rows ok, inference latency s)
    diagnostics = {}   # status name -> {key: value} of the last message
    diag_count = [0]
    first_state_wall = [None]

    latched_qos = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                             reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    latched_types = {"/robot_description": "std_msgs/msg/String", "/tf_static": "tf2_msgs/msg/TFMessage"}
    required = plan.get("latched") or []
    for topic in required + [t for t in latched_types if t not in required]:
        def on_latched(m, topic=topic):
            with lock:
                if topic in latched:
                    return
                info = {"wall": time.time(), "before_first_state": first_state_wall[0] is None}
                if hasattr(m, "data"):
                    info["bytes"] = len(m.data.encode())
                if hasattr(m, "transforms"):
                    info["transforms"] = len(m.transforms)
                    info["frames"] = ["%s->%s" % (t.header.frame_id, t.child_frame_id) for t in m.transforms[:6]]
                latched[topic] = info
        node.create_subscription(msg_class(latched_types[topic]), topic, on_latched, latched_qos)

    pred_cls = msg_class("calisym/msg/PredictedTrajectory")

    def on_prediction(m):
        now = time.time()
        ns = m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec
        n = len(m.coordinate_names)
        ok = m.horizon > 0 and len(m.q) == m.horizon * n and len(m.p) == m.horizon * n
        with lock:
            received.append((ns, now, m.horizon, ok, m.inference_latency_s, m.model_sha256))

    node.create_subscription(pred_cls, plan["prediction_topic"], on_prediction,
                             QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))

    def on_diag(m):
        with lock:
            diag_count[0] += 1
            for s in m.status:
                diagnostics[s.name] = {"level": int.from_bytes(s.level, "little") if isinstance(s.level, bytes) else int(s.level),
                                       "message": s.message, "values": {kv.key: kv.value for kv in s.values}}

    node.create_subscription(msg_class("diagnostic_msgs/msg/DiagnosticArray"), "/diagnostics", on_diag, 100)

    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()

    pubs, classes = {}, {}
    for step in plan["steps"]:
        for msg in step:
            if msg["topic"] not in pubs:
                classes[msg["topic"]] = msg_class(msg["type"])
                pubs[msg["topic"]] = node.create_publisher(classes[msg["topic"]], msg["topic"], 10)
    result = {"errors": []}

    deadline = time.time() + plan.get("latched_wait_s", 20)
    while time.time() < deadline:
        with lock:
            if all(t in latched for t in required):
                break
        time.sleep(0.05)
    deadline = time.time() + plan.get("match_wait_s", 20)
    while time.time() < deadline and any(p.get_subscription_count() == 0 for p in pubs.values()):
        time.sleep(0.05)
    unmatched = [t for t, p in pubs.items() if p.get_subscription_count() == 0]
    if unmatched:
        result["errors"].append("no subscriber on %s after %.0f s" % (unmatched, plan.get("match_wait_s", 20)))
    time.sleep(0.5)

    period = float(plan["period_s"])
    decoded = [[dict(m, cdr=base64.b64decode(m["cdr"])) if "cdr" in m else m for m in step] for step in plan["steps"]]
    t0 = time.time() + 0.2
    base_ns = int(t0 * 1e9) // 1_000_000 * 1_000_000
    late = 0
    for k, step in enumerate(decoded):
        due = t0 + k * period
        wait = due - time.time()
        if wait > 0:
            time.sleep(wait)
        elif wait < -period:
            late += 1
        ns = base_ns + int(round(k * period * 1e9))
        for msg in step:
            if "cdr" in msg:
                data = restamp(msg["cdr"], ns) if msg.get("stamp") else msg["cdr"]
                pubs[msg["topic"]].publish(data)
            else:
                pubs[msg["topic"]].publish(build(msg, ns, classes[msg["topic"]]))
        now = time.time()
        with lock:
            sent[ns] = now
            if first_state_wall[0] is None:
                first_state_wall[0] = now
    time.sleep(plan.get("drain_s", 2.0))

    with lock:
        lat = sorted((w - sent[ns]) * 1e3 for ns, w, _, _, _, _ in received if ns in sent)
        unknown = sum(1 for ns, *_ in received if ns not in sent)
        stamps = [ns for ns, *_ in received]
        inference = sorted(x * 1e3 for *_, x, _ in received)
        result.update({
            "steps": len(plan["steps"]),
            "period_s": period,
            "sent": len(sent),
            "sent_late": late,
            "predictions": len(received),
            "predicted_states": len(set(stamps) & set(sent)),
            "predictions_unknown_stamp": unknown,
            "predictions_out_of_order": sum(1 for a, b in zip(stamps, stamps[1:]) if b < a),
            "predictions_repeated_stamp": sum(1 for a, b in zip(stamps, stamps[1:]) if b == a),
            "predictions_malformed": sum(1 for r in received if not r[3]),
            "horizon": received[-1][2] if received else None,
            "model_sha256": received[-1][5] if received else None,
            "latency_ms": {"n": len(lat), "p50": percentile(lat, 50), "p90": percentile(lat, 90),
                           "p99": percentile(lat, 99), "max": lat[-1] if lat else None,
                           "what": "wall time from publishing a state to receiving the prediction that starts from it"},
            "inference_latency_ms": {"p50": percentile(inference, 50), "p99": percentile(inference, 99),
                                     "what": "the node's own inference_latency_s of each received prediction"},
            "latched": latched,
            "diagnostics_messages": diag_count[0],
            "diagnostics": diagnostics,
        })
    with open(result_path, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
    # The spinning thread is not joined: ending the process here is what
    # the node sees of a peer that goes away (rclpy aborts in a destructor
    # when the interpreter ends around a running executor).
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
