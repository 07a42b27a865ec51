package dev.fairway.lb.spring;

import dev.fairway.lb.MutableTargetSource;
import dev.fairway.lb.Target;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.cloud.client.ServiceInstance;

/**
 * Turns a service's discovered {@link ServiceInstance}s into Fairway {@link Target}s and keeps a
 * {@link MutableTargetSource} up to date with them. From each instance: {@code getInstanceId()} (else
 * {@code host:port}) is the target's id, metadata {@code weight} its weight and metadata {@code zone}
 * its zone; all metadata is kept on the target.
 *
 * <p>Bad data is skipped entry by entry: an instance without a usable host or port, with a weight
 * that is not an integer in 1..1000000, or with an id already seen in the same list is left out,
 * counted in {@code fairway.discovery.skipped} (tags {@code service}, {@code reason} = {@code
 * address}, {@code weight} or {@code duplicate}; the name every discovery module counts such entries
 * under) and logged (once for each new set of rejections, not
 * on every list). A list whose every entry is bad changes nothing: the last good list stays in
 * service. An empty list is taken as it is.
 *
 * <p>{@link #update} is cheap when the list is the very object it saw last (Spring Cloud
 * LoadBalancer's caching supplier hands out one list object until its cache expires), and
 * otherwise rebuilds the targets; the source itself ignores a list equal to the current one.
 * Thread-safe: updates are serialised.
 */
final class InstanceTargets {
  private static final Log LOG = LogFactory.getLog(InstanceTargets.class);

  private final String service;
  private final @Nullable MeterRegistry registry;
  private final Map<String, Counter> rejectedCounters = new HashMap<>(); // guarded by this
  private @Nullable List<? extends ServiceInstance> lastSeen; // guarded by this
  private String lastRejections = ""; // guarded by this
  private volatile @Nullable MutableTargetSource source;
  private volatile Map<String, ServiceInstance> byId = Map.of();
  private volatile Map<String, ServiceInstance> previousById = Map.of();
  private final LongSupplier ticker;
  private volatile long listSinceNanos;
  private volatile boolean listSeen;
  private volatile int listSize;

  InstanceTargets(String service, @Nullable MeterRegistry registry, LongSupplier ticker) {
    this.service = service;
    this.registry = registry;
    this.ticker = ticker;
  }

  /**
   * How long ago the current instance list arrived (a list object not seen before: a new read of
   * discovery, or the end of the caching supplier's cache); negative before the first one.
   */
  long listAgeNanos() {
    return listSeen ? ticker.getAsLong() - listSinceNanos : -1;
  }

  /** The size of the last list read, bad entries included. */
  int listSize() {
    return listSize;
  }

  /**
   * Takes a new list of instances. Returns the source the first time a list yields targets (so the
   * caller can build its balancer on it), null otherwise.
   */
  @Nullable MutableTargetSource update(List<? extends ServiceInstance> instances) {
    synchronized (this) {
      if (instances == lastSeen) {
        return null;
      }
      lastSeen = instances;
      listSinceNanos = ticker.getAsLong();
      listSize = instances.size();
      listSeen = true;
      List<Target> targets = new ArrayList<>(instances.size());
      Map<String, ServiceInstance> ids = new HashMap<>();
      StringBuilder why = new StringBuilder();
      for (ServiceInstance instance : instances) {
        String reason = null;
        Target t = null;
        try {
          t = toTarget(instance);
        } catch (IllegalArgumentException e) {
          reason = e.getMessage() != null && e.getMessage().startsWith("weight") ? "weight" : "address";
          why.append(describe(instance)).append(": ").append(e.getMessage()).append("; ");
        }
        if (t != null && ids.containsKey(t.id())) {
          reason = "duplicate";
          why.append(describe(instance)).append(": id ").append(t.id()).append(" seen twice; ");
          t = null;
        }
        if (reason != null) {
          rejected(reason);
        } else if (t != null) {
          targets.add(t);
          ids.put(t.id(), instance);
        }
      }
      String rejected = why.toString();
      if (!rejected.isEmpty() && !rejected.equals(lastRejections)) {
        LOG.warn("Fairway: skipped instances of " + service + ": " + rejected
            + (targets.isEmpty() ? "no usable instance left, keeping the last good list" : ""));
      }
      lastRejections = rejected;
      if (targets.isEmpty() && !instances.isEmpty()) {
        return null; // every entry bad: the last good list stays
      }
      previousById = byId;
      byId = Map.copyOf(ids);
      MutableTargetSource current = source;
      if (current != null) {
        current.set(targets);
        return null;
      }
      if (targets.isEmpty()) {
        return null; // build the balancer on the first real list, so that list is its first one
      }
      MutableTargetSource created = new MutableTargetSource(targets);
      source = created;
      return created;
    }
  }

  /** The source, created empty if no list with usable instances came yet (later lists fill it). */
  MutableTargetSource sourceOrEmpty() {
    synchronized (this) {
      MutableTargetSource s = source;
      if (s == null) {
        s = new MutableTargetSource(java.util.List.of());
        source = s;
      }
      return s;
    }
  }

  /** The discovered instance behind {@code target}, or one rebuilt from its address if it just left. */
  ServiceInstance instanceOf(Target target) {
    ServiceInstance s = byId.get(target.id());
    if (s == null) {
      s = previousById.get(target.id());
    }
    if (s == null) {
      s = new org.springframework.cloud.client.DefaultServiceInstance(target.id(), service, target.host(),
          target.port(), false, target.metadata());
    }
    return s;
  }

  /** The target of an instance that this service's lists hold, or null. */
  @Nullable Target targetOf(ServiceInstance instance) {
    MutableTargetSource s = source;
    if (s == null) {
      return null;
    }
    String id = idOf(instance);
    for (Target t : s.targets()) {
      if (t.id().equals(id)) {
        return t;
      }
    }
    return null;
  }

  static String idOf(ServiceInstance instance) {
    String id = instance.getInstanceId();
    return id != null && !id.isBlank() ? id : instance.getHost() + ":" + instance.getPort();
  }

  /** One instance as a target; IllegalArgumentException naming the bad field. */
  static Target toTarget(ServiceInstance instance) {
    Map<String, String> metadata = instance.getMetadata() == null ? Map.of() : instance.getMetadata();
    Target t = Target.of(instance.getHost(), instance.getPort());
    String id = instance.getInstanceId();
    if (id != null && !id.isBlank()) {
      t = t.withId(id);
    }
    String weight = metadata.get("weight");
    if (weight != null) {
      int w;
      try {
        w = Integer.parseInt(weight.trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("weight: \"" + weight + "\" (expected: an integer 1.." + Target.MAX_WEIGHT + ")");
      }
      t = t.withWeight(w);
    }
    String zone = metadata.get("zone");
    if (zone != null) {
      t = t.withZone(zone);
    }
    return metadata.isEmpty() ? t : t.withMetadata(metadata);
  }

  private static String describe(ServiceInstance instance) {
    return instance.getInstanceId() != null ? instance.getInstanceId() : instance.getHost() + ":" + instance.getPort();
  }

  private void rejected(String reason) {
    MeterRegistry r = registry;
    if (r == null) {
      return;
    }
    rejectedCounters.computeIfAbsent(reason, why -> Counter.builder("fairway.discovery.skipped")
        .description("Discovered entries that could not become targets")
        .tag("service", service).tag("reason", why).register(r)).increment();
  }
}
