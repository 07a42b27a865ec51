package dev.fairway.lb.jdk;

import dev.fairway.lb.LoadReportHeader;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.AttemptOutcome;
import dev.fairway.lb.internal.CallMeters;
import dev.fairway.lb.internal.OutcomeRule;
import dev.fairway.lb.internal.hedging.ServiceHedging;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.jspecify.annotations.Nullable;

/**
 * One attempt of a call on one target: its {@link Pick} and the start of its {@code
 * fairway.requests} timing. The only place where that pick is completed and its timing recorded.
 * The first completion wins and later ones do nothing, so the call's loop, the tracked body
 * subscriber and a cancel may all try. Completion is thread-safe.
 */
final class Attempt {
  private static final AtomicIntegerFieldUpdater<Attempt> DONE =
      AtomicIntegerFieldUpdater.newUpdater(Attempt.class, "done");

  private final Pick pick;
  private final BalancedExchange<?> exchange;
  private final CallMeters.TargetTimers timers;
  private final long startNanos;
  /** This attempt's number in its call, 1 for the first (a hedge is number 2). */
  final int number;
  /**
   * When the attempt was sent, by the service's hedging clock; 0 on a route without hedging. The one
   * start every hedging time of this attempt is measured from (its response time, its hold).
   */
  private final long sentNanos;
  /** {@link OutcomeRule#SUCCESS}, or the status that makes this attempt a failure; set when the headers arrive. */
  private volatile int failureStatus;
  /**
   * The body of a response kept for a possible retry (a retryable status), read whole; null when
   * the response went to the caller's handler. Written before the response future completes.
   */
  volatile byte @Nullable [] retainedBody;
  @SuppressWarnings("UnusedVariable") // read and written through DONE, which Error Prone does not see
  private volatile int done;

  Attempt(Pick pick, BalancedExchange<?> exchange, int number) {
    this.pick = pick;
    this.exchange = exchange;
    this.number = number;
    CallMeters meters = exchange.route.meters;
    this.timers = meters.timers(pick.target());
    this.startNanos = meters.startNanos();
    ServiceHedging hedging = exchange.route.hedging;
    this.sentNanos = hedging == null ? 0 : hedging.nowNanos();
  }

  /** When the attempt was sent, by the service's hedging clock; 0 on a route without hedging. */
  long sentNanos() {
    return sentNanos;
  }

  Target target() {
    return pick.target();
  }

  /**
   * The response headers arrived: latency counts until now while the slot stays held, the
   * route's {@link OutcomeRule} hands the load report ({@value LoadReportHeader#NAME}'s value, or
   * null) to the pick whatever the status, and the status decides what {@link #complete} reports.
   */
  void responded(int status, @Nullable String loadReport) {
    pick.recordLatency();
    int failure = exchange.route.outcomes.read(pick, status, loadReport);
    failureStatus = failure;
    ServiceHedging hedging = exchange.route.hedging;
    if (hedging != null) {
      hedging.responded(pick.target(), sentNanos); // the target got past the losing copies it held
      if (failure == OutcomeRule.SUCCESS && exchange.hedgeable()) {
        hedging.recordResponse(pick.target(), sentNanos); // a percentile delay learns from a usable response's time
      }
    }
  }

  /**
   * The other copy of a hedged call won: records no failure, times the attempt as cancelled, and
   * gives the pick the time this copy ran as a lower bound of its latency ({@link Pick#superseded}).
   * If the copy {@code answered}, its slot is freed now; if it was cancelled before its answer, its
   * server most likely still works on it, and the service's hedging holds the slot until then
   * ({@link ServiceHedging#hold}; at once with a loser hold of 0). True if this completed the
   * attempt.
   */
  boolean superseded(boolean answered) {
    if (!DONE.compareAndSet(this, 0, 1)) {
      return false;
    }
    // Timed before the slot is freed: whoever sees the target idle also sees this attempt counted.
    exchange.route.meters.attempt(timers, CallMeters.Outcome.CANCELLED, startNanos);
    ServiceHedging hedging = exchange.route.hedging;
    if (!answered && hedging != null && hedging.holdsLosers()) {
      pick.supersededHoldingSlot();
      hedging.hold(pick.target(), pick::release, sentNanos);
    } else {
      pick.superseded();
      if (answered && hedging != null) {
        hedging.responded(pick.target(), sentNanos); // its server got past the losing copies it held
      }
    }
    return true;
  }

  /**
   * Completes the attempt by lb-core's {@link AttemptOutcome}: released if the caller cancelled the
   * call or {@code failure} is an interrupt (the caller's reasons, which say nothing about the
   * target); else a failure when {@code failure} is not null or the status was a failure; else a
   * success. The request's own timeout is the target's failure (see {@link FairwayHttpClient}): it
   * is the JDK client's only read timeout.
   */
  void complete(@Nullable Throwable failure) {
    if (!DONE.compareAndSet(this, 0, 1)) {
      return;
    }
    CallMeters.Outcome outcome = AttemptOutcome.complete(pick, exchange.isCancelled(), failure, failureStatus);
    exchange.route.meters.attempt(timers, outcome, startNanos);
  }

  /** The caller cancelled or was interrupted: frees the slot, charges no target, times the attempt as cancelled. */
  void cancel() {
    if (DONE.compareAndSet(this, 0, 1)) {
      pick.release();
      exchange.route.meters.attempt(timers, CallMeters.Outcome.CANCELLED, startNanos);
    }
  }

  /** Frees the slot and records nothing: a bug outside the target threw (the caller's handler, say). */
  void release() {
    if (DONE.compareAndSet(this, 0, 1)) {
      pick.release();
    }
  }
}
