package dev.fairway.lb.consul;

import static dev.fairway.lb.internal.Args.quote;
import static dev.fairway.lb.internal.Args.requireArgument;
import static dev.fairway.lb.internal.Args.requireUnset;

import dev.fairway.lb.Target;
import dev.fairway.lb.TargetSource;
import dev.fairway.lb.internal.DiscoveryMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A live list of a service's instances from Consul's health API
 * ({@code GET /v1/health/service/<name>}), kept current with blocking queries.
 *
 * <pre>{@code
 * ConsulTargetSource orders = ConsulTargetSource.builder("orders")   // $CONSUL_HTTP_ADDR, $CONSUL_HTTP_TOKEN, ...
 *     .build();                                    // starts watching at once
 * orders.whenReady().get(5, TimeUnit.SECONDS);     // optional: wait for Consul's first answer
 * LoadBalancer lb = LoadBalancer.builder("orders").targets(orders).build();
 * }</pre>
 *
 * <p>For many services, make the sources from one {@link ConsulDiscovery}: they share its HTTP
 * client and threads. A source built with {@link #builder(String)} has a discovery of its own (a
 * loop thread named {@code fairway-consul-<service>}, one HTTP worker and the JDK HTTP client's
 * selector thread), closed with it.
 *
 * <p>What it does:
 *
 * <ul>
 *   <li>Blocking queries ({@code index} + {@code wait}, default 5 minutes) see a registration,
 *       deregistration or health change as soon as Consul knows it. The read timeout is
 *       {@code wait + wait/16} plus a margin, above Consul's jitter. What one source costs the agent:
 *       one connection and one blocking query at a time (see {@link ConsulDiscovery}).
 *   <li>Instances count as their worst check, node checks included. Passing ones get
 *       {@code Weights.Passing}, warning ones {@code Weights.Warning}; critical ones (maintenance
 *       included) are passed on as {@linkplain Target#healthy() unhealthy} targets, which the balancer
 *       uses only in panic mode. {@link Builder#passingOnly()} asks Consul with {@code ?passing}
 *       instead, which leaves out warning and critical instances.
 *   <li>Target id = {@code Service.ID@Node} (stable from the first sight); host =
 *       {@code Service.Address}, else {@code Node.Address}; port = {@code Service.Port}; zone =
 *       {@code Service.Meta[zoneMetadataKey]}; metadata = {@code Service.Meta} plus {@code tags}. Each
 *       entry is read on its own: one that cannot be a target is skipped with a warning and the
 *       {@code fairway.discovery.skipped} metric, and the others are published.
 *   <li>Subscribers hear only real changes (ids, addresses, weights, zones, health, metadata; order
 *       ignored).
 *   <li>On any error the last good list stays, the error is counted in
 *       {@code fairway.discovery.errors{reason}}, and the loop backs off exponentially with full jitter
 *       (1 s growing to 60 s; reset by a success). A reply Consul filtered to {@code []} by ACL keeps
 *       the last list too, with one warning naming the missing {@code service:read}.
 *   <li>A change reaches the listeners within 1 s of Consul knowing it, whatever came before it. A
 *       reply that brings a new list is delivered at once and the next query goes out at once: a
 *       rolling deploy is seen step by step. Wake-ups that bring the same list under a new index are
 *       spaced out (a token bucket: burst 2, then one query per 500 ms, {@link Builder#rateLimit}), so
 *       a hot index costs the agent at most 2 reads a second and a change that lands during the
 *       spacing waits at most 500 ms. Real changes faster than 10 at once and then 2 a second (a
 *       flapping check) damp the watch to one query per 500 ms until the service is quiet for a
 *       second, logged and counted in {@code fairway.discovery.throttled{reason=flapping}}. What
 *       each limit costs the agent at 100 and 1,000 instances: see {@link Builder#rateLimit}.
 *   <li>The ACL token travels only in the {@code X-Consul-Token} header, never in a URL or a log line.
 *   <li>Closeness (on by default, {@link Builder#closeness(boolean)}): each target carries the estimated
 *       round-trip time from the local agent's node to its instance's node,
 *       {@link Target#roundTripTime()}, from Consul's network coordinates ({@code /v1/coordinate/nodes}
 *       and {@code /v1/agent/self}, one shared watch per {@link ConsulDiscovery}) with Serf's formula,
 *       rounded to 0.1 ms. A node without a usable coordinate is unknown (counted in
 *       {@code fairway.discovery.skipped{reason=coordinate_*}}); the first list is published without
 *       waiting for the coordinates, and republished once they arrive.
 * </ul>
 *
 * <p>Thread-safe. Listeners are called on the discovery's loop thread, one change at a time, in order;
 * a slow listener delays the other sources of the same discovery. {@link #close()} cancels the
 * blocking call and stops the watch at once.
 */
public final class ConsulTargetSource implements TargetSource {
  private static final System.Logger LOG = System.getLogger(ConsulTargetSource.class.getName());

  static final Duration DEFAULT_WAIT = Duration.ofMinutes(5);
  static final Duration MAX_WAIT = Duration.ofMinutes(10);
  static final Duration DEFAULT_BACKOFF_INITIAL = Duration.ofSeconds(1);
  static final Duration DEFAULT_BACKOFF_MAX = Duration.ofSeconds(60);
  /**
   * Applied to wake-ups that bring the same list: a token bucket with burst 2, then one query every
   * 500 ms, a short fixed spacing that keeps a change within 1 s (see {@link WakeupLimiter}).
   */
  static final int DEFAULT_BURST = 2;
  static final Duration DEFAULT_REFILL = Duration.ofMillis(500);

  private final String service;
  private final ConsulDiscovery discovery;
  private final boolean ownsDiscovery;
  private final HealthQuery query;
  private final DiscoveryMetrics metrics;
  private final TargetPublisher publisher;
  private final HealthWatch watch;
  private final @Nullable AutoCloseable coordinateSubscription; // null: closeness off
  private final AtomicBoolean closed = new AtomicBoolean();

  /** Wires the parts: the query, the mapper, the limiter and the backoff into a watch, the watch into the publisher. */
  private ConsulTargetSource(Builder b, ConsulDiscovery d, boolean owned) {
    this.service = b.service;
    this.discovery = d;
    this.ownsDiscovery = owned;
    AgentConfig agent = d.agent();
    this.query = new HealthQuery(service, b.passingOnly, List.copyOf(b.tags), b.datacenter, b.filter,
        List.copyOf(b.nodeMeta), b.namespace != null ? b.namespace : agent.namespace(),
        b.partition != null ? b.partition : agent.partition(), b.peer, b.cached, b.maxStale,
        b.wait == null ? DEFAULT_WAIT : b.wait);
    HealthMapper mapper = new HealthMapper(b.zoneMetadataKey == null ? "zone" : b.zoneMetadataKey, b.passingOnly);
    Duration refill = b.refill == null ? DEFAULT_REFILL : b.refill;
    TokenBucket unchanged = new TokenBucket(refill.toNanos(), b.burst == 0 ? DEFAULT_BURST : b.burst, d.ticker());
    Duration initial = b.backoffInitial == null ? DEFAULT_BACKOFF_INITIAL : b.backoffInitial;
    Duration max = b.backoffMax == null ? DEFAULT_BACKOFF_MAX : b.backoffMax;
    Backoff backoff = new Backoff(initial.toNanos(), max.toNanos(), d.random());
    d.register(this);
    this.metrics = b.meterRegistry == null
        ? DiscoveryMetrics.NOOP
        : DiscoveryMetrics.micrometer(b.meterRegistry, service, this::stalenessSeconds, TimeUnit.SECONDS,
            this::targetCount);
    this.publisher = new TargetPublisher(service, query.datacenter(), metrics);
    this.watch = new HealthWatch(query, d.http(), d.scheduler(), d.ticker(), mapper,
        WakeupLimiter.of(unchanged, d.ticker()), backoff, metrics, publisher::onHealth);
    watch.start();
    // Instances imported from a cluster peer sit in another cluster's coordinate space: nothing to compare.
    boolean closeness = (b.closeness == null || b.closeness) && b.peer == null;
    this.coordinateSubscription = closeness ? d.watchCoordinates(new CoordinateWatch.Listener() {
      @Override
      public void coordinates(NetworkCoordinates reading) {
        publisher.onCoordinates(reading);
      }

      @Override
      public void coordinateError(String reason) {
        metrics.error("coordinates_" + reason);
      }
    }) : null;
  }

  /**
   * A builder for a source with a connection of its own to the agent (address and token from the
   * builder, else the environment; see {@link ConsulDiscovery}). For many services, prefer
   * {@link ConsulDiscovery#source(String)}.
   */
  public static Builder builder(String serviceName) {
    return new Builder(serviceName, null);
  }

  @Override
  public List<Target> targets() {
    return publisher.targets();
  }

  @Override
  public AutoCloseable subscribe(Consumer<List<Target>> listener) {
    if (listener == null) {
      throw new IllegalArgumentException("listener: null (expected: a consumer of target lists)");
    }
    return publisher.subscribe(listener);
  }

  /**
   * Completes with the list from Consul's first successful reply, also when that list is empty (but
   * not with a reply Consul emptied by ACL). Fails with {@link CancellationException} if the source is
   * closed first. Await it with a timeout: {@code whenReady().get(5, SECONDS)}.
   */
  @Override
  public CompletableFuture<List<Target>> whenReady() {
    return publisher.whenReady();
  }

  /** The watched service's name. */
  public String service() {
    return service;
  }

  /**
   * Stops the watch: cancels the blocking request, drops the listeners and unregisters the gauges;
   * a source built with {@link #builder(String)} also stops its threads. {@link #targets()} stays
   * readable. Idempotent.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    watch.close();
    AutoCloseable coords = coordinateSubscription;
    if (coords != null) {
      try {
        coords.close();
      } catch (Exception e) {
        LOG.log(Level.WARNING, service + ": could not leave the coordinate watch", e);
      }
    }
    discovery.unregister(this);
    publisher.close();
    metrics.close();
    if (ownsDiscovery) {
      discovery.close();
    }
  }

  @Override
  public String toString() {
    return "ConsulTargetSource{service=" + service + ", consul=" + discovery.consulUrl()
        + (query.tags().isEmpty() ? "" : ", tags=" + query.tags())
        + (query.datacenter() == null ? "" : ", dc=" + query.datacenter())
        + (query.passingOnly() ? ", passingOnly" : "")
        + ", targets=" + targets().size() + "}";
  }

  HealthWatch watch() {
    return watch;
  }

  // The gauges may be read before the constructor has finished.
  private double stalenessSeconds() {
    HealthWatch w = watch;
    return w == null ? 0 : w.stalenessSeconds();
  }

  private double targetCount() {
    TargetPublisher p = publisher;
    return p == null ? 0 : p.targets().size();
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * Configures a {@link ConsulTargetSource}. Every setter validates its argument and names it in the
   * message ({@link IllegalArgumentException}); single-valued options may be set once
   * ({@link IllegalStateException}). Not thread-safe.
   */
  public static final class Builder {
    private final String service;
    private final @Nullable ConsulDiscovery discovery; // null: build() makes one from agent below
    private final ConsulDiscovery.Builder agent = ConsulDiscovery.builder();
    private final Set<String> tags = new LinkedHashSet<>();
    private final List<String> nodeMeta = new ArrayList<>();
    // Unset (null, 0 or false) until its setter is called; build() applies the defaults.
    private @Nullable String datacenter;
    private @Nullable String zoneMetadataKey;
    private boolean passingOnly;
    private @Nullable MeterRegistry meterRegistry;
    private @Nullable Duration wait;
    private @Nullable Duration backoffInitial;
    private @Nullable Duration backoffMax;
    private int burst;
    private @Nullable Duration refill;
    private boolean cached;
    private @Nullable Duration maxStale;
    private @Nullable String filter;
    private @Nullable String namespace;
    private @Nullable String partition;
    private @Nullable String peer;
    private @Nullable Boolean closeness;

    Builder(String service, @Nullable ConsulDiscovery discovery) {
      if (service == null || service.isBlank() || service.contains("/") || !service.equals(service.strip())) {
        throw new IllegalArgumentException("serviceName: " + quote(service)
            + " (expected: a Consul service name, non-blank, no '/' or surrounding spaces)");
      }
      this.service = service;
      this.discovery = discovery;
    }

    /**
     * The Consul agent's HTTP address, such as {@code http://127.0.0.1:8500}. Default:
     * {@code $CONSUL_HTTP_ADDR} (a bare {@code host:port} means http), else
     * {@code http://127.0.0.1:8500}. Not for a builder from {@link ConsulDiscovery#source}: set it there.
     */
    public Builder consulUrl(String url) {
      standaloneOnly("consulUrl");
      agent.consulUrl(url);
      return this;
    }

    /**
     * The ACL token, sent as the {@code X-Consul-Token} header; never put in a URL or logged. Default:
     * {@code $CONSUL_HTTP_TOKEN_FILE}, then {@code $CONSUL_HTTP_TOKEN}. Not for a builder from
     * {@link ConsulDiscovery#source}: set it there.
     */
    public Builder token(String aclToken) {
      standaloneOnly("token");
      agent.token(aclToken);
      return this;
    }

    /** Only instances carrying this tag (Consul matches case-insensitively); call again for more (all must match). */
    public Builder tag(String tag) {
      requireArgument(tag != null && !tag.isBlank(), "tag", tag, "a non-blank tag");
      if (tags.contains(tag)) {
        throw new IllegalStateException("tag " + quote(tag) + " was already added");
      }
      tags.add(tag);
      return this;
    }

    /** Ask this datacenter instead of the agent's own. */
    public Builder datacenter(String dc) {
      requireUnset("datacenter", datacenter);
      this.datacenter = AgentSettings.requireName("datacenter", dc);
      return this;
    }

    /** The {@code Service.Meta} key whose value becomes {@link Target#zone()}. Default {@code zone}. */
    public Builder zoneMetadataKey(String key) {
      requireUnset("zoneMetadataKey", zoneMetadataKey);
      requireArgument(key != null && !key.isBlank(), "zoneMetadataKey", key, "a non-blank key");
      this.zoneMetadataKey = key;
      return this;
    }

    /**
     * Query with {@code ?passing}: only instances whose checks all pass. Warning instances are left
     * out, and critical ones never reach the balancer (not even for its panic mode).
     */
    public Builder passingOnly() {
      this.passingOnly = true;
      return this;
    }

    /** Where the {@code fairway.discovery.*} meters go. Without it, nothing is measured. */
    public Builder meterRegistry(MeterRegistry registry) {
      requireUnset("meterRegistry", meterRegistry);
      requireArgument(registry != null, "meterRegistry", null, "a MeterRegistry");
      this.meterRegistry = registry;
      return this;
    }

    /**
     * The longest time one blocking query waits for a change (Consul's {@code wait}). Default 5
     * minutes, at least 1 second, at most 10 minutes (Consul's own limit).
     */
    public Builder waitTime(Duration wait) {
      requireUnset("waitTime", this.wait);
      requireArgument(wait != null && wait.compareTo(Duration.ofSeconds(1)) >= 0 && wait.compareTo(MAX_WAIT) <= 0,
          "waitTime", wait, "PT1S..PT10M");
      this.wait = wait;
      return this;
    }

    /**
     * Backoff after errors: the n-th consecutive error waits a random time up to
     * {@code min(max, initial * 2^n)}. Default 1 s growing to 60 s.
     */
    public Builder backoff(Duration initial, Duration max) {
      requireUnset("backoff", backoffInitial == null ? null : backoffInitial + ".." + backoffMax);
      requireArgument(initial != null && initial.toMillis() >= 1 && initial.compareTo(Duration.ofHours(1)) <= 0,
          "backoff initial", initial, "PT0.001S..PT1H");
      requireArgument(max != null && max.compareTo(initial) >= 0 && max.compareTo(Duration.ofHours(1)) <= 0,
          "backoff max", max, initial + "..PT1H");
      this.backoffInitial = initial;
      this.backoffMax = max;
      return this;
    }

    /**
     * The token bucket in front of every query that follows a wake-up without a change (the same list
     * under a new index): {@code burst} such queries at once, then one per {@code refillEvery}.
     * Default: burst 2, one per 500 ms. A wake-up that brings a new list is not held back by it; held
     * queries count in {@code fairway.discovery.throttled{reason=unchanged}}.
     *
     * <p>The trade: a change that lands while such a query is held is seen when the hold ends, so
     * {@code refillEvery} is the longest a change can wait (the default keeps every change within
     * 1 s). Its cost: each held-back read is the whole reply, about 1 KB per instance, served once per
     * watching client; at one read per 500 ms that is at most 200 KB/s per client for a service of
     * 100 instances and 2 MB/s for 1,000 instances. {@code rateLimit(2, Duration.ofSeconds(5))} cuts
     * that to a tenth (20 KB/s, 200 KB/s) at the price of up to 5 s before a change is seen.
     */
    public Builder rateLimit(int burst, Duration refillEvery) {
      requireUnset("rateLimit", refill == null ? null : this.burst + " per " + refill);
      requireArgument(burst >= 1 && burst <= 1000, "rateLimit burst", burst, "1..1000");
      requireArgument(refillEvery != null && refillEvery.toNanos() >= 1_000_000
          && refillEvery.compareTo(Duration.ofHours(1)) <= 0, "rateLimit refillEvery", refillEvery, "PT0.001S..PT1H");
      this.burst = burst;
      this.refill = refillEvery;
      return this;
    }

    /**
     * Ask through the agent's cache ({@code ?cached}), which also lets the agent use Consul's
     * streaming backend. The cache's {@code Age} counts into {@code fairway.discovery.staleness}.
     */
    public Builder cached() {
      this.cached = true;
      return this;
    }

    /**
     * Let any server answer ({@code ?stale}), spreading reads off the leader; a reply whose
     * {@code X-Consul-LastContact} is above {@code maxStale} is not used, and the query is repeated at
     * once against the leader (counted as {@code errors{reason=too_stale}}).
     */
    public Builder stale(Duration maxStale) {
      requireUnset("stale", this.maxStale);
      requireArgument(maxStale != null && !maxStale.isNegative() && maxStale.compareTo(Duration.ofHours(1)) <= 0,
          "stale maxStale", maxStale, "PT0S..PT1H");
      this.maxStale = maxStale;
      return this;
    }

    /** A filter expression ({@code ?filter=}), e.g. {@code Service.Meta.env == "prod"}. */
    public Builder filter(String expression) {
      requireUnset("filter", filter);
      requireArgument(expression != null && !expression.isBlank(), "filter", expression, "a filter expression");
      this.filter = expression;
      return this;
    }

    /** Only instances on nodes with this metadata ({@code ?node-meta=key:value}); repeatable, all must match. */
    public Builder nodeMeta(String key, String value) {
      requireArgument(key != null && !key.isBlank() && !key.contains(":"), "nodeMeta key", key,
          "a non-blank key without ':'");
      requireArgument(value != null, "nodeMeta value", null, "a value, possibly empty");
      nodeMeta.add(key + ":" + value);
      return this;
    }

    /** The namespace ({@code ?ns=}, Enterprise). Default: the discovery's, else {@code $CONSUL_NAMESPACE}. */
    public Builder namespace(String ns) {
      requireUnset("namespace", namespace);
      this.namespace = AgentSettings.requireName("namespace", ns);
      return this;
    }

    /** The admin partition ({@code ?partition=}, Enterprise). Default: the discovery's, else {@code $CONSUL_PARTITION}. */
    public Builder partition(String name) {
      requireUnset("partition", partition);
      this.partition = AgentSettings.requireName("partition", name);
      return this;
    }

    /** Ask for the service as imported from this cluster peer ({@code ?peer=}). */
    public Builder peer(String name) {
      requireUnset("peer", peer);
      this.peer = AgentSettings.requireName("peer", name);
      return this;
    }

    /**
     * Whether each target carries its estimated round-trip time from the local agent's node
     * ({@link Target#roundTripTime()}), computed from Consul's network coordinates. Default: on.
     *
     * <p>What it costs: one shared watch per {@link ConsulDiscovery}, whatever the number of sources:
     * one {@code GET /v1/agent/self} at start (and after a failure), then one {@code GET
     * /v1/coordinate/nodes?stale} blocking query at most once a minute. The token needs
     * {@code agent:read} on the agent's node and {@code node:read}; without them, or with
     * {@code disable_coordinates}, round-trip times stay unknown and the list is unaffected. Not used for
     * a {@link #peer} or another {@link #datacenter}, whose nodes the agent's LAN coordinates do not
     * cover. Estimates are rounded to 0.1 ms so that coordinate drift does not rebuild every balancer.
     */
    public Builder closeness(boolean enabled) {
      requireUnset("closeness", closeness);
      this.closeness = enabled;
      return this;
    }

    /** Test hook: how often a standalone source reads the coordinates (see {@link ConsulDiscovery.Builder}). */
    Builder coordinatePolling(Duration minInterval, Duration wait) {
      standaloneOnly("coordinatePolling");
      agent.coordinatePolling(minInterval, wait);
      return this;
    }

    /** Test hook: the environment a standalone source reads instead of {@link System#getenv()}. */
    Builder environment(Map<String, String> env) {
      standaloneOnly("environment");
      agent.environment(env);
      return this;
    }

    /** Builds the source and starts watching at once; {@link #whenReady()} tells when Consul answered. */
    public ConsulTargetSource build() {
      if (discovery != null) {
        return new ConsulTargetSource(this, discovery, false);
      }
      ConsulDiscovery own = ConsulDiscovery.standalone(agent, service);
      try {
        return new ConsulTargetSource(this, own, true);
      } catch (RuntimeException e) {
        own.close();
        throw e;
      }
    }

    private void standaloneOnly(String field) {
      if (discovery != null) {
        throw new IllegalStateException(field + " is set on the ConsulDiscovery this builder comes from");
      }
    }
  }
}
