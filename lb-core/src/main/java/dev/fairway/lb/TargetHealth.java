package dev.fairway.lb;

import java.util.Locale;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import org.jspecify.annotations.Nullable;

/**
 * The health state machine of one target: the single source of truth for its phase. The state is
 * one immutable {@link State} in one volatile field; every change goes through {@link #apply}, which
 * runs the pure transition function {@link #next} and compare-and-sets the result, so a completion,
 * a probe and the updater may all drive it at once without a lock, and each change is reported once
 * as a {@link HealthTransition}.
 *
 * <p>Resilience4j plays no part in the phase: its breaker is only the outcome window that the
 * {@link PassiveHealthChecker} asks "should this target be ejected?". Fairway owns the phases because
 * they carry what a breaker cannot: slow start, the cap on ejected targets, probes that end an
 * ejection early, unhealthy-by-source, and trial calls admitted on the pick path without calling
 * into the breaker.
 *
 * <p>Time-derived changes (an ejection that ended, a warm-up that finished) are applied by the
 * updater when the snapshot's review time comes, but {@link #phaseAt} reads them current at any
 * time without changing anything.
 */
final class TargetHealth {
  /** The inputs of a transition. */
  enum Event {
    /** Passive health decided to eject the target. */
    EJECT,
    /** A call succeeded while the target was half-open: it is back. */
    TRIAL_SUCCEEDED,
    /** Only time passed: end an ejection or a warm-up that is due. */
    TIME,
    PROBE_PASSED,
    PROBE_FAILED,
    /** The target source reports the target healthy again, or unhealthy. */
    SOURCE_HEALTHY,
    SOURCE_UNHEALTHY
  }

  /** What the state machine needs to know about the balancer's configuration. Immutable. */
  static final class Rules {
    final SlowStart slowStart;
    /** The balancer's count of changes to out of service, shared by all its targets. */
    final HealthEpoch epoch = new HealthEpoch();
    final PassiveHealth passive;
    /** Trial calls a half-open target may have in flight at once. */
    final int trialPermits;
    final int healthyThreshold;
    final int unhealthyThreshold;

    Rules(SlowStart slowStart, PassiveHealth passive, @Nullable ActiveHealth active) {
      this.slowStart = slowStart;
      this.passive = passive;
      this.trialPermits = passive.trialPermits();
      this.healthyThreshold = active == null ? 1 : active.healthyThreshold;
      this.unhealthyThreshold = active == null ? 1 : active.unhealthyThreshold;
    }
  }

  /** One target's health at one moment. Immutable. */
  static final class State {
    final HealthPhase phase;
    /** While {@link HealthPhase#EJECTED}: when the ejection ends. */
    final long ejectedUntilNanos;
    /** Start of slow start, or {@link SlowStart#NOT_WARMING}. */
    final long warmingSinceNanos;
    /** Ejections in a row without a restore in between: sets the next ejection's length. */
    final int ejections;
    final boolean probedUnhealthy;
    final boolean sourceUnhealthy;
    final int probePasses;
    final int probeFailures;

    State(HealthPhase phase, long ejectedUntilNanos, long warmingSinceNanos, int ejections, boolean probedUnhealthy,
        boolean sourceUnhealthy, int probePasses, int probeFailures) {
      this.phase = phase;
      this.ejectedUntilNanos = ejectedUntilNanos;
      this.warmingSinceNanos = warmingSinceNanos;
      this.ejections = ejections;
      this.probedUnhealthy = probedUnhealthy;
      this.sourceUnhealthy = sourceUnhealthy;
      this.probePasses = probePasses;
      this.probeFailures = probeFailures;
    }

    /** The state of a target that just became a member. */
    static State joined(boolean warm, boolean sourceHealthy, long now, SlowStart slowStart) {
      long since = warm ? slowStart.startAt(now) : SlowStart.NOT_WARMING;
      State s = new State(HealthPhase.HEALTHY, 0, since, 0, false, !sourceHealthy, 0, 0);
      return s.settled(now, slowStart);
    }

    State with(HealthPhase phase, long until, long since, int ejections, boolean probed, boolean source,
        int passes, int failures) {
      return new State(phase, until, since, ejections, probed, source, passes, failures);
    }

    /** In service or not by the flags: UNHEALTHY, else WARMING while warming, else HEALTHY. */
    State settled(long now, SlowStart slowStart) {
      HealthPhase p = probedUnhealthy || sourceUnhealthy ? HealthPhase.UNHEALTHY
          : slowStart.warming(warmingSinceNanos, now) ? HealthPhase.WARMING
          : HealthPhase.HEALTHY;
      return p == phase ? this : with(p, 0, warmingSinceNanos, ejections, probedUnhealthy, sourceUnhealthy,
          probePasses, probeFailures);
    }
  }

  private static final AtomicReferenceFieldUpdater<TargetHealth, State> STATE =
      AtomicReferenceFieldUpdater.newUpdater(TargetHealth.class, State.class, "state");
  private static final AtomicIntegerFieldUpdater<TargetHealth> TRIALS =
      AtomicIntegerFieldUpdater.newUpdater(TargetHealth.class, "trials");

  private final Rules rules;
  private volatile State state;
  /** Trial calls in flight while half-open; reset when the target enters half-open. */
  @SuppressWarnings("UnusedVariable") // read and written through TRIALS, which Error Prone does not see
  private volatile int trials;

  TargetHealth(Rules rules, State initial) {
    this.rules = rules;
    this.state = initial;
  }

  State state() {
    return state;
  }

  /** The phase as of {@code now}, with due time-derived changes applied; changes nothing. */
  HealthPhase phaseAt(long now) {
    return timePassed(state, now, rules).phase;
  }

  /** The public view at {@code now}, by {@link #shown}. */
  TargetState stateAt(long now) {
    return shown(timePassed(state, now, rules), now, rules.slowStart);
  }

  /**
   * The one mapping from the state machine to the public {@link TargetState}, used by
   * {@link LoadBalancer#status()}, the metrics and the listeners alike: a half-open target takes
   * calls, so it reads as healthy, or as warming while its slow start runs (it warms from the end
   * of its ejection).
   */
  static TargetState shown(State s, long now, SlowStart slowStart) {
    return switch (s.phase) {
      case EJECTED -> TargetState.EJECTED;
      case UNHEALTHY -> TargetState.UNHEALTHY;
      case WARMING -> TargetState.WARMING;
      case HALF_OPEN -> slowStart.warming(s.warmingSinceNanos, now) ? TargetState.WARMING : TargetState.HEALTHY;
      case HEALTHY -> TargetState.HEALTHY;
    };
  }

  /**
   * True if the target is out of service at {@code now} (ejected and the ejection not over, or
   * unhealthy): what {@link #stateAt} shows as EJECTED or UNHEALTHY. The pick path asks this of the
   * target it chose when the {@link HealthEpoch} says a change may not be in its snapshot yet: a
   * transition is visible here before the snapshot that reflects it is published.
   */
  boolean outAt(long now) {
    State s = state;
    return s.phase == HealthPhase.UNHEALTHY || (s.phase == HealthPhase.EJECTED && now - s.ejectedUntilNanos < 0);
  }

  /**
   * Why the target is out of service at {@code now}, as {@link TargetStatus#outReason()} reports
   * it: {@code "passive-health"} while ejected, {@code "active-health"} while its probes fail,
   * {@code "discovery"} while its source marks it unhealthy; null while in service.
   */
  @Nullable String outReasonAt(long now) {
    State s = timePassed(state, now, rules);
    if (s.phase == HealthPhase.EJECTED) {
      return "passive-health";
    }
    if (s.phase == HealthPhase.UNHEALTHY) {
      return s.probedUnhealthy ? "active-health" : "discovery";
    }
    return null;
  }

  /** Nanoseconds left of the target's ejection at {@code now}; 0 when it is not ejected. */
  long ejectedForNanosAt(long now) {
    State s = timePassed(state, now, rules);
    return s.phase == HealthPhase.EJECTED ? Math.max(0, s.ejectedUntilNanos - now) : 0;
  }

  boolean halfOpen() {
    return state.phase == HealthPhase.HALF_OPEN;
  }

  /**
   * Takes a trial permit if the target is half-open and one is free. Returns 1 for a trial taken, 0
   * when the target is not half-open (no permit needed), -1 when every permit is in use.
   */
  int tryBeginTrial() {
    if (state.phase != HealthPhase.HALF_OPEN) {
      return 0;
    }
    return TargetLoad.incrementBelow(TRIALS, this, rules.trialPermits) ? 1 : -1;
  }

  void endTrial() {
    TRIALS.decrementAndGet(this);
  }

  /**
   * The one transition function's entry point: applies {@code event} at {@code now} and returns what
   * changed phase, or null when the phase stayed (counters may still have moved).
   */
  @Nullable HealthTransition apply(TrackedTarget target, Event event, long now, @Nullable String reason) {
    for (;;) {
      State s = state;
      State n = next(s, event, now, rules);
      if (n == s) {
        return null;
      }
      boolean out = !n.phase.inService();
      if (out) {
        rules.epoch.begin(); // before the state changes: see HealthEpoch
      }
      boolean changed = STATE.compareAndSet(this, s, n);
      if (out) {
        rules.epoch.end();
      }
      if (changed) {
        if (n.phase == s.phase) {
          return null;
        }
        if (n.phase == HealthPhase.HALF_OPEN) {
          trials = 0;
        }
        long ejection = n.phase == HealthPhase.EJECTED ? n.ejectedUntilNanos - now : 0;
        return new HealthTransition(target, s.phase, n.phase, shown(s, now, rules.slowStart),
            reasonFor(s, n, event, reason), ejection, n.ejections);
      }
    }
  }

  // Arrow-switch conversion deferred: this file is being changed on another branch; converting it here would conflict.
  @SuppressWarnings("StatementSwitchToExpressionSwitch")
  private static String reasonFor(State from, State to, Event event, @Nullable String reason) {
    if (reason != null) {
      return reason;
    }
    if (from.phase == HealthPhase.EJECTED && to.phase != HealthPhase.EJECTED && event != Event.PROBE_PASSED) {
      return "its ejection ended";
    }
    switch (event) {
      case TRIAL_SUCCEEDED: return "a call on trial succeeded";
      case PROBE_PASSED: return "passed " + to.probePasses + " health checks";
      case PROBE_FAILED: return "failed " + to.probeFailures + " health checks";
      case SOURCE_HEALTHY: return "its source reports it healthy";
      case SOURCE_UNHEALTHY: return "its source reports it unhealthy";
      default: return to.phase == HealthPhase.HEALTHY ? "slow start ended" : event.name().toLowerCase(Locale.ROOT);
    }
  }

  /** The transition function: pure, the same inputs give the same state. Returns {@code s} for no change. */
  // Arrow-switch conversion deferred: this file is being changed on another branch; converting it here would conflict.
  @SuppressWarnings("StatementSwitchToExpressionSwitch")
  static State next(State s, Event event, long now, Rules rules) {
    State t = timePassed(s, now, rules);
    SlowStart slow = rules.slowStart;
    switch (event) {
      case TIME:
        return t;
      case EJECT: {
        if (t.phase == HealthPhase.EJECTED) {
          return t;
        }
        int n = t.ejections + 1;
        return t.with(HealthPhase.EJECTED, now + rules.passive.ejectionNanos(n), SlowStart.NOT_WARMING, n,
            t.probedUnhealthy, t.sourceUnhealthy, 0, t.probeFailures);
      }
      case TRIAL_SUCCEEDED:
        if (t.phase != HealthPhase.HALF_OPEN) {
          return t;
        }
        return t.with(HealthPhase.HEALTHY, 0, t.warmingSinceNanos, 0, t.probedUnhealthy, t.sourceUnhealthy,
            t.probePasses, t.probeFailures).settled(now, slow);
      case PROBE_PASSED: {
        int passes = t.probePasses + 1;
        boolean back = passes >= rules.healthyThreshold;
        if (back && t.phase == HealthPhase.EJECTED && t.probedUnhealthy) {
          // Passing probes end a passive ejection early only if probes also saw the target down: then
          // they watch what failed (a process that died and came back) and the trial starts now.
          // Probes that passed all along say nothing about the calls that failed (a service port
          // that answers 503 behind a healthy admin port), so only the ejection's timer and a
          // successful trial end it, as Envoy does with successful_active_health_check_uneject_host
          // set to false; otherwise the target would come back with every probe.
          return halfOpen(t.with(t.phase, now, t.warmingSinceNanos, t.ejections, false, t.sourceUnhealthy, passes, 0),
              now, slow);
        }
        if (back && t.probedUnhealthy) {
          State cleared = t.with(t.phase, t.ejectedUntilNanos, t.warmingSinceNanos, t.ejections, false,
              t.sourceUnhealthy, passes, 0);
          return returning(cleared, now, slow);
        }
        return t.with(t.phase, t.ejectedUntilNanos, t.warmingSinceNanos, t.ejections, t.probedUnhealthy,
            t.sourceUnhealthy, passes, 0);
      }
      case PROBE_FAILED: {
        int failures = t.probeFailures + 1;
        boolean down = t.probedUnhealthy || failures >= rules.unhealthyThreshold;
        State counted = t.with(t.phase, t.ejectedUntilNanos, t.warmingSinceNanos, t.ejections, down,
            t.sourceUnhealthy, 0, failures);
        return down && !t.probedUnhealthy && t.phase != HealthPhase.EJECTED
            ? counted.with(HealthPhase.UNHEALTHY, 0, SlowStart.NOT_WARMING, counted.ejections, true,
                counted.sourceUnhealthy, 0, failures)
            : counted;
      }
      case SOURCE_HEALTHY:
      case SOURCE_UNHEALTHY: {
        boolean sick = event == Event.SOURCE_UNHEALTHY;
        if (sick == t.sourceUnhealthy) {
          return t;
        }
        State flagged = t.with(t.phase, t.ejectedUntilNanos, t.warmingSinceNanos, t.ejections, t.probedUnhealthy,
            sick, t.probePasses, t.probeFailures);
        if (t.phase == HealthPhase.EJECTED || t.phase == HealthPhase.HALF_OPEN) {
          return flagged; // passive health decides first; the flag applies when it is done
        }
        return sick ? flagged.settled(now, slow) : returning(flagged, now, slow);
      }
      default:
        throw new AssertionError(event);
    }
  }

  /** Applies what time alone changes: an ended ejection becomes a trial, an ended warm-up healthy. */
  private static State timePassed(State s, long now, Rules rules) {
    if (s.phase == HealthPhase.EJECTED && now - s.ejectedUntilNanos >= 0) {
      return halfOpen(s, s.ejectedUntilNanos, rules.slowStart);
    }
    if (s.phase == HealthPhase.WARMING && !rules.slowStart.warming(s.warmingSinceNanos, now)) {
      return s.with(HealthPhase.HEALTHY, 0, SlowStart.NOT_WARMING, s.ejections, s.probedUnhealthy, s.sourceUnhealthy,
          s.probePasses, s.probeFailures);
    }
    return s;
  }

  /** On trial from {@code at} (the end of the ejection), warming from then if slow start is on. */
  private static State halfOpen(State s, long at, SlowStart slow) {
    return s.with(HealthPhase.HALF_OPEN, 0, slow.startAt(at), s.ejections, s.probedUnhealthy, s.sourceUnhealthy,
        s.probePasses, s.probeFailures);
  }

  /** Leaving UNHEALTHY: warm up from now, unless another flag keeps it out. */
  private static State returning(State s, long now, SlowStart slow) {
    if (s.phase != HealthPhase.UNHEALTHY || s.probedUnhealthy || s.sourceUnhealthy) {
      return s.settled(now, slow);
    }
    return s.with(HealthPhase.HEALTHY, 0, slow.startAt(now), s.ejections, false, false, s.probePasses,
        s.probeFailures).settled(now, slow);
  }

  @Override
  public String toString() {
    return state.phase.toString();
  }
}
