"""Reference implementation of calisym's model files in numpy alone.

A second, independent reading of the two model formats documented in
docs/model-format.md: the calisym model file (safetensors, format version 1)
of the GR- and GRB-SympNets, and the JSON file of the MLP baseline. It checks
the files' SHA-256 checksums, rebuilds each model from its description and
rolls it out from an initial state x0 under a port sequence.

    import calisym_ref
    model = calisym_ref.load("model.safetensors")   # or "baseline.json"
    xs = model.rollout(x0, ports)                   # ports: H x (n_u + n_c)

Command line (what the Go tests call):

    python3 calisym_ref.py rollout MODEL CASE.json [MODEL CASE.json ...]

reads each case, {"x0": [[...], ...], "ports": [[[...]]]} (a batch of
initial states and port sequences), rolls its model out and prints a JSON
list with one {"states": [[[...]]]} per pair, every value written as its
shortest round-trip repr. A file that fails its checks gives
{"error": "..."} in its place, the reason on stderr and exit status 1.
"""

import hashlib
import json
import struct
import sys

import numpy as np

FORMAT_VERSION = "1"


class ModelFileError(ValueError):
    """A model file that is malformed, of another format, or corrupted."""


class InputError(ValueError):
    """A rollout input (x0 or ports) of the wrong shape or with a non-finite value."""


def check_inputs(x0, ports, state_dim, port_dim):
    """Returns x0 as (N, state_dim) and ports as (N, H, port_dim) float64
    arrays, or raises InputError naming the array, its shape and the one
    wanted: numpy would broadcast a width-1 array to every coordinate.
    A single state (state_dim,) and a single port sequence (H, port_dim)
    count as a batch of one."""
    x0 = np.asarray(x0, dtype=np.float64)
    ports = np.asarray(ports, dtype=np.float64)
    if x0.ndim == 1:
        x0 = x0[None]
    if x0.ndim != 2 or x0.shape[1] != state_dim:
        raise InputError("x0 has shape %s, want (N, %d): N initial states of 2n = %d values" % (x0.shape, state_dim, state_dim))
    if ports.ndim == 2:
        ports = ports[None]
    if ports.ndim != 3 or ports.shape[0] != x0.shape[0] or ports.shape[2] != port_dim:
        raise InputError("ports has shape %s, want (%d, H, %d): for each of x0's %d states, H steps of n_u + n_c = %d port values"
                         % (ports.shape, x0.shape[0], port_dim, x0.shape[0], port_dim))
    for name, a in (("x0", x0), ("ports", ports)):
        if not np.all(np.isfinite(a)):
            raise InputError("%s has a non-finite value at %s" % (name, tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])))
    return x0, ports


def _sha256(data):
    return hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------
# safetensors


def read_safetensors(raw):
    """Returns (metadata dict, {name: float64 array}) of a safetensors file."""
    if len(raw) < 8:
        raise ModelFileError("file of %d bytes is too short for a safetensors header" % len(raw))
    (hlen,) = struct.unpack("<Q", raw[:8])
    if hlen > len(raw) - 8:
        raise ModelFileError("header length %d exceeds the file (%d bytes)" % (hlen, len(raw)))
    try:
        header = json.loads(raw[8 : 8 + hlen].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ModelFileError("header is not JSON: %s" % e) from e
    if not isinstance(header, dict):
        raise ModelFileError("header is not a JSON object")
    meta = header.pop("__metadata__", None)
    if not isinstance(meta, dict):
        raise ModelFileError("no __metadata__ in the header (not a calisym model file?)")
    body = raw[8 + hlen :]
    tensors = {}
    for name, e in header.items():
        if e.get("dtype") != "F64":
            raise ModelFileError("tensor %r has dtype %r, want F64" % (name, e.get("dtype")))
        shape = tuple(int(s) for s in e["shape"])
        lo, hi = e["data_offsets"]
        size = int(np.prod(shape)) if shape else 1
        if not (0 <= lo <= hi <= len(body)) or hi - lo != 8 * size:
            raise ModelFileError("tensor %r: offsets [%d, %d] do not fit shape %s in %d data bytes" % (name, lo, hi, shape, len(body)))
        tensors[name] = np.frombuffer(body[lo:hi], dtype="<f8").astype(np.float64).reshape(shape)
    return meta, body, tensors


# --------------------------------------------------------------------------
# Cubic B-splines (uniform knots, three extra knots each side)


def spline_basis_grad(x, intervals, lo, hi):
    """Values and derivatives of all intervals+3 basis functions at x.

    x has shape (N,); returns two arrays (N, intervals+3). Basis function j
    is the uniform cubic B-spline whose support is [lo+(j-3)h, lo+(j+1)h],
    h = (hi-lo)/intervals; on the knot interval [lo+kh, lo+(k+1)h] with
    local coordinate u in [0, 1), the four functions k..k+3 are
    (1-u)^3/6, (3u^3-6u^2+4)/6, (-3u^3+3u^2+3u+1)/6, u^3/6.
    """
    nb = intervals + 3
    h = (hi - lo) / intervals
    t = (x - lo) / h
    k = np.floor(t)
    u = t - k
    v = 1 - u
    u2, u3 = u * u, u * u * u
    local = np.stack([v * v * v / 6, (3 * u3 - 6 * u2 + 4) / 6, (-3 * u3 + 3 * u2 + 3 * u + 1) / 6, u3 / 6], axis=1)
    ih = 1 / h
    dlocal = np.stack([-v * v / 2 * ih, (3 * u2 - 4 * u) / 2 * ih, (-3 * u2 + 2 * u + 1) / 2 * ih, u2 / 2 * ih], axis=1)
    b = np.zeros((x.shape[0], nb))
    db = np.zeros((x.shape[0], nb))
    inside = (t >= -3) & (t < intervals + 3)
    ki = np.where(inside, k, -10).astype(np.int64)
    rows = np.arange(x.shape[0])
    for i in range(4):
        j = ki + i
        ok = inside & (j >= 0) & (j < nb)
        b[rows[ok], j[ok]] = local[ok, i]
        db[rows[ok], j[ok]] = dlocal[ok, i]
    return b, db


# --------------------------------------------------------------------------
# The symplectic models


def _sech2(z, a):
    """a * sech(z)^2, as 1 - tanh(z)^2 (no overflow for large |z|)."""
    t = np.tanh(z)
    return a * (1 - t * t)


class SympNet:
    """A GR- or GRB-SympNet read from a calisym model file."""

    def __init__(self, desc, tensors):
        lay, arch = desc["layout"], desc["arch"]
        self.n, self.nu, self.nc = int(lay["n"]), int(lay.get("n_u", 0)), int(lay.get("n_c", 0))
        self.kind = arch["kind"]
        if self.kind not in ("gr", "grb"):
            raise ModelFileError("unknown architecture kind %r" % self.kind)
        self.h = float(arch["step_size"])
        self.width = int(arch["width"])
        d = self.d = 2 * self.n + self.nu + self.nc
        self.state_dim, self.port_dim = 2 * self.n, self.nu + self.nc
        if self.kind == "grb":
            self.m = int(arch["ridge_dim"])
            sp = arch["spline"]
            self.spline = (int(sp["intervals"]), float(sp["lo"]), float(sp["hi"]))

        def get(name, shape):
            if name not in tensors:
                raise ModelFileError("tensor %r missing" % name)
            t = tensors.pop(name)
            if t.size != int(np.prod(shape)):
                raise ModelFileError("tensor %r has %d values, want shape %s" % (name, t.size, shape))
            return t.reshape(shape)

        self.layers = []
        for i in range(int(arch["layers"])):
            pre = "layers.%d." % i
            s1, s2, s3 = (get(pre + s, (d, d)) for s in ("S1", "S2", "S3"))
            s1, s2, s3 = ((s + s.T) / 2 for s in (s1, s2, s3))
            first = np.eye(d) + s1 @ s2
            second = s1 + s1 @ s2 @ s3 + s3
            # Even layers: A = I + S1 S2, B = S1 + S1 S2 S3 + S3; odd layers swap them.
            a, b = (first, second) if i % 2 == 0 else (second, first)
            L = {"A": a, "B": b}
            if self.kind == "gr":
                L["W"] = get(pre + "K.W", (self.width, d))
                L["b"] = get(pre + "K.b", (self.width,))
                L["a"] = get(pre + "K.a", (self.width,))
            else:
                nb = self.spline[0] + 3
                L["R"] = get(pre + "R", (self.m, d))
                L["c"] = get(pre + "spline", (nb,) * self.m)
                L["W"] = get(pre + "tail.W", (self.width, self.m))
                L["b"] = get(pre + "tail.b", (self.width,))
                L["a"] = get(pre + "tail.a", (self.width,))
            self.layers.append(L)
        self.mu = get("norm.mu", (d,))
        self.scale = get("norm.scale", (d,))
        if tensors:
            raise ModelFileError("unexpected tensors %s" % sorted(tensors))
        if not np.all(self.scale > 0) or not np.all(np.isfinite(self.scale)):
            raise ModelFileError("normalisation scales must be finite and positive")

    def _grad_k(self, L, xi):
        """∇K(ξ) for a batch of ridge coordinates ξ (N, d)."""
        if self.kind == "gr":
            return _sech2(xi @ L["W"].T + L["b"], L["a"]) @ L["W"]
        eta = xi @ L["R"].T  # (N, m)
        intervals, lo, hi = self.spline
        bs = [spline_basis_grad(eta[:, j], intervals, lo, hi) for j in range(self.m)]
        geta = np.zeros_like(eta)
        for j in range(self.m):
            # ∂/∂η_j of Σ_α c_α Π_i B_{α_i}(η_i): contract c with B (or B' for i = j).
            t = L["c"]
            for i in range(self.m):
                vec = bs[i][1] if i == j else bs[i][0]  # (N, nb)
                if i == 0:
                    t = np.einsum("a...,na->n...", t, vec)
                else:
                    t = np.einsum("na...,na->n...", t, vec)
            geta[:, j] = t
        geta = geta + _sech2(eta @ L["W"].T + L["b"], L["a"]) @ L["W"]
        return geta @ L["R"]

    def map(self, z):
        """The network map Φ on normalised lifted states z (N, 2d)."""
        d, h = self.d, self.h
        q, p = z[:, :d].copy(), z[:, d:].copy()
        for L in self.layers:
            xi = p @ L["A"].T + q @ L["B"].T
            g = self._grad_k(L, xi)
            q = q + h * (g @ L["A"])
            p = p - h * (g @ L["B"])
        return np.concatenate([q, p], axis=1)

    def rollout(self, x0, ports):
        """Rolls out from x0 (N, 2n) under ports (N, H, n_u+n_c); returns (N, H, 2n)."""
        x0, ports = check_inputs(x0, ports, self.state_dim, self.port_dim)
        n, nu, d = self.n, self.nu, self.d
        N, H = x0.shape[0], ports.shape[1]
        mux, sx = self.mu[: 2 * n], self.scale[: 2 * n]
        mue, se = self.mu[2 * n : 2 * n + self.port_dim], self.scale[2 * n : 2 * n + self.port_dim]
        x = (x0 - mux) / sx
        out = np.zeros((N, H, 2 * n))
        for k in range(H):
            e = (ports[:, k, :] - mue) / se
            z = np.zeros((N, 2 * d))
            # Section: Q = (q, y=0, λ_u=0, λ_c=f_c), P = (r=0, p, μ_u=u, π_c=0).
            z[:, :n] = x[:, :n]
            z[:, 2 * n + nu : d] = e[:, nu:]
            z[:, d + n : d + 2 * n] = x[:, n:]
            z[:, d + 2 * n : d + 2 * n + nu] = e[:, :nu]
            z = self.map(z)
            x = np.concatenate([z[:, :n], z[:, d + n : d + 2 * n]], axis=1)
            out[:, k, :] = x * sx + mux
        return out


def load_safetensors_model(raw):
    meta, body, tensors = read_safetensors(raw)
    if meta.get("format") != "calisym":
        raise ModelFileError("format %r, want 'calisym'" % meta.get("format"))
    if meta.get("format_version") != FORMAT_VERSION:
        raise ModelFileError("format version %r, this reader knows %s" % (meta.get("format_version"), FORMAT_VERSION))
    desc = meta.get("model")
    if desc is None:
        raise ModelFileError("no model description in __metadata__")
    if "model_sha256" in meta and _sha256(desc.encode("utf-8")) != meta["model_sha256"]:
        raise ModelFileError("checksum mismatch: the model description does not match model_sha256 (corrupted file)")
    if "tensors_sha256" in meta and _sha256(body) != meta["tensors_sha256"]:
        raise ModelFileError("checksum mismatch: the tensor data does not match tensors_sha256 (corrupted file)")
    return SympNet(json.loads(desc), tensors)


# --------------------------------------------------------------------------
# The MLP baseline


class MLP:
    """The MLP baseline: x' = x + s_delta * f(((x-mu_x)/s_x, (e-mu_e)/s_e))."""

    def __init__(self, cfg, weights):
        self.state_dim, self.port_dim = int(cfg["state_dim"]), int(cfg["port_dim"])
        widths = [self.state_dim + self.port_dim] + [int(h) for h in cfg.get("hidden") or []] + [self.state_dim]
        self.layers = []
        for l in range(len(widths) - 1):
            w = np.asarray(weights["layers.%d.weight" % l], dtype=np.float64).reshape(widths[l + 1], widths[l])
            b = np.asarray(weights["layers.%d.bias" % l], dtype=np.float64).reshape(widths[l + 1])
            self.layers.append((w, b))
        self.norm = {k: np.asarray(weights["norm." + k], dtype=np.float64) for k in ("mu_x", "s_x", "mu_e", "s_e", "s_delta")}

    def step(self, x, e):
        a = np.concatenate([(x - self.norm["mu_x"]) / self.norm["s_x"], (e - self.norm["mu_e"]) / self.norm["s_e"]], axis=1)
        for i, (w, b) in enumerate(self.layers):
            a = a @ w.T + b
            if i < len(self.layers) - 1:
                a = np.tanh(a)
        return x + self.norm["s_delta"] * a

    def rollout(self, x0, ports):
        """Rolls out from x0 (N, 2n) under ports (N, H, n_u+n_c); returns (N, H, 2n)."""
        x, ports = check_inputs(x0, ports, self.state_dim, self.port_dim)
        out = np.zeros((x.shape[0], ports.shape[1], self.state_dim))
        for k in range(ports.shape[1]):
            x = self.step(x, ports[:, k, :])
            out[:, k, :] = x
        return out


def _mlp_checksum(cfg, coords, ports, weights):
    h = hashlib.sha256()
    h.update(json.dumps(cfg, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
    h.update(b"\0")
    for names in (coords, ports):
        for n in names:
            h.update(n.encode("utf-8") + b"\0")
        h.update(b"\0")
    for k in sorted(weights):
        v = weights[k]
        h.update(k.encode("utf-8") + b"\0")
        h.update(struct.pack("<Q", len(v)))
        h.update(np.asarray(v, dtype="<f8").tobytes())
    return h.hexdigest()


def load_mlp(raw):
    try:
        f = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ModelFileError("not an MLP JSON file: %s" % e) from e
    for key in ("config", "weights"):
        if key not in f:
            raise ModelFileError("MLP file has no %r" % key)
    if "sha256" in f:
        got = _mlp_checksum(f["config"], f.get("coordinates") or [], f.get("ports") or [], f["weights"])
        if got != f["sha256"]:
            raise ModelFileError("checksum mismatch: the MLP file's content hashes to %s, it records %s (corrupted file)" % (got[:16], f["sha256"][:16]))
    return MLP(f["config"], f["weights"])


def load(path):
    """Loads a calisym model file (safetensors) or an MLP JSON file."""
    with open(path, "rb") as fh:
        raw = fh.read()
    if raw.lstrip()[:1] == b"{":
        return load_mlp(raw)
    return load_safetensors_model(raw)


def main(argv):
    args = argv[2:]
    if len(argv) < 4 or argv[1] != "rollout" or len(args) % 2:
        sys.stderr.write("usage: calisym_ref.py rollout MODEL CASE.json [MODEL CASE.json ...]\n")
        return 2
    results, status = [], 0
    for path, case_path in zip(args[::2], args[1::2]):
        try:
            model = load(path)
        except (ModelFileError, OSError, KeyError, ValueError) as e:
            sys.stderr.write("calisym_ref: %s: %s\n" % (path, e))
            results.append({"error": "%s: %s" % (path, e)})
            status = 1
            continue
        try:
            with open(case_path) as fh:
                case = json.load(fh)
            states = model.rollout(case["x0"], case["ports"])
        except KeyError as e:
            msg = "%s: no %s (a case is {\"x0\": [[...]], \"ports\": [[[...]]]})" % (case_path, e)
        except (OSError, ValueError) as e:
            msg = "%s (for %s): %s" % (case_path, path, e)
        else:
            results.append({"states": [[[float(v) for v in row] for row in traj] for traj in states]})
            continue
        sys.stderr.write("calisym_ref: %s\n" % msg)
        results.append({"error": msg})
        status = 1
    json.dump(results, sys.stdout)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
