package dev.fairway.lb.okhttp;

import dev.fairway.lb.LoadReportHeader;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.AttemptOutcome;
import dev.fairway.lb.internal.CallMeters;
import dev.fairway.lb.internal.Failures;
import dev.fairway.lb.internal.OutcomeRule;
import dev.fairway.lb.internal.hedging.ServiceHedging;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import okhttp3.Call;
import org.jspecify.annotations.Nullable;

/**
 * One attempt of a call on one target: its {@link Pick} and the start of its {@code
 * fairway.requests} timing. The only place where an attempt's pick is completed and its timing
 * recorded; the first completion wins, later ones do nothing, so the call loop, the tracked
 * response body and the leak safety net may all try. Completion is thread-safe.
 */
final class Attempt implements Runnable {
  private static final AtomicIntegerFieldUpdater<Attempt> DONE =
      AtomicIntegerFieldUpdater.newUpdater(Attempt.class, "done");

  private final Pick pick;
  private final Call call;
  private final ServiceRoute route;
  private final CallMeters.TargetTimers timers;
  private final long startNanos;
  /**
   * When the attempt was sent, by the service's hedging clock; 0 on a route without hedging. The one
   * start every hedging time of this attempt is measured from (its response time, its hold).
   * {@link #startNanos} is the meters' own, by the registry's clock.
   */
  private final long sentNanos;
  /** {@link OutcomeRule#SUCCESS} (0), or the status that makes this attempt a failure; set before the response is handed on. */
  private int failureStatus;
  @SuppressWarnings("UnusedVariable") // read and written through DONE, which Error Prone does not see
  private volatile int done;

  Attempt(Pick pick, Call call, ServiceRoute route) {
    this.pick = pick;
    this.call = call;
    this.route = route;
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
   * route's {@link OutcomeRule} reads it: the target's load report ({@code loadReport}, the {@value
   * LoadReportHeader#NAME} header's value or null) reaches the pick whatever the status, and the
   * status decides whether {@link #complete} reports a success or a failure.
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
   * Completes the attempt by lb-core's {@link AttemptOutcome}: released if the call was cancelled or {@code failure} is an interrupt
   * ({@link Failures#isInterruption}: the caller stopped waiting, which says nothing about the
   * target), else a failure when {@code failure} is not null or the status was a failure, else a
   * success.
   */
  void complete(@Nullable Throwable failure) {
    if (!DONE.compareAndSet(this, 0, 1)) {
      return;
    }
    route.meters.attempt(timers, AttemptOutcome.complete(pick, call.isCanceled(), failure, failureStatus), startNanos);
  }

  /**
   * The other copy of a hedged call won: records no failure, times the attempt as cancelled, and
   * gives the pick the time this copy ran as a lower bound of its latency ({@link Pick#superseded}).
   * If the copy was {@code answered} its slot is freed now; if it was cancelled before its answer,
   * its server most likely still works on it, and {@link HeldLosers} keeps the slot until then.
   */
  void superseded(boolean answered) {
    if (DONE.compareAndSet(this, 0, 1)) {
      // Timed before the slot is freed: whoever sees the target idle also sees this attempt counted.
      route.meters.attempt(timers, CallMeters.Outcome.CANCELLED, startNanos);
      ServiceHedging hedging = route.hedging;
      if (!answered && hedging != null && hedging.holdsLosers()) {
        // its server most likely still works on it: the slot stays held (HeldLosers)
        pick.supersededHoldingSlot();
        hedging.hold(pick.target(), this::releaseHeld, sentNanos);
      } else {
        pick.superseded();
        if (answered && hedging != null) {
          hedging.responded(pick.target(), sentNanos); // its server got past the losing copies it held
        }
      }
    }
  }

  /**
   * A superseded copy held by {@link HeldLosers} is released now, its server presumably done: frees
   * the slot (its lower bound was recorded at the cancel).
   */
  void releaseHeld() {
    pick.release();
  }

  /** A later interceptor threw a non-I/O exception: a bug there, not the target's fault. Frees the slot only. */
  void abandon() {
    if (DONE.compareAndSet(this, 0, 1)) {
      pick.release();
    }
  }

  /** {@link #leaked()}: the cleaning action of the tracked body (one object less per response than a lambda). */
  @Override
  public void run() {
    leaked();
  }

  /** The response body became unreachable unclosed (see {@link TrackedResponseBody}): frees the slot. */
  void leaked() {
    if (DONE.compareAndSet(this, 0, 1)) {
      pick.release();
      route.leaked(call.request().url(), pick.target());
    }
  }
}
