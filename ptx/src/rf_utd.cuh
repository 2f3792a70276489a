// rf_utd.cuh: the first-order UTD wedge operator of package rf (rf/utd.go,
// rf/utd_coeff.go, rf/fresnel.go) in float64 on the device, function for
// function: the Fresnel-integral tail by its power series and Keller's
// continued fraction, the Kouyoumjian–Pathak terms with their boundary
// limits and finite-edge mending, the face reflection operators in
// edge-fixed Jones bases and the spreading and phase of the diffracted ray.
#pragma once

#include "rf_complex.cuh"

#define RF_UTD_EPS 1e-10
#define RF_UTD_MIN_DIST 1e-4

namespace rf {

// ---------------------------------------------------------------------------
// Special functions (rf/fresnel.go).
// ---------------------------------------------------------------------------
__device__ __forceinline__ cd head_integral(double z) {
    double z2 = z * z;
    cd term = cmk(z, 0.0), sum = term;
    for (int n = 1; n < 200; ++n) {
        term = cdiv(term * cmk(0.0, -z2), cmk((double)n, 0.0));
        cd add = cdiv(term, cmk((double)(2 * n + 1), 0.0));
        sum = sum + add;
        if (cabs(add) < 1e-18 * cabs(sum)) break;
    }
    return sum;
}

__device__ __noinline__ cd keller_cf(cd w) {
    const double tiny = 1e-300;
    cd f = w, c = f, d = cmk(0.0, 0.0);
    for (int j = 1; j < 10000; ++j) {
        cd a = cmk((double)j / 2.0, 0.0);
        d = w + a * d;
        if (d.re == 0.0 && d.im == 0.0) d = cmk(tiny, 0.0);
        d = cdiv(cmk(1.0, 0.0), d);
        c = w + cdiv(a, c);
        if (c.re == 0.0 && c.im == 0.0) c = cmk(tiny, 0.0);
        cd delta = c * d;
        f = f * delta;
        if (cabs(delta - cmk(1.0, 0.0)) < 1e-16) break;
    }
    return cdiv(cmk(1.0, 0.0), f);
}

__device__ __forceinline__ cd tail_integral(double z) {
    if (z * z <= 6.0) return cmk(sqrt(RF_PI / 8.0), -sqrt(RF_PI / 8.0)) - head_integral(z);
    return cexpi(-RF_PI / 4.0 - z * z) * 0.5 * keller_cf(cmk(z, 0.0) * cexpi(RF_PI / 4.0));
}

__device__ __noinline__ cd transition_f(double x) {
    if (x <= 0.0) return cmk(0.0, 0.0);
    double z = sqrt(x);
    if (x <= 6.0) return cmk(0.0, 2.0 * z) * cexpi(x) * tail_integral(z);
    cd r = cexpi(RF_PI / 4.0);
    return r * cmk(z, 0.0) * keller_cf(r * cmk(z, 0.0));
}

__device__ __forceinline__ cd fresnel_e(double x) {
    double ax = fabs(x);
    cd v = cmk(0.5, 0.5) - cmk(sqrt(2.0 / RF_PI), 0.0) * conj(tail_integral(sqrt(ax)));
    return x < 0.0 ? -v : v;
}

// ---------------------------------------------------------------------------
// Kouyoumjian–Pathak coefficient (rf/utd_coeff.go).
// ---------------------------------------------------------------------------
__device__ __forceinline__ double cot_guarded(double v) {
    double s, c;
    sincos(v, &s, &c);
    if (fabs(s) < RF_EPS_SMALL) s = (s + RF_EPS_SMALL >= 0.0) ? RF_EPS_SMALL : -RF_EPS_SMALL;
    double r = c / s;
    return fin(r) ? r : 0.0;
}

__device__ __forceinline__ cd kp_term(double beta, double n, double kL, double sigma, bool plus) {
    double two_npi = 2.0 * n * RF_PI;
    double N = plus ? round((beta + RF_PI) / two_npi) : round((beta - RF_PI) / two_npi);
    double po = two_npi * N - beta;
    double ch = cos(0.5 * po);
    double a = 2.0 * ch * ch;
    double cot = cot_guarded((RF_PI + sigma * beta) / (2.0 * n));
    cd raw = transition_f(kL * a) * cmk(cot, 0.0);
    if (!(fabs(kL) > RF_UTD_EPS)) return raw;
    double thr = 8e-12 * gmax(n * n, 1.0);
    if (a > thr) return raw;
    double a1 = sin(po);
    double sign = 1.0;
    if (fabs(a1) > RF_EPS_SMALL) sign = a1 < 0.0 ? -sigma : sigma;
    else if (cot < 0.0) sign = -1.0;
    double l = sign * n * sqrt(RF_PI * gmax(kL, 0.0));
    cd limit = cmk(l, l);
    double blend = gmin(1.0, a / gmax(thr, 1e-20));
    return limit + (raw - limit) * cmk(blend, 0.0);
}

__device__ __forceinline__ cd mend_term(cd t, double beta, double b, double n, double kL, double sigma, bool plus,
                                        double gamma, double trunc) {
    if (gamma >= 1.0 && trunc == 1.0) return t;
    double delta = beta - b;
    double dw = 4.0 * sqrt(2.0 * RF_PI / gmax(kL, RF_EPS_SMALL));
    double w = exp(-(delta / dw) * (delta / dw));
    if (!(w > 1e-3)) return t * cmk(trunc, 0.0);
    cd odd = (t - kp_term(2.0 * b - beta, n, kL, sigma, plus)) * cmk(0.5 * w, 0.0);
    cd even = t - odd;
    double db = 0.35 * sqrt(2.0 * RF_PI / gmax(kL, RF_EPS_SMALL));
    double wb = exp(-(delta / db) * (delta / db));
    return even * cmk(trunc, 0.0) + odd * cmk(gamma * (wb + (1.0 - wb) * trunc), 0.0);
}

__device__ __forceinline__ void kp_terms(double phi, double phiP, double n, double k, double s, double sP, double sinB,
                                         bool oblique, double gamma, double trunc, cd& d_inc, cd& d0, cd& d1) {
    double L = s * sP / (s + sP + RF_UTD_EPS);
    double factor = -1.0 / (2.0 * n * sqrt(2.0 * RF_PI * k + RF_UTD_EPS));
    if (oblique) {
        double sb = gmax(sinB, RF_EPS_SMALL);
        L *= sb * sb;
        factor /= sb;
    }
    double kL = k * L;
    cd f = cexpi(-RF_PI / 4.0) * cmk(factor, 0.0);
    double bm = phi - phiP, bp = phi + phiP;
    double b_inc = fabs(bm - RF_PI) <= fabs(bm + RF_PI) ? RF_PI : -RF_PI;
    double b_ref = (2.0 * n - 1.0) * RF_PI;
    if (fabs(bp - RF_PI) <= fabs(bp - b_ref)) b_ref = RF_PI;
    cd t0 = mend_term(kp_term(bm, n, kL, 1.0, true), bm, b_inc, n, kL, 1.0, true, gamma, trunc);
    cd t1 = mend_term(kp_term(bm, n, kL, -1.0, false), bm, b_inc, n, kL, -1.0, false, gamma, trunc);
    cd t2 = mend_term(kp_term(bp, n, kL, 1.0, true), bp, b_ref, n, kL, 1.0, true, gamma, trunc);
    cd t3 = mend_term(kp_term(bp, n, kL, -1.0, false), bp, b_ref, n, kL, -1.0, false, gamma, trunc);
    d_inc = f * (t0 + t1);
    d0 = f * t3;
    d1 = f * t2;
}

// ---------------------------------------------------------------------------
// Bases and Jones operators (rf/utd.go).
// ---------------------------------------------------------------------------
struct Basis {
    d3 u, v, k;
};
struct Jop {
    cd m00, m01, m10, m11;
};
__device__ __forceinline__ void japply(const Jop& m, cd x0, cd x1, cd& y0, cd& y1) {
    y0 = m.m00 * x0 + m.m01 * x1;
    y1 = m.m10 * x0 + m.m11 * x1;
}

__device__ __forceinline__ d3 safe_normalize(d3 v, d3 fb) {
    double n = norm(v);
    if (n > RF_EPS_SMALL) return v * (1.0 / (n + RF_UTD_EPS));
    return fb * (1.0 / (norm(fb) + RF_UTD_EPS));
}
__device__ __forceinline__ d3 perp_basis(d3 ray, d3 preferred) {
    d3 alt = fallback_axis(ray);
    return safe_normalize(preferred - ray * dot(preferred, ray), alt - ray * dot(alt, ray));
}
__device__ __forceinline__ Basis basis_from(d3 ray, d3 first, d3 fallback) {
    d3 k = safe_normalize(ray, mk(0, 0, 1));
    d3 u = safe_normalize(first - k * dot(first, k), fallback);
    d3 v = safe_normalize(cross(k, u), perp_basis(k, mk(0, 1, 0)));
    return Basis{u, v, k};
}
__device__ __forceinline__ Basis edge_basis(d3 ray, d3 edge, bool outgoing) {
    d3 k = safe_normalize(ray, mk(0, 0, 1));
    d3 e = safe_normalize(edge, mk(0, 0, 1));
    d3 phi = cross(k, e);
    if (outgoing) phi = neg(phi);
    return basis_from(k, phi, perp_basis(k, e));
}
__device__ __forceinline__ Jop rebase(const Jop& op, const Basis& si, const Basis& so, const Basis& di, const Basis& dn) {
    Jop m;
    for (int j = 0; j < 2; ++j) {
        d3 d = j == 0 ? di.u : di.v;
        cd y0, y1;
        japply(op, cmk(dot(d, si.u), 0.0), cmk(dot(d, si.v), 0.0), y0, y1);
        cv w = along(so.u, y0) + along(so.v, y1);
        cd a = dot_real(w, dn.u), b = dot_real(w, dn.v);
        if (j == 0) { m.m00 = a; m.m10 = b; }
        else { m.m01 = a; m.m11 = b; }
    }
    return m;
}

__device__ __forceinline__ bool exterior_mask(d3 dir, d3 e, d3 n0, d3 nn) {
    d3 dp = dir - e * dot(dir, e);
    return norm(dp) > RF_EPS_SMALL && (dot(dp, n0) >= -RF_EPS_SMALL || dot(dp, nn) >= -RF_EPS_SMALL);
}
__device__ __forceinline__ double safe_acos(double v) {
    double c = gmin(gmax(v, -1.0), 1.0);
    return atan2(sqrt(gmax(1.0 - c * c, 0.0)), c);
}
__device__ __forceinline__ double wedge_angle(d3 d, d3 t, d3 n0) {
    double a = safe_acos(dot(d, t));
    return dot(d, n0) >= 0.0 ? a : 2.0 * RF_PI - a;
}

// FaceMat is the material of one wedge face (present false: none).
struct FaceMat {
    bool present;
    double eta, sigma, mu, gain;
};

__device__ __forceinline__ cd cdiv_eps(cd a, cd b) {
    double den = b.re * b.re + b.im * b.im + RF_UTD_EPS;
    return cd{(a.re * b.re + a.im * b.im) / den, (a.im * b.re - a.re * b.im) / den};
}

__device__ __forceinline__ Jop face_operator(const FaceMat& f, double cos_theta, d3 normal, const Basis& inB,
                                             const Basis& outB, double omega) {
    double ct = gmin(gmax(cos_theta, RF_EPS_SMALL), 1.0);
    cd eta = cmk(f.eta, -f.sigma / (gmax(omega, RF_EPS_SMALL) * RF_EPS0));
    cd mu = cmk(f.mu, 0.0);
    cd a = csqrt(mu * eta - cmk(1.0 - ct * ct, 0.0));
    cd g = cmk(f.gain, 0.0), c = cmk(ct, 0.0);
    cd rte = g * cdiv_eps(mu * c - a, mu * c + a);
    cd rtm = g * cdiv_eps(eta * c - a, eta * c + a);
    d3 s_in = cross(normal, inB.k);
    d3 s_out_raw = cross(normal, outB.k);
    d3 fb_out = perp_basis(outB.k, s_in);
    d3 s_out = dot(s_out_raw, fb_out) < 0.0 ? neg(s_out_raw) : s_out_raw;
    Basis fin_ = basis_from(inB.k, s_in, perp_basis(inB.k, mk(0, 0, 1)));
    Basis fout = basis_from(outB.k, s_out, fb_out);
    Jop diag{rte, cmk(0.0, 0.0), cmk(0.0, 0.0), rtm};
    return rebase(diag, fin_, fout, inB, outB);
}

__device__ __forceinline__ void finite_edge(d3 src, d3 q, d3 tgt, d3 e, double k, double lo, double hi, double& trunc,
                                            double& gamma) {
    double sa = dot(src - q, e), ta = dot(tgt - q, e);
    d3 vs = q - src, vt = tgt - q;
    double sp = norm(vs - e * dot(vs, e)) + RF_UTD_EPS;
    double tp = norm(vt - e * dot(vt, e)) + RF_UTD_EPS;
    double sr = sqrt(sp * sp + sa * sa + RF_UTD_EPS);
    double tr = sqrt(tp * tp + ta * ta + RF_UTD_EPS);
    double curv = sp * sp / (sr * sr * sr + RF_UTD_EPS) + tp * tp / (tr * tr * tr + RF_UTD_EPS);
    double sigma = sqrt(gmax(k * curv, RF_UTD_EPS) / RF_PI);
    cd half = cmk(0.5, 0.5);
    double lower = cabs(half * conj(fresnel_e(sigma * lo) + half));
    double upper = cabs(half * conj(half - fresnel_e(sigma * hi)));
    trunc = gmin(gmax(1.0 - lower - upper, 0.0), 1.0);
    double z = gmin(gmax(gmax(sigma * lo, -sigma * hi) / 0.03, -80.0), 80.0);
    gamma = 1.0 / (1.0 + exp(z));
}

// UtdIn is one source–edge pair (rf utdInput).
struct UtdIn {
    d3 src, edge_pos, edge_dir, n0, nn;
    double wedge_n, line_min, line_max;
    FaceMat face0, face1;
    double k, omega;
    d3 tx_pol;
};

// stationary_parameter is rf.StationaryParameter.
__device__ __forceinline__ double stationary_parameter(d3 src, d3 target, d3 origin, d3 dir) {
    d3 e = normalize(dir);
    d3 so = src - origin, to = target - origin;
    double a = dot(so, e), b = dot(to, e);
    double rs = norm(so - e * a), rt = norm(to - e * b);
    return add_rn(mul_rn(a, rt), mul_rn(b, rs)) / (rs + rt);
}

// utd_field is rf utdField: the diffracted field at tgt (zero when the pair
// is invalid).
__device__ __noinline__ cv utd_field(const UtdIn& in, d3 tgt) {
    cv zero{{0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}};
    d3 e = safe_normalize(in.edge_dir, mk(0, 0, 1));
    d3 origin = in.edge_pos + e * in.line_min;
    double length = in.line_max - in.line_min;
    double p = stationary_parameter(in.src, tgt, origin, e);
    if (!(length > RF_EPS_SMALL) || !fin(p)) return zero;
    d3 q = origin + e * p;
    double lo = -p, hi = length - p;
    if (!exterior_mask(in.src - q, e, in.n0, in.nn)) return zero;
    // edge geometry (rf edgeGeometry)
    d3 t = safe_normalize(cross(in.n0, e), mk(0, 1, 0));
    d3 inv = q - in.src;
    d3 inP = inv - e * dot(inv, e);
    double sPproj = norm(inP) + RF_UTD_EPS;
    double phiP = wedge_angle(inP * (-1.0 / sPproj), t, in.n0);
    d3 out = tgt - q;
    d3 outP = out - e * dot(out, e);
    double sproj = norm(outP) + RF_UTD_EPS;
    double phi = wedge_angle(outP * (1.0 / sproj), t, in.n0);
    double sP = norm(inv) + RF_UTD_EPS, s = norm(out) + RF_UTD_EPS;
    double sbP = gmin(gmax(sPproj / sP, RF_EPS_SMALL), 1.0), sb = gmin(gmax(sproj / s, RF_EPS_SMALL), 1.0);
    double sinB = sqrt(gmax(sb * sbP, RF_EPS_SMALL));
    if (!(sP > RF_UTD_MIN_DIST) || !(s > RF_UTD_MIN_DIST)) return zero;
    Basis inB = edge_basis(q - in.src, e, false);
    Basis outB = edge_basis(tgt - q, e, true);
    double trunc, gamma;
    finite_edge(in.src, q, tgt, e, in.k, lo, hi, trunc, gamma);
    double npi = in.wedge_n * RF_PI;
    if (phi > npi) phi = (phi - npi < 2.0 * RF_PI - phi) ? npi : 0.0;
    if (phiP > npi) phiP = (phiP - npi < 2.0 * RF_PI - phiP) ? npi : 0.0;
    d3 dir = safe_normalize(q - in.src, mk(0, 0, 1));
    double s_inc = norm(q - in.src) + RF_UTD_EPS;
    cv inc = along(perp_basis(dir, in.tx_pol), cexpi(-in.k * s_inc) * cmk(1.0 / (2.0 * gmax(in.k, RF_EPS_SMALL) * s_inc), 0.0));
    cd j0 = dot_real(inc, inB.u), j1 = dot_real(inc, inB.v);
    bool use_face = in.face0.present || in.face1.present;
    Jop op0{{0, 0}, {0, 0}, {0, 0}, {0, 0}}, op1 = op0;
    if (in.face0.present) {
        op0 = face_operator(in.face0, gmin(gmax(fabs(sin(phiP)), RF_EPS_SMALL), 1.0), in.n0, inB, outB, in.omega);
    }
    if (in.face1.present) {
        op1 = face_operator(in.face1, gmin(gmax(fabs(sin(npi - phi)), RF_EPS_SMALL), 1.0), in.nn, inB, outB, in.omega);
    }
    cd d_inc, d0, d1;
    kp_terms(phi, phiP, in.wedge_n, in.k, s, sP, sinB, use_face, gamma, trunc, d_inc, d0, d1);
    Jop total{-d_inc + op0.m00 * d0 + op1.m00 * d1, op0.m01 * d0 + op1.m01 * d1, op0.m10 * d0 + op1.m10 * d1,
              -d_inc + op0.m11 * d0 + op1.m11 * d1};
    cd f0, f1;
    japply(total, j0, j1, f0, f1);
    double spread = sqrt(sP / (s * (s + sP) + RF_UTD_EPS));
    cd ph = cexpi(-in.k * s) * cmk(spread, 0.0);
    cv r = along(outB.u, f0) + along(outB.v, f1);
    return r * ph;
}

}  // namespace rf
