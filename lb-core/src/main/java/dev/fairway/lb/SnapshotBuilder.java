package dev.fairway.lb;

/**
 * Builds the {@link TargetSnapshot} for a membership at a moment: which members are pickable (in
 * service, or all of them in panic mode), their effective weights (slow start), which are on
 * trial, and the next time the snapshot must be looked at again. A pure function of its inputs: it
 * reads health phases as of {@code now} and changes no state, so it is tested without a balancer.
 * It knows nothing of strategies or zones: the strategy turns the snapshot into a selector.
 */
final class SnapshotBuilder {
  private final int panicThresholdPercent;
  private final SlowStart slowStart;

  SnapshotBuilder(int panicThresholdPercent, SlowStart slowStart) {
    this.panicThresholdPercent = panicThresholdPercent;
    this.slowStart = slowStart;
  }

  /** The snapshot a closed balancer serves: nothing pickable, and the reason says so. */
  static TargetSnapshot closed() {
    TrackedTarget[] none = new TrackedTarget[0];
    return new TargetSnapshot(-1, none, new boolean[0], none, new long[0], new boolean[0], false, Long.MAX_VALUE,
        0, "the balancer is closed");
  }

  TargetSnapshot build(Membership membership, long now) {
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
    return new TargetSnapshot(membership.version, m, memberPickable, pickable, weights, trial, panic, reviewAt, now,
        reason);
  }
}
