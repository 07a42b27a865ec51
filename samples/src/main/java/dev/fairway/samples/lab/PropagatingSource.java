package dev.fairway.samples.lab;

import dev.fairway.lb.MutableTargetSource;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetSource;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The lab's stand-in for discovery in {@link Scenario#ROLLING}: an in-process list whose changes
 * reach the balancer {@code delay} after they are made, as a registry's propagation (deregistration
 * in Consul, the agent's sync, the blocking query's answer) takes a moment. One timer thread; changes
 * arrive in the order they were made. {@link #close()} drops the changes not yet delivered.
 */
final class PropagatingSource implements AutoCloseable {
  private final MutableTargetSource seen;
  private final long delayNanos;
  private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
    Thread t = new Thread(r, "lab-discovery");
    t.setDaemon(true);
    return t;
  });

  PropagatingSource(List<Target> initial, Duration delay) {
    this.seen = new MutableTargetSource(initial);
    this.delayNanos = delay.toNanos();
  }

  /** What the balancer subscribes to: the list as it has propagated so far. */
  TargetSource balancerView() {
    return seen;
  }

  /** {@code target} leaves discovery now; the balancer hears of it after the delay. */
  void leave(Target target) {
    timer.schedule(() -> seen.remove(target), delayNanos, TimeUnit.NANOSECONDS);
  }

  /** {@code target} joins discovery now; the balancer hears of it after the delay. */
  void join(Target target) {
    timer.schedule(() -> seen.add(target), delayNanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
