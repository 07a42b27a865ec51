package dev.fairway.lb;

import dev.fairway.lb.internal.Failures;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/** The {@link Pick} returned by the balancer: one small object per call, completed at most once. */
final class PickHandle implements Pick {
  private static final AtomicIntegerFieldUpdater<PickHandle> DONE =
      AtomicIntegerFieldUpdater.newUpdater(PickHandle.class, "done");

  private final Completions completions;
  private final TrackedTarget tracked;
  private final Target target;
  private final long startNanos;
  /**
   * This balancer's calls on the target when this one was picked, itself included, shifted left by
   * one; the low bit is set if this call holds one of a half-open target's trial permits. One field
   * for both keeps the handle at 48 bytes, the size it had before it carried the count.
   */
  private final int state;
  private volatile int done;
  private volatile long latencyNanos = -1;

  PickHandle(Completions completions, TrackedTarget tracked, long startNanos, boolean trial) {
    this.completions = completions;
    this.tracked = tracked;
    this.target = tracked.target;
    this.startNanos = startNanos;
    this.state = tracked.inFlight << 1 | (trial ? 1 : 0);
  }

  private boolean trial() {
    return (state & 1) != 0;
  }

  /** The balancer's state of the picked target, for tests that check it after it left. */
  TrackedTarget tracked() {
    return tracked;
  }

  @Override
  public Target target() {
    return target;
  }

  @Override
  public void recordLatency() {
    if (done == 0 && latencyNanos < 0) {
      latencyNanos = Math.max(0, completions.nanoTime() - startNanos);
    }
  }

  @Override
  public void reportLoad(double utilization, double requestsInFlight) {
    if (done == 0) {
      completions.report(tracked, utilization, requestsInFlight, startNanos, latencyNanos);
    }
  }

  @Override
  public void success() {
    if (DONE.compareAndSet(this, 0, 1)) {
      completions.success(tracked, startNanos, latencyNanos, state >>> 1, trial());
    }
  }

  @Override
  public void failure(Throwable cause) {
    if (DONE.compareAndSet(this, 0, 1)) {
      if (Failures.isInterruption(cause)) {
        completions.release(tracked, trial()); // the caller stopped waiting: nothing about the target
      } else {
        completions.failure(tracked, startNanos, cause, trial());
      }
    }
  }

  @Override
  public void superseded() {
    if (DONE.compareAndSet(this, 0, 1)) {
      completions.superseded(tracked, startNanos, trial());
    }
  }

  @Override
  public void supersededHoldingSlot() {
    if (done == 0) {
      completions.lowerBound(tracked, startNanos);
    }
  }

  @Override
  public void release() {
    if (DONE.compareAndSet(this, 0, 1)) {
      completions.release(tracked, trial());
    }
  }

  @Override
  public String toString() {
    return "Pick{" + target.id() + (done == 0 ? ", open}" : ", done}");
  }
}
