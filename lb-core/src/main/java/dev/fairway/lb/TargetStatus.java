package dev.fairway.lb;

/** A point-in-time view of one target, from {@link LoadBalancer#status()}. Immutable. */
public final class TargetStatus {
  private final Target target;
  private final TargetState state;
  private final int inFlight;
  private final double latencyEwmaMillis;

  TargetStatus(Target target, TargetState state, int inFlight, double latencyEwmaMillis) {
    this.target = target;
    this.state = state;
    this.inFlight = inFlight;
    this.latencyEwmaMillis = latencyEwmaMillis;
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

  @Override
  public String toString() {
    return target.id() + " " + state + " inFlight=" + inFlight + String.format(" ewma=%.2fms", latencyEwmaMillis);
  }
}
