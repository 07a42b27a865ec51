package dev.fairway.lb.consul;

import static dev.fairway.lb.internal.Args.requireArgument;
import static dev.fairway.lb.internal.Args.requireUnset;
import static dev.fairway.lb.internal.Args.requireUnsetSecret;

import java.nio.file.Path;
import java.time.Duration;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * One connection setup to a Consul agent, shared by the sources of many services.
 *
 * <pre>{@code
 * try (ConsulDiscovery consul = ConsulDiscovery.builder().build()) {   // $CONSUL_HTTP_ADDR, $CONSUL_HTTP_TOKEN, ...
 *   ConsulTargetSource orders = consul.source("orders").build();
 *   ConsulTargetSource billing = consul.source("billing").tag("v2").build();
 *   ...
 * }                                                                    // closes every source made from it
 * }</pre>
 *
 * <p>What it costs, whatever the number of services: one HTTP client (the JDK's non-blocking
 * {@code java.net.http.HttpClient}, HTTP/1.1), one loop thread {@code fairway-consul-<name>} that runs
 * every watch step and every listener, two HTTP worker threads {@code fairway-consul-<name>-http-<n>},
 * and the HTTP client's own selector thread. A blocking query waits in the selector, not on a thread:
 * measured, one discovery watching 30 services runs 4 threads (see {@code ConsulDiscoveryTest}).
 *
 * <p>What one source costs the agent: one HTTP connection, held by its blocking query and kept alive
 * for the next one (a source never has more than one request in flight; a timed-out or cancelled
 * query closes its connection before the next is opened). Consul's default
 * {@code limits.http_max_conns_per_client} is 200 per client IP: 30 services are 30 connections, plus one
 * for the coordinate watch below. On the servers, a source is one blocking query (a goroutine) for
 * up to {@code wait} (+ wait/16), then one read per change; an index that moves without a change
 * costs at most 2 reads a second after a burst of 2 (see {@link ConsulTargetSource.Builder#rateLimit}).
 *
 * <p>Closeness ({@link ConsulTargetSource.Builder#closeness(boolean)}, on by default) costs one watch per
 * discovery, shared by all its sources and started with the first one that wants it: one
 * {@code GET /v1/agent/self} at start and after a failure, then {@code GET /v1/coordinate/nodes?stale}
 * as a blocking query (wait 5 minutes) at most once a minute, since Consul's coordinates change every few
 * seconds in a live datacenter but drift only slowly. It ends when the last such source closes.
 *
 * <p>Agent settings: every builder option first, then the environment the Consul CLI and HashiCorp's
 * SDKs read: {@code CONSUL_HTTP_ADDR} ({@code host:port}, {@code http://} or {@code https://}),
 * {@code CONSUL_HTTP_SSL}, {@code CONSUL_HTTP_TOKEN_FILE} (wins over {@code CONSUL_HTTP_TOKEN}, as in
 * Consul's Go API), {@code CONSUL_HTTP_TOKEN}, {@code CONSUL_HTTP_AUTH}, {@code CONSUL_HTTP_SSL_VERIFY},
 * {@code CONSUL_CACERT}, {@code CONSUL_CAPATH}, {@code CONSUL_CLIENT_CERT}, {@code CONSUL_CLIENT_KEY},
 * {@code CONSUL_TLS_SERVER_NAME}, {@code CONSUL_NAMESPACE}, {@code CONSUL_PARTITION}. {@code unix://}
 * addresses are rejected at build: the JDK HTTP client cannot use a Unix domain socket.
 *
 * <p>Thread-safe. {@link #close()} closes every source made from it and stops its threads; the JDK
 * 17 HTTP client has no close method, so its selector thread ends once the client is unreachable.
 */
public final class ConsulDiscovery implements AutoCloseable {
  private static final AtomicInteger SEQUENCE = new AtomicInteger();
  /** HTTP workers of a shared discovery; a source's own discovery needs one. */
  static final int HTTP_THREADS = 2;

  private final AgentConfig agent;
  private final ConsulHttp http;
  private final WatchSteps.Scheduler scheduler;
  private final LongSupplier ticker;
  private final DoubleSupplier random;
  private final @Nullable DiscoveryThreads threads; // null when a test drives the steps
  private final Set<ConsulTargetSource> sources = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final Duration coordinateInterval;
  private final Duration coordinateWait;
  private final Object coordinateLock = new Object();
  // Guarded by coordinateLock; null while no source wants closeness.
  private @Nullable CoordinateWatch coordinates;
  private final Object peerLock = new Object();
  // Guarded by peerLock: the passing-only watch of each service some peer coordinate counts itself in,
  // and the open coordinates that use it.
  private final Map<String, PeerSource> peerSources = new HashMap<>();

  /** One shared passing-only source and the coordinates reading it. */
  private static final class PeerSource {
    final ConsulTargetSource source;
    final Set<ConsulPeerCoordinate> users = new java.util.HashSet<>();

    PeerSource(ConsulTargetSource source) {
      this.source = source;
    }
  }

  private ConsulDiscovery(AgentConfig agent, String name, int httpThreads, Duration coordinateInterval,
      Duration coordinateWait) {
    this(agent, new DiscoveryThreads(name, httpThreads), coordinateInterval, coordinateWait);
  }

  private ConsulDiscovery(AgentConfig agent, DiscoveryThreads threads, Duration coordinateInterval,
      Duration coordinateWait) {
    this(agent, new JdkConsulHttp(agent, threads.httpExecutor()), threads, System::nanoTime,
        () -> ThreadLocalRandom.current().nextDouble(), coordinateInterval, coordinateWait, threads);
  }

  /** For tests: steps run on {@code scheduler}, requests go to {@code http}, time is {@code ticker}. */
  ConsulDiscovery(AgentConfig agent, ConsulHttp http, WatchSteps.Scheduler scheduler, LongSupplier ticker,
      DoubleSupplier random) {
    this(agent, http, scheduler, ticker, random, CoordinateWatch.DEFAULT_MIN_INTERVAL, CoordinateWatch.DEFAULT_WAIT);
  }

  /** For tests, with the coordinate watch's timing too. */
  ConsulDiscovery(AgentConfig agent, ConsulHttp http, WatchSteps.Scheduler scheduler, LongSupplier ticker,
      DoubleSupplier random, Duration coordinateInterval, Duration coordinateWait) {
    this(agent, http, scheduler, ticker, random, coordinateInterval, coordinateWait, null);
  }

  private ConsulDiscovery(AgentConfig agent, ConsulHttp http, WatchSteps.Scheduler scheduler, LongSupplier ticker,
      DoubleSupplier random, Duration coordinateInterval, Duration coordinateWait,
      @Nullable DiscoveryThreads threads) {
    this.agent = agent;
    this.coordinateInterval = coordinateInterval;
    this.coordinateWait = coordinateWait;
    this.http = http;
    this.scheduler = scheduler;
    this.ticker = ticker;
    this.random = random;
    this.threads = threads;
  }

  /** A builder; every option defaults to the environment, then to {@code http://127.0.0.1:8500}. */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder for a source that watches {@code serviceName} through this agent connection. */
  public ConsulTargetSource.Builder source(String serviceName) {
    return new ConsulTargetSource.Builder(serviceName, this);
  }

  /**
   * This client's live place among the passing instances of {@code service}, the service this process
   * registered itself in as {@code instanceId} ({@code Service.ID}, or the full {@code Service.ID@Node}),
   * for deterministic subsetting ({@code LoadBalancer.Builder.subset}); see {@link ConsulPeerCoordinate}.
   * Coordinates of one service share one watch. Close it when done (closing the discovery does too).
   *
   * @throws IllegalArgumentException naming the argument when a name is blank or malformed
   * @throws IllegalStateException when this discovery was closed
   */
  public ConsulPeerCoordinate peerCoordinate(String service, String instanceId) {
    return peerCoordinate(service, instanceId, null);
  }

  /**
   * As {@link #peerCoordinate(String, String)}, with the gauges {@code fairway.discovery.peer.index}
   * and {@code .peer.count}, tagged with the service and the instance id, in {@code registry}.
   */
  public ConsulPeerCoordinate peerCoordinate(String service, String instanceId, @Nullable MeterRegistry registry) {
    new ConsulTargetSource.Builder(service, this); // validates the name, naming it serviceName
    requireArgument(instanceId != null && !instanceId.isBlank() && instanceId.equals(instanceId.strip()),
        "instanceId", instanceId, "the Service.ID this process registered, or Service.ID@Node");
    synchronized (peerLock) {
      if (closed.get()) {
        throw new IllegalStateException("this ConsulDiscovery was closed");
      }
      PeerSource shared = peerSources.get(service);
      if (shared == null) {
        // Closeness is off: positions read ids only, and round-trip times would republish the list.
        shared = new PeerSource(source(service).passingOnly().closeness(false).build());
        peerSources.put(service, shared);
      }
      ConsulPeerCoordinate c = new ConsulPeerCoordinate(service, instanceId, this, shared.source, registry);
      shared.users.add(c);
      c.start();
      return c;
    }
  }

  /** A coordinate closed: the last one of its service stops the shared watch. */
  void releasePeerSource(ConsulPeerCoordinate coordinate, ConsulTargetSource source) {
    ConsulTargetSource toClose = null;
    synchronized (peerLock) {
      PeerSource shared = peerSources.get(coordinate.service());
      if (shared != null && shared.source == source && shared.users.remove(coordinate) && shared.users.isEmpty()) {
        peerSources.remove(coordinate.service());
        toClose = source;
      }
    }
    if (toClose != null) {
      toClose.close();
    }
  }

  /** The agent's address, {@code http(s)://host:port}. */
  public String consulUrl() {
    return agent.baseUrl();
  }

  /** Sources made from this discovery and not closed yet, with the one watch per service of its peer coordinates. */
  public int sources() {
    return sources.size();
  }

  /** Closes every source made from this discovery, then stops its threads (waits up to 1 s). Idempotent. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    List<ConsulPeerCoordinate> peers = new ArrayList<>();
    synchronized (peerLock) {
      for (PeerSource p : peerSources.values()) {
        peers.addAll(p.users);
      }
    }
    for (ConsulPeerCoordinate p : peers) {
      p.close();
    }
    for (ConsulTargetSource s : new ArrayList<>(sources)) {
      s.close();
    }
    synchronized (coordinateLock) {
      CoordinateWatch w = coordinates;
      coordinates = null;
      if (w != null) {
        w.close();
      }
    }
    if (threads != null) {
      threads.shutdown();
    }
  }

  @Override
  public String toString() {
    return "ConsulDiscovery{" + agent + ", sources=" + sources.size() + "}";
  }

  // Package-private plumbing for ConsulTargetSource.

  AgentConfig agent() {
    return agent;
  }

  ConsulHttp http() {
    return http;
  }

  WatchSteps.Scheduler scheduler() {
    return scheduler;
  }

  LongSupplier ticker() {
    return ticker;
  }

  DoubleSupplier random() {
    return random;
  }

  void register(ConsulTargetSource source) {
    if (closed.get()) {
      throw new IllegalStateException("this ConsulDiscovery was closed");
    }
    sources.add(source);
  }

  void unregister(ConsulTargetSource source) {
    sources.remove(source);
  }

  /**
   * Subscribes {@code listener} to the agent's network coordinates. The one coordinate watch of this
   * discovery starts with the first listener and stops when the last one leaves; closing the result
   * removes {@code listener}.
   */
  AutoCloseable watchCoordinates(CoordinateWatch.Listener listener) {
    synchronized (coordinateLock) {
      if (closed.get()) {
        throw new IllegalStateException("this ConsulDiscovery was closed");
      }
      CoordinateWatch w = coordinates;
      if (w == null) {
        w = new CoordinateWatch(http, scheduler, new Backoff(ConsulTargetSource.DEFAULT_BACKOFF_INITIAL.toNanos(),
            ConsulTargetSource.DEFAULT_BACKOFF_MAX.toNanos(), random), coordinateInterval, coordinateWait,
            agent.partition());
        coordinates = w;
        w.start();
      }
      w.addListener(listener);
      CoordinateWatch watch = w;
      return () -> {
        synchronized (coordinateLock) {
          if (watch.removeListener(listener) && coordinates == watch) {
            watch.close();
            coordinates = null;
          }
        }
      };
    }
  }

  /** The running coordinate watch, or null (for tests). */
  @Nullable CoordinateWatch coordinateWatch() {
    synchronized (coordinateLock) {
      return coordinates;
    }
  }

  static ConsulDiscovery standalone(Builder b, String service) {
    return new ConsulDiscovery(b.resolve(), service, 1, b.coordinateInterval(), b.coordinateWait());
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * Configures a {@link ConsulDiscovery}. Every option set here wins over the environment; each may be
   * set once ({@link IllegalStateException} otherwise). Files (token, certificates, keys) are read at
   * {@link #build()}, which fails with an {@link IllegalArgumentException} naming the option (or the
   * environment variable) and the value. Not thread-safe.
   */
  public static final class Builder {
    // Options are unset (null) in settings until their setter is called; build() falls back to the environment.
    private final AgentSettings settings = new AgentSettings();
    private @Nullable Duration coordinateInterval;
    private @Nullable Duration coordinateWait;

    Builder() {}

    /**
     * The agent's HTTP address: {@code http://host:port}, {@code https://host:port} or a bare
     * {@code host:port} (http, or https with {@code CONSUL_HTTP_SSL=true}). Default:
     * {@code $CONSUL_HTTP_ADDR}, else {@code http://127.0.0.1:8500}.
     */
    public Builder consulUrl(String url) {
      requireUnset("consulUrl", settings.consulUrl);
      requireArgument(url != null && !url.isBlank(), "consulUrl", url, "http(s)://host:port");
      AgentSettings.normalizeUrl("consulUrl", url, false); // fail now, not at build()
      settings.consulUrl = url;
      return this;
    }

    /** The ACL token, sent as {@code X-Consul-Token}; never in a URL or a log line. Default: the environment. */
    public Builder token(String aclToken) {
      requireUnsetSecret("token", settings.token);
      requireUnset("tokenFile", settings.tokenFile);
      settings.token = AgentSettings.checkToken("token", aclToken);
      return this;
    }

    /** A file holding the ACL token (read once at build, trimmed), as {@code CONSUL_HTTP_TOKEN_FILE}. */
    public Builder tokenFile(Path file) {
      requireUnset("tokenFile", settings.tokenFile);
      requireUnsetSecret("token", settings.token);
      requireArgument(file != null, "tokenFile", null, "a readable file holding the ACL token");
      settings.tokenFile = file;
      return this;
    }

    /** HTTP basic authentication, for an agent behind a proxy ({@code CONSUL_HTTP_AUTH=user:password}). */
    public Builder httpAuth(String user, String password) {
      requireUnsetSecret("httpAuth", settings.httpAuth);
      requireArgument(user != null && !user.isEmpty() && !user.contains(":"), "httpAuth user", user,
          "a non-empty user name without ':'");
      requireArgument(password != null, "httpAuth password", null, "a password, possibly empty");
      settings.httpAuth = user + ":" + password;
      return this;
    }

    /**
     * False accepts any certificate under any name ({@code CONSUL_HTTP_SSL_VERIFY=false}); for tests only.
     * A {@code false} from the environment does not override a {@link #caCertificate}, {@link #caPath}
     * or {@link #tlsServerName} set in code: it is ignored with a warning.
     */
    public Builder tlsVerify(boolean verify) {
      requireUnset("tlsVerify", settings.tlsVerify);
      settings.tlsVerify = verify;
      return this;
    }

    /** A PEM file of CA certificates to trust instead of the JDK's ({@code CONSUL_CACERT}). */
    public Builder caCertificate(Path pemFile) {
      requireUnset("caCertificate", settings.caCertificate);
      requireArgument(pemFile != null, "caCertificate", null, "a PEM file");
      settings.caCertificate = pemFile;
      return this;
    }

    /**
     * A directory of PEM CA certificates to trust ({@code CONSUL_CAPATH}): every regular file directly in
     * it, links followed, as Consul's Go client reads it (a c_rehash folder of {@code abcd1234.0} links
     * works); a file without a certificate is passed over with a warning.
     */
    public Builder caPath(Path directory) {
      requireUnset("caPath", settings.caPath);
      requireArgument(directory != null, "caPath", null, "a directory");
      settings.caPath = directory;
      return this;
    }

    /**
     * The client certificate chain and its unencrypted PEM key (PKCS#8, PKCS#1 RSA, or SEC1 EC as
     * {@code consul tls cert create} writes it), for an agent with {@code verify_incoming}
     * ({@code CONSUL_CLIENT_CERT}, {@code CONSUL_CLIENT_KEY}). {@link #build()} fails when the key is not
     * the certificate's.
     */
    public Builder clientCertificate(Path certificatePem, Path keyPem) {
      requireUnset("clientCertificate", settings.clientCertificate);
      requireArgument(certificatePem != null, "clientCertificate", null, "a PEM certificate file");
      requireArgument(keyPem != null, "clientKey", null, "a PEM private key file");
      settings.clientCertificate = certificatePem;
      settings.clientKey = keyPem;
      return this;
    }

    /**
     * The name the agent's certificate must carry, when it differs from the address
     * ({@code CONSUL_TLS_SERVER_NAME}); also sent as SNI, as Consul's Go client does (no SNI for an IP
     * address). An IP address here matches IP SANs only.
     */
    public Builder tlsServerName(String name) {
      requireUnset("tlsServerName", settings.tlsServerName);
      requireArgument(name != null && !name.isBlank() && name.equals(name.strip()), "tlsServerName", name,
          "a host name");
      settings.tlsServerName = name;
      return this;
    }

    /** The default namespace ({@code ns}) of every query (Enterprise; {@code CONSUL_NAMESPACE}). */
    public Builder namespace(String ns) {
      requireUnset("namespace", settings.namespace);
      settings.namespace = AgentSettings.requireName("namespace", ns);
      return this;
    }

    /** The default admin partition of every query (Enterprise; {@code CONSUL_PARTITION}). */
    public Builder partition(String name) {
      requireUnset("partition", settings.partition);
      settings.partition = AgentSettings.requireName("partition", name);
      return this;
    }

    /** Test hook: read these variables instead of {@link System#getenv()}. */
    Builder environment(Map<String, String> env) {
      requireUnset("environment", settings.environment);
      settings.environment = Map.copyOf(env);
      return this;
    }

    /**
     * Test hook: how often the network coordinates are read (at most one read per {@code minInterval},
     * each a blocking query of up to {@code wait}). Default 60 s and 5 minutes.
     */
    Builder coordinatePolling(Duration minInterval, Duration wait) {
      requireUnset("coordinatePolling", coordinateInterval);
      requireArgument(minInterval != null && minInterval.toMillis() >= 1, "coordinatePolling minInterval",
          minInterval, "PT0.001S or more");
      requireArgument(wait != null && wait.compareTo(Duration.ofSeconds(1)) >= 0
          && wait.compareTo(ConsulTargetSource.MAX_WAIT) <= 0, "coordinatePolling wait", wait, "PT1S..PT10M");
      this.coordinateInterval = minInterval;
      this.coordinateWait = wait;
      return this;
    }

    Duration coordinateInterval() {
      return coordinateInterval != null ? coordinateInterval : CoordinateWatch.DEFAULT_MIN_INTERVAL;
    }

    Duration coordinateWait() {
      return coordinateWait != null ? coordinateWait : CoordinateWatch.DEFAULT_WAIT;
    }

    /** Options first, then the environment; every file is read here. */
    AgentConfig resolve() {
      return settings.resolve();
    }

    /** Resolves options and environment, reads the files, and starts the discovery's threads. */
    public ConsulDiscovery build() {
      return new ConsulDiscovery(resolve(), "discovery-" + SEQUENCE.incrementAndGet(), HTTP_THREADS,
          coordinateInterval(), coordinateWait());
    }
  }
}
