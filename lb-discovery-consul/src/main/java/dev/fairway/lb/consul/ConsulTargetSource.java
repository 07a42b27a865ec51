package dev.fairway.lb.consul;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetSource;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.System.Logger.Level;
import java.math.BigInteger;
import java.net.ConnectException;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.kiwiproject.consul.Consul;
import org.kiwiproject.consul.ConsulException;
import org.kiwiproject.consul.HealthClient;
import org.kiwiproject.consul.model.ConsulResponse;
import org.kiwiproject.consul.model.health.ServiceHealth;
import org.kiwiproject.consul.option.ImmutableQueryOptions;
import org.kiwiproject.consul.option.QueryOptions;

/**
 * A live list of a service's instances from Consul's health API
 * ({@code GET /v1/health/service/<name>}), kept current with blocking queries.
 *
 * <pre>{@code
 * ConsulTargetSource orders = ConsulTargetSource.builder("orders")
 *     .consulUrl("http://127.0.0.1:8500")
 *     .token(System.getenv("CONSUL_HTTP_TOKEN"))
 *     .build();                                    // starts watching at once
 * orders.whenReady().get(5, TimeUnit.SECONDS);     // optional: wait for Consul's first answer
 * LoadBalancer lb = LoadBalancer.builder("orders").targets(orders).build();
 * }</pre>
 *
 * <p>What it does:
 *
 * <ul>
 *   <li>One daemon thread per source, named {@code fairway-consul-<service>}, runs blocking queries
 *       ({@code index} + {@code wait}, default 5 minutes) so a registration, deregistration or health
 *       change is seen as soon as Consul knows it. The read timeout is {@code wait + wait/16} plus a
 *       margin, above Consul's jitter.
 *   <li>Instances are classified by their worst check, node checks included: critical ones are
 *       dropped, warning ones kept with {@code Weights.Warning}, passing ones get
 *       {@code Weights.Passing} (1 and 1 when a service has no weights). {@link Builder#passingOnly()}
 *       asks Consul with {@code ?passing} instead, which drops warning instances too.
 *   <li>Target id = {@code Service.ID}; host = {@code Service.Address}, else {@code Node.Address};
 *       port = {@code Service.Port}; zone = {@code Service.Meta[zoneMetadataKey]}; metadata =
 *       {@code Service.Meta} plus {@code tags} (comma-joined). Entries without a usable address, with a
 *       port outside 1..65535 or with a weight of 0 or out of range are skipped with a warning and the
 *       {@code fairway.discovery.skipped} metric.
 *   <li>Subscribers hear only real changes (ids, addresses, weights, zones, metadata; order ignored).
 *   <li>On any error (connection refused, timeouts, 4xx/5xx, malformed or {@code null} bodies, a
 *       missing, zero or non-numeric {@code X-Consul-Index}) the last good list stays in service, the
 *       error is counted, and the loop backs off exponentially with full jitter (1 s growing to 60 s;
 *       reset by a success). After an error the next query is a fresh, non-blocking read. A token
 *       bucket (burst 5, 5 per second) caps the request rate when a service churns.
 *   <li>An index that goes backwards resets the watch to index 0 (the reply itself is used).
 *   <li>An empty reply after a non-empty one is honoured, with a warning and the
 *       {@code fairway.discovery.emptied} metric.
 *   <li>The ACL token travels only in the {@code X-Consul-Token} header, never in a URL or a log line.
 * </ul>
 *
 * <p>Thread-safe. Listeners are called on the watch thread, one change at a time, in order. {@link
 * #close()} stops the loop promptly (the blocking call is cancelled) and leaves no thread behind.
 */
public final class ConsulTargetSource implements TargetSource {
  private static final System.Logger LOG = System.getLogger(ConsulTargetSource.class.getName());

  static final Duration DEFAULT_WAIT = Duration.ofMinutes(5);
  static final Duration MAX_WAIT = Duration.ofMinutes(10);
  static final Duration DEFAULT_BACKOFF_INITIAL = Duration.ofSeconds(1);
  static final Duration DEFAULT_BACKOFF_MAX = Duration.ofSeconds(60);
  static final double DEFAULT_RATE_PER_SECOND = 5;
  static final int DEFAULT_BURST = 5;
  static final String DEFAULT_URL = "http://127.0.0.1:8500";

  private final String service;
  private final String consulUrl;
  private final List<String> tags;
  private final String datacenter;
  private final boolean passingOnly;
  private final Duration wait;
  private final String goWait;
  private final HealthMapper mapper;
  private final TokenBucket bucket;
  private final Backoff backoff;
  private final LongSupplier ticker;
  private final DiscoveryMetrics metrics;
  private final Consul consul;
  private final HealthClient health;
  private final Thread watcher;

  private final Object publishLock = new Object();
  private final CopyOnWriteArrayList<Consumer<List<Target>>> listeners = new CopyOnWriteArrayList<>();
  private final CompletableFuture<List<Target>> ready = new CompletableFuture<>();
  private final AtomicBoolean closed = new AtomicBoolean();

  /** Published via volatile; an immutable list sorted by id. */
  private volatile List<Target> targets = List.of();
  private volatile long lastSuccessNanos;

  // Watch-thread state: touched only by the watch thread.
  private Set<String> lastSkipKeys = Set.of();
  private String lastErrorReason;
  private int errorsSinceSuccess;
  private boolean leaderUnknown;

  private ConsulTargetSource(Builder b, String url) {
    this.service = b.service;
    this.consulUrl = url;
    this.tags = List.copyOf(b.tags);
    this.datacenter = b.datacenter;
    this.passingOnly = b.passingOnly;
    this.wait = b.wait == null ? DEFAULT_WAIT : b.wait;
    this.goWait = goDuration(wait);
    this.mapper = new HealthMapper(b.zoneMetadataKey == null ? "zone" : b.zoneMetadataKey, b.passingOnly);
    this.ticker = System::nanoTime;
    this.bucket = new TokenBucket(b.ratePerSecond, b.burst, ticker);
    Duration initial = b.backoffInitial == null ? DEFAULT_BACKOFF_INITIAL : b.backoffInitial;
    Duration max = b.backoffMax == null ? DEFAULT_BACKOFF_MAX : b.backoffMax;
    this.backoff = new Backoff(initial.toNanos(), max.toNanos(), () -> ThreadLocalRandom.current().nextDouble());
    this.lastSuccessNanos = ticker.getAsLong();
    Consul.Builder cb = Consul.builder()
        .withUrl(url)
        .withPing(false) // never fail construction because the agent is down: the loop retries
        .withConnectTimeoutMillis(Math.min(10_000, Math.max(1_000, wait.toMillis())))
        .withReadTimeoutMillis(readTimeout(wait).toMillis());
    if (b.token != null) {
      cb.withTokenAuth(b.token); // X-Consul-Token header; withAclToken would put it in the URL
    }
    this.consul = cb.build();
    this.health = consul.healthClient();
    // Registered after everything that can throw, so a failed build leaves no meters behind.
    this.metrics = b.meterRegistry == null
        ? DiscoveryMetrics.NOOP
        : DiscoveryMetrics.micrometer(b.meterRegistry, service, this::stalenessSeconds, () -> targets.size());

    this.watcher = new Thread(this::watch, "fairway-consul-" + service);
    this.watcher.setDaemon(true);
    this.watcher.start();
  }

  /** A builder for a source that watches {@code serviceName}. */
  public static Builder builder(String serviceName) {
    return new Builder(serviceName);
  }

  @Override
  public List<Target> targets() {
    return targets;
  }

  @Override
  public AutoCloseable subscribe(Consumer<List<Target>> listener) {
    if (listener == null) {
      throw new IllegalArgumentException("listener: null (expected: a consumer of target lists)");
    }
    synchronized (publishLock) {
      listeners.add(listener);
      try {
        listener.accept(targets);
      } catch (RuntimeException e) {
        listeners.remove(listener); // a listener that fails on the first call is not kept
        throw e;
      }
    }
    return () -> listeners.remove(listener);
  }

  /**
   * Completes with the list from Consul's first successful reply, also when that list is empty.
   * Fails with {@link CancellationException} if the source is closed first. Await it with a timeout:
   * {@code whenReady().get(5, SECONDS)}.
   */
  @Override
  public CompletableFuture<List<Target>> whenReady() {
    return ready.copy();
  }

  /** The watched service's name. */
  public String service() {
    return service;
  }

  /**
   * Stops the watch: cancels the blocking request, ends the thread (waits up to 2 seconds for it),
   * drops the listeners and unregisters the gauges. {@link #targets()} stays readable. Idempotent.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    watcher.interrupt();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
    boolean self = Thread.currentThread() == watcher;
    do {
      // Cancels the in-flight call (closes its socket); repeated in case the loop was just about to
      // start a new call when the flag flipped.
      consul.destroy();
      if (self) {
        break;
      }
      try {
        watcher.join(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    } while (watcher.isAlive() && System.nanoTime() < deadline);
    if (!self && watcher.isAlive()) {
      LOG.log(Level.WARNING, "{0}: the Consul watch thread did not stop within 2 s", service);
    }
    listeners.clear();
    metrics.close();
    ready.completeExceptionally(new CancellationException("ConsulTargetSource(" + service + ") closed"));
  }

  @Override
  public String toString() {
    return "ConsulTargetSource{service=" + service + ", consul=" + consulUrl
        + (tags.isEmpty() ? "" : ", tags=" + tags)
        + (datacenter == null ? "" : ", dc=" + datacenter)
        + (passingOnly ? ", passingOnly" : "")
        + ", targets=" + targets.size() + "}";
  }

  // ---------------------------------------------------------------------------------------------
  // The watch loop

  private void watch() {
    try {
      watchUntilClosed();
    } catch (Error e) {
      LOG.log(Level.ERROR, service + ": the Consul watch thread died; the list is frozen", e);
      throw e;
    }
  }

  private void watchUntilClosed() {
    BigInteger index = BigInteger.ZERO;
    while (!closed.get()) {
      if (!pause(bucket.reserveNanos())) {
        break;
      }
      ConsulResponse<List<ServiceHealth>> reply;
      try {
        QueryOptions q = options(index);
        reply = passingOnly
            ? health.getHealthyServiceInstances(service, q)
            : health.getAllServiceInstances(service, q);
      } catch (Exception e) {
        // Exception, not RuntimeException: OkHttp's Kotlin code can throw a checked
        // InterruptedException when close() interrupts this thread mid-call.
        if (closed.get()) {
          break;
        }
        index = BigInteger.ZERO;
        if (!failed(reason(e), describe(e))) {
          break;
        }
        continue;
      }
      if (closed.get()) {
        break;
      }
      List<ServiceHealth> body = reply.getResponse();
      BigInteger next = reply.getIndex();
      if (body == null) {
        index = BigInteger.ZERO;
        if (!failed("null_body", "the reply body was null")) {
          break;
        }
        continue;
      }
      if (next == null || next.signum() <= 0) {
        // Also a missing header: the client library reads it as 0. Never block on an index < 1.
        index = BigInteger.ZERO;
        if (!failed("missing_index", "X-Consul-Index missing or < 1")) {
          break;
        }
        continue;
      }
      boolean backwards = next.compareTo(index) < 0;
      accept(body);
      checkLeader(reply);
      if (backwards) {
        LOG.log(Level.INFO, "{0}: X-Consul-Index went backwards ({1} -> {2}); watching from 0 again",
            service, index, next);
        index = BigInteger.ZERO;
        metrics.error("index_backwards");
        if (!pause(backoff.nextDelayNanos())) {
          break;
        }
        continue;
      }
      index = next;
      if (errorsSinceSuccess > 0) {
        LOG.log(Level.INFO, "{0}: Consul answers again after {1} failed attempt(s)", service, errorsSinceSuccess);
      }
      errorsSinceSuccess = 0;
      lastErrorReason = null;
      backoff.reset();
    }
  }

  private QueryOptions options(BigInteger index) {
    ImmutableQueryOptions.Builder q = ImmutableQueryOptions.builder();
    if (index.signum() > 0) {
      q.wait(goWait).index(index);
    }
    if (datacenter != null) {
      q.datacenter(datacenter);
    }
    q.tag(tags);
    return q.build();
  }

  /** Maps and publishes one good reply. */
  private void accept(List<ServiceHealth> body) {
    HealthMapper.Mapped mapped = mapper.map(body);
    reportSkips(mapped.skipped());
    lastSuccessNanos = ticker.getAsLong();
    publish(mapped.targets());
    ready.complete(mapped.targets());
  }

  private void publish(List<Target> next) {
    synchronized (publishLock) {
      List<Target> previous = targets;
      if (sameTargets(previous, next)) {
        return;
      }
      if (next.isEmpty() && !previous.isEmpty()) {
        LOG.log(Level.WARNING, "{0}: Consul now lists no usable instance (had {1}); honouring the empty list",
            service, previous.size());
        metrics.emptied();
      }
      targets = next;
      metrics.updated();
      for (Consumer<List<Target>> l : listeners) {
        try {
          l.accept(next);
        } catch (RuntimeException e) {
          LOG.log(Level.WARNING, service + ": a target listener failed", e);
        }
      }
    }
  }

  private void reportSkips(List<HealthMapper.Skip> skipped) {
    if (skipped.isEmpty() && lastSkipKeys.isEmpty()) {
      return;
    }
    Set<String> keys = new HashSet<>();
    for (HealthMapper.Skip s : skipped) {
      keys.add(s.key() + "/" + s.reason());
      if (!lastSkipKeys.contains(s.key() + "/" + s.reason())) {
        // Logged and counted when an entry turns bad, not on every reply that still carries it.
        LOG.log(Level.WARNING, "{0}: skipped Consul entry {1} ({2}): {3}", service, s.key(), s.reason(), s.detail());
        metrics.skipped(s.reason());
      }
    }
    lastSkipKeys = keys;
  }

  private void checkLeader(ConsulResponse<?> reply) {
    boolean unknown = !reply.isKnownLeader();
    if (unknown && !leaderUnknown) {
      LOG.log(Level.WARNING, "{0}: Consul reports no known leader (last contact {1} ms ago); the list may be stale",
          service, reply.getLastContact());
    } else if (!unknown && leaderUnknown) {
      LOG.log(Level.INFO, "{0}: Consul has a leader again", service);
    }
    leaderUnknown = unknown;
  }

  /** Counts and logs one failure, then sleeps the backoff. False if closed meanwhile. */
  private boolean failed(String reason, String detail) {
    metrics.error(reason);
    errorsSinceSuccess++;
    long delay = backoff.nextDelayNanos();
    Level level = reason.equals(lastErrorReason) ? Level.DEBUG : Level.WARNING;
    LOG.log(level, "{0}: Consul query failed ({1}: {2}); keeping {3} target(s), retrying in {4} ms",
        service, reason, detail, targets.size(), TimeUnit.NANOSECONDS.toMillis(delay));
    lastErrorReason = reason;
    return pause(delay);
  }

  /** Sleeps; false if the source was closed (or the thread interrupted by close). */
  private boolean pause(long nanos) {
    if (nanos <= 0) {
      return !closed.get();
    }
    try {
      TimeUnit.NANOSECONDS.sleep(nanos);
    } catch (InterruptedException e) {
      return false; // only close() interrupts this thread
    }
    return !closed.get();
  }

  private double stalenessSeconds() {
    return (ticker.getAsLong() - lastSuccessNanos) / 1e9;
  }

  // ---------------------------------------------------------------------------------------------
  // Helpers

  static String reason(Throwable e) {
    if (e instanceof ConsulException && ((ConsulException) e).hasCode()) {
      return "http_" + ((ConsulException) e).getCode();
    }
    for (Throwable c = e; c != null; c = c.getCause()) {
      if (c instanceof NumberFormatException) {
        return "bad_index";
      }
      if (c instanceof JsonProcessingException) {
        return "malformed";
      }
      if (c instanceof ConnectException) {
        return "connect";
      }
      if (c instanceof InterruptedIOException) {
        return "timeout";
      }
      if (c instanceof IOException) {
        return "io";
      }
      if (c.getCause() == c) {
        break;
      }
    }
    return "unexpected";
  }

  private static String describe(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String m = root == e ? String.valueOf(e.getMessage()) : e.getMessage() + " / " + root;
    m = m.replaceAll("\\s+", " ");
    return m.length() > 200 ? m.substring(0, 200) + "..." : m;
  }

  /** True if both lists hold the same targets with the same address, weight, zone and metadata. */
  static boolean sameTargets(List<Target> a, List<Target> b) {
    if (a.size() != b.size()) {
      return false;
    }
    Map<String, Target> byId = new HashMap<>();
    for (Target t : a) {
      byId.put(t.id(), t);
    }
    for (Target t : b) {
      Target old = byId.get(t.id());
      if (old == null
          || !old.host().equals(t.host())
          || old.port() != t.port()
          || old.weight() != t.weight()
          || !old.zone().equals(t.zone())
          || !old.metadata().equals(t.metadata())) {
        return false;
      }
    }
    return true;
  }

  /** A Go duration string for Consul's {@code wait}: {@code 5m}, {@code 30s} or {@code 1500ms}. */
  static String goDuration(Duration d) {
    long ms = d.toMillis();
    if (ms % 60_000 == 0) {
      return ms / 60_000 + "m";
    }
    if (ms % 1_000 == 0) {
      return ms / 1_000 + "s";
    }
    return ms + "ms";
  }

  /** Above Consul's longest answer time: wait, plus up to wait/16 of jitter, plus a margin. */
  static Duration readTimeout(Duration wait) {
    long waitMs = wait.toMillis();
    long margin = Math.min(30_000, Math.max(1_000, waitMs / 10));
    return Duration.ofMillis(waitMs + waitMs / 16 + margin);
  }

  static String normalizeUrl(String field, String url) {
    String u = url.trim();
    if (!u.contains("://")) {
      u = "http://" + u; // CONSUL_HTTP_ADDR is often host:port
    }
    URI uri;
    try {
      uri = new URI(u);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException(field + ": " + url + " (expected: http(s)://host:port)");
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!(scheme.equals("http") || scheme.equals("https")) || uri.getHost() == null
        || uri.getRawQuery() != null || uri.getRawUserInfo() != null) {
      throw new IllegalArgumentException(field + ": " + url + " (expected: http(s)://host:port)");
    }
    return u.endsWith("/") ? u.substring(0, u.length() - 1) : u;
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * Configures a {@link ConsulTargetSource}. Every setter validates its argument and names it in the
   * message; single-valued options may be set once. Not thread-safe.
   */
  public static final class Builder {
    private final String service;
    private String consulUrl;
    private final Set<String> tags = new LinkedHashSet<>();
    private String datacenter;
    private String token;
    private String zoneMetadataKey;
    private boolean passingOnly;
    private MeterRegistry meterRegistry;
    private Duration wait;
    private Duration backoffInitial;
    private Duration backoffMax;
    private double ratePerSecond = DEFAULT_RATE_PER_SECOND;
    private int burst = DEFAULT_BURST;
    private boolean rateSet;

    private Builder(String service) {
      if (service == null || service.isBlank() || service.contains("/") || !service.equals(service.strip())) {
        throw new IllegalArgumentException("serviceName: " + quote(service)
            + " (expected: a Consul service name, non-blank, no '/' or surrounding spaces)");
      }
      this.service = service;
    }

    /**
     * The Consul agent's HTTP address, such as {@code http://127.0.0.1:8500}. Default:
     * {@code $CONSUL_HTTP_ADDR} (a bare {@code host:port} means http), else
     * {@code http://127.0.0.1:8500}.
     */
    public Builder consulUrl(String url) {
      once(consulUrl, "consulUrl");
      if (url == null || url.isBlank()) {
        throw new IllegalArgumentException("consulUrl: " + quote(url) + " (expected: http(s)://host:port)");
      }
      this.consulUrl = normalizeUrl("consulUrl", url);
      return this;
    }

    /** Only instances carrying this tag; call again for more tags (all must match). */
    public Builder tag(String tag) {
      if (tag == null || tag.isBlank()) {
        throw new IllegalArgumentException("tag: " + quote(tag) + " (expected: a non-blank tag)");
      }
      if (!tags.add(tag)) {
        throw new IllegalStateException("tag: " + tag + " was already added");
      }
      return this;
    }

    /** Ask this datacenter instead of the agent's own. */
    public Builder datacenter(String dc) {
      once(datacenter, "datacenter");
      if (dc == null || dc.isBlank()) {
        throw new IllegalArgumentException("datacenter: " + quote(dc) + " (expected: a datacenter name)");
      }
      this.datacenter = dc;
      return this;
    }

    /** The ACL token, sent as the {@code X-Consul-Token} header; never put in a URL or logged. */
    public Builder token(String aclToken) {
      if (token != null) {
        throw new IllegalStateException("token was already set");
      }
      if (aclToken == null || aclToken.isBlank() || !aclToken.equals(aclToken.strip())) {
        // The value itself is deliberately left out of the message.
        throw new IllegalArgumentException("token: " + (aclToken == null ? "null" : "blank or padded")
            + " (expected: a non-blank ACL token)");
      }
      this.token = aclToken;
      return this;
    }

    /** The {@code Service.Meta} key whose value becomes {@link Target#zone()}. Default {@code zone}. */
    public Builder zoneMetadataKey(String key) {
      once(zoneMetadataKey, "zoneMetadataKey");
      if (key == null || key.isBlank()) {
        throw new IllegalArgumentException("zoneMetadataKey: " + quote(key) + " (expected: a non-blank key)");
      }
      this.zoneMetadataKey = key;
      return this;
    }

    /** Query with {@code ?passing}: only instances whose checks all pass (no warning instances). */
    public Builder passingOnly() {
      this.passingOnly = true;
      return this;
    }

    /** Where the {@code fairway.discovery.*} meters go. Without it, nothing is measured. */
    public Builder meterRegistry(MeterRegistry registry) {
      once(meterRegistry, "meterRegistry");
      if (registry == null) {
        throw new IllegalArgumentException("meterRegistry: null (expected: a MeterRegistry)");
      }
      this.meterRegistry = registry;
      return this;
    }

    /**
     * The longest time one blocking query waits for a change (Consul's {@code wait}). Default 5
     * minutes, at least 1 second, at most 10 minutes (Consul's own limit).
     */
    public Builder waitTime(Duration wait) {
      once(this.wait, "waitTime");
      if (wait == null || wait.compareTo(Duration.ofSeconds(1)) < 0 || wait.compareTo(MAX_WAIT) > 0) {
        throw new IllegalArgumentException("waitTime: " + wait + " (expected: PT1S..PT10M)");
      }
      this.wait = wait;
      return this;
    }

    /**
     * Backoff after errors: the n-th consecutive error waits a random time up to
     * {@code min(max, initial * 2^n)}. Default 1 s growing to 60 s.
     */
    public Builder backoff(Duration initial, Duration max) {
      once(backoffInitial, "backoff");
      if (initial == null || initial.toMillis() < 1 || initial.compareTo(Duration.ofHours(1)) > 0) {
        throw new IllegalArgumentException("backoff initial: " + initial + " (expected: PT0.001S..PT1H)");
      }
      if (max == null || max.compareTo(initial) < 0 || max.compareTo(Duration.ofHours(1)) > 0) {
        throw new IllegalArgumentException("backoff max: " + max + " (expected: " + initial + "..PT1H)");
      }
      this.backoffInitial = initial;
      this.backoffMax = max;
      return this;
    }

    /** Test hook: the token bucket in front of every request. */
    Builder rateLimit(double perSecond, int burst) {
      if (rateSet) {
        throw new IllegalStateException("rateLimit was already set");
      }
      if (!(perSecond > 0) || Double.isInfinite(perSecond)) {
        throw new IllegalArgumentException("rateLimit perSecond: " + perSecond + " (expected: > 0)");
      }
      if (burst < 1) {
        throw new IllegalArgumentException("rateLimit burst: " + burst + " (expected: >= 1)");
      }
      this.rateSet = true;
      this.ratePerSecond = perSecond;
      this.burst = burst;
      return this;
    }

    /** Builds the source and starts watching at once; {@link #whenReady()} tells when Consul answered. */
    public ConsulTargetSource build() {
      String url = consulUrl;
      if (url == null) {
        String env = System.getenv("CONSUL_HTTP_ADDR");
        url = env == null || env.isBlank() ? DEFAULT_URL : normalizeUrl("consulUrl ($CONSUL_HTTP_ADDR)", env);
      }
      return new ConsulTargetSource(this, url);
    }

    private static void once(Object current, String field) {
      if (current != null) {
        throw new IllegalStateException(field + " was already set");
      }
    }

    private static String quote(String s) {
      return s == null ? "null" : "\"" + s + "\"";
    }
  }

}
