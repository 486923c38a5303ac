// Where a woken engine thread runs. On a small Linux machine the scheduler often puts an engine thread
// woken by the JS thread on the JS thread's own CPU, even with another CPU idle, and the JS thread then
// waits while the whole inference runs (measured on a 2-CPU VM: 9 wake-ups in 10 after a few ms idle,
// docs/engine.md#wake-steering). Before waking an engine idle for a while, the JS thread narrows the CPUs
// of the thread about to wake to all but its own; that thread widens them again as soon as it runs, so a
// busy engine still uses every CPU. A no-op off Linux, with fewer than two CPUs, or when disabled.
#pragma once

#include <sys/types.h>

#ifdef __linux__
#include <sched.h>
#endif

namespace sentio {

class WakeSteering {
 public:
  explicit WakeSteering(bool enabled);

  bool active() const { return active_; }
  // This thread's id, for Steer() from another thread.
  static pid_t CurrentThreadId();
  // Keep thread `tid` off the calling thread's current CPU. False if nothing was done.
  bool Steer(pid_t tid) const;
  // The calling thread may run on every allowed CPU again.
  void Restore() const;

 private:
  bool active_ = false;
#ifdef __linux__
  cpu_set_t allowed_{};  // the process's CPUs when the engine started
#endif
};

}  // namespace sentio
