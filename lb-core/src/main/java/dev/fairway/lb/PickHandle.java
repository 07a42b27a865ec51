package dev.fairway.lb;

import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/** The {@link Pick} returned by the balancer: one small object per call, completed at most once. */
final class PickHandle implements Pick {
  private static final AtomicIntegerFieldUpdater<PickHandle> DONE =
      AtomicIntegerFieldUpdater.newUpdater(PickHandle.class, "done");

  private final LoadBalancer balancer;
  private final TrackedTarget tracked;
  private final Target target;
  private final long startNanos;
  private volatile int done;
  private volatile long latencyNanos = -1;

  PickHandle(LoadBalancer balancer, TrackedTarget tracked, long startNanos) {
    this.balancer = balancer;
    this.tracked = tracked;
    this.target = tracked.target;
    this.startNanos = startNanos;
  }

  @Override
  public Target target() {
    return target;
  }

  @Override
  public void recordLatency() {
    if (done == 0 && latencyNanos < 0) {
      latencyNanos = Math.max(0, balancer.nanoTime() - startNanos);
    }
  }

  @Override
  public void success() {
    if (DONE.compareAndSet(this, 0, 1)) {
      balancer.onSuccess(tracked, startNanos, latencyNanos);
    }
  }

  @Override
  public void failure(Throwable cause) {
    if (DONE.compareAndSet(this, 0, 1)) {
      balancer.onFailure(tracked, startNanos, cause);
    }
  }

  @Override
  public void release() {
    if (DONE.compareAndSet(this, 0, 1)) {
      balancer.onRelease(tracked);
    }
  }

  @Override
  public String toString() {
    return "Pick{" + target.id() + (done == 0 ? ", open}" : ", done}");
  }
}
