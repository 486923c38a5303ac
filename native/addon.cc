// Sentio's native engine: the JS surface. Six functions, no business logic (labels, activations,
// HTTP and EQ rules all live in TypeScript):
//   load(options)          -> Promise<handle>   tokenizer tables + model; loads and warms up off-thread
//   run(handle, batch)     -> Promise<{outputs: {name: Float32Array}, tokenCounts: Int32Array}>
//                              batch: string[] or {ids: Int32Array, lengths: Int32Array}
//   tokenize(handle, texts) -> Promise<{ids: Int32Array, lengths: Int32Array}>
//   info(handle)           -> {provider, fallbackReason, ortVersion, outputs, maxLength, vocabSize, ...}
//   dispose(handle)        -> Promise<void>   rejects queued work, stops a running batch, frees the session
//   stopAll()              -> void            stops and joins every engine's threads (the process's exit)
// src/engine/binding.ts is the only importer and declares these types.
#include <napi.h>

#include <cmath>
#include <string>

#include "errors.h"
#include "handle.h"
#include "worker.h"

namespace sentio {
namespace {

// Tags engine handles (napi_type_tag_object); the value is an arbitrary 128-bit constant.
constexpr napi_type_tag kHandleTag = {0x5e7710a7c0de4e61ULL, 0x9b1d6a3f20c84d15ULL};

struct HandleBox {
  std::shared_ptr<Worker> worker;
};

// --- option readers: each throws a TypeError naming the option ------------------------------------
Napi::Value Get(const Napi::Object& obj, const char* key) { return obj.Get(key); }

std::string ReadString(Napi::Env env, const Napi::Object& obj, const char* key, const std::string& fallback,
                       bool required = false) {
  Napi::Value v = Get(obj, key);
  if (v.IsUndefined() && !required) return fallback;
  SENTIO_THROW_TYPE_IF(!v.IsString(), env, std::string("option '") + key + "' must be a string");
  return v.As<Napi::String>().Utf8Value();
}

int32_t ReadInt(Napi::Env env, const Napi::Object& obj, const char* key, int32_t fallback, int32_t min,
                int32_t max, bool required = false) {
  Napi::Value v = Get(obj, key);
  if (v.IsUndefined() && !required) return fallback;
  SENTIO_THROW_TYPE_IF(!v.IsNumber(), env, std::string("option '") + key + "' must be a number");
  double d = v.As<Napi::Number>().DoubleValue();
  SENTIO_THROW_TYPE_IF(!std::isfinite(d) || d != std::floor(d) || d < min || d > max, env,
                       std::string("option '") + key + "' must be an integer in [" + std::to_string(min) + ", " +
                           std::to_string(max) + "]");
  return static_cast<int32_t>(d);
}

bool ReadBool(Napi::Env env, const Napi::Object& obj, const char* key, bool fallback) {
  Napi::Value v = Get(obj, key);
  if (v.IsUndefined()) return fallback;
  SENTIO_THROW_TYPE_IF(!v.IsBoolean(), env, std::string("option '") + key + "' must be a boolean");
  return v.As<Napi::Boolean>().Value();
}

std::vector<uint32_t> ReadUint32Array(Napi::Env env, const Napi::Object& obj, const char* key) {
  Napi::Value v = Get(obj, key);
  SENTIO_THROW_TYPE_IF(!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array, env,
                       std::string("option '") + key + "' must be a Uint32Array");
  auto array = v.As<Napi::Uint32Array>();
  return std::vector<uint32_t>(array.Data(), array.Data() + array.ElementLength());
}

// UTF-16 (a JS string) to code points; a lone surrogate becomes U+FFFD, as the tokenizer reads text.
std::u32string ToCodePoints(const std::u16string& s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char32_t c = s[i];
    if (c >= 0xD800 && c <= 0xDBFF && i + 1 < s.size() && s[i + 1] >= 0xDC00 && s[i + 1] <= 0xDFFF) {
      c = 0x10000 + ((c - 0xD800) << 10) + (s[i + 1] - 0xDC00);
      ++i;
    } else if (c >= 0xD800 && c <= 0xDFFF) {
      c = 0xFFFD;
    }
    out.push_back(c);
  }
  return out;
}

TokenizerTables ReadTokenizer(Napi::Env env, const Napi::Object& options) {
  Napi::Value v = Get(options, "tokenizer");
  SENTIO_THROW_TYPE_IF(!v.IsObject(), env, "option 'tokenizer' must be an object");
  Napi::Object t = v.As<Napi::Object>();
  TokenizerTables tables;
  Napi::Value vocab = Get(t, "vocab");
  SENTIO_THROW_TYPE_IF(!vocab.IsArray(), env, "option 'tokenizer.vocab' must be an array of strings");
  Napi::Array list = vocab.As<Napi::Array>();
  tables.vocab.reserve(list.Length());
  for (uint32_t i = 0; i < list.Length(); ++i) {
    Napi::Value token = list.Get(i);
    SENTIO_THROW_TYPE_IF(!token.IsString(), env, "option 'tokenizer.vocab' must be an array of strings");
    tables.vocab.push_back(ToCodePoints(token.As<Napi::String>().Utf16Value()));
  }
  tables.char_map = ReadUint32Array(env, t, "charMap");
  tables.classes = ReadUint32Array(env, t, "classes");
  tables.continuation_prefix = ToCodePoints(
      Napi::String::New(env, ReadString(env, t, "continuationPrefix", "", true)).Utf16Value());
  const int32_t vocab_max = static_cast<int32_t>(tables.vocab.size()) - 1;
  tables.max_length = ReadInt(env, t, "maxLength", 0, 1, 1 << 20, true);
  tables.max_word_chars = ReadInt(env, t, "maxWordChars", 0, 1, 1 << 20, true);
  tables.pad_id = ReadInt(env, t, "padId", 0, 0, vocab_max, true);
  tables.unk_id = ReadInt(env, t, "unkId", 0, 0, vocab_max, true);
  tables.cls_id = ReadInt(env, t, "clsId", 0, 0, vocab_max, true);
  return tables;
}

std::vector<std::u16string> ReadTexts(Napi::Env env, const Napi::Value& value) {
  SENTIO_THROW_TYPE_IF(!value.IsArray(), env, "texts must be an array of strings");
  Napi::Array array = value.As<Napi::Array>();
  std::vector<std::u16string> texts;
  texts.reserve(array.Length());
  for (uint32_t i = 0; i < array.Length(); ++i) {
    Napi::Value text = array.Get(i);
    SENTIO_THROW_TYPE_IF(!text.IsString(), env, "texts[" + std::to_string(i) + "] is not a string");
    // UTF-16 is a plain copy of what V8 holds and keeps lone surrogates visible to the tokenizer.
    texts.push_back(text.As<Napi::String>().Utf16Value());
  }
  return texts;
}

// --- exported functions -------------------------------------------------------------------------
Napi::Value Load(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  SENTIO_THROW_TYPE_IF(info.Length() < 1 || !info[0].IsObject(), env, "load(options): options must be an object");
  Napi::Object options = info[0].As<Napi::Object>();
  WorkerConfig config;
  config.session.model_path = ReadString(env, options, "modelPath", "", true);
  config.session.provider = ReadString(env, options, "executionProvider", "auto");
  SENTIO_THROW_TYPE_IF(config.session.provider != "auto" && config.session.provider != "cuda" &&
                           config.session.provider != "cpu",
                       env, "option 'executionProvider' must be auto, cuda or cpu");
  config.session.cuda_device_id = ReadInt(env, options, "cudaDeviceId", 0, 0, 1024);
  config.session.intra_op_threads = ReadInt(env, options, "intraOpThreads", 0, 0, 1024);
  config.session.inter_op_threads = ReadInt(env, options, "interOpThreads", 1, 0, 1024);
  config.session.graph_optimization = ReadString(env, options, "graphOptimization", "all");
  const std::string& level = config.session.graph_optimization;
  SENTIO_THROW_TYPE_IF(level != "disabled" && level != "basic" && level != "extended" && level != "all", env,
                       "option 'graphOptimization' must be disabled, basic, extended or all");
  config.session.allow_spinning = ReadBool(env, options, "allowSpinning", false);
  config.session.packed_recurrence = ReadBool(env, options, "packedRecurrence", true);
  config.session.fuse_pooling = ReadBool(env, options, "fusedPooling", true);
  config.warmup = ReadBool(env, options, "warmup", true);
  config.max_run_texts = ReadInt(env, options, "maxRunTexts", 256, 1, 1 << 16);
  config.max_run_tokens = ReadInt(env, options, "maxRunTokens", 0, 0, 1 << 24);
  config.thread_nice = ReadInt(env, options, "threadNice", 0, 0, 19);
  config.threads = ReadInt(env, options, "threads", 1, 1, 256);
  config.steer_wakeups = ReadBool(env, options, "steerWakeups", true);
  config.tokenizer = ReadTokenizer(env, options);
  return Worker::Start(env, std::move(config));
}

// Hands the job to the engine threads, or (a disposed engine) settles its promise here: a job dropped
// unsettled leaked its promise's reference.
void SubmitOrReject(Napi::Env env, Worker& worker, std::unique_ptr<Job>& job) {
  if (!worker.Submit(env, job)) job->deferred.Reject(MakeError(env, code::kDisposed, "engine disposed").Value());
}

// Inputs are read and checked before the Job exists: its promise, created and left unsettled by a
// refused argument, leaked its reference (about 45 bytes a call, growing without bound).
Napi::Value Run(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::shared_ptr<Worker> worker = UnwrapHandle(env, info[0]);
  SENTIO_THROW_TYPE_IF(info.Length() > 2 && !info[2].IsUndefined() && !info[2].IsBoolean(), env,
                       "run(handle, batch, priority): priority must be a boolean");
  const bool priority = info.Length() > 2 && info[2].IsBoolean() && info[2].As<Napi::Boolean>().Value();
  std::vector<std::u16string> texts;
  std::vector<int32_t> ids, lengths;
  Napi::Value batch = info[1];
  if (batch.IsArray()) {
    texts = ReadTexts(env, batch);
  } else {
    SENTIO_THROW_TYPE_IF(!batch.IsObject(), env, "run(handle, batch): batch must be string[] or {ids, lengths}");
    Napi::Object pre = batch.As<Napi::Object>();
    Napi::Value id_value = pre.Get("ids"), length_value = pre.Get("lengths");
    SENTIO_THROW_TYPE_IF(!id_value.IsTypedArray() || id_value.As<Napi::TypedArray>().TypedArrayType() != napi_int32_array ||
                             !length_value.IsTypedArray() ||
                             length_value.As<Napi::TypedArray>().TypedArrayType() != napi_int32_array,
                         env, "run(handle, batch): ids and lengths must be Int32Arrays");
    auto id_array = id_value.As<Napi::Int32Array>();
    auto length_array = length_value.As<Napi::Int32Array>();
    ids.assign(id_array.Data(), id_array.Data() + id_array.ElementLength());
    lengths.assign(length_array.Data(), length_array.Data() + length_array.ElementLength());
    size_t sum = 0;
    const int32_t max_length = worker->stopping() ? 1 << 30 : worker->tokenizer().max_length();
    for (int32_t n : lengths) {
      SENTIO_THROW_TYPE_IF(n < 1 || n > max_length, env, "run(handle, batch): each length must be in [1, maxLength]");
      sum += static_cast<size_t>(n);
    }
    SENTIO_THROW_TYPE_IF(sum != ids.size(), env, "run(handle, batch): lengths must add up to ids.length");
  }
  auto job = std::make_unique<Job>(env, Job::Kind::kRun);
  job->texts = std::move(texts);
  job->ids = std::move(ids);
  job->lengths = std::move(lengths);
  job->priority = priority;
  Napi::Promise promise = job->deferred.Promise();
  if (job->lengths.empty() && job->texts.empty()) {  // nothing to run: answer at once, in model order
    Napi::Object result = Napi::Object::New(env), outputs = Napi::Object::New(env);
    for (const OutputSpec& spec : worker->outputs()) outputs.Set(spec.name, Napi::Float32Array::New(env, 0));
    result.Set("outputs", outputs);
    result.Set("tokenCounts", Napi::Int32Array::New(env, 0));
    job->deferred.Resolve(result);
    return promise;
  }
  SubmitOrReject(env, *worker, job);
  return promise;
}

Napi::Value Tokenize(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::shared_ptr<Worker> worker = UnwrapHandle(env, info[0]);
  std::vector<std::u16string> texts = ReadTexts(env, info[1]);  // before the Job: see Run
  auto job = std::make_unique<Job>(env, Job::Kind::kTokenize);
  job->texts = std::move(texts);
  Napi::Promise promise = job->deferred.Promise();
  if (job->texts.empty()) {
    Napi::Object result = Napi::Object::New(env);
    result.Set("ids", Napi::Int32Array::New(env, 0));
    result.Set("lengths", Napi::Int32Array::New(env, 0));
    job->deferred.Resolve(result);
    return promise;
  }
  SubmitOrReject(env, *worker, job);
  return promise;
}

Napi::Value Info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::shared_ptr<Worker> worker = UnwrapHandle(env, info[0]);
  Napi::Object out = Napi::Object::New(env);
  out.Set("provider", worker->provider());
  out.Set("fallbackReason", worker->fallback_reason().empty() ? env.Null() : Napi::String::New(env, worker->fallback_reason()));
  out.Set("ortVersion", OrtVersion());
  Napi::Array outputs = Napi::Array::New(env);
  uint32_t i = 0;
  for (const OutputSpec& spec : worker->outputs()) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("name", spec.name);
    o.Set("width", Napi::Number::New(env, static_cast<double>(spec.width)));
    outputs.Set(i++, o);
  }
  out.Set("outputs", outputs);
  out.Set("maxLength", worker->tokenizer().max_length());
  out.Set("vocabSize", Napi::Number::New(env, static_cast<double>(worker->tokenizer().vocab_size())));
  const SessionConfig& s = worker->session_config();
  out.Set("threads", worker->threads());
  out.Set("sessions", worker->sessions());
  out.Set("intraOpThreads", s.intra_op_threads);
  out.Set("interOpThreads", s.inter_op_threads);
  out.Set("graphOptimization", s.graph_optimization);
  out.Set("packedRecurrences", worker->packed_recurrences());
  out.Set("packedKernels", worker->packed_kernels().empty() ? env.Null() : Napi::String::New(env, worker->packed_kernels()));
  out.Set("fusedPoolings", worker->fused_poolings());
  out.Set("wakeSteering", worker->steering_active());
  out.Set("steeredWakeups", Napi::Number::New(env, static_cast<double>(worker->steered_wakeups())));
  out.Set("runs", Napi::Number::New(env, static_cast<double>(worker->runs())));
  out.Set("jobsTaken", Napi::Number::New(env, static_cast<double>(worker->jobs_taken())));
  out.Set("disposed", worker->stopping());
  return out;
}

// Synchronous, for the JS 'exit' event: afterwards no engine thread runs while exit() tears ONNX Runtime down.
Napi::Value StopAll(const Napi::CallbackInfo& info) {
  Worker::StopAll();
  return info.Env().Undefined();
}

Napi::Value Dispose(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return UnwrapHandle(env, info[0])->Dispose(env);
}

// Every exported function goes through this: a C++ exception that is not already a JS error becomes
// one with a code, so nothing unwinds into Node.
template <Napi::Value (*Fn)(const Napi::CallbackInfo&)>
Napi::Value Guarded(const Napi::CallbackInfo& info) {
  try {
    return Fn(info);
  } catch (const Napi::Error&) {
    throw;
  } catch (const NativeError& e) {
    throw MakeError(info.Env(), e.code(), e.what());
  } catch (const std::bad_alloc&) {
    throw MakeError(info.Env(), code::kInternal, "out of memory");
  } catch (const std::exception& e) {
    throw MakeError(info.Env(), code::kInternal, e.what());
  } catch (...) {
    throw MakeError(info.Env(), code::kInternal, "unknown native exception");
  }
}

}  // namespace

Napi::Object InitExports(Napi::Env env, Napi::Object exports) {
  exports.Set("load", Napi::Function::New<Guarded<Load>>(env, "load"));
  exports.Set("run", Napi::Function::New<Guarded<Run>>(env, "run"));
  exports.Set("tokenize", Napi::Function::New<Guarded<Tokenize>>(env, "tokenize"));
  exports.Set("info", Napi::Function::New<Guarded<Info>>(env, "info"));
  exports.Set("dispose", Napi::Function::New<Guarded<Dispose>>(env, "dispose"));
  exports.Set("stopAll", Napi::Function::New<Guarded<StopAll>>(env, "stopAll"));
  return exports;
}

Napi::Value WrapHandle(Napi::Env env, std::shared_ptr<Worker> worker) {
  auto external = Napi::External<HandleBox>::New(env, new HandleBox{std::move(worker)}, [](Napi::Env, HandleBox* box) {
    // The handle was garbage-collected without dispose(): stop the thread; the completion's
    // finalizer joins it and frees the session. Nothing may escape a finalizer (std::terminate).
    try {
      box->worker->Stop();
    } catch (...) {
    }
    delete box;
  });
  external.TypeTag(&kHandleTag);
  return external;
}

std::shared_ptr<Worker> UnwrapHandle(Napi::Env env, Napi::Value value) {
  SENTIO_THROW_TYPE_IF(!value.IsExternal() || !value.As<Napi::External<HandleBox>>().CheckTypeTag(&kHandleTag), env,
                       "expected an engine handle from load()");
  return value.As<Napi::External<HandleBox>>().Data()->worker;
}

}  // namespace sentio

static Napi::Object InitSentio(Napi::Env env, Napi::Object exports) { return sentio::InitExports(env, exports); }

NODE_API_MODULE(sentio, InitSentio)
