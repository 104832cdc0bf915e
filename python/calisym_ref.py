"""Reference implementation of calisym's model files in numpy alone.

A second, independent reading of the two model formats documented in
docs/model-format.md: the calisym model file (safetensors, format version 1)
of the GR- and GRB-SympNets, and the JSON file of the MLP baseline. It checks
the files' SHA-256 checksums, rebuilds each model from its description and
rolls it out from an initial state x0 under a port sequence.

    import calisym_ref
    model = calisym_ref.load("model.safetensors")   # or "baseline.json"
    xs = model.rollout(x0, ports)                   # ports: H x (n_u + n_c)

    x1 = model.step(x0, ports[:, 0])                # one step, a batch
    x1, A, B = model.jacobian(x0, ports[:, 0])      # with A = dx'/dx, B = dx'/de
    r = model.rollout_jacobian(x0, ports, dense=True)  # states, A_k, B_k, dx0, dports
    e = calisym_ref.model_ports(model, plan, history)  # the port history's means

Command line (what the Go tests call):

    python3 calisym_ref.py rollout MODEL CASE.json [MODEL CASE.json ...]
    python3 calisym_ref.py jacobian MODEL CASE.json [MODEL CASE.json ...]
    python3 calisym_ref.py port_means CASE.json [CASE.json ...]

rollout reads each case, {"x0": [[...], ...], "ports": [[[...]]]} (a batch
of initial states and port sequences), rolls its model out and prints a
JSON list with one {"states": [[[...]]]} per pair, every value written as
its shortest round-trip repr; jacobian adds "A" and "B", the step
Jacobians (batch × H × the flattened matrices), and for a case with
"dense": true "dx0" and "dports", the rollout's full Jacobians (batch × H
× the flattened block rows). A file that fails its
checks gives {"error": "..."} in its place, the reason on stderr and exit
status 1. port_means reads {"plan": [[...]], "history": [[...]], "m": m}
and prints {"means": [[...]]} per case.
"""

import hashlib
import json
import re
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


def spline_basis_grad(x, intervals, lo, hi, second=False):
    """Values and derivatives of all intervals+3 basis functions at x.

    x has shape (N,); returns two arrays (N, intervals+3), with second=True
    a third, the second derivatives. Basis function j
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
    ih2 = ih * ih
    d2local = np.stack([v * ih2, (3 * u - 2) * ih2, (1 - 3 * u) * ih2, u * ih2], axis=1)
    b = np.zeros((x.shape[0], nb))
    db = np.zeros((x.shape[0], nb))
    d2b = np.zeros((x.shape[0], nb))
    inside = (t >= -3) & (t < intervals + 3)
    ki = np.where(inside, k, -10).astype(np.int64)
    rows = np.arange(x.shape[0])
    for i in range(4):
        j = ki + i
        ok = inside & (j >= 0) & (j < nb)
        b[rows[ok], j[ok]] = local[ok, i]
        db[rows[ok], j[ok]] = dlocal[ok, i]
        d2b[rows[ok], j[ok]] = d2local[ok, i]
    if second:
        return b, db, d2b
    return b, db


def _contract(c, vecs):
    """Σ_α c_α Π_i vecs[i][n, α_i] for every n: c (nb,)*m, vecs m × (N, nb)."""
    t = c
    for i, vec in enumerate(vecs):
        t = np.einsum("a...,na->n...", t, vec) if i == 0 else np.einsum("na...,na->n...", t, vec)
    return t


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
        meta = desc.get("meta") or {}
        self.dt = float(meta.get("dt", 0))
        self.coordinates, self.ports = meta.get("coordinates") or [], meta.get("ports") or []
        self.port_mean = port_mean_of(meta.get("port_mean", 0), self.ports, self.nu, self.nc)
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

    def _ridge(self, L, xi, hess=False):
        """∇K(ξ) for a batch of ridge coordinates ξ (N, d); with hess=True
        also a function that applies the Hessian ∇²K(ξ) to tangent rows
        (N, r, d)."""
        if self.kind == "gr":
            z = xi @ L["W"].T + L["b"]
            t = np.tanh(z)
            s = L["a"] * (1 - t * t)
            g = s @ L["W"]
            if not hess:
                return g, None
            hd = -2 * t * s  # the second derivative of a tanh(z) along each row of W
            return g, lambda dxi: ((dxi @ L["W"].T) * hd[:, None, :]) @ L["W"]
        eta = xi @ L["R"].T  # (N, m)
        intervals, lo, hi = self.spline
        m = self.m
        bs = [spline_basis_grad(eta[:, j], intervals, lo, hi, second=hess) for j in range(m)]
        geta = np.zeros_like(eta)
        for j in range(m):
            # ∂/∂η_j of Σ_α c_α Π_i B_{α_i}(η_i): contract c with B (or B' for i = j).
            geta[:, j] = _contract(L["c"], [bs[i][1] if i == j else bs[i][0] for i in range(m)])
        z = eta @ L["W"].T + L["b"]
        t = np.tanh(z)
        s = L["a"] * (1 - t * t)
        geta = geta + s @ L["W"]
        g = geta @ L["R"]
        if not hess:
            return g, None
        heta = np.zeros((eta.shape[0], m, m))
        for j in range(m):
            for l in range(j, m):
                vecs = [bs[i][0] for i in range(m)]
                if j == l:
                    vecs[j] = bs[j][2]
                else:
                    vecs[j], vecs[l] = bs[j][1], bs[l][1]
                heta[:, j, l] = heta[:, l, j] = _contract(L["c"], vecs)
        heta = heta + np.einsum("nw,wa,wb->nab", -2 * t * s, L["W"], L["W"])
        return g, lambda dxi: ((dxi @ L["R"].T) @ heta) @ L["R"]

    def map(self, z, tangents=None):
        """The network map Φ on normalised lifted states z (N, 2d); with
        tangents (N, r, 2d), also DΦ(z) applied to each of the r rows."""
        d, h = self.d, self.h
        q, p = z[:, :d].copy(), z[:, d:].copy()
        if tangents is not None:
            dq, dp = tangents[:, :, :d].copy(), tangents[:, :, d:].copy()
        for L in self.layers:
            xi = p @ L["A"].T + q @ L["B"].T
            g, hess = self._ridge(L, xi, hess=tangents is not None)
            if tangents is not None:
                dg = hess(dp @ L["A"].T + dq @ L["B"].T)
                dq = dq + h * (dg @ L["A"])
                dp = dp - h * (dg @ L["B"])
            q = q + h * (g @ L["A"])
            p = p - h * (g @ L["B"])
        out = np.concatenate([q, p], axis=1)
        if tangents is None:
            return out
        return out, np.concatenate([dq, dp], axis=2)

    def _norm(self):
        nx, ne = self.state_dim, self.port_dim
        return self.mu[:nx], self.scale[:nx], self.mu[nx : nx + ne], self.scale[nx : nx + ne]

    def _index(self):
        """Where the section places x_i and e_j in Z = (Q, P)."""
        n, nu, d = self.n, self.nu, self.d
        xs = list(range(n)) + [d + n + i for i in range(n)]
        es = [d + 2 * n + j for j in range(nu)] + [2 * n + nu + j for j in range(self.nc)]
        return np.array(xs), np.array(es, dtype=np.int64)

    def _step_norm(self, xt, en, jac=False):
        """One step in normalised coordinates: x̃ (N, 2n), ẽ (N, n_u+n_c) →
        x̃' and, with jac=True, the physical Jacobians A (N, 2n, 2n) and B
        (N, 2n, n_u+n_c) of the step."""
        N, nx, ne, d = xt.shape[0], self.state_dim, self.port_dim, self.d
        xi, ei = self._index()
        # Section: Q = (q, y=0, λ_u=0, λ_c=f_c), P = (r=0, p, μ_u=u, π_c=0).
        z = np.zeros((N, 2 * d))
        z[:, xi] = xt
        z[:, ei] = en
        if not jac:
            return self.map(z)[:, xi], None, None
        _, sx, _, se = self._norm()
        t = np.zeros((N, nx + ne, 2 * d))
        t[:, np.arange(nx), xi] = 1 / sx
        t[:, nx + np.arange(ne), ei] = 1 / se
        z, t = self.map(z, t)
        jt = t[:, :, xi] * sx  # jt[n, i, o] = ∂x'_o/∂(x, e)_i
        jt = np.transpose(jt, (0, 2, 1))
        return z[:, xi], jt[:, :, :nx], jt[:, :, nx:]

    def step(self, x, e):
        """One step x' = F(x, e) for a batch: x (N, 2n), e (N, n_u+n_c)."""
        x, e = _step_inputs(x, e, self.state_dim, self.port_dim)
        mux, sx, mue, se = self._norm()
        xt, _, _ = self._step_norm((x - mux) / sx, (e - mue) / se)
        return xt * sx + mux

    def jacobian(self, x, e):
        """x' = F(x, e) with A = ∂x'/∂x (N, 2n, 2n) and B = ∂x'/∂e (N, 2n,
        n_u+n_c), exact (forward mode through the layers)."""
        x, e = _step_inputs(x, e, self.state_dim, self.port_dim)
        mux, sx, mue, se = self._norm()
        xt, a, b = self._step_norm((x - mux) / sx, (e - mue) / se, jac=True)
        return xt * sx + mux, a, b

    def _rollout(self, x0, ports, jac):
        x0, ports = check_inputs(x0, ports, self.state_dim, self.port_dim)
        mux, sx, mue, se = self._norm()
        N, H, nx, ne = x0.shape[0], ports.shape[1], self.state_dim, self.port_dim
        x = (x0 - mux) / sx
        out = np.zeros((N, H, nx))
        A, B = np.zeros((N, H, nx, nx)), np.zeros((N, H, nx, ne))
        for k in range(H):
            x, a, b = self._step_norm(x, (ports[:, k, :] - mue) / se, jac=jac)
            out[:, k, :] = x * sx + mux
            if jac:
                A[:, k], B[:, k] = a, b
        return out, A, B

    def rollout(self, x0, ports):
        """Rolls out from x0 (N, 2n) under ports (N, H, n_u+n_c); returns (N, H, 2n)."""
        return self._rollout(x0, ports, False)[0]

    def rollout_jacobian(self, x0, ports, dense=False):
        """The rollout with its step Jacobians; see the module function."""
        states, A, B = self._rollout(x0, ports, True)
        return _rollout_jac(states, A, B, dense)


def _step_inputs(x, e, state_dim, port_dim):
    """x as (N, 2n) and e as (N, n_u+n_c) float64 arrays, or raises
    InputError naming the array, its shape and the one a step wants (one
    state and one port vector are a batch of one)."""
    x = np.asarray(x, dtype=np.float64)
    e = np.asarray(e, dtype=np.float64)
    if x.ndim == 1:
        x = x[None]
    if x.ndim != 2 or x.shape[1] != state_dim:
        raise InputError("x has shape %s, want (N, %d): N states of 2n = %d values" % (x.shape, state_dim, state_dim))
    if e.ndim == 1:
        e = e[None]
    if e.ndim != 2 or e.shape != (x.shape[0], port_dim):
        raise InputError("e has shape %s, want (%d, %d): for each of x's %d states, n_u + n_c = %d port values"
                         % (e.shape, x.shape[0], port_dim, x.shape[0], port_dim))
    for name, a in (("x", x), ("e", e)):
        if not np.all(np.isfinite(a)):
            raise InputError("%s has a non-finite value at %s" % (name, tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])))
    return x, e


def _rollout_jac(states, A, B, dense):
    """{"states", "A", "B"} and, with dense, the full rollout Jacobians
    "dx0" (N, H, 2n, 2n): block k = ∂x̂_{k+1}/∂x_0, and "dports" (N, H, 2n,
    H, n_u+n_c): block (k, j) = ∂x̂_{k+1}/∂e_j, zero for j > k."""
    res = {"states": states, "A": A, "B": B}
    if not dense:
        return res
    N, H, nx, ne = B.shape
    dx0 = np.zeros((N, H, nx, nx))
    dp = np.zeros((N, H, nx, H, ne))
    for k in range(H):
        if k == 0:
            dx0[:, 0] = A[:, 0]
        else:
            dx0[:, k] = A[:, k] @ dx0[:, k - 1]
            dp[:, k, :, :k, :] = np.einsum("nij,njke->nike", A[:, k], dp[:, k - 1, :, :k, :])
        dp[:, k, :, k, :] = B[:, k]
    res["dx0"], res["dports"] = dx0, dp
    return res


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

    def __init__(self, cfg, weights, meta=None, coordinates=(), ports=()):
        self.state_dim, self.port_dim = int(cfg["state_dim"]), int(cfg["port_dim"])
        self.coordinates, self.ports = list(coordinates), list(ports)
        # The layout, sampling period and port history of files that
        # record them (None, 0, 0 otherwise).
        meta = meta or {}
        self.n = self.nu = self.nc = None
        if "n" in meta:
            self.n, self.nu, self.nc = int(meta["n"]), int(meta["n_u"]), int(meta["n_c"])
            if 2 * self.n != self.state_dim or self.nu + self.nc != self.port_dim:
                raise ModelFileError("meta n=%d, n_u=%d, n_c=%d do not fit state dimension %d and %d ports" % (self.n, self.nu, self.nc, self.state_dim, self.port_dim))
        self.dt = float(meta.get("dt", 0))
        self.port_mean = port_mean_of(meta.get("port_mean", 0), self.ports, self.nu, self.nc) if self.nu is not None else int(meta.get("port_mean", 0))
        widths = [self.state_dim + self.port_dim] + [int(h) for h in cfg.get("hidden") or []] + [self.state_dim]
        self.layers = []
        for l in range(len(widths) - 1):
            w = np.asarray(weights["layers.%d.weight" % l], dtype=np.float64).reshape(widths[l + 1], widths[l])
            b = np.asarray(weights["layers.%d.bias" % l], dtype=np.float64).reshape(widths[l + 1])
            self.layers.append((w, b))
        self.norm = {k: np.asarray(weights["norm." + k], dtype=np.float64) for k in ("mu_x", "s_x", "mu_e", "s_e", "s_delta")}

    def _layers(self, x, e, jac):
        nx, ne = self.state_dim, self.port_dim
        a = np.concatenate([(x - self.norm["mu_x"]) / self.norm["s_x"], (e - self.norm["mu_e"]) / self.norm["s_e"]], axis=1)
        t = None
        if jac:
            # Tangent rows: row i is ∂a/∂(x, e)_i.
            t = np.broadcast_to(np.diag(np.concatenate([1 / self.norm["s_x"], 1 / self.norm["s_e"]])), (x.shape[0], nx + ne, nx + ne))
        for i, (w, b) in enumerate(self.layers):
            a = a @ w.T + b
            if jac:
                t = t @ w.T
            if i < len(self.layers) - 1:
                a = np.tanh(a)
                if jac:
                    t = t * (1 - a * a)[:, None, :]
        return a, t

    def step(self, x, e):
        """One step x' = F(x, e) for a batch: x (N, 2n), e (N, n_u+n_c)."""
        x, e = _step_inputs(x, e, self.state_dim, self.port_dim)
        a, _ = self._layers(x, e, False)
        return x + self.norm["s_delta"] * a

    def jacobian(self, x, e):
        """x' = F(x, e) with A = ∂x'/∂x (N, 2n, 2n) and B = ∂x'/∂e (N, 2n, n_u+n_c)."""
        x, e = _step_inputs(x, e, self.state_dim, self.port_dim)
        nx = self.state_dim
        a, t = self._layers(x, e, True)
        jt = t * self.norm["s_delta"]
        jt = np.transpose(jt, (0, 2, 1))
        return x + self.norm["s_delta"] * a, jt[:, :, :nx] + np.eye(nx), jt[:, :, nx:]

    def _rollout(self, x0, ports, jac):
        x, ports = check_inputs(x0, ports, self.state_dim, self.port_dim)
        N, H, nx, ne = x.shape[0], ports.shape[1], self.state_dim, self.port_dim
        out = np.zeros((N, H, nx))
        A, B = np.zeros((N, H, nx, nx)), np.zeros((N, H, nx, ne))
        for k in range(H):
            if jac:
                x, A[:, k], B[:, k] = self.jacobian(x, ports[:, k, :])
            else:
                x = self.step(x, ports[:, k, :])
            out[:, k, :] = x
        return out, A, B

    def rollout(self, x0, ports):
        """Rolls out from x0 (N, 2n) under ports (N, H, n_u+n_c); returns (N, H, 2n)."""
        return self._rollout(x0, ports, False)[0]

    def rollout_jacobian(self, x0, ports, dense=False):
        """The rollout with its step Jacobians; see the module function."""
        states, A, B = self._rollout(x0, ports, True)
        return _rollout_jac(states, A, B, dense)


def _mlp_checksum(cfg, coords, ports, weights, meta=None):
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
    if meta is not None:
        h.update(b"meta\0" + struct.pack("<d", float(meta["dt"])))
        h.update(struct.pack("<4Q", *(int(meta[k]) for k in ("n", "n_u", "n_c", "port_mean"))))
        if meta.get("port_map"):  # how the ports were computed (docs/model-format.md#port-map)
            h.update(b"port_map\0" + meta["port_map"].encode("utf-8"))
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
        got = _mlp_checksum(f["config"], f.get("coordinates") or [], f.get("ports") or [], f["weights"], f.get("meta"))
        if got != f["sha256"]:
            raise ModelFileError("checksum mismatch: the MLP file's content hashes to %s, it records %s (corrupted file)" % (got[:16], f["sha256"][:16]))
    return MLP(f["config"], f["weights"], f.get("meta"), f.get("coordinates") or [], f.get("ports") or [])


# --------------------------------------------------------------------------
# The port history (convert.history.port_mean)


_MEAN_NAME = re.compile(r"^mean([0-9]+)\((.*)\)$")


def port_mean_of(recorded, ports, nu, nc):
    """The port history's m: the recorded port_mean, checked against the
    port names where the file has them ("mean<m>(<port>)" after the a
    measured control values, for each of the a + n_c measured ports)."""
    m = int(recorded or 0)
    if not ports:
        return m
    if len(ports) != nu + nc:
        raise ModelFileError("%d port names for n_u = %d and n_c = %d" % (len(ports), nu, nc))
    first = next((i for i, p in enumerate(ports[:nu]) if _MEAN_NAME.match(p)), None)
    if first is None:
        named = 0
    else:
        a = first
        measured = ports[:a] + ports[nu:]
        named = int(_MEAN_NAME.match(ports[a]).group(1))
        if nu != 2 * a + nc or ports[a : a + len(measured)] != ["mean%d(%s)" % (named, p) for p in measured]:
            raise ModelFileError("port names %s are not a port history's layout" % ports)
    if recorded and named != m:
        raise ModelFileError("port_mean %d but the port names record %d" % (m, named))
    return named


def port_means(plan, history=(), m=1):
    """The port history's means for a plan of measured ports.

    plan (H, a + n_c): the measured ports (u, f_c) of the plan's steps;
    history (K, a + n_c): the measured ports of the samples before the
    plan, oldest first (K = 0 at the start of a stretch of log or after a
    gap). Step k's means are over the m samples before it: the history's
    and the plan's own earlier steps, the newest m of them; over fewer
    where fewer are held, and over none (k = 0 with no history) they are
    the step's own ports. Summed from the newest back, then divided by
    their count: the bits of conversion and the node (statemap.PortHistory).
    Returns (H, a + n_c)."""
    plan = np.atleast_2d(np.asarray(plan, dtype=np.float64))
    if plan.ndim != 2:
        raise InputError("plan has shape %s, want (H, a + n_c): H steps of the measured ports" % (plan.shape,))
    ne = plan.shape[1]
    hist = np.asarray(history, dtype=np.float64)
    if hist.ndim == 1 and hist.shape[0] == ne:
        hist = hist[None]  # one sample
    if hist.size == 0:
        hist = np.zeros((0, ne))
    elif hist.ndim != 2 or hist.shape[1] != ne:
        raise InputError("history has shape %s, want (K, %d): the measured ports of the K samples before the plan, oldest first, as wide as the plan's"
                         % (hist.shape, ne))
    seq = np.concatenate([hist, plan])
    out = np.empty_like(plan)
    for k in range(plan.shape[0]):
        now = hist.shape[0] + k
        held = min(m, now)
        if held == 0:
            out[k] = plan[k]
            continue
        acc = np.zeros(ne)
        for back in range(1, held + 1):
            acc += seq[now - back]
        out[k] = acc / held
    return out


def model_ports(model, plan, history=()):
    """The model's ports for a plan of measured ports (H, a + n_c) and the
    measured ports before it: (u, the means, f_c) per step, (H, n_u + n_c).
    A model without a port history takes the plan as it is."""
    plan = np.atleast_2d(np.asarray(plan, dtype=np.float64))
    if not model.port_mean:
        if plan.ndim != 2 or plan.shape[1] != model.port_dim:
            raise InputError("plan has shape %s, want (H, %d): H steps of the model's n_u + n_c = %d ports"
                             % (plan.shape, model.port_dim, model.port_dim))
        return plan
    a = (model.nu - model.nc) // 2
    nm = a + model.nc
    if plan.ndim != 2 or plan.shape[1] != nm:
        raise InputError("plan has shape %s, want (H, %d): H steps of the %d measured ports (u, f_c), without the port history's %d means"
                         % (plan.shape, nm, nm, nm))
    means = port_means(plan, history, model.port_mean)
    return np.concatenate([plan[:, :a], means, plan[:, a:]], axis=1)


def load(path):
    """Loads a calisym model file (safetensors) or an MLP JSON file."""
    with open(path, "rb") as fh:
        raw = fh.read()
    if raw.lstrip()[:1] == b"{":
        return load_mlp(raw)
    return load_safetensors_model(raw)


def _lists(a):
    return np.asarray(a).tolist()


def forecast_ports(forecaster, x0, m0, horizon):
    """The measured ports of steps 0 … horizon−1 that a direct port
    forecaster (calisym train --forecaster: MODEL.forecaster.json, read
    with json.load) forecasts from the state x0 (2n values) and its measured
    ports m0: m0 itself at step 0, then the linear map of step k on the
    standardised (x0, m0) and their random tanh features (the last step's
    map beyond its steps). A state-feedback forecaster needs the rollout's
    states and is refused. The file's checksum is not verified here."""
    p = forecaster["policy"]
    steps, n, nm, nf = int(p.get("steps") or 0), int(p["n"]), int(p["measured"]), int(p["features"])
    if steps < 1:
        raise ValueError("a state-feedback forecaster (no \"steps\"): it needs the rollout's states; only direct ones run here")
    x0, m0 = np.asarray(x0, dtype=np.float64), np.asarray(m0, dtype=np.float64)
    if x0.shape != (2 * n,) or m0.shape != (nm,):
        raise ValueError("x0 has %s values and m0 %s, the forecaster takes %d and %d" % (x0.shape, m0.shape, 2 * n, nm))
    z = (np.concatenate([x0, m0]) - np.asarray(p["in_mean"])) / np.asarray(p["in_scale"])
    R = np.asarray(p["r"], dtype=np.float64).reshape(nf, z.size)
    phi = np.concatenate([[1.0], z, np.tanh(R @ z + np.asarray(p["b"], dtype=np.float64))])
    W = np.asarray(p["w"], dtype=np.float64).reshape(steps * nm, phi.size)
    out = np.empty((horizon, nm))
    out[0] = m0
    for k in range(1, horizon):
        r = min(k, steps) - 1
        out[k] = np.asarray(p["out_mean"]) + np.asarray(p["out_scale"]) * (W[r * nm:(r + 1) * nm] @ phi)
    return out


def main(argv):
    cmd, args = argv[1] if len(argv) > 1 else "", argv[2:]
    if cmd == "port_means" and args:
        # Each case: {"plan": [[...]], "history": [[...]], "m": m}.
        out = []
        for case_path in args:
            with open(case_path) as fh:
                case = json.load(fh)
            out.append({"means": _lists(port_means(case["plan"], case.get("history") or [], int(case["m"])))})
        json.dump(out, sys.stdout)
        return 0
    if cmd == "forecast" and args and len(args) % 2 == 0:
        # Each pair: FORECASTER CASE.json, a case {"x0": [...], "m0": [...], "horizon": H}.
        out, status = [], 0
        for path, case_path in zip(args[::2], args[1::2]):
            try:
                with open(path) as fh:
                    f = json.load(fh)
                with open(case_path) as fh:
                    case = json.load(fh)
                out.append({"ports": _lists(forecast_ports(f, case["x0"], case["m0"], int(case["horizon"])))})
            except (OSError, KeyError, ValueError) as e:
                sys.stderr.write("calisym_ref: %s: %s\n" % (path, e))
                out.append({"error": "%s: %s" % (path, e)})
                status = 1
        json.dump(out, sys.stdout)
        return status
    if cmd not in ("rollout", "jacobian") or not args or len(args) % 2:
        sys.stderr.write("usage: calisym_ref.py rollout|jacobian MODEL CASE.json [MODEL CASE.json ...]\n"
                         "       calisym_ref.py port_means CASE.json [CASE.json ...]\n"
                         "       calisym_ref.py forecast FORECASTER CASE.json [FORECASTER CASE.json ...]\n")
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
            if cmd == "jacobian":
                r = model.rollout_jacobian(case["x0"], case["ports"], dense=bool(case.get("dense")))
                n = r["A"].shape[:2]
                res = {"states": _lists(r["states"]), "A": _lists(r["A"].reshape(n + (-1,))), "B": _lists(r["B"].reshape(n + (-1,)))}
                if "dx0" in r:
                    res["dx0"], res["dports"] = _lists(r["dx0"].reshape(n + (-1,))), _lists(r["dports"].reshape(n + (-1,)))
            else:
                res = {"states": _lists(model.rollout(case["x0"], case["ports"]))}
            res["port_mean"] = model.port_mean
        except KeyError as e:
            msg = "%s: no %s (a case is {\"x0\": [[...]], \"ports\": [[[...]]]})" % (case_path, e)
        except (OSError, ValueError) as e:
            msg = "%s (for %s): %s" % (case_path, path, e)
        else:
            results.append(res)
            continue
        sys.stderr.write("calisym_ref: %s\n" % msg)
        results.append({"error": msg})
        status = 1
    json.dump(results, sys.stdout)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
