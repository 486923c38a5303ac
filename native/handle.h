// The JS handle of a loaded engine: an External, type-tagged so that a foreign value passed as a
// handle is refused instead of being misread.
#pragma once

#include <napi.h>

#include <memory>

namespace sentio {

class Worker;

Napi::Value WrapHandle(Napi::Env env, std::shared_ptr<Worker> worker);
// Throws a JS TypeError (code NATIVE_INVALID_ARGUMENT) when `value` is not an engine handle.
std::shared_ptr<Worker> UnwrapHandle(Napi::Env env, Napi::Value value);

}  // namespace sentio
