package dev.fairway.lb;

import dev.fairway.lb.internal.FailureKind;
import dev.fairway.lb.internal.Failures;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Runs one balancer's {@link PassiveHealth} (as {@link ActiveHealthChecker} runs its
 * {@link ActiveHealth}): decides from call outcomes when a target is ejected, and drives its
 * {@link TargetHealth} accordingly. The decision is {@link #ejectionReason}, a pure function of the
 * failure and the target's window: a failure that {@linkplain FailureKind#ejectsAtOnce() ejects at
 * once} (no connection could be made), a failed trial, too many failures in a row, or the
 * Resilience4j window's verdict (failure rate or slow-call rate over its threshold).
 *
 * <p>Lock discipline: the window and counters are lock-free. Only the ejection itself takes
 * {@code ejectionLock}, to count the targets already out against {@code maxEjectionPercent}; that
 * lock is held for a scan of the members and nothing else (never by a rebuild), and the transition
 * it produces goes to the {@link BalancerUpdater} without waiting.
 */
final class PassiveHealthChecker {
  private static final System.Logger LOG = System.getLogger(LoadBalancer.class.getName());

  private final String service;
  private final PassiveHealth config;
  private final int skippableWindow;
  private final Supplier<TrackedTarget[]> members;
  private final BalancerUpdater updater;
  private final ReentrantLock ejectionLock = new ReentrantLock();

  PassiveHealthChecker(String service, PassiveHealth config, Supplier<TrackedTarget[]> members, BalancerUpdater updater) {
    this.service = service;
    this.config = config;
    this.skippableWindow = config.skippableWindow();
    this.members = members;
    this.updater = updater;
  }

  /** {@code window} is the target's outcome window ({@link TrackedTarget#breaker}, known not null). */
  void onSuccess(TrackedTarget t, CircuitBreaker window, long latencyNanos, long now) {
    t.succeeded();
    HealthPhase phase = t.health.phaseAt(now);
    if (phase == HealthPhase.HALF_OPEN) {
      HealthTransition back = t.health.apply(t, TargetHealth.Event.TRIAL_SUCCEEDED, now, null);
      if (back != null) {
        window.reset(); // a fresh window: the outcomes before the ejection say nothing now
        t.resetRecordedSuccesses();
        updater.offerTransition(back);
      }
      return;
    }
    if (phase == HealthPhase.EJECTED) {
      return; // a call picked before the ejection: the window restarts when the target is back
    }
    if (skippableWindow == 0 || t.shouldRecordSuccess(skippableWindow)) {
      window.onSuccess(latencyNanos, TimeUnit.NANOSECONDS);
      if (window.getState() == CircuitBreaker.State.OPEN) {
        eject(t, window, now, "slow-call rate " + window.getMetrics().getSlowCallRate() + "% over its last calls");
      }
    }
  }

  void onFailure(TrackedTarget t, CircuitBreaker window, long elapsedNanos, long now, @Nullable Throwable cause) {
    t.resetRecordedSuccesses();
    int inARow = t.failedInARow();
    HealthPhase phase = t.health.phaseAt(now);
    if (phase == HealthPhase.EJECTED) {
      return;
    }
    if (phase != HealthPhase.HALF_OPEN) {
      window.onError(elapsedNanos, TimeUnit.NANOSECONDS, cause == null ? new Exception("failure") : cause);
    }
    String reason = ejectionReason(Failures.classifyTarget(cause), phase, inARow, config.consecutiveFailures,
        window.getState() == CircuitBreaker.State.OPEN ? window.getMetrics().getFailureRate() : -1);
    if (reason != null) {
      eject(t, window, now, reason);
    }
  }

  /**
   * Why one failure ejects its target, or null if it does not.
   *
   * @param inARow failures in a row including this one
   * @param consecutiveLimit the consecutive-failure rule, 0 for off
   * @param windowFailureRate the window's failure rate if it says "open", else negative
   */
  static @Nullable String ejectionReason(FailureKind kind, HealthPhase phase, int inARow, int consecutiveLimit,
      float windowFailureRate) {
    if (kind.ejectsAtOnce()) {
      return "could not connect";
    }
    if (phase == HealthPhase.HALF_OPEN) {
      return "failed its trial call";
    }
    if (consecutiveLimit > 0 && inARow >= consecutiveLimit) {
      return inARow + " failures in a row";
    }
    if (windowFailureRate >= 0) {
      return "failure rate " + windowFailureRate + "% over its last calls";
    }
    return null;
  }

  private void eject(TrackedTarget t, CircuitBreaker window, long now, String reason) {
    HealthTransition ejected = null;
    String refusal = null;
    ejectionLock.lock();
    try {
      if (t.removed || t.health.phaseAt(now) == HealthPhase.EJECTED) {
        return;
      }
      TrackedTarget[] m = members.get();
      int out = 0;
      for (TrackedTarget x : m) {
        if (x.health.phaseAt(now) == HealthPhase.EJECTED) {
          out++;
        }
      }
      int max = Math.max(1, m.length * config.maxEjectionPercent / 100);
      if (out >= max) {
        refusal = out + " of " + m.length + " targets are ejected already (max " + config.maxEjectionPercent + "%)";
      } else {
        ejected = t.health.apply(t, TargetHealth.Event.EJECT, now, reason);
      }
    } finally {
      ejectionLock.unlock();
    }
    if (refusal != null) {
      // Start counting afresh rather than retrying the ejection on every failure.
      window.reset();
      t.resetRecordedSuccesses();
      t.consecutiveFailures = 0;
      LOG.log(System.Logger.Level.INFO, "{0}: not ejecting {1} ({2}): {3}", service, t.target.id(), reason, refusal);
    } else if (ejected != null) {
      updater.offerTransition(ejected); // publishes the snapshot without the target, or queues it
    }
  }
}
