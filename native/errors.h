// Errors that cross the native boundary. Every failure inside the addon is a NativeError with a
// stable code; the binding turns it into a JS Error whose `.code` is that string, and src/engine/
// maps the codes onto typed TypeScript errors. Nothing is allowed to escape as a C++ exception into
// Node (that would abort the process).
#pragma once

#include <napi.h>

#include <stdexcept>
#include <string>

namespace sentio {

// Stable codes; src/engine/binding.ts lists the same strings.
namespace code {
inline constexpr const char* kInvalidArgument = "NATIVE_INVALID_ARGUMENT";
inline constexpr const char* kModelLoad = "NATIVE_MODEL_LOAD_FAILED";
inline constexpr const char* kProviderUnavailable = "NATIVE_PROVIDER_UNAVAILABLE";
inline constexpr const char* kInference = "NATIVE_INFERENCE_FAILED";
inline constexpr const char* kDisposed = "NATIVE_DISPOSED";
inline constexpr const char* kInternal = "NATIVE_INTERNAL";
}  // namespace code

class NativeError : public std::runtime_error {
 public:
  NativeError(const char* code, const std::string& message) : std::runtime_error(message), code_(code) {}
  const char* code() const noexcept { return code_; }

 private:
  const char* code_;
};

// A failure recorded on a worker thread, turned into a JS Error later on the main thread.
struct ErrorInfo {
  std::string code;
  std::string message;
  bool empty() const { return code.empty(); }
};

inline Napi::Error MakeError(Napi::Env env, const std::string& code, const std::string& message) {
  Napi::Error err = Napi::Error::New(env, message);
  err.Set("code", Napi::String::New(env, code));
  return err;
}

inline Napi::Error MakeTypeError(Napi::Env env, const std::string& message) {
  Napi::Error err = Napi::TypeError::New(env, message);
  err.Set("code", Napi::String::New(env, code::kInvalidArgument));
  return err;
}

// Argument guards for the JS-facing functions: they throw a JS TypeError (as a C++ Napi::Error,
// which node-addon-api converts at the boundary) naming what was wrong.
#define SENTIO_THROW_TYPE_IF(cond, env, msg)              \
  do {                                                    \
    if (cond) throw ::sentio::MakeTypeError((env), (msg)); \
  } while (0)

}  // namespace sentio
