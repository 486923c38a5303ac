#include "worker.h"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_set>

#include "handle.h"

namespace sentio {
namespace {

ErrorInfo DescribeCurrentException(const char* fallback_code) {
  try {
    throw;
  } catch (const NativeError& e) {
    return {e.code(), e.what()};
  } catch (const Ort::Exception& e) {
    return {fallback_code, e.what()};
  } catch (const std::bad_alloc&) {
    return {fallback_code, "out of memory"};
  } catch (const std::exception& e) {
    return {code::kInternal, e.what()};
  } catch (...) {
    return {code::kInternal, "unknown native exception"};
  }
}

// Workers alive in this process. process.exit() does not run Node's environment clean-up (so no
// ThreadSafeFunction finalizer): it goes straight to exit(), whose static destructors would tear down
// ONNX Runtime under a running engine thread. So every engine is stopped and joined first: from the JS
// 'exit' event (Worker::StopAll, src/engine/binding.ts), which comes before exit() even while a load is
// still creating its session, and from an atexit handler for exits that skip that event. The handler is
// registered again after each load, because exit() runs handlers in reverse order of registration and
// ONNX Runtime registers destructors for statics it creates lazily during session creation and the
// first runs.
std::mutex live_mutex;
std::unordered_set<Worker*>& Live() {
  static auto* live = new std::unordered_set<Worker*>();  // never destroyed: used during exit
  return *live;
}
void StopAllAtExit() {
  std::lock_guard<std::mutex> lock(live_mutex);
  for (Worker* worker : Live()) worker->StopAndJoin();
}

}  // namespace

Worker::Worker(WorkerConfig config) : config_(std::move(config)), steering_(config_.steer_wakeups) {
  std::lock_guard<std::mutex> lock(live_mutex);
  Live().insert(this);
}

Worker::~Worker() {
  {
    std::lock_guard<std::mutex> lock(live_mutex);
    Live().erase(this);
  }
  // Finalize() joins; this only guards against a thread that never got that far.
  if (thread_.joinable()) thread_.detach();
  for (auto& t : extra_threads_) {
    if (t.joinable()) t.detach();
  }
}

Napi::Promise Worker::Start(Napi::Env env, WorkerConfig config) {
  auto worker = std::make_shared<Worker>(std::move(config));
  auto load_job = std::make_unique<Job>(env, Job::Kind::kLoad);
  Napi::Promise promise = load_job->deferred.Promise();
  worker->completion_ = Completion::New(env, "sentio-engine", 0, 1, worker.get(), &Worker::Finalize,
                                        new std::shared_ptr<Worker>(worker));
  worker->pending_ = 1;  // the load itself keeps the event loop alive
  Job* job = load_job.release();
  try {
    worker->thread_ = std::thread(&Worker::ThreadMain, worker.get(), job);
  } catch (const std::exception& e) {
    job->deferred.Reject(MakeError(env, code::kInternal, std::string("cannot start engine thread: ") + e.what()).Value());
    delete job;
    worker->stopping_ = true;
    worker->completion_.Release();  // nothing else holds it: this finalizes the worker
  }
  return promise;
}

bool Worker::Submit(Napi::Env env, std::unique_ptr<Job>& job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return false;
    if (job->priority) {
      // Behind earlier priority jobs, ahead of the rest.
      auto at = std::find_if(queue_.begin(), queue_.end(), [](const std::unique_ptr<Job>& j) { return !j->priority; });
      queue_.insert(at, std::move(job));
    } else {
      queue_.push_back(std::move(job));
    }
    // An engine idle for a while (a lightly loaded server): the thread about to wake should not land on
    // this (the JS) thread's CPU. Under load the threads seldom sleep that long, and are left alone.
    if (steering_.active() && static_cast<int>(sleepers_.size()) == running_ &&
        std::chrono::steady_clock::now() - idle_since_ >= kSteerAfterIdle) {
      // The longest waiter, whom glibc's notify_one() wakes first in practice; if another wakes instead,
      // this one stays narrowed only while it sleeps.
      Sleeper& next = sleepers_.front();
      if (steering_.Steer(next.tid)) {
        next.steered = true;
        ++steered_wakeups_;
      }
    }
  }
  wake_.notify_one();
  if (pending_++ == 0) completion_.Ref(env);
  return true;
}

void Worker::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    for (auto& lane : lanes_) lane->session->Terminate();  // a run in progress ends early instead of finishing
  }
  wake_.notify_all();
}

bool Worker::stopping() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stopping_;
}

Napi::Promise Worker::Dispose(Napi::Env env) {
  auto deferred = Napi::Promise::Deferred::New(env);
  if (finalized_) {
    deferred.Resolve(env.Undefined());
    return deferred.Promise();
  }
  dispose_waiters_.push_back(deferred);
  Stop();
  completion_.Ref(env);  // keep the loop alive until the thread has gone and the promise settles
  return deferred.Promise();
}

void Worker::StopAll() { StopAllAtExit(); }

void Worker::StopAndJoin() {
  Stop();
  // The first thread starts the others, so once it is joined the list is complete.
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  std::vector<std::thread> extra;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    extra.swap(extra_threads_);
  }
  for (auto& t : extra) {
    if (t.joinable() && t.get_id() != std::this_thread::get_id()) t.join();
  }
}

void Worker::Finalize(Napi::Env env, std::shared_ptr<Worker>* self, Worker* worker) {
  try {
    worker->StopAndJoin();
  } catch (...) {
    // nothing may escape a finalizer (std::terminate); the threads are being torn down with the environment
  }
  worker->finalized_ = true;
  for (auto& waiter : worker->dispose_waiters_) {
    try {
      waiter.Resolve(env.Undefined());
    } catch (...) {
      // the environment is being torn down; nobody is left to observe the promise
    }
  }
  worker->dispose_waiters_.clear();
  delete self;  // may destroy the worker
}

void Worker::Post(Job* job) {
  if (completion_.BlockingCall(job) != napi_ok) delete job;  // environment gone: drop silently
}

void Worker::ThreadMain(Job* load_job) {
  if (config_.thread_nice > 0) {
    // Linux keeps a nice value per thread; failure only means the engine keeps the default priority.
    const id_t tid = static_cast<id_t>(syscall(SYS_gettid));
    errno = 0;
    const int current = getpriority(PRIO_PROCESS, tid);
    if (errno == 0) setpriority(PRIO_PROCESS, tid, std::min(19, current + config_.thread_nice));
  }
  try {
    Load();
  } catch (...) {
    load_job->error = DescribeCurrentException(code::kModelLoad);
  }
  bool loaded;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_ && load_job->error.empty()) load_job->error = {code::kDisposed, "engine disposed while loading"};
    loaded = load_job->error.empty();
    if (!loaded) stopping_ = true;
  }
  Post(load_job);
  if (!loaded) {
    Exit();
    return;
  }
  for (int32_t i = 1; i < config_.threads; ++i) {
    if (completion_.Acquire() != napi_ok) break;  // each thread holds its own reference
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) {
      completion_.Release();
      break;
    }
    try {
      extra_threads_.emplace_back(&Worker::Serve, this, i);
      ++running_;
    } catch (const std::exception&) {
      completion_.Release();  // fewer threads than asked for, but a working engine
      break;
    }
  }
  Serve(0);
}

void Worker::Serve(int32_t index) {
#ifdef __linux__
  pthread_setname_np(pthread_self(), "sentio-engine");  // tells engine threads apart in top -H and the bench
#endif
  const pid_t tid = WakeSteering::CurrentThreadId();
  const auto has_work = [this] { return stopping_ || !tasks_.empty() || !queue_.empty(); };
  for (;;) {
    std::unique_ptr<Job> job;
    Task task{};
    bool steered = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!has_work()) {
        sleepers_.push_back({tid, false});
        if (static_cast<int>(sleepers_.size()) == running_) idle_since_ = std::chrono::steady_clock::now();
        wake_.wait(lock, has_work);
        auto me = std::find_if(sleepers_.begin(), sleepers_.end(), [tid](const Sleeper& s) { return s.tid == tid; });
        steered = me->steered;
        sleepers_.erase(me);
      }
      if (stopping_) break;
      // Sub-batches of a started job first: it finishes sooner, and jobs keep their order. A priority job
      // goes before them (its own sub-batches then go to the front of tasks_, in Start).
      if (!tasks_.empty() && (queue_.empty() || !queue_.front()->priority)) {
        task = tasks_.front();
        tasks_.pop_front();
      } else {
        job = std::move(queue_.front());
        queue_.pop_front();
        ++jobs_taken_;
      }
    }
    if (steered) steering_.Restore();  // running now, off the JS thread's CPU: free to use them all again
    if (job) {
      Start(std::move(job), index);
    } else {
      RunTask(task, index);
    }
  }
  Exit();
}

void Worker::Exit() {
  std::deque<std::unique_ptr<Job>> abandoned;
  std::deque<Task> unstarted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--running_ == 0) {  // no other thread can be inside a session or a task now
      abandoned.swap(queue_);
      unstarted.swap(tasks_);
      lanes_.clear();
    }
  }
  const ErrorInfo disposed{code::kDisposed, "engine disposed before this batch ran"};
  for (Task& task : unstarted) {
    if (task.job->error.empty()) task.job->error = disposed;
    if (task.job->tasks_left.fetch_sub(1, std::memory_order_acq_rel) == 1) Finish(task.job);
  }
  for (auto& job : abandoned) {
    job->error = disposed;
    Post(job.release());
  }
  completion_.Release();  // the last call this thread makes: the final one lets Finalize() run and join
}

void Worker::Load() {
  tokenizer_ = std::make_unique<Tokenizer>(config_.tokenizer);
  config_.tokenizer = TokenizerTables{};  // the tokenizer keeps its own copy
  auto add_lane = [this](const SessionConfig& config) {
    auto lane = std::make_unique<Lane>();
    lane->session = std::make_unique<Session>(config);
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) lane->session->Terminate();
    lanes_.push_back(std::move(lane));
  };
  add_lane(config_.session);
  if (lanes_[0]->session->provider() == "cuda") {
    // A session per engine thread: its own CUDA stream, so one thread's run need not wait for another's.
    SessionConfig cuda = config_.session;
    cuda.provider = "cuda";
    for (int32_t i = 1; i < config_.threads; ++i) {
      try {
        add_lane(cuda);
      } catch (const NativeError&) {
        break;  // e.g. no GPU memory for another: the threads then share the sessions, taking turns
      }
    }
  }
  // Warm-up: the first runs allocate arenas and pick kernels; do that here, not on a user's request.
  // The 1-text run always happens: it also fixes output widths the model leaves symbolic.
  std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 2}};
  if (config_.warmup) {
    const int64_t longest = tokenizer_->max_length();
    shapes.push_back({8, longest});
    shapes.push_back({std::min<int64_t>(config_.max_run_texts, 64), std::min<int64_t>(longest, 48)});
  }
  std::vector<std::vector<float>> outputs;
  for (auto& lane : lanes_) {
    for (auto [batch, seq] : shapes) {
      std::vector<int64_t> ids(batch * seq, tokenizer_->unk_id()), mask(batch * seq, 1);
      for (int64_t b = 0; b < batch; ++b) ids[b * seq] = tokenizer_->cls_id();
      lane->session->Run(ids, mask, batch, seq, outputs);
    }
  }
  const Session& first = *lanes_[0]->session;
  for (const OutputSpec& spec : first.outputs()) {
    if (spec.width < 0) throw NativeError(code::kModelLoad, "output '" + spec.name + "' has no fixed width");
  }
  std::atexit(StopAllAtExit);  // after the warm-up: see Live()
  provider_ = first.provider();
  fallback_reason_ = first.fallback_reason();
  packed_recurrences_ = first.packed_recurrences();
  fused_poolings_ = first.fused_poolings();
  packed_kernels_ = first.packed_kernels();
  outputs_ = first.outputs();
  sessions_ = static_cast<int32_t>(lanes_.size());
}

void Worker::Start(std::unique_ptr<Job> job, int32_t index) {
  std::vector<Task> tasks;
  try {
    if (job->kind == Job::Kind::kLoad) throw NativeError(code::kInternal, "load job in the run queue. This is a bug.");
    if (!job->texts.empty()) {
      job->lengths.reserve(job->texts.size());
      for (const std::u16string& text : job->texts) {
        job->lengths.push_back(static_cast<int32_t>(tokenizer_->Encode(text.data(), text.size(), job->ids)));
      }
      job->texts.clear();
      job->texts.shrink_to_fit();
    } else {
      const int64_t vocab = static_cast<int64_t>(tokenizer_->vocab_size());
      for (int32_t id : job->ids) {
        if (id < 0 || id >= vocab) throw NativeError(code::kInvalidArgument, "token id out of range");
      }
    }
    if (job->kind == Job::Kind::kRun) tasks = Plan(*job);
  } catch (...) {
    job->error = DescribeCurrentException(code::kInference);
    tasks.clear();
  }
  if (tasks.empty()) {  // tokenize-only, or failed before running anything
    Post(job.release());
    return;
  }
  Job* raw = job.release();
  raw->tasks_left.store(static_cast<int>(tasks.size()), std::memory_order_relaxed);
  bool shared = false;
  if (tasks.size() > 1) {
    try {
      std::lock_guard<std::mutex> lock(mutex_);
      tasks_.insert(tasks_.begin(), tasks.begin() + 1, tasks.end());
      shared = true;
    } catch (const std::exception&) {
      // out of memory for the queue: this thread runs every sub-batch itself
    }
    if (shared) wake_.notify_all();
  }
  if (shared) {
    RunTask(tasks.front(), index);
  } else {
    for (const Task& task : tasks) RunTask(task, index);
  }
}

std::vector<Worker::Task> Worker::Plan(Job& job) {
  // On CPU a run costs a fixed overhead (the graph's ~160 kernels at a tiny size: about 240 µs here) plus
  // work for every position of the run's padded [texts, longest] input. Real tokens cost the same however
  // the batch is cut, so a plan weighs the runs against their padded positions: about 4.2 µs each when
  // ONNX Runtime's GRU steps every row to the longest text and its operators pool every position, about
  // 0.5 µs with the packed recurrence and the fused pooling (packed_gru.h, masked_pool_op.h: only
  // embedding and layout work is left; docs/engine.md, Padding). So a
  // batch is sorted by length and cut into runs that minimise that cost, each run at most `cap` texts:
  // small enough that every engine thread gets a share of a large batch unless other jobs wait, and at
  // most max_run_tokens padded tokens where one text allows: a priority job waits for the runs in
  // progress (docs/engine.md, The priority lane). Each run is a task any engine thread may take.
  // On CUDA a run costs about the same whatever its size (launch overhead per node, docs/gpu.md) and
  // padding is nearly free, so a batch runs whole (up to max_run_texts); the engine threads then serve
  // different batches instead of sharing one.
  constexpr int64_t kRunCost = 2400;  // both in tenths of a µs
  // A padded position: about 0.5 µs of embedding and layout work, plus 3.3 in ONNX Runtime's GRU
  // (not the packed one) and 0.4 in ONNX Runtime's pooling (not MaskedPool).
  const int64_t position_cost = 5 + (packed_recurrences_ > 0 ? 0 : 33) + (fused_poolings_ > 0 ? 0 : 4);
  const bool split_by_length = provider_ != "cuda";
  constexpr size_t kMinShare = 4;  // a batch this small is not shared out across threads
  const std::vector<int32_t>& lengths = job.lengths;
  const size_t total = lengths.size();
  size_t threads = split_by_length ? static_cast<size_t>(std::max(1, config_.threads)) : 1;
  {
    // Another job waiting means a free thread will take that one, so this job need not be shared out:
    // its runs stay larger, and a run's fixed cost is spread over more texts (docs/engine.md, Padding).
    std::lock_guard<std::mutex> lock(mutex_);
    if (!queue_.empty()) threads = 1;
  }
  const size_t cap = std::min(static_cast<size_t>(std::max(1, config_.max_run_texts)),
                              std::max(kMinShare, (total + threads - 1) / threads));

  job.offsets.resize(total);
  for (size_t i = 0, at = 0; i < total; ++i) {
    job.offsets[i] = at;
    at += static_cast<size_t>(lengths[i]);
  }
  job.order.resize(total);
  for (size_t i = 0; i < total; ++i) job.order[i] = i;
  std::stable_sort(job.order.begin(), job.order.end(), [&](size_t a, size_t b) { return lengths[a] < lengths[b]; });

  // Every task writes its own rows of these; sizing them now means no task ever reallocates.
  const std::vector<OutputSpec>& specs = outputs_;
  job.outputs.assign(specs.size(), {});
  for (size_t k = 0; k < specs.size(); ++k) job.outputs[k].assign(total * static_cast<size_t>(specs[k].width), 0.0f);

  std::vector<Task> tasks;
  if (!split_by_length) {
    for (size_t first = 0; first < total; first += cap) tasks.push_back({&job, first, std::min(cap, total - first)});
    return tasks;
  }
  // best[j]: the least cost of the j shortest texts' runs; start[j]: where the last of those runs starts.
  std::vector<int64_t> best(total + 1, 0);
  std::vector<size_t> start(total + 1, 0);
  const int64_t max_tokens = config_.max_run_tokens > 0 ? config_.max_run_tokens : INT64_MAX;
  for (size_t j = 1; j <= total; ++j) {
    const int64_t longest = lengths[job.order[j - 1]];
    const size_t rows =
        static_cast<size_t>(std::max<int64_t>(1, std::min<int64_t>(max_tokens / longest, static_cast<int64_t>(cap))));
    best[j] = INT64_MAX;
    for (size_t i = j > rows ? j - rows : 0; i < j; ++i) {
      const int64_t cost = best[i] + kRunCost + static_cast<int64_t>(j - i) * longest * position_cost;
      if (cost < best[j]) {
        best[j] = cost;
        start[j] = i;
      }
    }
  }
  for (size_t j = total; j > 0; j = start[j]) tasks.push_back({&job, start[j], j - start[j]});
  std::reverse(tasks.begin(), tasks.end());
  return tasks;
}

void Worker::RunTask(const Task& task, int32_t index) {
  Job& job = *task.job;
  try {
    if (!job.failed.load(std::memory_order_relaxed)) {  // after a sibling task failed, the job has failed
      const int64_t seq = job.lengths[job.order[task.first + task.count - 1]];
      const int64_t pad = tokenizer_->pad_id();
      std::vector<int64_t> input_ids(task.count * seq, pad), mask(task.count * seq, 0);
      for (size_t b = 0; b < task.count; ++b) {
        const size_t text = job.order[task.first + b];
        const int32_t n = job.lengths[text];
        const int32_t* ids = job.ids.data() + job.offsets[text];
        std::copy(ids, ids + n, input_ids.begin() + b * seq);
        std::fill(mask.begin() + b * seq, mask.begin() + b * seq + n, 1);
      }
      std::vector<std::vector<float>> part;
      {
        // Concurrent runs of one CUDA session crashed the process on an H100 (ORT 1.29: NonZero read a
        // negative count, then a server died), so on CUDA a session's runs take turns. Each engine thread
        // has its own session there, so the turn is only ever contended when sessions are fewer.
        Lane& lane = *lanes_[static_cast<size_t>(index) % lanes_.size()];
        std::unique_lock<std::mutex> turn(lane.turn, std::defer_lock);
        if (provider_ == "cuda") turn.lock();
        lane.session->Run(input_ids, mask, static_cast<int64_t>(task.count), seq, part);
      }
      runs_.fetch_add(1, std::memory_order_relaxed);
      for (size_t k = 0; k < part.size() && k < job.outputs.size(); ++k) {
        const size_t width = part[k].size() / task.count;
        for (size_t b = 0; b < task.count; ++b) {
          std::copy(part[k].begin() + b * width, part[k].begin() + (b + 1) * width,
                    job.outputs[k].begin() + job.order[task.first + b] * width);
        }
      }
    }
  } catch (...) {
    ErrorInfo error = DescribeCurrentException(code::kInference);
    std::lock_guard<std::mutex> lock(mutex_);
    if (job.error.empty()) job.error = std::move(error);
    job.failed.store(true, std::memory_order_relaxed);
  }
  if (job.tasks_left.fetch_sub(1, std::memory_order_acq_rel) == 1) Finish(&job);
}

void Worker::Finish(Job* job) {
  bool failed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    failed = !job->error.empty();
    if (failed && stopping_) job->error = {code::kDisposed, "engine disposed while this batch was running"};
  }
  if (failed) job->outputs.clear();
  Post(job);
}

}  // namespace sentio

namespace sentio {

// Runs on the JS thread for every finished job (and, with env == nullptr, for jobs still queued when
// the environment is torn down).
void SettleJob(Napi::Env env, Napi::Function, Worker* worker, Job* raw) {
  std::unique_ptr<Job> job(raw);
  if (env == nullptr) return;
  // Ref/Unref are a switch, not a count: while a dispose() waits, its Ref must stand, or the loop could
  // go idle and the process exit before Finalize settles the dispose promise.
  if (--worker->pending_ == 0 && worker->dispose_waiters_.empty()) worker->completion_.Unref(env);
  Napi::HandleScope scope(env);
  try {
    if (!job->error.empty()) {
      job->deferred.Reject(MakeError(env, job->error.code, job->error.message).Value());
      return;
    }
    switch (job->kind) {
      case Job::Kind::kLoad:
        job->deferred.Resolve(WrapHandle(env, worker->shared_from_this()));
        return;
      case Job::Kind::kTokenize: {
        Napi::Object result = Napi::Object::New(env);
        auto ids = Napi::Int32Array::New(env, job->ids.size());
        std::copy(job->ids.begin(), job->ids.end(), ids.Data());
        auto lengths = Napi::Int32Array::New(env, job->lengths.size());
        std::copy(job->lengths.begin(), job->lengths.end(), lengths.Data());
        result.Set("ids", ids);
        result.Set("lengths", lengths);
        job->deferred.Resolve(result);
        return;
      }
      case Job::Kind::kRun: {
        Napi::Object result = Napi::Object::New(env);
        Napi::Object outputs = Napi::Object::New(env);
        const auto& specs = worker->outputs_;
        for (size_t k = 0; k < job->outputs.size() && k < specs.size(); ++k) {
          const std::vector<float>& data = job->outputs[k];
          auto array = Napi::Float32Array::New(env, data.size());
          std::copy(data.begin(), data.end(), array.Data());
          outputs.Set(specs[k].name, array);
        }
        auto counts = Napi::Int32Array::New(env, job->lengths.size());
        std::copy(job->lengths.begin(), job->lengths.end(), counts.Data());
        result.Set("outputs", outputs);
        result.Set("tokenCounts", counts);
        job->deferred.Resolve(result);
        return;
      }
    }
  } catch (const Napi::Error& e) {
    job->deferred.Reject(e.Value());
  } catch (const std::exception& e) {
    job->deferred.Reject(MakeError(env, code::kInternal, e.what()).Value());
  }
}

}  // namespace sentio
