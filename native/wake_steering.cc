#include "wake_steering.h"

#ifdef __linux__
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace sentio {

#ifdef __linux__

WakeSteering::WakeSteering(bool enabled) {
  CPU_ZERO(&allowed_);
  active_ = enabled && sched_getaffinity(0, sizeof(allowed_), &allowed_) == 0 && CPU_COUNT(&allowed_) >= 2;
}

pid_t WakeSteering::CurrentThreadId() { return static_cast<pid_t>(syscall(SYS_gettid)); }

bool WakeSteering::Steer(pid_t tid) const {
  if (!active_) return false;
  const int cpu = sched_getcpu();
  if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed_)) return false;
  cpu_set_t others = allowed_;
  CPU_CLR(cpu, &others);
  // Failure (the thread has exited, a cgroup took the CPUs) leaves the scheduler's choice: harmless.
  return sched_setaffinity(tid, sizeof(others), &others) == 0;
}

void WakeSteering::Restore() const {
  if (active_) sched_setaffinity(0, sizeof(allowed_), &allowed_);
}

#else

WakeSteering::WakeSteering(bool) {}
pid_t WakeSteering::CurrentThreadId() { return 0; }
bool WakeSteering::Steer(pid_t) const { return false; }
void WakeSteering::Restore() const {}

#endif

}  // namespace sentio
