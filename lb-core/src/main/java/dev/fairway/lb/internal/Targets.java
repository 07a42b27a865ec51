package dev.fairway.lb.internal;

import dev.fairway.lb.Target;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Comparisons of target lists. Not public API (see the package documentation). */
public final class Targets {
  private Targets() {}

  /**
   * True if both lists hold the same targets (by id) with the same address, weight, zone, health,
   * round-trip time and metadata, in any order. A source publishes only when this is false, so listeners are not
   * woken for nothing.
   */
  public static boolean sameTargets(List<Target> a, List<Target> b) {
    if (a.size() != b.size()) {
      return false;
    }
    Map<String, Target> byId = new HashMap<>();
    for (Target t : a) {
      byId.put(t.id(), t);
    }
    for (Target t : b) {
      Target old = byId.get(t.id());
      if (old == null || !sameAs(old, t)) {
        return false;
      }
    }
    return true;
  }

  /** True if both are the same instance with nothing changed: id, address, weight, zone, health, round-trip time, metadata. */
  public static boolean sameAs(Target a, Target b) {
    return a.id().equals(b.id())
        && a.host().equals(b.host())
        && a.port() == b.port()
        && a.weight() == b.weight()
        && a.zone().equals(b.zone())
        && a.healthy() == b.healthy()
        && a.roundTripNanos() == b.roundTripNanos()
        && a.metadata().equals(b.metadata());
  }
}
