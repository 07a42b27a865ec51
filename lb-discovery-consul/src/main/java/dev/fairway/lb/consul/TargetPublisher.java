package dev.fairway.lb.consul;

import dev.fairway.lb.Target;
import dev.fairway.lb.internal.DiscoveryMetrics;
import dev.fairway.lb.internal.TargetListPublisher;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The list one source publishes: it merges the health watch's targets with each one's round-trip time
 * from the coordinate watch and hands the result to lb-core's shared {@link TargetListPublisher}, which
 * compares it with the current list and calls the subscribers only on a real change (ids, addresses,
 * weights, zones, health, metadata, round-trip times; order ignored).
 *
 * <p>Thread-safety: both watches call in on the discovery's loop thread, subscribers from any thread;
 * the merge's state is guarded by one lock, taken before the shared publisher's own (never the other
 * way round), and {@link #targets()} reads one volatile field.
 */
final class TargetPublisher {
  private static final System.Logger LOG = System.getLogger(ConsulTargetSource.class.getName());

  private final String service;
  private final @Nullable String datacenter; // the queried one; null: the agent's own
  private final DiscoveryMetrics metrics;

  private final Object lock = new Object();
  // Guarded by lock: the last list from the health watch (without round-trip times), each target's
  // node, the last coordinate reading, and the nodes whose missing coordinate was counted.
  private @Nullable List<Target> healthTargets;
  private Map<String, String> nodeOf = Map.of();
  private @Nullable NetworkCoordinates coordinates;
  private Set<String> coordinateSkipKeys = Set.of();
  private boolean otherDatacenterLogged;
  private boolean closed;
  private final TargetListPublisher published;

  TargetPublisher(String service, @Nullable String datacenter, DiscoveryMetrics metrics) {
    this.service = service;
    this.datacenter = datacenter;
    this.metrics = metrics;
    this.published = new TargetListPublisher(service, "ConsulTargetSource(" + service + ")", LOG, metrics);
  }

  /** The current list: immutable, sorted by id. */
  List<Target> targets() {
    return published.targets();
  }

  /** Calls {@code listener} with the current list at once, then with every change; closing the result stops it. */
  AutoCloseable subscribe(Consumer<List<Target>> listener) {
    return published.subscribe(listener);
  }

  CompletableFuture<List<Target>> whenReady() {
    return published.whenReady();
  }

  /** The health watch's every good list. */
  void onHealth(List<Target> next, Map<String, String> nodes) {
    synchronized (lock) {
      healthTargets = next;
      nodeOf = nodes;
      publish(withCloseness(next));
    }
  }

  /** The coordinate watch's every good reading; republishes if a round-trip time changed. */
  void onCoordinates(NetworkCoordinates reading) {
    synchronized (lock) {
      coordinates = reading;
      List<Target> h = healthTargets;
      if (h != null && !closed) { // the first list comes from the health watch, never from here
        publish(withCloseness(h));
      }
    }
  }

  /** Drops the subscribers; {@link #whenReady()} fails if it had not completed. {@link #targets()} stays. */
  void close() {
    synchronized (lock) {
      closed = true;
    }
    published.close();
  }

  /**
   * The health watch's targets with each one's estimated round-trip time from the agent's node; as they
   * are (unknown) before the first coordinate reading, or when the source asks another datacenter.
   * Counts and logs each node whose coordinate turns missing or unusable. Called under {@code lock}.
   */
  private List<Target> withCloseness(List<Target> health) {
    NetworkCoordinates c = coordinates;
    if (c == null) {
      return health;
    }
    if (datacenter != null && !datacenter.equals(c.agentDatacenter())) {
      if (!otherDatacenterLogged) {
        LOG.log(Level.INFO, "{0}: no closeness for datacenter {1}: Consul''s LAN coordinates compare nodes of the"
            + " agent''s own datacenter ({2}) only", service, datacenter, c.agentDatacenter());
        otherDatacenterLogged = true;
      }
      return health;
    }
    List<Target> out = new ArrayList<>(health.size());
    Set<String> keys = new HashSet<>();
    for (Target t : health) {
      String node = nodeOf.getOrDefault(t.id(), "");
      long nanos = c.roundTripNanos(node);
      if (nanos < 0) {
        String reason = String.valueOf(c.problem(node));
        String key = node + "/" + reason;
        if (keys.add(key) && !coordinateSkipKeys.contains(key)) {
          LOG.log(Level.WARNING, "{0}: no network coordinate for node {1} ({2}); its instances rank as of unknown"
              + " distance", service, node, reason);
          metrics.skipped(reason);
        }
      }
      out.add(t.withRoundTripTime(nanos < 0 ? null : Duration.ofNanos(nanos)));
    }
    coordinateSkipKeys = keys;
    return out;
  }

  /** Publishes {@code next} when it differs from the current list. Called under {@code lock}. */
  private void publish(List<Target> next) {
    published.publish(next, "Consul now lists no usable instance");
  }
}
