package dev.fairway.lb.jdk;

import dev.fairway.lb.LoadReportHeader;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.AttemptOutcome;
import dev.fairway.lb.internal.CallMeters;
import dev.fairway.lb.internal.OutcomeRule;
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
  /** This attempt's number in its call, 1 for the first. */
  final int number;
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
    failureStatus = exchange.route.outcomes.read(pick, status, loadReport);
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
