// rf_complex.cuh: float64 complex numbers and complex 3-vectors for the RF
// kernels, with the products, quotients and square root of Go's complex128
// as package rf uses them, and the Fresnel reflection coefficients of spec
// §7.1 (rf fresnelCoefficients).
#pragma once

#include "rf_common.cuh"

namespace rf {

struct cd {
    double re, im;
};
__device__ __forceinline__ cd cmk(double re, double im) { return cd{re, im}; }
__device__ __forceinline__ cd operator+(cd a, cd b) { return cd{a.re + b.re, a.im + b.im}; }
__device__ __forceinline__ cd operator-(cd a, cd b) { return cd{a.re - b.re, a.im - b.im}; }
__device__ __forceinline__ cd operator-(cd a) { return cd{-a.re, -a.im}; }
__device__ __forceinline__ cd operator*(cd a, cd b) { return cd{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
__device__ __forceinline__ cd operator*(cd a, double s) { return cd{a.re * s, a.im * s}; }
__device__ __forceinline__ cd conj(cd a) { return cd{a.re, -a.im}; }
__device__ __forceinline__ double cabs(cd a) { return hypot(a.re, a.im); }
__device__ __forceinline__ bool cfin(cd a) { return fin(a.re) && fin(a.im); }
// cexpi is exp(i·phi).
__device__ __forceinline__ cd cexpi(double phi) {
    double s, c;
    sincos(phi, &s, &c);
    return cd{c, s};
}
__device__ __forceinline__ cd cexp(cd z) { return cexpi(z.im) * exp(z.re); }

// cdivf is a/b with |b|² floored at floor (rf cdiv).
__device__ __forceinline__ cd cdivf(cd a, cd b, double floor_) {
    double den = gmax(b.re * b.re + b.im * b.im, floor_);
    return cd{(a.re * b.re + a.im * b.im) / den, (a.im * b.re - a.re * b.im) / den};
}
// cdiv is a/b (Smith's algorithm; b ≠ 0), for the special functions.
__device__ __forceinline__ cd cdiv(cd a, cd b) {
    if (fabs(b.re) >= fabs(b.im)) {
        double r = b.im / b.re, d = b.re + b.im * r;
        return cd{(a.re + a.im * r) / d, (a.im - a.re * r) / d};
    }
    double r = b.re / b.im, d = b.im + b.re * r;
    return cd{(a.re * r + a.im) / d, (a.im * r - a.re) / d};
}
// csqrt is the principal square root (zero at zero) (rf csqrt).
__device__ __forceinline__ cd csqrt(cd z) {
    double r = hypot(z.re, z.im);
    if (r <= 0.0) return cd{0.0, 0.0};
    double re = sqrt(gmax(0.0, 0.5 * (r + z.re)));
    double im = copysign(sqrt(gmax(0.0, 0.5 * (r - z.re))), z.im);
    return cd{re, im};
}

// Complex 3-vector (a field).
struct cv {
    cd x, y, z;
};
__device__ __forceinline__ cv along(d3 b, cd c) { return cv{c * b.x, c * b.y, c * b.z}; }
__device__ __forceinline__ cv operator+(cv a, cv b) { return cv{a.x + b.x, a.y + b.y, a.z + b.z}; }
__device__ __forceinline__ cv operator*(cv a, cd c) { return cv{a.x * c, a.y * c, a.z * c}; }
// dot_real is Σ a_i·b_i for a real b (no conjugation).
__device__ __forceinline__ cd dot_real(cv a, d3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
__device__ __forceinline__ double cpower(cv a) {
    return a.x.re * a.x.re + a.x.im * a.x.im + a.y.re * a.y.re + a.y.im * a.y.im + a.z.re * a.z.re + a.z.im * a.z.im;
}
__device__ __forceinline__ bool cvfin(cv a) { return cfin(a.x) && cfin(a.y) && cfin(a.z); }

// fresnel_coefficients are r_te, r_tm of spec §7.1 (rf fresnelCoefficients).
__device__ __forceinline__ void fresnel_coefficients(double eta_r, double sigma, double mu_r, double gain, double omega,
                                                     double cos_theta, cd& rte, cd& rtm) {
    cd eta = cmk(gmax(eta_r, RF_EPS_SMALL), -gmax(sigma, 0.0) / (gmax(omega, RF_EPS_SMALL) * RF_EPS0));
    cd mu = cmk(gmax(mu_r, RF_EPS_SMALL), 0.0);
    double ct = gmin(gmax(fabs(cos_theta), RF_EPS_SMALL), 1.0);
    cd root = csqrt(mu * eta - cmk(gmax(0.0, 1.0 - ct * ct), 0.0));
    cd mu_c = mu * cmk(ct, 0.0), eta_c = eta * cmk(ct, 0.0);
    cd g = cmk(gain, 0.0);
    rte = g * cdivf(mu_c - root, mu_c + root, 1e-20);
    rtm = g * cdivf(eta_c - root, eta_c + root, 1e-20);
    if (!cfin(rte)) rte = cmk(0.0, 0.0);
    if (!cfin(rtm)) rtm = cmk(0.0, 0.0);
}

}  // namespace rf
