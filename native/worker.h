// The engine's own threads. The first loads the model (and warms it up) and starts the others; all
// then take jobs from one queue and run them: on CPU on one shared session (ONNX Runtime allows
// concurrent Run calls), on CUDA each on its own session (Lane, below). Each job:
// tokenize a batch of texts, pad it and run the model, or only tokenize. Results go back to the JS
// thread through one ThreadSafeFunction; JS is never touched from this thread, and neither the main
// thread nor the libuv pool ever runs tokenization or inference.
//
// Several threads with one intra-op thread each use small CPUs better than one thread with several:
// no fork/join per operator (docs/engine.md has the measurements).
//
// Lifetime: the Worker is shared by the JS handle (an External) and by the ThreadSafeFunction. Stop()
// asks the threads to finish (queued jobs are rejected with NATIVE_DISPOSED, running inferences are
// terminated); each thread's last act is releasing the ThreadSafeFunction, whose finalizer, on the
// main thread, joins them all and settles dispose() promises. The last thread out frees the sessions.
#pragma once

#include <napi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "errors.h"
#include "session.h"
#include "tokenizer.h"
#include "wake_steering.h"

namespace sentio {

struct WorkerConfig {
  SessionConfig session;
  TokenizerTables tokenizer;
  bool warmup = true;
  int32_t max_run_texts = 256;  // larger requests are split into runs of at most this many texts
  // On CPU, a run's padded tokens (texts x its longest) at most this many where a text allows (0: no
  // bound): a priority job waits for the runs in progress, so their length bounds its wait.
  int32_t max_run_tokens = 0;
  // Added to the nice value of the engine thread, and so of ONNX Runtime's pool threads, which it
  // creates and which inherit it: the JS thread (HTTP, timers) then wins every contested core.
  int32_t thread_nice = 0;
  int32_t threads = 1;  // engine threads running jobs concurrently
  bool steer_wakeups = true;  // see wake_steering.h
};

struct Job {
  enum class Kind { kLoad, kRun, kTokenize };
  Job(Napi::Env env, Kind k) : kind(k), deferred(Napi::Promise::Deferred::New(env)) {}

  Kind kind;
  Napi::Promise::Deferred deferred;  // main thread only
  // input: either texts, or ids already tokenized (flat, with per-text lengths)
  std::vector<std::u16string> texts;
  std::vector<int32_t> ids;
  std::vector<int32_t> lengths;
  // output
  std::vector<std::vector<float>> outputs;  // per model output, batch * width, rows in input order
  ErrorInfo error;                          // first failure; written under the worker's mutex
  // execution: texts sorted by length, where each text's ids start, sub-batches still to finish
  std::vector<size_t> order;
  std::vector<size_t> offsets;
  std::atomic<int> tasks_left{0};
  std::atomic<bool> failed{false};  // set with `error`; lets sibling tasks skip their work
  // Taken before queued jobs and before started jobs' remaining sub-batches (a chat turn's scoring,
  // another tenant's turn): it waits for the runs in progress, not for the work queued ahead of it.
  bool priority = false;
};

class Worker;
void SettleJob(Napi::Env env, Napi::Function unused, Worker* worker, Job* job);
using Completion = Napi::TypedThreadSafeFunction<Worker, Job, SettleJob>;

class Worker : public std::enable_shared_from_this<Worker> {
 public:
  // Starts the thread; the returned promise resolves with the JS handle once the model is loaded.
  static Napi::Promise Start(Napi::Env env, WorkerConfig config);

  // Main thread: queue a job. Returns false (and leaves the job to the caller) after Stop().
  // Takes the job (moved from `job`) unless the worker is stopping; then `job` is left to the caller.
  bool Submit(Napi::Env env, std::unique_ptr<Job>& job);
  // Any thread: ask the thread to finish. Idempotent.
  void Stop();
  // Stop and wait for every engine thread (process exit; Finalize()).
  void StopAndJoin();
  // StopAndJoin() on every worker of the process, loading ones included (the JS 'exit' event).
  static void StopAll();
  // Main thread: a promise settled once the thread has exited and the session is freed.
  Napi::Promise Dispose(Napi::Env env);

  bool stopping() const;
  // Valid once loaded (written by the thread before the load job completes).
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const std::string& provider() const { return provider_; }
  // ONNX Runtime sessions: 1 on CPU; on CUDA one per engine thread, fewer if the GPU refused one.
  int32_t sessions() const { return sessions_; }
  const std::string& fallback_reason() const { return fallback_reason_; }
  const std::vector<OutputSpec>& outputs() const { return outputs_; }
  // GRU nodes the CPU session runs as PackedGRU: their runs cost little for padding (Plan).
  int32_t packed_recurrences() const { return packed_recurrences_; }
  // Pooling subgraphs the CPU session runs as MaskedPool: padding then costs less still (Plan).
  int32_t fused_poolings() const { return fused_poolings_; }
  const std::string& packed_kernels() const { return packed_kernels_; }
  const SessionConfig& session_config() const { return config_.session; }
  int32_t threads() const { return config_.threads; }
  bool steering_active() const { return steering_.active(); }
  // Wake-ups Submit() steered off the JS thread's CPU so far (wake_steering.h).
  uint64_t steered_wakeups() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return steered_wakeups_;
  }
  // ONNX Runtime runs made so far for jobs, the warm-up at load aside (how Plan cut them: tests, metrics).
  uint64_t runs() const { return runs_.load(std::memory_order_relaxed); }
  // Jobs an engine thread has taken from the queue so far (what a test waits for before it races a job).
  uint64_t jobs_taken() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return jobs_taken_;
  }

  explicit Worker(WorkerConfig config);  // use Start()
  ~Worker();

 private:
  friend void SettleJob(Napi::Env, Napi::Function, Worker*, Job*);
  static void Finalize(Napi::Env env, std::shared_ptr<Worker>* self, Worker* context);

  void ThreadMain(Job* load_job);
  // One length-sorted sub-batch of a run job: texts job->order[first .. first + count).
  struct Task {
    Job* job;
    size_t first;
    size_t count;
  };

  void Serve(int32_t index);  // engine thread `index`'s job loop, then Exit()
  void Exit();   // the last thread out rejects what is queued and frees the sessions
  void Load();
  void Start(std::unique_ptr<Job> job, int32_t index);  // tokenize, then plan and share out the sub-batches
  std::vector<Task> Plan(Job& job);
  void RunTask(const Task& task, int32_t index);
  void Finish(Job* job);  // the thread that completes a job's last task posts it
  void Post(Job* job);

  WorkerConfig config_;
  std::unique_ptr<Tokenizer> tokenizer_;  // built on the thread: the tables take a few ms to index
  std::thread thread_;                      // the first engine thread; it starts the others
  std::vector<std::thread> extra_threads_;  // under mutex_
  int running_ = 1;                         // engine threads not yet exited, under mutex_
  Completion completion_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::unique_ptr<Job>> queue_;  // jobs not started
  std::deque<Task> tasks_;                  // sub-batches of started jobs (owned by their Job)
  // Engine threads waiting for work, and whether Submit() narrowed their CPUs (wake_steering.h).
  struct Sleeper {
    pid_t tid;
    bool steered;
  };
  std::vector<Sleeper> sleepers_;
  std::chrono::steady_clock::time_point idle_since_;  // when the last engine thread went to sleep
  static constexpr std::chrono::milliseconds kSteerAfterIdle{5};
  uint64_t steered_wakeups_ = 0;
  std::atomic<uint64_t> runs_{0};
  uint64_t jobs_taken_ = 0;  // guarded by mutex_
  const WakeSteering steering_;
  bool stopping_ = false;
  // One ONNX Runtime session, and on CUDA the turn its runs take (RunTask).
  struct Lane {
    std::unique_ptr<Session> session;
    std::mutex turn;
  };
  // On CPU one session that every engine thread shares (ONNX Runtime allows concurrent Run calls); on
  // CUDA one per engine thread, each with its own stream, so that runs overlap on the GPU. Created and
  // destroyed on the engine threads, under mutex_; fixed while they serve.
  std::vector<std::unique_ptr<Lane>> lanes_;

  std::string provider_;
  int32_t sessions_ = 0;
  std::string fallback_reason_;
  int32_t packed_recurrences_ = 0;
  int32_t fused_poolings_ = 0;
  std::string packed_kernels_;
  std::vector<OutputSpec> outputs_;

  // Main thread only.
  int pending_ = 0;  // jobs submitted and not yet settled: while > 0 the event loop stays alive
  bool finalized_ = false;
  std::vector<Napi::Promise::Deferred> dispose_waiters_;
};

}  // namespace sentio
