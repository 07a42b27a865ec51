package dev.fairway.lb;

import org.jspecify.annotations.Nullable;

/**
 * Builds the {@link TargetSnapshot} for a membership at a moment: which members are pickable (in
 * service, or all of them in panic mode), their effective weights (slow start), the next time the
 * snapshot must be looked at again, and the strategy's selector. A pure function of its inputs: it
 * reads health phases as of {@code now} and changes no state, so it is tested without a balancer.
 * With a local zone it also computes the {@link ZoneSplit} (outside panic mode).
 */
final class SnapshotBuilder {
  private final int panicThresholdPercent;
  private final SlowStart slowStart;
  /** The zone whose targets are preferred; "" for no zone-aware routing (no split is computed). */
  private final String localZone;

  SnapshotBuilder(int panicThresholdPercent, SlowStart slowStart) {
    this(panicThresholdPercent, slowStart, "");
  }

  SnapshotBuilder(int panicThresholdPercent, SlowStart slowStart, String localZone) {
    this.panicThresholdPercent = panicThresholdPercent;
    this.slowStart = slowStart;
    this.localZone = localZone;
  }

  /** The snapshot a closed balancer serves: nothing pickable, and the reason says so. */
  static TargetSnapshot closed(StrategyInstance strategy) {
    TrackedTarget[] none = new TrackedTarget[0];
    return new TargetSnapshot(-1, none, new boolean[0], none, new long[0], false, 0, Long.MAX_VALUE,
        "the balancer is closed", null, strategy, null);
  }

  TargetSnapshot build(Membership membership, long now, StrategyInstance strategy, @Nullable Selector previous) {
    TrackedTarget[] m = membership.members;
    HealthPhase[] phases = new HealthPhase[m.length];
    long reviewAt = Long.MAX_VALUE;
    int inService = 0;
    for (int i = 0; i < m.length; i++) {
      TargetHealth.State s = m[i].health.state();
      HealthPhase p = m[i].health.phaseAt(now);
      phases[i] = p;
      if (p == HealthPhase.EJECTED) {
        reviewAt = Math.min(reviewAt, s.ejectedUntilNanos);
      } else if (p != s.phase) {
        reviewAt = now; // a time-derived change is due: the updater applies it at the next look
      }
      if (p.inService()) {
        inService++;
      }
    }
    boolean panic = m.length > 0 && inService * 100L < (long) panicThresholdPercent * m.length;
    int count = panic ? m.length : inService;
    TrackedTarget[] pickable = new TrackedTarget[count];
    boolean[] memberPickable = new boolean[m.length];
    long[] weights = new long[count];
    boolean[] trial = new boolean[count];
    int trials = 0;
    int k = 0;
    for (int i = 0; i < m.length; i++) {
      if (!panic && !phases[i].inService()) {
        continue;
      }
      TrackedTarget t = m[i];
      memberPickable[i] = true;
      long since = t.health.state().warmingSinceNanos;
      weights[k] = slowStart.weight(t.target.weight(), since, now);
      if (slowStart.warming(since, now)) {
        reviewAt = Math.min(reviewAt, slowStart.nextStepAt(since, now));
      }
      if (phases[i] == HealthPhase.HALF_OPEN) {
        trial[k] = true;
        trials++;
      }
      pickable[k++] = t;
    }
    String reason = "";
    if (count == 0) {
      reason = m.length == 0
          ? (membership.sawTargets ? "no targets known (the target source's list is empty)"
              : "no targets known yet (the target source has not delivered a list)")
          : "all " + m.length + " targets are unhealthy or ejected";
    }
    ZoneSplit split = null;
    if (!localZone.isEmpty() && !panic && count > 0) {
      split = ZoneSplit.of(localZone, m, memberPickable, pickable, weights, trial, now,
          previous instanceof ZoneAwareInstance.ZoneSelector z ? z.split : null);
      if (split != null) {
        reviewAt = Math.min(reviewAt, split.nextRiseAtNanos());
      }
    }
    return new TargetSnapshot(membership.version, m, memberPickable, pickable, weights, panic, trials, reviewAt,
        reason, split, strategy, previous);
  }
}
