package dev.fairway.lb;

import io.micrometer.core.instrument.MeterRegistry;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;

/**
 * The {@code balancer} tag values in use, per registry: two open balancers that would carry the same
 * value into one registry would share, and then remove each other's, meters. The first to claim a
 * name gets it as it is; a second open one gets {@code name#2}, a third {@code name#3} (the lowest free
 * number, so a process that builds its balancers in the same order after a restart gets the same
 * tags again). The first clash of a name in a registry is logged; later ones are not, so a process that
 * deliberately opens many balancers of one service logs one line. A name is free again once its
 * balancer closes.
 *
 * <p>Thread-safety: every method holds the class lock; claims happen when a balancer is built or
 * closed, never on the pick path. Registries are held weakly (by identity: registries do not override
 * {@code equals}), so a registry dropped with balancers still open leaks nothing here.
 */
final class BalancerNames {
  private static final System.Logger LOG = System.getLogger(LoadBalancer.class.getName());
  private static final Map<MeterRegistry, Set<String>> LIVE = new WeakHashMap<>();
  /** The names whose clash was logged, per registry; kept while the registry lives (one entry a name). */
  private static final Map<MeterRegistry, Set<String>> WARNED = new WeakHashMap<>();

  private BalancerNames() {}

  /** Claims {@code wanted} in {@code registry}, or the first free {@code wanted#n} (n from 2). */
  static synchronized String claim(MeterRegistry registry, String wanted) {
    Set<String> live = LIVE.computeIfAbsent(registry, r -> new HashSet<>());
    if (live.add(wanted)) {
      return wanted;
    }
    for (int n = 2; ; n++) {
      String name = wanted + "#" + n;
      if (live.add(name)) {
        if (WARNED.computeIfAbsent(registry, r -> new HashSet<>()).add(wanted)) {
          LOG.log(System.Logger.Level.WARNING, "another open balancer already carries balancer=\"{0}\" in this meter"
              + " registry; this one''s meters carry balancer=\"{1}\" (give each balancer its own name(); logged once"
              + " per name)", wanted, name);
        }
        return name;
      }
    }
  }

  /** Frees {@code name} in {@code registry}; nothing if it was not claimed there. */
  static synchronized void release(MeterRegistry registry, String name) {
    Set<String> live = LIVE.get(registry);
    if (live != null && live.remove(name) && live.isEmpty()) {
      LIVE.remove(registry);
    }
  }
}
