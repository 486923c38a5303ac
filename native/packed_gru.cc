#include "packed_gru.h"

// The vector helpers are always inlined, so the ABI of passing a 64-byte vector never applies.
#pragma GCC diagnostic ignored "-Wpsabi"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <stdexcept>

namespace sentio {
namespace {

// GCC vector extensions: one source, compiled below for AVX-512, AVX2 + FMA and baseline x86-64, the
// variant chosen by the CPU at load time (target_clones).
typedef float v16 __attribute__((vector_size(64)));
typedef int32_t vi16 __attribute__((vector_size(64)));
constexpr int64_t kLanes = 16;

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SENTIO_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SENTIO_CLONES
#endif
// The helpers below must be inlined into each clone, so that they are compiled for its instruction set.
#define SENTIO_INLINE inline __attribute__((always_inline))

SENTIO_INLINE v16 Load(const float* p) {
  v16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
SENTIO_INLINE void Store(float* p, v16 v) { std::memcpy(p, &v, sizeof v); }
SENTIO_INLINE v16 Splat(float x) { return v16{} + x; }

// exp with Cephes' range reduction and polynomial (about 1 ulp over the clamped range).
SENTIO_INLINE v16 Exp(v16 x) {
  x = x < Splat(-87.0f) ? Splat(-87.0f) : x;
  x = x > Splat(88.0f) ? Splat(88.0f) : x;
  const v16 magic = Splat(12582912.0f);  // 1.5 * 2^23: adding and subtracting it rounds to an integer
  const v16 n = (x * 1.44269504088896341f + magic) - magic;
  const v16 r = x - n * 0.693359375f + n * 2.12194440e-4f;
  v16 p = Splat(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const vi16 bits = (__builtin_convertvector(n, vi16) + 127) << 23;
  v16 scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}
SENTIO_INLINE v16 Sigmoid(v16 x) { return 1.0f / (1.0f + Exp(-x)); }
SENTIO_INLINE v16 Tanh(v16 x) { return 2.0f / (1.0f + Exp(-2.0f * x)) - 1.0f; }

// out[r][0, cols) = bias + x[r] . wt for R rows; wt is [input][cols], cols a multiple of 48.
template <int R>
SENTIO_INLINE void ProjectRows(const float* const* x, const float* wt, const float* bias, int64_t input, int64_t cols,
                        float* const* out) {
  for (int64_t c = 0; c < cols; c += 3 * kLanes) {
    v16 acc[R][3];
    for (int r = 0; r < R; ++r)
      for (int j = 0; j < 3; ++j) acc[r][j] = Load(bias + c + j * kLanes);
    for (int64_t k = 0; k < input; ++k) {
      const float* w = wt + k * cols + c;
      const v16 w0 = Load(w), w1 = Load(w + kLanes), w2 = Load(w + 2 * kLanes);
      for (int r = 0; r < R; ++r) {
        const v16 a = Splat(x[r][k]);
        acc[r][0] += a * w0;
        acc[r][1] += a * w1;
        acc[r][2] += a * w2;
      }
    }
    for (int r = 0; r < R; ++r)
      for (int j = 0; j < 3; ++j) Store(out[r] + c + j * kLanes, acc[r][j]);
  }
}

SENTIO_CLONES
void Project(const float* const* x, int64_t n, const float* wt, const float* bias, int64_t input, int64_t cols,
             float* out) {
  float* rows[8];
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int r = 0; r < 8; ++r) rows[r] = out + (i + r) * cols;
    ProjectRows<8>(x + i, wt, bias, input, cols, rows);
  }
  for (; i < n; ++i) {
    rows[0] = out + i * cols;
    ProjectRows<1>(x + i, wt, bias, input, cols, rows);
  }
}

// One step of one direction for R rows of hidden size 64 (12 vectors of gates): acc = h . rt, then
// z, r, n and the new h. p points at each row's projected input (bias included) for this direction.
template <int R>
SENTIO_INLINE void StepRows64(float* const* h, const float* const* p, const float* rt, const float* rbh, float* const* y) {
  constexpr int64_t H = 64, G = 3 * H, NV = G / kLanes;
  v16 acc[R][NV];
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < NV; ++j) acc[r][j] = v16{};
  for (int64_t k = 0; k < H; ++k) {
    const float* w = rt + k * G;
    v16 a[R];
    for (int r = 0; r < R; ++r) a[r] = Splat(h[r][k]);
    for (int j = 0; j < NV; ++j) {
      const v16 wv = Load(w + j * kLanes);
      for (int r = 0; r < R; ++r) acc[r][j] += a[r] * wv;
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int j = 0; j < H / kLanes; ++j) {
      const int64_t o = j * kLanes;
      const v16 z = Sigmoid(Load(p[r] + o) + acc[r][j]);
      const v16 g = Sigmoid(Load(p[r] + H + o) + acc[r][H / kLanes + j]);
      const v16 n = Tanh(Load(p[r] + 2 * H + o) + g * (acc[r][2 * H / kLanes + j] + Load(rbh + o)));
      const v16 hv = n + z * (Load(h[r] + o) - n);
      Store(h[r] + o, hv);
      Store(y[r] + o, hv);
    }
  }
}

SENTIO_CLONES
void Step64(float* const* h, const float* const* p, int64_t rows, const float* rt, const float* rbh, float* const* y) {
  int64_t i = 0;
  for (; i + 2 <= rows; i += 2) StepRows64<2>(h + i, p + i, rt, rbh, y + i);
  for (; i < rows; ++i) StepRows64<1>(h + i, p + i, rt, rbh, y + i);
}

inline float SigmoidScalar(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// Any hidden size: plain loops.
void StepGeneric(float* const* h, const float* const* p, int64_t rows, const float* rt, const float* rbh, float* const* y,
                 int64_t H) {
  const int64_t G = 3 * H;
  std::vector<float> acc(static_cast<size_t>(G));
  for (int64_t i = 0; i < rows; ++i) {
    std::fill(acc.begin(), acc.end(), 0.0f);
    for (int64_t k = 0; k < H; ++k)
      for (int64_t j = 0; j < G; ++j) acc[j] += h[i][k] * rt[k * G + j];
    for (int64_t j = 0; j < H; ++j) {
      const float z = SigmoidScalar(p[i][j] + acc[j]);
      const float g = SigmoidScalar(p[i][H + j] + acc[H + j]);
      const float n = std::tanh(p[i][2 * H + j] + g * (acc[2 * H + j] + rbh[j]));
      h[i][j] = n + z * (h[i][j] - n);
      y[i][j] = h[i][j];
    }
  }
}

void ProjectGeneric(const float* const* x, int64_t n, const float* wt, const float* bias, int64_t input, int64_t cols,
                    float* out) {
  for (int64_t i = 0; i < n; ++i) {
    float* o = out + i * cols;
    std::copy(bias, bias + cols, o);
    for (int64_t k = 0; k < input; ++k)
      for (int64_t j = 0; j < cols; ++j) o[j] += x[i][k] * wt[k * cols + j];
  }
}

}  // namespace

PackedGru::PackedGru(const float* w, const float* r, const float* b, int64_t input, int64_t hidden)
    : input_(input), hidden_(hidden) {
  if (input <= 0 || hidden <= 0) throw std::invalid_argument("PackedGru: input and hidden sizes must be positive");
  const int64_t G = 3 * hidden;
  for (int d = 0; d < 2; ++d) {
    wt_[d].assign(static_cast<size_t>(input * G), 0.0f);
    rt_[d].assign(static_cast<size_t>(hidden * G), 0.0f);
    for (int64_t g = 0; g < G; ++g) {
      for (int64_t k = 0; k < input; ++k) wt_[d][k * G + g] = w[(d * G + g) * input + k];
      for (int64_t k = 0; k < hidden; ++k) rt_[d][k * G + g] = r[(d * G + g) * hidden + k];
    }
    const float* wb = b + d * 2 * G;
    const float* rb = wb + G;
    bias_[d].assign(wb, wb + G);
    for (int64_t g = 0; g < 2 * hidden; ++g) bias_[d][g] += rb[g];
    rbh_[d].assign(rb + 2 * hidden, rb + G);
  }
  // Both directions' projections as one product: [input][2G], so a token is read once.
  std::vector<float> both(static_cast<size_t>(input * 2 * G));
  for (int64_t k = 0; k < input; ++k)
    for (int d = 0; d < 2; ++d) std::copy(&wt_[d][k * G], &wt_[d][k * G] + G, &both[(k * 2 + d) * G]);
  wt_[0].swap(both);
  wt_[1].clear();
  bias_[0].insert(bias_[0].end(), bias_[1].begin(), bias_[1].end());
}

void PackedGru::Run(const float* x, const int32_t* lengths, int64_t steps, int64_t batch, float* y, float* y_h) const {
  const int64_t H = hidden_, G = 3 * H, I = input_;
  std::memset(y, 0, sizeof(float) * static_cast<size_t>(steps * 2 * batch * H));
  if (y_h) std::memset(y_h, 0, sizeof(float) * static_cast<size_t>(2 * batch * H));

  std::vector<int64_t> len(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t l = lengths ? lengths[b] : steps;
    if (l < 0 || l > steps) throw std::invalid_argument("PackedGru: a sequence length is outside [0, steps]");
    len[b] = l;
  }
  // Rows longest first, so the rows still running at a step are a prefix of this order.
  std::vector<int64_t> order(static_cast<size_t>(batch));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return len[a] > len[b]; });
  // Real tokens, row by row: token t of row b is projected into row offset[b] + t of `proj`.
  std::vector<int64_t> offset(static_cast<size_t>(batch));
  int64_t tokens = 0;
  for (int64_t b = 0; b < batch; ++b) {
    offset[b] = tokens;
    tokens += len[b];
  }
  if (tokens == 0) return;

  thread_local std::vector<float> proj, state;
  thread_local std::vector<const float*> xs;
  proj.resize(static_cast<size_t>(tokens * 2 * G));
  xs.resize(static_cast<size_t>(tokens));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < len[b]; ++t) xs[offset[b] + t] = x + (t * batch + b) * I;
  if (G % (3 * kLanes) == 0) {
    Project(xs.data(), tokens, wt_[0].data(), bias_[0].data(), I, 2 * G, proj.data());
  } else {
    ProjectGeneric(xs.data(), tokens, wt_[0].data(), bias_[0].data(), I, 2 * G, proj.data());
  }

  state.assign(static_cast<size_t>(batch * H), 0.0f);
  std::vector<float*> hs(static_cast<size_t>(batch)), ys(static_cast<size_t>(batch));
  std::vector<const float*> ps(static_cast<size_t>(batch));
  const int64_t longest = len[order[0]];
  for (int d = 0; d < 2; ++d) {
    std::fill(state.begin(), state.end(), 0.0f);
    int64_t running = batch;
    for (int64_t s = 0; s < longest; ++s) {
      while (running > 0 && len[order[running - 1]] <= s) --running;
      for (int64_t i = 0; i < running; ++i) {
        const int64_t b = order[i];
        const int64_t t = d == 0 ? s : len[b] - 1 - s;
        hs[i] = state.data() + b * H;
        ps[i] = proj.data() + (offset[b] + t) * 2 * G + d * G;
        ys[i] = y + ((t * 2 + d) * batch + b) * H;
      }
      if (H == 64) {
        Step64(hs.data(), ps.data(), running, rt_[d].data(), rbh_[d].data(), ys.data());
      } else {
        StepGeneric(hs.data(), ps.data(), running, rt_[d].data(), rbh_[d].data(), ys.data(), H);
      }
    }
    if (y_h) std::copy(state.begin(), state.end(), y_h + d * batch * H);
  }
  // A long unbounded run (maxRunTokens 0) need not keep its tens of MB on this thread afterwards.
  constexpr size_t kKeep = size_t{4} << 20;  // floats
  if (proj.capacity() > kKeep) std::vector<float>().swap(proj);
}

}  // namespace sentio
