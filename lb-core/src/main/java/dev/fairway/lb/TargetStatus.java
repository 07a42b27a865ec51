package dev.fairway.lb;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/** A point-in-time view of one target, from {@link LoadBalancer#status()}. Immutable. */
public final class TargetStatus {
  private final Target target;
  private final TargetState state;
  private final int inFlight;
  private final double latencyEwmaMillis;
  private final double reportedUtilization;
  private final double reportedInFlight;
  private final double subsetShare;
  private final @Nullable String outReason;
  private final long ejectedForNanos;

  TargetStatus(Target target, TargetState state, int inFlight, double latencyEwmaMillis, double reportedUtilization,
      double reportedInFlight) {
    this(target, state, inFlight, latencyEwmaMillis, reportedUtilization, reportedInFlight, 1.0);
  }

  TargetStatus(Target target, TargetState state, int inFlight, double latencyEwmaMillis, double reportedUtilization,
      double reportedInFlight, double subsetShare) {
    this(target, state, inFlight, latencyEwmaMillis, reportedUtilization, reportedInFlight, subsetShare, null, 0);
  }

  TargetStatus(Target target, TargetState state, int inFlight, double latencyEwmaMillis, double reportedUtilization,
      double reportedInFlight, double subsetShare, @Nullable String outReason, long ejectedForNanos) {
    this.subsetShare = subsetShare;
    this.outReason = outReason;
    this.ejectedForNanos = ejectedForNanos;
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

  /**
   * Why the target is out of service, or null while it is in service: {@code "passive-health"}
   * (ejected after failed calls, see {@link #ejectedFor()}), {@code "active-health"} (its health
   * probes fail) or {@code "discovery"} (its source marks it unhealthy). The last two last until
   * the probes pass again or the source says otherwise, so they have no end time.
   */
  public @Nullable String outReason() {
    return outReason;
  }

  /** How long the target's ejection still lasts; {@link Duration#ZERO} when it is not ejected. */
  public Duration ejectedFor() {
    return Duration.ofNanos(ejectedForNanos);
  }

  @Override
  public String toString() {
    return target.id() + " " + state + " inFlight=" + inFlight + String.format(" ewma=%.2fms", latencyEwmaMillis);
  }
}
