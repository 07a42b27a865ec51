package dev.fairway.lb;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import java.util.function.LongSupplier;

/**
 * What happens when a {@link Pick} completes: the load metric is updated and the slot freed, passive
 * health hears the outcome, a trial permit is returned, the strategy is told (so a waiting caller
 * can take the slot), and a failure drops the target's affinity entries. Runs on the completing
 * thread; never waits for a rebuild (see {@link BalancerUpdater}).
 */
final class Completions {
  private final LongSupplier ticker;
  private final double tauNanos;
  private final double stepsPerNano;
  private final AttachedStrategy strategy;
  private final PassiveHealthChecker passive;
  private final OtherClients otherClients;
  private final BalancerMetrics metrics;
  private final ReportJudge judge;

  Completions(BalancerContext context, AttachedStrategy strategy, PassiveHealthChecker passive, BalancerMetrics metrics) {
    this.ticker = context.ticker;
    this.tauNanos = context.tauNanos;
    this.stepsPerNano = TargetLoad.DECAY_STEPS_PER_TAU / context.tauNanos;
    this.strategy = strategy;
    this.passive = passive;
    this.otherClients = context.otherClients;
    this.metrics = metrics;
    this.judge = context.reportJudge;
  }

  /**
   * A load report arrived on the response of a call sent at {@code startNanos} ({@code
   * recordedLatencyNanos} if its latency was recorded, else -1): the target keeps it ({@link
   * TargetLoad#recordReport}), the judge weighs it ({@link ReportJudge#judge}), and one that lies
   * about our own calls there is counted.
   */
  void report(TrackedTarget t, double utilization, double requestsInFlight, long startNanos, long recordedLatencyNanos) {
    long now = ticker.getAsLong();
    int own = t.inFlight;
    if (!t.recordReport(utilization, requestsInFlight, own, now)) {
      return;
    }
    long latency = recordedLatencyNanos >= 0 ? recordedLatencyNanos : Math.max(0, now - startNanos);
    if (judge.judge(t, requestsInFlight, own, now, latency) == ReportJudge.Verdict.IMPLAUSIBLE) {
      metrics.reportImplausible(t);
    }
  }

  long nanoTime() {
    return ticker.getAsLong();
  }

  void success(TrackedTarget t, long startNanos, long recordedLatencyNanos, int inFlightAtPick, boolean trial) {
    long now = ticker.getAsLong();
    long latency = recordedLatencyNanos >= 0 ? recordedLatencyNanos : Math.max(0, now - startNanos);
    t.recordLatency(latency, now, tauNanos);
    t.recordSuccessLatency(latency, now);
    // The learned-concurrency rule runs for every strategy, whichever is picking: least queueing
    // reads it, and so does the hedge's free-worker pick (LoadBalancer#pickWithFreeWorker).
    if (LearnedConcurrency.record(t, inFlightAtPick, latency, now)) {
      otherClients.seen(now, t.minLatencyNanos);
    }
    t.releaseSlot();
    CircuitBreaker window = t.breaker;
    if (window != null) {
      passive.onSuccess(t, window, latency, now);
    }
    if (trial) {
      t.health.endTrial();
    }
    strategy.onRelease(t);
  }

  void failure(TrackedTarget t, long startNanos, Throwable cause, boolean trial) {
    long now = ticker.getAsLong();
    long elapsed = Math.max(0, now - startNanos);
    // A failure never makes a target look faster than its average (a fast error is no fast answer),
    // and never compounds: repeated failures leave the average where it was. Ejection handles them.
    t.recordLatency(Math.max(elapsed, (long) t.ewmaNanos), now, tauNanos);
    t.releaseSlot();
    t.invalidateAffinity();
    if (strategy.keepsAffinity()) {
      metrics.affinityInvalidated();
    }
    CircuitBreaker window = t.breaker;
    if (window != null) {
      passive.onFailure(t, window, elapsed, now, cause);
    }
    if (trial) {
      t.health.endTrial();
    }
    strategy.onRelease(t);
  }

  /**
   * A copy that lost to a hedge: the time it ran is a lower bound of its latency ({@link
   * TargetLoad#recordLowerBound}); no minimum, no strategy sample, no passive-health outcome, since
   * the call never finished.
   */
  void superseded(TrackedTarget t, long startNanos, boolean trial) {
    lowerBound(t, startNanos);
    release(t, trial);
  }

  /** The lower bound of {@link #superseded} alone: the slot stays held ({@link Pick#supersededHoldingSlot}). */
  void lowerBound(TrackedTarget t, long startNanos) {
    long now = ticker.getAsLong();
    t.recordLowerBound(Math.max(0, now - startNanos), now, stepsPerNano);
  }

  void release(TrackedTarget t, boolean trial) {
    t.releaseSlot();
    if (trial) {
      t.health.endTrial();
    }
    strategy.onRelease(t);
  }
}
