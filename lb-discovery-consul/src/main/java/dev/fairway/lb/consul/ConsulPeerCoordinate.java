package dev.fairway.lb.consul;

import dev.fairway.lb.PeerCoordinate;
import dev.fairway.lb.PeerPosition;
import dev.fairway.lb.Target;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * This client's live place among the passing instances of its own service in Consul, for
 * deterministic subsetting: "I am instance {@code X} of service {@code Y}". Made by
 * {@link ConsulDiscovery#peerCoordinate(String, String)}.
 *
 * <pre>{@code
 * try (ConsulDiscovery consul = ConsulDiscovery.builder().build();
 *      ConsulPeerCoordinate me = consul.peerCoordinate("checkout", "checkout-7")) {  // how this process registered
 *   LoadBalancer orders = LoadBalancer.builder("orders")
 *       .targets(consul.source("orders").build())
 *       .subset(Subset.of(12, me))
 *       .build();
 *   ...
 * }
 * }</pre>
 *
 * <ul>
 *   <li>The position is {@code X}'s index among the ids of {@code Y}'s passing instances, sorted (as
 *       {@code String}s), and the count is their number. Consul's id of an instance is
 *       {@code Service.ID@Node.Node} (see {@link ConsulTargetSource}); {@code X} may be that full id or
 *       the {@code Service.ID} alone, which must then be unique among the passing instances.
 *   <li>Every peer reads the same list from Consul, so peers agree on their positions once their
 *       watches have seen the same change; a peer joining or leaving moves the positions at once.
 *   <li>Empty (the balancer runs without a subset) until Consul's first reply, and while {@code X} is
 *       not among the passing instances (not registered, failing a check, in maintenance) or its
 *       {@code Service.ID} is ambiguous. One log line says so when it becomes empty, and one when it is
 *       placed again; replies that change nothing log nothing. With a registry, the gauges
 *       {@code fairway.discovery.peer.index} (-1 while empty) and {@code fairway.discovery.peer.count}
 *       (the passing instances of {@code Y}), tagged {@code service} and {@code instance}, show it.
 *   <li>What it costs: one passing-only watch of {@code Y} ({@code ?passing}, no closeness), shared by
 *       every coordinate of {@code Y} made from the same discovery, and counted in
 *       {@link ConsulDiscovery#sources()}. A source of {@code Y} built by the application is not shared:
 *       its options (tags, filters, health mode) may differ, and its life is the application's.
 * </ul>
 *
 * <p>Thread-safe. Listeners are called on the discovery's loop thread (the first call on the
 * subscriber's), one change at a time, in order. {@link #close()} stops the watch (when no other
 * coordinate of {@code Y} uses it) and the calls; {@link #current()} keeps the last position. Closing
 * the discovery closes it.
 */
public final class ConsulPeerCoordinate implements PeerCoordinate, AutoCloseable {
  private static final System.Logger LOG = System.getLogger(ConsulPeerCoordinate.class.getName());

  private final String service;
  private final String instanceId;
  private final ConsulDiscovery discovery;
  private final ConsulTargetSource source;
  private final @Nullable MeterRegistry registry;
  private final List<Meter> meters = new ArrayList<>();

  private final Object lock = new Object();
  private final CopyOnWriteArrayList<Consumer<Optional<PeerPosition>>> listeners = new CopyOnWriteArrayList<>();
  // Guarded by lock: whether Consul has answered, the last placement (for the transition log), closed.
  private boolean ready;
  private Placement placement = Placement.UNKNOWN;
  private boolean closed;
  private @Nullable AutoCloseable subscription;

  /** Published via volatile: the current position, and the passing instances it was read from. */
  private volatile Optional<PeerPosition> current = Optional.empty();
  private volatile int peers;

  private enum Placement { UNKNOWN, PLACED, ABSENT, AMBIGUOUS }

  ConsulPeerCoordinate(String service, String instanceId, ConsulDiscovery discovery, ConsulTargetSource source,
      @Nullable MeterRegistry registry) {
    this.service = service;
    this.instanceId = instanceId;
    this.discovery = discovery;
    this.source = source;
    this.registry = registry;
    if (registry != null) {
      meters.add(Gauge.builder("fairway.discovery.peer.index", this,
              c -> c.current.map(PeerPosition::index).orElse(-1))
          .description("this client's index among its service's passing instances; -1: not among them (no subset)")
          .tags("service", service, "instance", instanceId).strongReference(true).register(registry));
      meters.add(Gauge.builder("fairway.discovery.peer.count", this, c -> c.peers)
          .description("passing instances of this client's own service")
          .tags("service", service, "instance", instanceId).strongReference(true).register(registry));
    }
  }

  /** Starts listening; the discovery calls it once the coordinate is registered, so close can find it. */
  void start() {
    AutoCloseable s = source.subscribe(list -> {
      synchronized (lock) {
        if (ready) {
          update(list);
        }
      }
    });
    synchronized (lock) {
      subscription = s;
      if (closed) {
        closeQuietly(s);
        return;
      }
    }
    // The publisher completes readiness after it called its listeners with the first list, and an
    // empty first reply calls no listener at all: the first position comes from here.
    // (A source closed first fails the future: no position, nothing to report.)
    var unused = source.whenReady().thenRun(() -> {
      synchronized (lock) {
        if (!ready && !closed) {
          ready = true;
          update(source.targets());
        }
      }
    });
  }

  @Override
  public Optional<PeerPosition> current() {
    return current;
  }

  @Override
  public AutoCloseable subscribe(Consumer<Optional<PeerPosition>> listener) {
    if (listener == null) {
      throw new IllegalArgumentException("listener: null (expected: a Consumer)");
    }
    synchronized (lock) {
      listener.accept(current);
      if (!closed) {
        listeners.add(listener);
      }
    }
    return () -> listeners.remove(listener);
  }

  /** The service whose instances this client counts itself among. */
  public String service() {
    return service;
  }

  /** The instance this client is, as given. */
  public String instanceId() {
    return instanceId;
  }

  /** Stops the calls, and the watch when no other coordinate of the service uses it. Idempotent. */
  @Override
  public void close() {
    AutoCloseable s;
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      listeners.clear();
      s = subscription;
    }
    if (s != null) {
      closeQuietly(s);
    }
    discovery.releasePeerSource(this, source);
    if (registry != null) {
      for (Meter m : meters) {
        registry.remove(m);
      }
    }
  }

  @Override
  public String toString() {
    return "ConsulPeerCoordinate{service=" + service + ", instance=" + instanceId + ", position="
        + current.map(p -> p.index() + "/" + p.count()).orElse("none") + "}";
  }

  /** Reads the position from one passing-only list (sorted by id); publishes and logs a change. Under lock. */
  private void update(List<Target> passing) {
    if (closed) {
      return;
    }
    List<String> ids = new ArrayList<>(passing.size());
    for (Target t : passing) {
      ids.add(t.id());
    }
    ids.sort(null);
    peers = ids.size();
    List<Integer> matches = matches(ids, instanceId);
    Placement next;
    Optional<PeerPosition> position;
    if (matches.size() == 1) {
      next = Placement.PLACED;
      position = Optional.of(new PeerPosition(matches.get(0), ids.size()));
    } else {
      next = matches.isEmpty() ? Placement.ABSENT : Placement.AMBIGUOUS;
      position = Optional.empty();
    }
    if (next != placement) {
      logTransition(next, matches, ids);
      placement = next;
    }
    if (!position.equals(current)) {
      current = position;
      for (Consumer<Optional<PeerPosition>> l : listeners) {
        try {
          l.accept(position);
        } catch (RuntimeException e) {
          LOG.log(Level.WARNING, service + ": a peer position listener failed", e);
        }
      }
    }
  }

  /**
   * The indexes in {@code sortedIds} of the instance {@code wanted} names: its full id
   * ({@code Service.ID@Node}) if present, else every id whose {@code Service.ID} part is {@code wanted}.
   */
  static List<Integer> matches(List<String> sortedIds, String wanted) {
    int exact = sortedIds.indexOf(wanted);
    if (exact >= 0) {
      return List.of(exact);
    }
    List<Integer> out = new ArrayList<>(1);
    for (int i = 0; i < sortedIds.size(); i++) {
      String id = sortedIds.get(i);
      int at = id.lastIndexOf('@'); // node names carry no '@'; a service id may
      if (at > 0 && id.regionMatches(0, wanted, 0, at) && wanted.length() == at) {
        out.add(i);
      }
    }
    return out;
  }

  private void logTransition(Placement next, List<Integer> matches, List<String> ids) {
    switch (next) {
      case PLACED -> {
        if (placement != Placement.UNKNOWN) { // the first placement is the expected case: no line
          LOG.log(Level.INFO, "{0}: instance {1} is now {2} of {3} passing instances; subsetting on", service,
              instanceId, matches.get(0), ids.size());
        }
      }
      case ABSENT -> LOG.log(Level.WARNING, "{0}: instance {1} is not among the {2} passing instances in Consul (not"
          + " registered, failing a check or in maintenance); balancing over every target, without a subset",
          service, instanceId, ids.size());
      case AMBIGUOUS -> {
        List<String> named = new ArrayList<>();
        for (int i : matches) {
          named.add(ids.get(i));
        }
        LOG.log(Level.WARNING, "{0}: instance {1} names {2} passing instances {3}; give the full id"
            + " <Service.ID>@<Node>; balancing over every target, without a subset", service, instanceId,
            matches.size(), named);
      }
      default -> { }
    }
  }

  private void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception e) {
      LOG.log(Level.WARNING, service + ": could not stop listening", e);
    }
  }
}
