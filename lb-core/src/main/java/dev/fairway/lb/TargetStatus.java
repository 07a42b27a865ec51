package dev.fairway.lb;

/** A point-in-time view of one target, from {@link LoadBalancer#status()}. Immutable. */
public final class TargetStatus {
  private final Target target;
  private final TargetState state;
  private final int inFlight;
  private final double latencyEwmaMillis;
  private final double reportedUtilization;
  private final double reportedInFlight;
  private final double subsetShare;

  TargetStatus(Target target, TargetState state, int inFlight, double latencyEwmaMillis, double reportedUtilization,
      double reportedInFlight) {
    this(target, state, inFlight, latencyEwmaMillis, reportedUtilization, reportedInFlight, 1.0);
  }

  TargetStatus(Target target, TargetState state, int inFlight, double latencyEwmaMillis, double reportedUtilization,
      double reportedInFlight, double subsetShare) {
    this.subsetShare = subsetShare;
    this.target = target;
    this.state = state;
    this.inFlight = inFlight;
    this.latencyEwmaMillis = latencyEwmaMillis;
    this.reportedUtilization = reportedUtilization;
    this.reportedInFlight = reportedInFlight;
  }

  public Target target() {
    return target;
  }

  public TargetState state() {
    return state;
  }

  /** Calls picked for this target and not yet completed. */
  public int inFlight() {
    return inFlight;
  }

  /** The time-decayed latency average in milliseconds; 0 before the first completed call. */
  public double latencyEwmaMillis() {
    return latencyEwmaMillis;
  }

  /**
   * The utilization of the target's latest load report ({@link Pick#reportLoad}) while that report
   * is fresh (5 s); NaN when there is none, it had no utilization, or it expired.
   */
  public double reportedUtilization() {
    return reportedUtilization;
  }

  /**
   * The calls in flight from every client of the target's latest load report while that report is
   * fresh (5 s); NaN when there is none, it had no such count, or it expired.
   */
  public double reportedInFlight() {
    return reportedInFlight;
  }

  /**
   * How much of this target the balancer's {@link Subset} window holds, 0..1: 1 for a target wholly
   * inside it (and for every target without a subset), 0 for one outside, a fraction at the window's
   * edges (the share of its weight the strategy sees). A target with a share above 0 is one this
   * client connects to.
   */
  public double subsetShare() {
    return subsetShare;
  }

  @Override
  public String toString() {
    return target.id() + " " + state + " inFlight=" + inFlight + String.format(" ewma=%.2fms", latencyEwmaMillis);
  }
}
