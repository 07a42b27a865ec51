package dev.fairway.lb.hc5;

import dev.fairway.lb.Pick;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.AttemptOutcome;
import dev.fairway.lb.internal.CallMeters;
import dev.fairway.lb.internal.OutcomeRule;
import dev.fairway.lb.internal.hedging.ServiceHedging;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * One attempt of an exchange (classic or async) on one target: its {@link Pick} and the start of
 * its {@code fairway.requests} timing. The only place where an attempt's pick is completed and its
 * timing recorded; the first completion wins and later ones do nothing, so the exchange loop, the
 * tracked entity and the leak safety net may all try. Completion is thread-safe.
 */
final class Attempt implements Runnable {
  private static final AtomicIntegerFieldUpdater<Attempt> DONE =
      AtomicIntegerFieldUpdater.newUpdater(Attempt.class, "done");

  private final Pick pick;
  private final ServiceRoute route;
  private final BooleanSupplier cancelled; // true once the caller cancelled the request (its exchange's abort)
  private final CallMeters.TargetTimers timers;
  private final long startNanos;
  /**
   * When the attempt was sent, by the service's hedging clock; 0 on a route without hedging. The one
   * start every hedging time of this attempt is measured from (its response time, its hold).
   */
  private final long sentNanos;
  /** {@link OutcomeRule#SUCCESS} (0), or the status that makes this attempt a failure; set before the response is handed on. */
  private int failureStatus;
  @SuppressWarnings("UnusedVariable") // read and written through DONE, which Error Prone does not see
  private volatile int done;

  Attempt(Pick pick, ServiceRoute route, BooleanSupplier cancelled) {
    this.pick = pick;
    this.route = route;
    this.cancelled = cancelled;
    this.timers = route.meters.timers(pick.target());
    this.startNanos = route.meters.startNanos();
    ServiceHedging hedging = route.hedging;
    this.sentNanos = hedging == null ? 0 : hedging.nowNanos();
  }

  Target target() {
    return pick.target();
  }

  /** When the attempt was sent, by the service's hedging clock; 0 on a route without hedging. */
  long sentNanos() {
    return sentNanos;
  }

  /**
   * The response has headers: latency counts until now, the in-flight slot stays held, and the
   * route's {@link OutcomeRule} reads the status and the load report ({@code loadReport}, the
   * {@code endpoint-load-metrics} header's value or null).
   */
  void responded(int code, @Nullable String loadReport) {
    pick.recordLatency();
    ServiceHedging hedging = route.hedging;
    if (hedging != null) {
      hedging.responded(pick.target(), sentNanos); // the target got past the losing copies it held
    }
    failureStatus = route.outcomes.read(pick, code, loadReport);
  }

  /**
   * Completes the attempt by lb-core's {@link AttemptOutcome}: released if the request was aborted
   * or {@code failure} is an interrupt (the caller stopped waiting, which says nothing about the
   * target), else a failure when {@code failure} is not null or the status was a failure, else a
   * success.
   */
  void complete(@Nullable Throwable failure) {
    if (!DONE.compareAndSet(this, 0, 1)) {
      return;
    }
    route.meters.attempt(timers, AttemptOutcome.complete(pick, cancelled.getAsBoolean(), failure, failureStatus),
        startNanos);
  }

  /** The caller stopped waiting (an abort, an interrupt): frees the slot, charges no target, times the attempt as cancelled. */
  void cancel() {
    if (DONE.compareAndSet(this, 0, 1)) {
      pick.release();
      route.meters.attempt(timers, CallMeters.Outcome.CANCELLED, startNanos);
    }
  }

  /**
   * The other copy of a hedged exchange won: records no failure, times the attempt as cancelled,
   * and gives the pick the time this copy ran as a lower bound of its latency ({@link
   * Pick#superseded}). If the copy was {@code answered} its slot is freed now; if it was cancelled
   * before its answer, its server most likely still works on it, and the service's hedging holds
   * the slot until then ({@link ServiceHedging#hold}), unless the policy holds no losers.
   */
  void superseded(boolean answered) {
    if (DONE.compareAndSet(this, 0, 1)) {
      // Timed before the slot is freed: whoever sees the target idle also sees this attempt counted.
      route.meters.attempt(timers, CallMeters.Outcome.CANCELLED, startNanos);
      ServiceHedging hedging = route.hedging;
      if (!answered && hedging != null && hedging.holdsLosers()) {
        pick.supersededHoldingSlot();
        hedging.hold(pick.target(), pick::release, sentNanos);
      } else {
        pick.superseded();
        if (answered && hedging != null) {
          hedging.responded(pick.target(), sentNanos); // its server got past the losing copies it held
        }
      }
    }
  }

  /**
   * Frees the slot and records nothing: something neither the target's nor the caller's doing
   * ended the attempt (a bug below, the client's own pool without a connection in time).
   */
  void release() {
    if (DONE.compareAndSet(this, 0, 1)) {
      pick.release();
    }
  }

  /** {@link #leaked()}: the cleaning action of the tracked entity (one object less per response than a lambda). */
  @Override
  public void run() {
    leaked();
  }

  /** The response entity became unreachable unconsumed and unclosed (see {@link TrackedEntity}): frees the slot. */
  void leaked() {
    if (DONE.compareAndSet(this, 0, 1)) {
      pick.release();
      route.leaked(pick.target());
    }
  }
}
