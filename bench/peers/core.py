# SPDX-License-Identifier: MIT
"""The bench_large step written once over a small array interface `B`
(numpy in reference_numpy.py, PyTorch in step_torch.py, jax.numpy in
step_jax.py), following sim/model/simulation.cpp, sim/model/fluid_physics.hpp,
sim/model/particle_physics.hpp and sim/model/halo.hpp for a closed box with no-slip
walls at rest, central advection, two-way coupling, no obstacles, no
injection, every particle alive.

Storage (float32, no halo kept between phases; each stencil pads what it
needs, the halo rules of sim/model/halo.hpp for walls):
  U    (ny, nx - 1)  u faces i = 1..nx-1, j = 0..ny-1 (the wall faces are 0)
  V    (ny - 1, nx)  v faces i = 0..nx-1, j = 1..ny-1
  phi  (ny, nx)      the kinematic pressure, Neumann (copy) ghosts
  x, y, vx, vy, d    (P,) per particle

B must provide: zeros, cat, pad_zero, pad_edge, flip_last, floor, to_int,
to_float, clip, exp, expm1, absolute, amax, maximum, sqrt, sumsq, fft_last,
ifft_last, real, complex, transpose, stack_last, scatter_add, gather,
repeat, const (a float32 array from numpy), f32 (cast to float32).
Slicing with non-negative steps and negative starts is used as numpy spells it.
"""
import math

import numpy as np

SOLVERS = ("jacobi50", "fft")


def dct_twiddles(n):
    """exp(-i pi k / (2 n)) and its conjugate, k = 0..n-1 (complex128)."""
    k = np.arange(n)
    w = np.exp(-1j * np.pi * k / (2 * n))
    return w, np.conj(w)


def inverse_eigenvalues(case, dtype=np.float32):
    """1 / (lambda_kx + lambda_ky) of the closed box's Neumann Laplacian
    (sim/model/poisson_fft.hpp: DCT-II, lambda_k = -4 c sin^2(pi k / (2 n)), c the
    float coefficient promoted), 0 for the constant mode (the mean-free
    solution), transposed: shape (nx, ny), index [kx, ky]."""
    lx = -4.0 * float(case.inv_dx2) * np.sin(np.pi * np.arange(case.nx) / (2 * case.nx)) ** 2
    ly = -4.0 * float(case.inv_dy2) * np.sin(np.pi * np.arange(case.ny) / (2 * case.ny)) ** 2
    lam = lx[:, None] + ly[None, :]
    lam[0, 0] = 1.0
    inv = 1.0 / lam
    inv[0, 0] = 0.0
    return inv.astype(dtype)


class Physics:
    """One step of sim for the bench_large case. `solver`: "jacobi50"
    (case.sweeps Jacobi sweeps per solve, warm-started from phi, with the
    two residual norms sim computes) or "fft" (the DCT solve)."""

    def __init__(self, B, case, solver, fft_dtype=np.float32):
        if solver not in SOLVERS:
            raise ValueError(f"solver {solver!r}: expected one of {SOLVERS}")
        if case.nx % 2 or case.ny % 2:
            raise ValueError("the DCT via FFT here needs even nx and ny")
        self.B, self.c, self.solver = B, case, solver
        cplx = np.complex64 if fft_dtype == np.float32 else np.complex128
        self.inv_lam_t = B.const(inverse_eigenvalues(case, fft_dtype))
        self.tw = {}
        for n in {case.nx, case.ny}:
            w, wi = dct_twiddles(n)
            self.tw[n] = (B.const(w.astype(cplx)), B.const(wi.astype(cplx)))
        self.dt_cap = min(case.cfl * case.visc_dt, case.dt_max)  # rounded to float32 with the result

    # ---- halos ------------------------------------------------------------
    def pad_u(self, U):
        """(ny + 2, nx + 3): u at i = -1..nx+1, j = -1..ny; walls and their
        ghosts 0, the rows below/above the no-slip mirror -u (halo_velocity_y)."""
        B = self.B
        return B.pad_zero(B.cat([-U[0:1], U, -U[-1:]], 0), 0, 0, 2, 2)

    def pad_v(self, V):
        """(ny + 3, nx + 2): v at i = -1..nx, j = -1..ny+1."""
        B = self.B
        return B.pad_zero(B.cat([-V[:, 0:1], V, -V[:, -1:]], 1), 2, 2, 0, 0)

    # ---- time step (Simulation::next_dt) ------------------------------------
    def next_dt(self, U, V):
        """min(cfl / max(|u|/dx + |v|/dy), cfl dx^2/(4 nu), dt_max) over
        the face points, on the device (float32; sim reduces in double and
        reads the rate back to the host)."""
        B, c = self.B, self.c
        core = B.amax(B.absolute(U[1:]) * c.inv_dx + B.absolute(V[:, 1:]) * c.inv_dy)
        row0 = B.amax(B.absolute(U[0])) * c.inv_dx  # v(i, 0) is the wall: 0
        col0 = B.amax(B.absolute(V[:, 0])) * c.inv_dy  # u(0, j) is the wall: 0
        rate = B.maximum(B.maximum(core, row0), col0)
        return B.clip(c.cfl / rate, None, self.dt_cap)

    # ---- particles (CpuBackend::particles_impl, couple_fluid) ---------------
    def _stencils(self, x, y):
        B, c = self.B, self.c
        fxu, fyu = x * c.inv_dx, y * c.inv_dy - 0.5
        iu = B.clip(B.to_int(B.floor(fxu)), -1, c.nx)
        ju = B.clip(B.to_int(B.floor(fyu)), -1, c.ny - 1)
        wxu = B.clip(fxu - B.to_float(iu), 0.0, 1.0)
        wyu = B.clip(fyu - B.to_float(ju), 0.0, 1.0)
        fxv, fyv = x * c.inv_dx - 0.5, y * c.inv_dy
        iv = B.clip(B.to_int(B.floor(fxv)), -1, c.nx - 1)
        jv = B.clip(B.to_int(B.floor(fyv)), -1, c.ny)
        wxv = B.clip(fxv - B.to_float(iv), 0.0, 1.0)
        wyv = B.clip(fyv - B.to_float(jv), 0.0, 1.0)
        return (iu, ju, wxu, wyu), (iv, jv, wxv, wyv)

    def _deposit_faces(self, su, sv):
        """The four (corner order (0,0), (1,0), (0,1), (1,1)) u and v faces of
        for_each_deposit_face as flat indices into U and V, and their
        weights, 0 where the face is no fluid unknown (the index then points
        at face 0, which gains w = 0)."""
        B, c = self.B, self.c
        iu, ju, wxu, wyu = su
        iv, jv, wxv, wyv = sv
        out_u, out_v = [], []
        for dj in (0, 1):
            for di in (0, 1):
                wu = (wxu if di else 1.0 - wxu) * (wyu if dj else 1.0 - wyu)
                wv = (wxv if di else 1.0 - wxv) * (wyv if dj else 1.0 - wyv)
                i, j = iu + di, ju + dj
                ok = (i >= 1) & (i <= c.nx - 1) & (j >= 0) & (j <= c.ny - 1)
                out_u.append((B.where(ok, j * (c.nx - 1) + (i - 1), 0 * i), wu * B.to_float(ok)))
                i, j = iv + di, jv + dj
                ok = (i >= 0) & (i <= c.nx - 1) & (j >= 1) & (j <= c.ny - 1)
                out_v.append((B.where(ok, (j - 1) * c.nx + i, 0 * i), wv * B.to_float(ok)))
        return out_u, out_v

    def _sample(self, Fp, width, s):
        """Bilinear sample of a padded field (row width `width`) at stencil s."""
        B = self.B
        i, j, wx, wy = s
        k = (j + 1) * width + (i + 1)
        flat = B.reshape_flat(Fp)
        f00, f10 = B.gather(flat, k), B.gather(flat, k + 1)
        f01, f11 = B.gather(flat, k + width), B.gather(flat, k + width + 1)
        return (1.0 - wy) * ((1.0 - wx) * f00 + wx * f10) + wy * ((1.0 - wx) * f01 + wx * f11)

    def _coeffs(self, r, phi):
        """coupling_coeffs: alpha, beta, beta - 1, z."""
        B = self.B
        z = (1.0 + phi) * r
        e = B.exp(-z)
        one_minus_e = -B.expm1(-z)
        den = 1.0 + phi * e
        small = z < 1e-2
        series = z * (-0.5 + z * (float(np.float32(1 / 6)) - z * (float(np.float32(1 / 24)))))
        q_m1 = B.where(small, series, (one_minus_e - z) / z)
        q = B.where(small, 1.0 + q_m1, one_minus_e / z)
        return one_minus_e / den, (phi * e + q) / den, q_m1 / den, z

    def _exp_mean_weight(self, z):
        B = self.B
        z2 = z * z
        series = (0.5 - z * float(np.float32(1 / 12)) + z * z2 * float(np.float32(1 / 720))
                  - z * z2 * z2 * float(np.float32(1 / 30240)))
        return B.where(z < 0.5, series, 1.0 / z - 1.0 / B.expm1(z))

    def _walls(self, p, v, rad, length):
        """apply_domain_boundaries on one axis, closed on both sides."""
        B, e = self.B, self.c.restitution
        lo = B.clip(rad, None, 0.5 * length)
        hi = length - lo
        below = p < lo
        p, v = B.where(below, lo + (lo - p) * e, p), B.where(below, -e * v, v)
        above = p > hi
        p, v = B.where(above, hi + (hi - p) * e, p), B.where(above, -e * v, v)
        return B.minimum(B.maximum(p, lo), hi), v

    def particle_step(self, U, V, x, y, vx, vy, d, dt):
        """Passes 1-4 of the implicit two-way coupling, then the particles
        move: returns U, V, x, y, vx, vy."""
        B, c = self.B, self.c
        nu_faces, nv_faces = c.ny * (c.nx - 1), (c.ny - 1) * c.nx
        su, sv = self._stencils(x, y)
        fu, fv = self._deposit_faces(su, sv)
        m = c.mass_coef * d * d * d
        # pass 1: the particle mass onto M
        Mu = B.scatter_add(nu_faces, [k for k, _ in fu], [w * m for _, w in fu])
        Mv = B.scatter_add(nv_faces, [k for k, _ in fv], [w * m for _, w in fv])
        # pass 2: the loading at the particle, its coefficients, A and B
        phix = phiy = 0.0
        for (k, w) in fu:
            phix = phix + w * B.gather(Mu, k)
        for (k, w) in fv:
            phiy = phiy + w * B.gather(Mv, k)
        phix, phiy = phix / c.cell_mass, phiy / c.cell_mass
        r = dt * c.mu18 / (c.rho_p * d * d)
        ax, bx, bx_m1, zx = self._coeffs(r, phix)
        ay, by, by_m1, zy = self._coeffs(r, phiy)
        qu = B.stack_last([m * ax, m * (ax * vx - bx_m1 * (c.g_eff_x * dt))])
        qv = B.stack_last([m * ay, m * (ay * vy - by_m1 * (c.g_eff_y * dt))])
        BAu = B.scatter_add(nu_faces, [k for k, _ in fu], [B.stack_last([w, w]) * qu for _, w in fu], 2)
        BAv = B.scatter_add(nv_faces, [k for k, _ in fv], [B.stack_last([w, w]) * qv for _, w in fv], 2)
        # pass 3: every fluid face, u' = u + (A - B u) / (m_f + B)
        Bu, Au = B.reshape2(BAu[:, 0], U.shape), B.reshape2(BAu[:, 1], U.shape)
        Bv, Av = B.reshape2(BAv[:, 0], V.shape), B.reshape2(BAv[:, 1], V.shape)
        U = U + (Au - Bu * U) / (c.cell_mass + Bu)
        V = V + (Av - Bv * V) / (c.cell_mass + Bv)
        # pass 4: the particles sample the coupled fluid and move
        ufx = self._sample(self.pad_u(U), c.nx + 3, su)
        ufy = self._sample(self.pad_v(V), c.nx + 2, sv)
        nvx = vx + ax * (ufx - vx) + bx * (c.g_eff_x * dt)
        nvy = vy + ay * (ufy - vy) + by * (c.g_eff_y * dt)
        nx_ = x + dt * (nvx + (vx - nvx) * self._exp_mean_weight(zx))
        ny_ = y + dt * (nvy + (vy - nvy) * self._exp_mean_weight(zy))
        rad = 0.5 * d
        nx_, nvx = self._walls(nx_, nvx, rad, c.lx)
        ny_, nvy = self._walls(ny_, nvy, rad, c.ly)
        return U, V, nx_, ny_, nvx, nvy

    # ---- fluid (fluid_physics.hpp) ------------------------------------------
    def tendency(self, U, V):
        """L = central advection + nu lap (no fluid body force in this case)."""
        c, ny, nx = self.c, self.c.ny, self.c.nx
        Up, Vp = self.pad_u(U), self.pad_v(V)
        uc, uw, ue = Up[1:ny + 1, 2:nx + 1], Up[1:ny + 1, 1:nx], Up[1:ny + 1, 3:nx + 2]
        us, un = Up[0:ny, 2:nx + 1], Up[2:ny + 2, 2:nx + 1]
        vsw, vse, vnw, vne = Vp[1:ny + 1, 1:nx], Vp[1:ny + 1, 2:nx + 1], Vp[2:ny + 2, 1:nx], Vp[2:ny + 2, 2:nx + 1]
        ue_c, uw_c = 0.5 * (uc + ue), 0.5 * (uw + uc)
        duu_dx = (ue_c * ue_c - uw_c * uw_c) * c.inv_dx
        vn, vs = 0.5 * (vnw + vne), 0.5 * (vsw + vse)
        duv_dy = (vn * 0.5 * (uc + un) - vs * 0.5 * (us + uc)) * c.inv_dy
        lap_u = (uw - 2.0 * uc + ue) * c.inv_dx2 + (us - 2.0 * uc + un) * c.inv_dy2
        LU = -(duu_dx + duv_dy) + c.nu * lap_u

        vc, vw, ve = Vp[2:ny + 1, 1:nx + 1], Vp[2:ny + 1, 0:nx], Vp[2:ny + 1, 2:nx + 2]
        vs_, vn_ = Vp[1:ny, 1:nx + 1], Vp[3:ny + 2, 1:nx + 1]
        usw, use, unw, une = Up[1:ny, 1:nx + 1], Up[1:ny, 2:nx + 2], Up[2:ny + 1, 1:nx + 1], Up[2:ny + 1, 2:nx + 2]
        ue_, uw_ = 0.5 * (use + une), 0.5 * (usw + unw)
        duv_dx = (ue_ * 0.5 * (vc + ve) - uw_ * 0.5 * (vw + vc)) * c.inv_dx
        vn_c, vs_c = 0.5 * (vc + vn_), 0.5 * (vs_ + vc)
        dvv_dy = (vn_c * vn_c - vs_c * vs_c) * c.inv_dy
        lap_v = (vw - 2.0 * vc + ve) * c.inv_dx2 + (vs_ - 2.0 * vc + vn_) * c.inv_dy2
        LV = -(duv_dx + dvv_dy) + c.nu * lap_v
        return LU, LV

    def stage(self, U, V, baseU, baseV, dt, second):
        """stage_point: in + dt L(in) (stage 1), base/2 + (in + dt L(in))/2 (stage 2)."""
        LU, LV = self.tendency(U, V)
        nU, nV = U + dt * LU, V + dt * LV
        if second:
            return 0.5 * baseU + 0.5 * nU, 0.5 * baseV + 0.5 * nV
        return nU, nV

    def divergence(self, U, V):
        B, c = self.B, self.c
        uf, vf = B.pad_zero(U, 0, 0, 1, 1), B.pad_zero(V, 1, 1, 0, 0)
        return (uf[:, 1:] - uf[:, :-1]) * c.inv_dx + (vf[1:] - vf[:-1]) * c.inv_dy

    def rhs(self, U, V, dt):
        return self.divergence(U, V) * (1.0 / dt)

    def sweep(self, phi, rhs):
        """jacobi_point with Neumann (copy) ghosts, out of place."""
        c = self.c
        p = self.B.pad_edge(phi)
        off = c.inv_dx2 * (p[1:-1, :-2] + p[1:-1, 2:]) + c.inv_dy2 * (p[:-2, 1:-1] + p[2:, 1:-1])
        return (off - rhs) / c.jacobi_diag

    def residual_norm(self, phi, rhs):
        c = self.c
        p = self.B.pad_edge(phi)
        pc = p[1:-1, 1:-1]
        lap = (c.inv_dx2 * ((p[1:-1, :-2] - pc) + (p[1:-1, 2:] - pc))
               + c.inv_dy2 * ((p[:-2, 1:-1] - pc) + (p[2:, 1:-1] - pc)))
        return self.B.sqrt(self.B.sumsq(rhs - lap))

    def _dct_last(self, x):
        """Unnormalised DCT-II along the last axis (Makhoul's one-FFT form)."""
        B = self.B
        w, _ = self.tw[x.shape[-1]]
        v = B.cat([x[..., 0::2], B.flip_last(x[..., 1::2])], -1)
        return B.real(B.fft_last(v) * w)

    def _idct_last(self, X):
        """The inverse of _dct_last."""
        B = self.B
        n = X.shape[-1]
        _, wi = self.tw[n]
        Xr = B.cat([0.0 * X[..., 0:1], B.flip_last(X[..., 1:])], -1)
        v = B.real(B.ifft_last(B.complex(X, -Xr) * wi))
        a, b = v[..., : n // 2], B.flip_last(v[..., n // 2:])
        return B.reshape2(B.stack_last([a, b]), X.shape)

    def fft_solve(self, rhs):
        """lap(phi) = rhs exactly (the closed box's DCT), mean-free."""
        B = self.B
        X = self._dct_last(B.transpose(self._dct_last(rhs)))  # [kx, ky]
        return self._idct_last(B.transpose(self._idct_last(X * self.inv_lam_t)))

    def project(self, U, V, phi, dt):
        """project_point: u - dt dphi/dx on the fluid faces, float32 (sim
        projects from the float64 pressure of its fft solve)."""
        B, c = self.B, self.c
        nU = U - dt * (phi[:, 1:] - phi[:, :-1]) * c.inv_dx
        nV = V - dt * (phi[1:] - phi[:-1]) * c.inv_dy
        return B.f32(nU), B.f32(nV)

    def solve_project(self, U, V, phi, dt):
        B = self.B
        rhs = self.rhs(U, V, dt)
        b = B.sqrt(B.sumsq(rhs))
        if self.solver == "fft":
            phi = self.fft_solve(rhs)
            res = 0.0 * b
        else:
            r0 = self.residual_norm(phi, rhs)
            phi = B.repeat(self.c.sweeps, lambda p: self.sweep(p, rhs), phi)
            res = self.residual_norm(phi, rhs) + 0.0 * r0  # both checks computed, as sim does
        U, V = self.project(U, V, phi, dt)
        return U, V, B.f32(phi), b, res

    # ---- the step (Simulation::step) ----------------------------------------
    def step(self, state):
        """state: (U, V, phi, x, y, vx, vy, d) -> (new state, (dt, |rhs1|, res1, |rhs2|, res2))."""
        U, V, phi, x, y, vx, vy, d = state
        dt = self.next_dt(U, V)
        U, V, x, y, vx, vy = self.particle_step(U, V, x, y, vx, vy, d, dt)
        U1, V1 = self.stage(U, V, U, V, dt, False)
        U1, V1, phi, b1, r1 = self.solve_project(U1, V1, phi, dt)
        U2, V2 = self.stage(U1, V1, U, V, dt, True)
        U2, V2, phi, b2, r2 = self.solve_project(U2, V2, phi, 0.5 * dt)
        return (U2, V2, phi, x, y, vx, vy, d), (dt, b1, r1, b2, r2)


# ---- diagnostics for the self-checks (numpy, float64) -----------------------
def fluid_momentum(case, U, V):
    """cell_mass * sum over the fluid faces, (x, y) (sim/model/faces.hpp)."""
    return (case.cell_mass * float(np.sum(U, dtype=np.float64)), case.cell_mass * float(np.sum(V, dtype=np.float64)))


def particle_momentum(case, vx, vy, d):
    m = case.rho_p * math.pi / 6.0 * d.astype(np.float64) ** 3
    return float(np.sum(m * vx)), float(np.sum(m * vy))


def max_divergence(case, U, V):
    """max |div u| over the cells, times dx / max|u| (dimensionless), and max |div u| [1/s]."""
    U = U.astype(np.float64)
    V = V.astype(np.float64)
    uf = np.pad(U, ((0, 0), (1, 1)))
    vf = np.pad(V, ((1, 1), (0, 0)))
    div = (uf[:, 1:] - uf[:, :-1]) / case.dx + (vf[1:] - vf[:-1]) / case.dy
    umax = max(np.abs(U).max(), np.abs(V).max(), 1e-300)
    return float(np.abs(div).max() * case.dx / umax), float(np.abs(div).max())


def compare_states(a, b, keys=("U", "V", "phi", "x", "y", "vx", "vy"), before=None):
    """Per array: max |a - b| / max |a| (phi: less its mean first, defined up to a constant).
    With `before` (the state the step started from), the scale is the larger
    of max |a| and max |before|: a particle velocity that drag nearly
    cancels in one step keeps the rounding of the velocity it came from."""
    out = {}
    for k in keys:
        x = np.asarray(a[k], np.float64)
        y = np.asarray(b[k], np.float64)
        if k == "phi":
            x = x - x.mean()
            y = y - y.mean()
        scale = max(np.abs(x).max(), 1e-300)
        if before is not None and k != "phi":
            scale = max(scale, float(np.abs(np.asarray(before[k], np.float64)).max()))
        out[k] = float(np.abs(x - y).max() / scale)
    return out
