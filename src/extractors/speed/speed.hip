// speed_chroma and speed_temporal (libvmaf feature/speed.c). CPU twin: cpu.rs.
//
// speed_small: one chroma plane (speed_temporal: the difference of two
// luma planes) to float around 0, the optional prescale
// (row/column tap tables built on the host exactly as the CPU engine builds
// them), the 9-tap anti-aliasing Gaussian evaluated only where the 16:1
// decimation samples it. speed_localmean: the 3-tap local mean removed.
// speed_stats (one block per image): the 25x25 block covariance (each entry
// a sequential double sum, as the CPU sums it), its eigenvalues (Householder
// tridiagonalisation, implicit QR) and the per-block variances from the
// Householder-QR solve of K X = Y. Every float operation is the CPU's, in
// the CPU's order, with no contraction (the module is compiled without FMA),
// so the results are identical; the logarithms of the entropies are taken on
// the host.
#include "vmafhip_prelude.h"
// scaled_at: the prescale's sampling, from ../common/prescale.h (put
// before this file when it is loaded, speed/gpu.rs).

#define SPEED_N 25
#define SPEED_BLOCK 5

__device__ __forceinline__ int speed_mirror(int i, int n) {
    return i < 0 ? -i : (i >= n ? 2 * n - i - 2 : i);
}

template <typename In>
__device__ __forceinline__ float to_f(const In* src, int pw, int r, int c, float scaler) {
    const float v = (float)src[(size_t)r * pw + c];
    return scaler > 0.0f ? v / scaler + -128.0f : v + -128.0f;
}

// The samples an image is made of: one plane's (speed_chroma) or the
// difference of a previous and a current plane's (speed_temporal), as
// floats around 0.
template <typename In>
struct SpeedPlane {
    const In* p;
    __device__ __forceinline__ float at(int pw, int r, int c, float scaler) const {
        return to_f<In>(p, pw, r, c, scaler);
    }
};
template <typename In>
struct SpeedDiff {
    const In* prev;
    const In* cur;
    __device__ __forceinline__ float at(int pw, int r, int c, float scaler) const {
        return to_f<In>(prev, pw, r, c, scaler) - to_f<In>(cur, pw, r, c, scaler);
    }
};

// Image blockIdx.z of the launch (`src` holds one per z); its decimated
// image goes to out + z * ow * oh.
template <typename Src>
__device__ void small_impl(const Src* src, int pw, float scaler, int method, int taps,
                           const int* ridx, const float* rw, const int* cidx, const float* cw,
                           int sw, int sh, const float* f, int fw, int ow, int oh, float* out) {
    const int j = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int i = blockIdx.y;
    if (j >= ow) return;
    const int z = blockIdx.z;
    out += (size_t)z * ow * oh;
    const int half = fw / 2;
    float acc = 0.0f;
    for (int fj = 0; fj < fw; ++fj) {
        const int col = speed_mirror(16 * j - half + fj, sw);
        float tmp = 0.0f;
        for (int fi = 0; fi < fw; ++fi) {
            const int row = speed_mirror(16 * i - half + fi, sh);
            tmp += f[fi] * scaled_at(src[z], pw, scaler, method, taps, ridx, rw, cidx, cw, row, col);
        }
        acc += f[fj] * tmp;
    }
    out[(size_t)i * ow + j] = acc;
}

// speed_chroma: the four planes (U ref, U dist, V ref, V dist), z = 0..3.
template <typename In>
__device__ void chroma_small(const In* s0, const In* s1, const In* s2, const In* s3, int pw,
                             u32 scaler_bits, int method, int taps, const int* ridx,
                             const float* rw, const int* cidx, const float* cw, int sw, int sh,
                             const float* f, int fw, int ow, int oh, float* out) {
    const SpeedPlane<In> src[4] = {{s0}, {s1}, {s2}, {s3}};
    small_impl(src, pw, __uint_as_float(scaler_bits), method, taps, ridx, rw, cidx, cw, sw, sh, f,
               fw, ow, oh, out);
}

VMAF_KERNEL void speed_small_8(const u8* s0, const u8* s1, const u8* s2, const u8* s3, int pw,
                               u32 scaler_bits, int method, int taps, const int* ridx,
                               const float* rw, const int* cidx, const float* cw, int sw, int sh,
                               const float* f, int fw, int ow, int oh, float* out) {
    chroma_small<u8>(s0, s1, s2, s3, pw, scaler_bits, method, taps, ridx, rw, cidx, cw, sw, sh, f,
                     fw, ow, oh, out);
}
VMAF_KERNEL void speed_small_16(const u16* s0, const u16* s1, const u16* s2, const u16* s3, int pw,
                                u32 scaler_bits, int method, int taps, const int* ridx,
                                const float* rw, const int* cidx, const float* cw, int sw, int sh,
                                const float* f, int fw, int ow, int oh, float* out) {
    chroma_small<u16>(s0, s1, s2, s3, pw, scaler_bits, method, taps, ridx, rw, cidx, cw, sw, sh, f,
                      fw, ow, oh, out);
}

// speed_temporal: the two frame differences (previous less current luma of
// the reference, z = 0, and of the distorted or, with speed_use_ref_diff,
// the distorted's previous less the reference's current, z = 1).
template <typename In>
__device__ void temporal_small(const In* p0, const In* c0, const In* p1, const In* c1, int pw,
                               u32 scaler_bits, int method, int taps, const int* ridx,
                               const float* rw, const int* cidx, const float* cw, int sw, int sh,
                               const float* f, int fw, int ow, int oh, float* out) {
    const SpeedDiff<In> src[2] = {{p0, c0}, {p1, c1}};
    small_impl(src, pw, __uint_as_float(scaler_bits), method, taps, ridx, rw, cidx, cw, sw, sh, f,
               fw, ow, oh, out);
}

VMAF_KERNEL void speed_temporal_small_8(const u8* p0, const u8* c0, const u8* p1, const u8* c1,
                                        int pw, u32 scaler_bits, int method, int taps,
                                        const int* ridx, const float* rw, const int* cidx,
                                        const float* cw, int sw, int sh, const float* f, int fw,
                                        int ow, int oh, float* out) {
    temporal_small<u8>(p0, c0, p1, c1, pw, scaler_bits, method, taps, ridx, rw, cidx, cw, sw, sh,
                       f, fw, ow, oh, out);
}
VMAF_KERNEL void speed_temporal_small_16(const u16* p0, const u16* c0, const u16* p1,
                                         const u16* c1, int pw, u32 scaler_bits, int method,
                                         int taps, const int* ridx, const float* rw,
                                         const int* cidx, const float* cw, int sw, int sh,
                                         const float* f, int fw, int ow, int oh, float* out) {
    temporal_small<u16>(p0, c0, p1, c1, pw, scaler_bits, method, taps, ridx, rw, cidx, cw, sw, sh,
                        f, fw, ow, oh, out);
}

// Local mean removal: small - (3-tap vertical then horizontal filter), for
// image blockIdx.z of the four.
VMAF_KERNEL void speed_localmean(const float* small, int ow, int oh, const float* f, int fw,
                                 float* out) {
    const int j = blockIdx.x * VMAF_BLOCK + threadIdx.x;
    const int i = blockIdx.y;
    if (j >= ow) return;
    small += (size_t)blockIdx.z * ow * oh;
    out += (size_t)blockIdx.z * ow * oh;
    const int half = fw / 2;
    float acc = 0.0f;
    for (int fj = 0; fj < fw; ++fj) {
        const int col = speed_mirror(j - half + fj, ow);
        float tmp = 0.0f;
        for (int fi = 0; fi < fw; ++fi) {
            const int row = speed_mirror(i - half + fi, oh);
            tmp += f[fi] * small[(size_t)row * ow + col];
        }
        acc += f[fj] * tmp;
    }
    out[(size_t)i * ow + j] = small[(size_t)i * ow + j] - acc;
}

__device__ __forceinline__ float sqrt_f(float x) { return (float)sqrt((double)x); }
__device__ __forceinline__ float sign_f(float x) { return x >= 0.0f ? 1.0f : -1.0f; }
__device__ __forceinline__ float pythag(float x, float y) { return sqrt_f(x * x + y * y); }

__device__ void chop_small(const float* d, float* sd, int n) {
    for (int i = 0; i < n - 1; ++i)
        if ((double)fabsf(sd[i]) < 1e-6 * (double)(fabsf(d[i]) + fabsf(d[i + 1]))) sd[i] = 0.0f;
}

__device__ float trailing_eig(const float* d, const float* sd, int n) {
    const float ta = d[n - 2], tb = d[n - 1], tab = sd[n - 2];
    const float dt = (float)((double)(ta - tb) / 2.0);
    if (dt > 0.0f) return tb - tab * (tab / (dt + pythag(dt, tab)));
    if (dt == 0.0f) return tb - fabsf(tab);
    return tb + tab * (tab / (-dt + pythag(dt, tab)));
}

__device__ void givens(float a, float b, float& c, float& s) {
    if (b == 0.0f) {
        c = 1.0f;
        s = 0.0f;
    } else if (fabsf(b) > fabsf(a)) {
        const float t = -a / b;
        const float s1 = (float)(1.0 / sqrt((double)(1.0f + t * t)));
        s = s1;
        c = s1 * t;
    } else {
        const float t = -b / a;
        const float c1 = (float)(1.0 / sqrt((double)(1.0f + t * t)));
        c = c1;
        s = c1 * t;
    }
}

__device__ void qr_step(float* d, float* sd, int n) {
    float mu = trailing_eig(d, sd, n);
    if (1e-6 * (double)fabsf(mu) > (double)(fabsf(d[0]) + fabsf(sd[0]))) mu = 0.0f;
    float x = d[0] - mu, z = sd[0];
    float ap = d[0], bp = sd[0], aq = d[1];
    float c, s;
    if (n == 2) {
        givens(x, z, c, s);
        const float ap1 = c * (c * ap - s * bp) + s * (s * aq - c * bp);
        const float bp1 = c * (s * ap + c * bp) - s * (s * bp + c * aq);
        const float aq1 = s * (s * ap + c * bp) + c * (s * bp + c * aq);
        d[0] = ap1;
        sd[0] = bp1;
        d[1] = aq1;
        return;
    }
    float bq = sd[1];
    float bk = 0.0f, zk = 0.0f;
    for (int k = 0; k < n - 1; ++k) {
        givens(x, z, c, s);
        const float bk1 = c * bk - s * zk;
        const float ap1 = c * (c * ap - s * bp) + s * (s * aq - c * bp);
        const float bp1 = c * (s * ap + c * bp) - s * (s * bp + c * aq);
        const float zp1 = -s * bq;
        const float aq1 = s * (s * ap + c * bp) + c * (s * bp + c * aq);
        const float bq1 = c * bq;
        const float ak = ap1;
        bk = bp1;
        zk = zp1;
        ap = aq1;
        bp = bq1;
        if (k < n - 2) aq = d[k + 2];
        if (k + 3 < n) bq = sd[k + 2];
        d[k] = ak;
        if (k > 0) sd[k - 1] = bk1;
        if (k < n - 2) sd[k + 1] = bp;
        x = bk;
        z = zk;
    }
    d[n - 1] = ap;
    sd[n - 2] = bk;
}

__device__ void eigen_tridiagonal(float* d, float* sd) {
    const int n = SPEED_N;
    chop_small(d, sd, n);
    int b = n - 1;
    int iter = 0;
    while (b > 0 && iter < 500) {
        if (sd[b - 1] == 0.0f) {
            --b;
            continue;
        }
        int a = b - 1;
        while (a > 0) {
            if (sd[a - 1] == 0.0f) break;
            --a;
        }
        const int nb = b - a + 1;
        qr_step(d + a, sd + a, nb);
        chop_small(d + a, sd + a, nb);
        ++iter;
    }
}

// dst = x * y for 25x25 matrices in shared memory, entries summed over k ascending.
__device__ void matmul25(const float* x, const float* y, float* dst) {
    const int n = SPEED_N;
    for (int e = threadIdx.x; e < n * n; e += VMAF_BLOCK) {
        const int i = e / n, j = e % n;
        float acc = 0.0f;
        for (int k = 0; k < n; ++k) acc += x[i * n + k] * y[k * n + j];
        dst[e] = acc;
    }
    __syncthreads();
}

// Block statistics of decimated image blockIdx.x (ow x oh, tw x th used):
// at out + blockIdx.x * (26 + blocks) floats, the 25 eigenvalues of the
// covariance, a flag (1 when the covariance cannot be inverted) and the
// per-block variances (zero then). yx: 2 * 25 * blocks floats of scratch
// per image (Y, then Q*Y).
VMAF_KERNEL void speed_stats(const float* imgs, int ow, int oh, int tw, int th, float* out,
                             float* yx_all) {
    const int n = SPEED_N, B = SPEED_BLOCK;
    const int t = threadIdx.x;
    const int sub_w = tw - B + 1, sub_h = th - B + 1;
    const int bh = tw / B, blocks = (tw / B) * (th / B);
    const float* img = imgs + (size_t)blockIdx.x * ow * oh;
    float* eig = out + (size_t)blockIdx.x * (26 + blocks);
    u32* flags = (u32*)(eig + 25);
    float* s = eig + 26;
    float* yx = yx_all + (size_t)blockIdx.x * 2 * n * blocks;
    __shared__ float means[SPEED_N];
    __shared__ float K[SPEED_N * SPEED_N];
    __shared__ float A[SPEED_N * SPEED_N];
    __shared__ float Z[SPEED_N * SPEED_N];
    __shared__ float Q[SPEED_N * SPEED_N];
    __shared__ float HQ[SPEED_N * SPEED_N];
    __shared__ float T[SPEED_N * SPEED_N];
    __shared__ float v[SPEED_N], x[SPEED_N], d[SPEED_N], sd[SPEED_N];
    __shared__ float tau_sh;
    __shared__ int bad;
    if (t < n) {
        const int r = t / B, c = t % B;
        float sum = 0.0f;
        for (int i = 0; i < sub_h; ++i)
            for (int j = 0; j < sub_w; ++j) sum += img[(size_t)(r + i) * ow + c + j];
        means[t] = sum / (float)(sub_w * sub_h);
    }
    __syncthreads();
    const double count = (double)(sub_w * sub_h);
    for (int e = t; e < n * (n + 1) / 2; e += VMAF_BLOCK) {
        int xi = 0;
        while ((xi + 1) * (xi + 2) / 2 <= e) ++xi;
        const int yi = e - xi * (xi + 1) / 2;
        const int rx = xi / B, cx = xi % B, ry = yi / B, cy = yi % B;
        const double mx = (double)means[xi], my = (double)means[yi];
        double acc = 0.0;
        for (int i = 0; i < sub_h; ++i) {
            const float* ax = img + (size_t)(rx + i) * ow + cx;
            const float* ay = img + (size_t)(ry + i) * ow + cy;
            for (int j = 0; j < sub_w; ++j) {
                const double p = ((double)ax[j] - mx) * ((double)ay[j] - my);
                acc += p;
            }
        }
        const float val = (float)(acc / count);
        K[xi * n + yi] = val;
        K[yi * n + xi] = val;
    }
    __syncthreads();
    for (int e = t; e < n * n; e += VMAF_BLOCK) A[e] = K[e];
    __syncthreads();
    // Householder tridiagonalisation of A.
    for (int i = 0; i < n - 2; ++i) {
        if (t == 0) {
            float tau = 0.0f;
            const int start = i + 1;
            if (n - start != 1) {
                float norm = 0.0f;
                for (int r = start + 1; r < n; ++r) norm += A[r * n + i] * A[r * n + i];
                const float xnorm = sqrt_f(norm);
                if (xnorm != 0.0f) {
                    const float alpha = A[start * n + i];
                    const float beta = -sign_f(alpha) * pythag(alpha, xnorm);
                    tau = (beta - alpha) / beta;
                    const float sc = alpha - beta;
                    if (sc != 0.0f) {
                        for (int r = start; r < n; ++r) A[r * n + i] /= sc;
                        A[start * n + i] = beta;
                    }
                }
            }
            for (int j = i + 1; j < n; ++j) v[j] = A[j * n + i];
            if (tau != 0.0f) {
                A[(i + 1) * n + i] = v[i + 1];
                v[i + 1] = 1.0f;
            }
            tau_sh = tau;
        }
        __syncthreads();
        const float tau = tau_sh;
        if (tau != 0.0f) {
            for (int r = i + 1 + t; r < n; r += VMAF_BLOCK) {
                float acc = 0.0f;
                for (int c = i + 1; c < n; ++c) acc += tau * A[r * n + c] * v[c];
                x[r] = acc;
            }
            __syncthreads();
            if (t == 0) {
                float xv = 0.0f;
                for (int r = i + 1; r < n; ++r) xv += x[r] * v[r];
                const float alpha = (float)(-0.5 * (double)tau * (double)xv);
                for (int r = i + 1; r < n; ++r) x[r] += alpha * v[r];
            }
            __syncthreads();
            const int m = n - (i + 1);
            for (int e = t; e < m * m; e += VMAF_BLOCK) {
                const int r = i + 1 + e / m, c = i + 1 + e % m;
                A[r * n + c] -= x[r] * v[c] + v[r] * x[c];
            }
        }
        __syncthreads();
    }
    if (t == 0) {
        for (int i = 0; i < n; ++i) d[i] = A[i * n + i];
        for (int i = 0; i < n - 1; ++i) sd[i] = A[(i + 1) * n + i];
        eigen_tridiagonal(d, sd);
        int regular = 1;
        for (int i = 0; i < n; ++i) {
            eig[i] = d[i];
            if ((double)d[i] < 1e-6) regular = 0;
        }
        bad = !regular;
    }
    __syncthreads();
    float* Y = yx;
    float* QY = yx + (size_t)n * blocks;
    // Y: row k holds pixel k of every block.
    for (int e = t; e < n * blocks; e += VMAF_BLOCK) {
        const int row = e / blocks, b = e % blocks;
        const int si = row / B, sj = row % B, bi = b / bh, bj = b % bh;
        Y[e] = img[(size_t)(si + B * bi) * ow + sj + B * bj];
    }
    if (!bad) {
        // Householder QR of K: Q accumulates the reflections, R = Q K.
        for (int e = t; e < n * n; e += VMAF_BLOCK) {
            Z[e] = K[e];
            Q[e] = (e / n == e % n) ? 1.0f : 0.0f;
        }
        __syncthreads();
        for (int kk = 0; kk < n - 1; ++kk) {
            for (int e = t; e < n * n; e += VMAF_BLOCK) {
                const int i = e / n, j = e % n;
                if (i < kk || j < kk) Z[e] = (i == j) ? 1.0f : 0.0f;
            }
            __syncthreads();
            if (t == 0) {
                for (int i = 0; i < n; ++i) v[i] = Z[i * n + kk];
                float s2 = 0.0f;
                for (int i = 0; i < n; ++i) s2 += v[i] * v[i];
                const float norm = sqrt_f(s2);
                v[kk] += sign_f(K[kk * n + kk]) * norm;
                float s3 = 0.0f;
                for (int i = 0; i < n; ++i) s3 += v[i] * v[i];
                const float nn = sqrt_f(s3);
                for (int i = 0; i < n; ++i) v[i] /= nn;
            }
            __syncthreads();
            for (int e = t; e < n * n; e += VMAF_BLOCK) {
                const int i = e / n, j = e % n;
                float h = -2.0f * v[i] * v[j];
                if (i == j) h += 1.0f;
                HQ[e] = h;
            }
            __syncthreads();
            matmul25(HQ, Z, T);
            for (int e = t; e < n * n; e += VMAF_BLOCK) Z[e] = T[e];
            __syncthreads();
            matmul25(HQ, Q, T);
            for (int e = t; e < n * n; e += VMAF_BLOCK) Q[e] = T[e];
            __syncthreads();
        }
        matmul25(Q, K, T);  // T = R
        if (t == 0) {
            for (int i = 0; i < n; ++i)
                if ((double)fabsf(T[i * n + i]) < 1e-6) bad = 1;
        }
        __syncthreads();
    }
    __syncthreads();
    for (int e = t; e < n * blocks; e += VMAF_BLOCK) {
        const int i = e / blocks, j = e % blocks;
        float acc = 0.0f;
        if (!bad)
            for (int k = 0; k < n; ++k) acc += Q[i * n + k] * Y[(size_t)k * blocks + j];
        QY[e] = acc;
    }
    __syncthreads();
    // Back substitution per block column, then Z = X Y / 25 summed over rows.
    for (int b = t; b < blocks; b += VMAF_BLOCK) {
        float xs[SPEED_N];
        for (int i = n - 1; i >= 0; --i) {
            if (bad) {
                xs[i] = 0.0f;
                continue;
            }
            float tt = QY[(size_t)i * blocks + b];
            for (int k = i + 1; k < n; ++k) tt -= xs[k] * T[i * n + k];
            xs[i] = tt / T[i * n + i];
        }
        float acc = (xs[0] * Y[b]) / (float)n;
        for (int k = 1; k < n; ++k) acc += (xs[k] * Y[(size_t)k * blocks + b]) / (float)n;
        s[b] = acc;
    }
    if (t == 0) flags[0] = bad ? 1u : 0u;
}
