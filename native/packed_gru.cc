#include "packed_gru.h"

// The vector helpers are always inlined, so the ABI of passing a 64-byte vector never applies.
#pragma GCC diagnostic ignored "-Wpsabi"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string_view>

namespace sentio {
namespace {

// GCC vector extensions of N floats: one source, instantiated below for AVX-512 (N = 16), AVX2 + FMA
// (8) and SSE2 or any other target (4), each with a register blocking that fits its register file. The
// constructor picks the widest the CPU runs (Isa).
template <int N>
struct Vec {
  typedef float F __attribute__((vector_size(N * 4)));
  typedef int32_t I __attribute__((vector_size(N * 4)));
};
// Inlined into each instruction set's entry point, so that they are compiled for it.
#define SENTIO_INLINE inline __attribute__((always_inline))

template <int N>
SENTIO_INLINE typename Vec<N>::F Load(const float* p) {
  typename Vec<N>::F v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <int N>
SENTIO_INLINE void Store(float* p, typename Vec<N>::F v) {
  std::memcpy(p, &v, sizeof v);
}
template <int N>
SENTIO_INLINE typename Vec<N>::F Splat(float x) {
  return typename Vec<N>::F{} + x;
}

// exp with Cephes' range reduction and polynomial (about 1 ulp over the clamped range).
template <int N>
SENTIO_INLINE typename Vec<N>::F Exp(typename Vec<N>::F x) {
  using F = typename Vec<N>::F;
  x = x < Splat<N>(-87.0f) ? Splat<N>(-87.0f) : x;
  x = x > Splat<N>(88.0f) ? Splat<N>(88.0f) : x;
  const F magic = Splat<N>(12582912.0f);  // 1.5 * 2^23: adding and subtracting it rounds to an integer
  const F n = (x * 1.44269504088896341f + magic) - magic;
  const F r = x - n * 0.693359375f + n * 2.12194440e-4f;
  F p = Splat<N>(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const typename Vec<N>::I bits = (__builtin_convertvector(n, typename Vec<N>::I) + 127) << 23;
  F scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}
template <int N>
SENTIO_INLINE typename Vec<N>::F Sigmoid(typename Vec<N>::F x) {
  return 1.0f / (1.0f + Exp<N>(-x));
}
template <int N>
SENTIO_INLINE typename Vec<N>::F Tanh(typename Vec<N>::F x) {
  return 2.0f / (1.0f + Exp<N>(-2.0f * x)) - 1.0f;
}

// out[r][0, cols) = bias + x[r] . wt for R rows (bias null: 0), CV vectors of columns at a time; wt is
// [depth][cols], out rows are `cols` apart, cols a multiple of CV * N. The projection and the recurrent
// product of a step are both this.
template <int N, int R, int CV>
SENTIO_INLINE void MultiplyRows(const float* const* x, const float* wt, const float* bias, int64_t depth, int64_t cols,
                                float* out) {
  using F = typename Vec<N>::F;
  for (int64_t c = 0; c < cols; c += CV * N) {
    F acc[R][CV];
    for (int r = 0; r < R; ++r)
      for (int j = 0; j < CV; ++j) acc[r][j] = bias ? Load<N>(bias + c + j * N) : F{};
    for (int64_t k = 0; k < depth; ++k) {
      const float* w = wt + k * cols + c;
      F wv[CV];
      for (int j = 0; j < CV; ++j) wv[j] = Load<N>(w + j * N);
      for (int r = 0; r < R; ++r) {
        const F a = Splat<N>(x[r][k]);
        for (int j = 0; j < CV; ++j) acc[r][j] += a * wv[j];
      }
    }
    for (int r = 0; r < R; ++r)
      for (int j = 0; j < CV; ++j) Store<N>(out + r * cols + c + j * N, acc[r][j]);
  }
}

template <int N, int R, int CV>
SENTIO_INLINE void ProjectAll(const float* const* x, int64_t n, const float* wt, const float* bias, int64_t input,
                              int64_t cols, float* out) {
  int64_t i = 0;
  for (; i + R <= n; i += R) MultiplyRows<N, R, CV>(x + i, wt, bias, input, cols, out + i * cols);
  for (; i < n; ++i) MultiplyRows<N, 1, CV>(x + i, wt, bias, input, cols, out + i * cols);
}

// One step of one direction for R rows of hidden size 64: acc = h . rt (CV vectors of the 192 gate
// columns at a time), then z, r, n and the new h. p points at each row's projected input (bias
// included) for this direction.
template <int N, int R, int CV>
SENTIO_INLINE void StepRows64(float* const* h, const float* const* p, const float* rt, const float* rbh,
                              float* const* y) {
  using F = typename Vec<N>::F;
  constexpr int64_t H = 64, G = 3 * H;
  static_assert(G % (CV * N) == 0 && H % N == 0, "blocking must divide the gates");
  alignas(64) float acc[R][G];
  MultiplyRows<N, R, CV>(h, rt, nullptr, H, G, &acc[0][0]);
  for (int r = 0; r < R; ++r) {
    for (int64_t o = 0; o < H; o += N) {
      const F z = Sigmoid<N>(Load<N>(p[r] + o) + Load<N>(&acc[r][o]));
      const F g = Sigmoid<N>(Load<N>(p[r] + H + o) + Load<N>(&acc[r][H + o]));
      const F n = Tanh<N>(Load<N>(p[r] + 2 * H + o) + g * (Load<N>(&acc[r][2 * H + o]) + Load<N>(rbh + o)));
      const F hv = n + z * (Load<N>(h[r] + o) - n);
      Store<N>(h[r] + o, hv);
      Store<N>(y[r] + o, hv);
    }
  }
}

template <int N, int CV>
SENTIO_INLINE void StepAll64(float* const* h, const float* const* p, int64_t rows, const float* rt, const float* rbh,
                             float* const* y) {
  int64_t i = 0;
  for (; i + 2 <= rows; i += 2) StepRows64<N, 2, CV>(h + i, p + i, rt, rbh, y + i);
  for (; i < rows; ++i) StepRows64<N, 1, CV>(h + i, p + i, rt, rbh, y + i);
}

void ProjectBase(const float* const* x, int64_t n, const float* wt, const float* bias, int64_t input, int64_t cols,
                 float* out) {
  ProjectAll<4, 4, 3>(x, n, wt, bias, input, cols, out);
}
void Step64Base(float* const* h, const float* const* p, int64_t rows, const float* rt, const float* rbh,
                float* const* y) {
  StepAll64<4, 6>(h, p, rows, rt, rbh, y);
}

// The entry points per instruction set. Blocking: AVX-512 has 32 vector registers (8 x 3 and 2 x 12
// accumulators), AVX2 and SSE 16 (4 x 3 and 2 x 6). Projected columns come in multiples of 3N.
#if defined(__x86_64__) && defined(__GNUC__)
#define SENTIO_X86 1
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma"))) void ProjectAvx512(
    const float* const* x, int64_t n, const float* wt, const float* bias, int64_t input, int64_t cols, float* out) {
  ProjectAll<16, 8, 3>(x, n, wt, bias, input, cols, out);
}
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma"))) void Step64Avx512(
    float* const* h, const float* const* p, int64_t rows, const float* rt, const float* rbh, float* const* y) {
  StepAll64<16, 12>(h, p, rows, rt, rbh, y);
}
__attribute__((target("avx2,fma"))) void ProjectAvx2(const float* const* x, int64_t n, const float* wt,
                                                     const float* bias, int64_t input, int64_t cols, float* out) {
  ProjectAll<8, 4, 3>(x, n, wt, bias, input, cols, out);
}
__attribute__((target("avx2,fma"))) void Step64Avx2(float* const* h, const float* const* p, int64_t rows,
                                                    const float* rt, const float* rbh, float* const* y) {
  StepAll64<8, 6>(h, p, rows, rt, rbh, y);
}
#else
constexpr auto ProjectAvx512 = ProjectBase, ProjectAvx2 = ProjectBase;  // never chosen off x86
constexpr auto Step64Avx512 = Step64Base, Step64Avx2 = Step64Base;
#endif
}  // namespace

PackedGru::Isa PackedGru::Detect() {
#ifdef SENTIO_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl")) {
    return Isa::kAvx512;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::kAvx2;
#endif
  return Isa::kBase;
}

PackedGru::Isa PackedGru::Chosen() {
  Isa isa = Detect();
  // SENTIO_PACKED_GRU_ISA=avx2 or base caps the choice: how the tests check the narrower kernels on a
  // CPU that would not pick them.
  if (const char* cap = std::getenv("SENTIO_PACKED_GRU_ISA")) {
    const std::string_view want(cap);
    if (want == "base") isa = Isa::kBase;
    if (want == "avx2" && isa == Isa::kAvx512) isa = Isa::kAvx2;
  }
  return isa;
}

bool PackedGru::Vectorized() { return Detect() != Isa::kBase; }

const char* PackedGru::Kernels() {
  const Isa isa = Chosen();
  return isa == Isa::kAvx512 ? "avx512" : isa == Isa::kAvx2 ? "avx2" : "base";
}

PackedGru::PackedGru(const float* w, const float* r, const float* b, int64_t input, int64_t hidden)
    : input_(input), hidden_(hidden), isa_(Chosen()) {
  if (input <= 0 || hidden != kHidden) throw std::invalid_argument("PackedGru: hidden size must be 64, input positive");
  const int64_t G = 3 * hidden;
  wt_.assign(static_cast<size_t>(input * 2 * G), 0.0f);
  bias_.assign(static_cast<size_t>(2 * G), 0.0f);
  for (int d = 0; d < 2; ++d) {
    rt_[d].assign(static_cast<size_t>(hidden * G), 0.0f);
    for (int64_t g = 0; g < G; ++g) {
      for (int64_t k = 0; k < input; ++k) wt_[(k * 2 + d) * G + g] = w[(d * G + g) * input + k];
      for (int64_t k = 0; k < hidden; ++k) rt_[d][k * G + g] = r[(d * G + g) * hidden + k];
    }
    const float* wb = b + d * 2 * G;
    const float* rb = wb + G;
    for (int64_t g = 0; g < G; ++g) bias_[d * G + g] = wb[g] + (g < 2 * hidden ? rb[g] : 0.0f);
    rbh_[d].assign(rb + 2 * hidden, rb + G);
  }
}

void PackedGru::Run(const float* x, const int32_t* lengths, int64_t steps, int64_t batch, float* y, float* y_h) const {
  const int64_t H = hidden_, G = 3 * H, I = input_;
  if (steps == 0 || batch == 0) return;  // empty outputs (and y may be null)
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
  auto project = isa_ == Isa::kAvx512 ? ProjectAvx512 : isa_ == Isa::kAvx2 ? ProjectAvx2 : ProjectBase;
  project(xs.data(), tokens, wt_.data(), bias_.data(), I, 2 * G, proj.data());

  state.assign(static_cast<size_t>(batch * H), 0.0f);
  std::vector<float*> hs(static_cast<size_t>(batch)), ys(static_cast<size_t>(batch));
  std::vector<const float*> ps(static_cast<size_t>(batch));
  const int64_t longest = len[order[0]];
  auto step64 = isa_ == Isa::kAvx512 ? Step64Avx512 : isa_ == Isa::kAvx2 ? Step64Avx2 : Step64Base;
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
      step64(hs.data(), ps.data(), running, rt_[d].data(), rbh_[d].data(), ys.data());
    }
    if (y_h) std::copy(state.begin(), state.end(), y_h + d * batch * H);
  }
  // Runs within maxRunTokens (1024 padded tokens) need 1.5 MB here; a longer one (the warm-up's, or
  // with the bound off) does not keep its buffer on this thread afterwards.
  constexpr size_t kKeep = size_t{1} << 19;  // floats: 2 MB
  if (proj.capacity() > kKeep) std::vector<float>().swap(proj);
}

}  // namespace sentio
