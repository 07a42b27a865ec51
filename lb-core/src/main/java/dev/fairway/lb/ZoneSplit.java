package dev.fairway.lb;

import org.jspecify.annotations.Nullable;

/**
 * How one snapshot's calls divide between the balancer's local zone and the other zones: the two
 * sides' targets and the share of calls that stays local. Computed at rebuild time by {@link
 * #of}, a pure function of the members, their health and the previous split; immutable.
 *
 * <p>The rule. A client-side balancer does not know how its own callers are spread over the zones
 * (Envoy reads that from the caller cluster's membership; we have none). It assumes the one thing a
 * deployment usually gets right: each zone's targets were sized for the callers in that zone, so the
 * callers are spread like the targets' configured capacity (weights). Under that assumption every
 * zone's callers keep all their calls at home while their zone is at least as healthy as the fleet,
 * and a zone that is less healthy keeps the fraction its health affords:
 *
 * <pre>
 *   local share = min(1, (healthy local capacity / local capacity) / (healthy capacity / capacity))
 * </pre>
 *
 * where capacity is the sum of weights (effective weights, so a warming target counts for its slow
 * start share). This is Envoy's "local percentage" rule with the caller side's zone percentage taken
 * to be the target side's configured one: when zone A (2 of 4 targets) loses one target, A keeps
 * (1/2) / (3/4) = 2/3 of its calls and spills 1/3; with B's callers all staying home, every one of
 * the three live targets then carries the same load. The surplus goes to the other zones through
 * the strategy itself, run over their targets together, so it spreads as the strategy spreads it (in
 * proportion to weight for the weighted ones, to load for the load-aware ones), never onto one zone
 * or one target at once.
 *
 * <p>Stability. Losing capacity spills at once, at the rebuild that saw the loss: the calls have
 * nowhere else to go. Regaining it brings calls back only stepwise: once the local share has held
 * for {@link #RISE_INTERVAL_NANOS} it rises by at most {@link #RISE_STEP} per interval, so a target
 * that just came back from an ejection is not handed its zone's whole share at once (which would
 * eject it again and swing the traffic back and forth). The zone selector's review time
 * ({@link #nextRiseAtNanos}, published with the snapshot) schedules the steps; nothing on the pick
 * path measures time for this.
 *
 * <p>Panic, per zone and overall: a zone short of healthy targets sheds its calls to the others by
 * the rule above (its panic is the spill; its unhealthy targets get no calls while other zones can
 * serve). Only when the whole fleet is below the panic threshold do calls go to unhealthy targets,
 * and then, as in Envoy, across every zone with no preference: no split is made.
 */
final class ZoneSplit {
  /** The most the local share rises per {@link #RISE_INTERVAL_NANOS} while the local zone recovers. */
  static final double RISE_STEP = 0.1;
  static final long RISE_INTERVAL_NANOS = 1_000_000_000L;

  /** The local zone's members and the others', each as a snapshot of its own (never in panic mode). */
  final TargetSnapshot local;
  final TargetSnapshot remote;
  /** The share of calls that stays in the local zone now, 0..1. */
  final double localShare;
  /** Where the rule puts it; above {@link #localShare} while calls are being brought back. */
  final double targetShare;
  /** Ticker time of the last change of {@link #localShare} (or of its last confirmation). */
  final long steadySinceNanos;

  private ZoneSplit(TargetSnapshot local, TargetSnapshot remote, double localShare, double targetShare, long steadySinceNanos) {
    this.local = local;
    this.remote = remote;
    this.localShare = localShare;
    this.targetShare = targetShare;
    this.steadySinceNanos = steadySinceNanos;
  }

  /** The ticker time at which {@link #localShare} must rise again, or Long.MAX_VALUE for never. */
  long nextRiseAtNanos() {
    return localShare < targetShare ? steadySinceNanos + RISE_INTERVAL_NANOS : Long.MAX_VALUE;
  }

  /**
   * The split of {@code whole}, or null when there is nothing to split: in panic mode (then, as in
   * Envoy, calls go everywhere with no zone preference), when nothing is pickable, or when no member
   * is in the local zone or none outside it (then picks run over every pickable target as without
   * zones).
   *
   * @param previous the split of the snapshot being replaced, or null
   */
  static @Nullable ZoneSplit of(String localZone, TargetSnapshot whole, @Nullable ZoneSplit previous) {
    if (whole.panic || whole.pickable.length == 0) {
      return null;
    }
    TrackedTarget[] members = whole.members;
    TrackedTarget[] pickable = whole.pickable;
    long[] weights = whole.weights;
    long now = whole.builtAtNanos;
    int localMembers = 0;
    long localCapacity = 0;
    long capacity = 0;
    for (TrackedTarget t : members) {
      long w = 100L * t.target.weight();
      capacity += w;
      if (localZone.equals(t.target.zone())) {
        localMembers++;
        localCapacity += w;
      }
    }
    if (localMembers == 0 || localMembers == members.length) {
      return null;
    }
    int localPickable = 0;
    long localHealthy = 0;
    long healthy = 0;
    for (int i = 0; i < pickable.length; i++) {
      healthy += weights[i];
      if (localZone.equals(pickable[i].target.zone())) {
        localPickable++;
        localHealthy += weights[i];
      }
    }
    TargetSnapshot local = side(localZone, true, localMembers, localPickable, whole);
    TargetSnapshot remote = side(localZone, false, members.length - localMembers, pickable.length - localPickable,
        whole);
    double target = targetShare(localHealthy, localCapacity, healthy, capacity, remote.pickable.length > 0);
    if (previous == null || target <= previous.localShare) {
      return new ZoneSplit(local, remote, target, target, now);
    }
    if (now - previous.steadySinceNanos < RISE_INTERVAL_NANOS) {
      return new ZoneSplit(local, remote, previous.localShare, target, previous.steadySinceNanos);
    }
    return new ZoneSplit(local, remote, Math.min(target, previous.localShare + RISE_STEP), target, now);
  }

  /** The rule of the class comment; 1 when the other zones have nothing pickable. */
  static double targetShare(long localHealthy, long localCapacity, long healthy, long capacity, boolean remoteServes) {
    if (!remoteServes) {
      return 1.0;
    }
    if (localHealthy == 0) {
      return 0.0;
    }
    // (lh / lc) / (h / c) without losing precision to small fractions.
    return Math.min(1.0, ((double) localHealthy * capacity) / ((double) localCapacity * healthy));
  }

  private static TargetSnapshot side(String localZone, boolean isLocal, int memberCount, int pickableCount,
      TargetSnapshot whole) {
    TrackedTarget[] members = whole.members;
    TrackedTarget[] pickable = whole.pickable;
    TrackedTarget[] m = new TrackedTarget[memberCount];
    boolean[] mp = new boolean[memberCount];
    int k = 0;
    for (int i = 0; i < members.length; i++) {
      if (localZone.equals(members[i].target.zone()) == isLocal) {
        mp[k] = whole.memberPickable[i];
        m[k++] = members[i];
      }
    }
    TrackedTarget[] p = new TrackedTarget[pickableCount];
    long[] w = new long[pickableCount];
    boolean[] trial = new boolean[pickableCount];
    k = 0;
    for (int i = 0; i < pickable.length; i++) {
      if (localZone.equals(pickable[i].target.zone()) == isLocal) {
        w[k] = whole.weights[i];
        trial[k] = whole.onTrial[i];
        p[k++] = pickable[i];
      }
    }
    return new TargetSnapshot(whole.membershipVersion, m, mp, p, w, trial, false, whole.reviewAtNanos,
        whole.builtAtNanos, "");
  }
}
