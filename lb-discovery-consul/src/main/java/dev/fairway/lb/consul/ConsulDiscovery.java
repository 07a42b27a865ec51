package dev.fairway.lb.consul;

import static dev.fairway.lb.internal.Args.quote;
import static dev.fairway.lb.internal.Args.requireArgument;
import static dev.fairway.lb.internal.Args.requireUnset;
import static dev.fairway.lb.internal.Args.requireUnsetSecret;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;
import javax.net.ssl.SSLContext;
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
 * up to {@code wait} (+ wait/16), then one read per change, at most one read every 15 s once the
 * service churns faster than that (see {@link ConsulTargetSource.Builder#rateLimit}).
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
  private static final System.Logger LOG = System.getLogger(ConsulDiscovery.class.getName());
  private static final AtomicInteger SEQUENCE = new AtomicInteger();
  static final String DEFAULT_ADDRESS = "127.0.0.1:8500";
  /** HTTP workers of a shared discovery; a source's own discovery needs one. */
  static final int HTTP_THREADS = 2;

  private final AgentConfig agent;
  private final ConsulHttp http;
  private final HealthWatch.Scheduler scheduler;
  private final LongSupplier ticker;
  private final DoubleSupplier random;
  private final @Nullable ScheduledThreadPoolExecutor loop; // null when a test drives the steps
  private final @Nullable ThreadPoolExecutor httpExecutor; // null when a test drives the steps
  private final Set<ConsulTargetSource> sources = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final Duration coordinateInterval;
  private final Duration coordinateWait;
  private final Object coordinateLock = new Object();
  // Guarded by coordinateLock; null while no source wants closeness.
  private @Nullable CoordinateWatch coordinates;

  private ConsulDiscovery(AgentConfig agent, String name, int httpThreads, Duration coordinateInterval,
      Duration coordinateWait) {
    this.agent = agent;
    this.coordinateInterval = coordinateInterval;
    this.coordinateWait = coordinateWait;
    this.loop = new ScheduledThreadPoolExecutor(1, daemon("fairway-consul-" + name));
    this.loop.setRemoveOnCancelPolicy(true); // cancelled waits (close) do not linger for minutes
    this.httpExecutor = new ThreadPoolExecutor(httpThreads, httpThreads, 30, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(), daemon("fairway-consul-" + name + "-http"));
    this.httpExecutor.allowCoreThreadTimeOut(true);
    this.http = new JdkConsulHttp(agent, httpExecutor);
    this.scheduler = new HealthWatch.Scheduler() {
      @Override
      public Future<?> schedule(Runnable task, long delayNanos) {
        return loop.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
      }

      @Override
      public void execute(Runnable task) {
        loop.execute(task);
      }
    };
    this.ticker = System::nanoTime;
    this.random = () -> ThreadLocalRandom.current().nextDouble();
  }

  /** For tests: steps run on {@code scheduler}, requests go to {@code http}, time is {@code ticker}. */
  ConsulDiscovery(AgentConfig agent, ConsulHttp http, HealthWatch.Scheduler scheduler, LongSupplier ticker,
      DoubleSupplier random) {
    this(agent, http, scheduler, ticker, random, CoordinateWatch.DEFAULT_MIN_INTERVAL, CoordinateWatch.DEFAULT_WAIT);
  }

  /** For tests, with the coordinate watch's timing too. */
  ConsulDiscovery(AgentConfig agent, ConsulHttp http, HealthWatch.Scheduler scheduler, LongSupplier ticker,
      DoubleSupplier random, Duration coordinateInterval, Duration coordinateWait) {
    this.agent = agent;
    this.coordinateInterval = coordinateInterval;
    this.coordinateWait = coordinateWait;
    this.http = http;
    this.scheduler = scheduler;
    this.ticker = ticker;
    this.random = random;
    this.loop = null;
    this.httpExecutor = null;
  }

  /** A builder; every option defaults to the environment, then to {@code http://127.0.0.1:8500}. */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder for a source that watches {@code serviceName} through this agent connection. */
  public ConsulTargetSource.Builder source(String serviceName) {
    return new ConsulTargetSource.Builder(serviceName, this);
  }

  /** The agent's address, {@code http(s)://host:port}. */
  public String consulUrl() {
    return agent.baseUrl();
  }

  /** Sources made from this discovery and not closed yet. */
  public int sources() {
    return sources.size();
  }

  /** Closes every source made from this discovery, then stops its threads (waits up to 1 s). Idempotent. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
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
    ScheduledThreadPoolExecutor loop = this.loop;
    ThreadPoolExecutor httpExecutor = this.httpExecutor;
    if (loop != null && httpExecutor != null) { // both, or neither when a test drives the steps
      loop.shutdownNow();
      httpExecutor.shutdown();
      boolean onLoop = Thread.currentThread().getName().startsWith(threadPrefix(loop));
      if (!onLoop) {
        try {
          if (!loop.awaitTermination(1, TimeUnit.SECONDS) || !httpExecutor.awaitTermination(1, TimeUnit.SECONDS)) {
            LOG.log(Level.WARNING, "Consul discovery threads did not stop within 1 s");
            httpExecutor.shutdownNow();
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
  }

  @Override
  public String toString() {
    return "ConsulDiscovery{" + agent + ", sources=" + sources.size() + "}";
  }

  private static String threadPrefix(ScheduledThreadPoolExecutor loop) {
    ThreadFactory f = loop.getThreadFactory();
    return ((NamedDaemons) f).prefix;
  }

  // Package-private plumbing for ConsulTargetSource.

  AgentConfig agent() {
    return agent;
  }

  ConsulHttp http() {
    return http;
  }

  HealthWatch.Scheduler scheduler() {
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

  private static ThreadFactory daemon(String prefix) {
    return new NamedDaemons(prefix);
  }

  private static final class NamedDaemons implements ThreadFactory {
    final String prefix;
    private final AtomicInteger n = new AtomicInteger();

    NamedDaemons(String prefix) {
      this.prefix = prefix;
    }

    @Override
    public Thread newThread(Runnable r) {
      int i = n.getAndIncrement();
      Thread t = new Thread(r, prefix.endsWith("-http") ? prefix + "-" + i : prefix);
      t.setDaemon(true);
      return t;
    }
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * Configures a {@link ConsulDiscovery}. Every option set here wins over the environment; each may be
   * set once ({@link IllegalStateException} otherwise). Files (token, certificates, keys) are read at
   * {@link #build()}, which fails with an {@link IllegalArgumentException} naming the option (or the
   * environment variable) and the value. Not thread-safe.
   */
  public static final class Builder {
    // Unset (null) until its setter is called; build() falls back to the environment.
    private @Nullable String consulUrl;
    private @Nullable String token;
    private @Nullable Path tokenFile;
    private @Nullable String httpAuth;
    private @Nullable Boolean tlsVerify;
    private @Nullable Path caCertificate;
    private @Nullable Path caPath;
    private @Nullable Path clientCertificate;
    private @Nullable Path clientKey;
    private @Nullable String tlsServerName;
    private @Nullable String namespace;
    private @Nullable String partition;
    private @Nullable Map<String, String> environment;
    private @Nullable Duration coordinateInterval;
    private @Nullable Duration coordinateWait;

    Builder() {}

    /**
     * The agent's HTTP address: {@code http://host:port}, {@code https://host:port} or a bare
     * {@code host:port} (http, or https with {@code CONSUL_HTTP_SSL=true}). Default:
     * {@code $CONSUL_HTTP_ADDR}, else {@code http://127.0.0.1:8500}.
     */
    public Builder consulUrl(String url) {
      requireUnset("consulUrl", consulUrl);
      requireArgument(url != null && !url.isBlank(), "consulUrl", url, "http(s)://host:port");
      normalizeUrl("consulUrl", url, false); // fail now, not at build()
      this.consulUrl = url;
      return this;
    }

    /** The ACL token, sent as {@code X-Consul-Token}; never in a URL or a log line. Default: the environment. */
    public Builder token(String aclToken) {
      requireUnsetSecret("token", token);
      requireUnset("tokenFile", tokenFile);
      this.token = checkToken("token", aclToken);
      return this;
    }

    /** A file holding the ACL token (read once at build, trimmed), as {@code CONSUL_HTTP_TOKEN_FILE}. */
    public Builder tokenFile(Path file) {
      requireUnset("tokenFile", tokenFile);
      requireUnsetSecret("token", token);
      requireArgument(file != null, "tokenFile", null, "a readable file holding the ACL token");
      this.tokenFile = file;
      return this;
    }

    /** HTTP basic authentication, for an agent behind a proxy ({@code CONSUL_HTTP_AUTH=user:password}). */
    public Builder httpAuth(String user, String password) {
      requireUnsetSecret("httpAuth", httpAuth);
      requireArgument(user != null && !user.isEmpty() && !user.contains(":"), "httpAuth user", user,
          "a non-empty user name without ':'");
      requireArgument(password != null, "httpAuth password", null, "a password, possibly empty");
      this.httpAuth = user + ":" + password;
      return this;
    }

    /** False accepts any certificate under any name ({@code CONSUL_HTTP_SSL_VERIFY=false}); for tests only. */
    public Builder tlsVerify(boolean verify) {
      requireUnset("tlsVerify", tlsVerify);
      this.tlsVerify = verify;
      return this;
    }

    /** A PEM file of CA certificates to trust instead of the JDK's ({@code CONSUL_CACERT}). */
    public Builder caCertificate(Path pemFile) {
      requireUnset("caCertificate", caCertificate);
      requireArgument(pemFile != null, "caCertificate", null, "a PEM file");
      this.caCertificate = pemFile;
      return this;
    }

    /** A directory of PEM CA certificates ({@code *.pem}, {@code *.crt}) to trust ({@code CONSUL_CAPATH}). */
    public Builder caPath(Path directory) {
      requireUnset("caPath", caPath);
      requireArgument(directory != null, "caPath", null, "a directory");
      this.caPath = directory;
      return this;
    }

    /**
     * The client certificate chain and its unencrypted PEM key (PKCS#8, or PKCS#1 RSA), for an agent
     * with {@code verify_incoming} ({@code CONSUL_CLIENT_CERT}, {@code CONSUL_CLIENT_KEY}).
     */
    public Builder clientCertificate(Path certificatePem, Path keyPem) {
      requireUnset("clientCertificate", clientCertificate);
      requireArgument(certificatePem != null, "clientCertificate", null, "a PEM certificate file");
      requireArgument(keyPem != null, "clientKey", null, "a PEM private key file");
      this.clientCertificate = certificatePem;
      this.clientKey = keyPem;
      return this;
    }

    /** The name the agent's certificate must carry, when it differs from the address ({@code CONSUL_TLS_SERVER_NAME}). */
    public Builder tlsServerName(String name) {
      requireUnset("tlsServerName", tlsServerName);
      requireArgument(name != null && !name.isBlank() && name.equals(name.strip()), "tlsServerName", name,
          "a host name");
      this.tlsServerName = name;
      return this;
    }

    /** The default namespace ({@code ns}) of every query (Enterprise; {@code CONSUL_NAMESPACE}). */
    public Builder namespace(String ns) {
      requireUnset("namespace", namespace);
      this.namespace = requireName("namespace", ns);
      return this;
    }

    /** The default admin partition of every query (Enterprise; {@code CONSUL_PARTITION}). */
    public Builder partition(String name) {
      requireUnset("partition", partition);
      this.partition = requireName("partition", name);
      return this;
    }

    /** Test hook: read these variables instead of {@link System#getenv()}. */
    Builder environment(Map<String, String> env) {
      requireUnset("environment", environment);
      this.environment = Map.copyOf(env);
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

    /** Resolves options and environment, reads the files, and starts the discovery's threads. */
    public ConsulDiscovery build() {
      return new ConsulDiscovery(resolve(), "discovery-" + SEQUENCE.incrementAndGet(), HTTP_THREADS,
          coordinateInterval(), coordinateWait());
    }

    /** Options first, then the environment; every file is read here. */
    AgentConfig resolve() {
      Map<String, String> env = environment != null ? environment : System.getenv();
      boolean envSsl = bool(env, "CONSUL_HTTP_SSL", false);
      String base;
      if (consulUrl != null) {
        base = normalizeUrl("consulUrl", consulUrl, envSsl);
      } else {
        String addr = env(env, "CONSUL_HTTP_ADDR");
        base = normalizeUrl(addr == null ? "consulUrl" : "consulUrl ($CONSUL_HTTP_ADDR)",
            addr == null ? DEFAULT_ADDRESS : addr, envSsl);
      }
      boolean https = base.startsWith("https://");

      String secret = token;
      if (secret == null) {
        Path file = tokenFile;
        String field = "tokenFile";
        if (file == null && env(env, "CONSUL_HTTP_TOKEN_FILE") != null) {
          file = Path.of(env(env, "CONSUL_HTTP_TOKEN_FILE"));
          field = "tokenFile ($CONSUL_HTTP_TOKEN_FILE)";
        }
        if (file != null) {
          secret = readToken(field, file);
        } else {
          String fromEnv = env(env, "CONSUL_HTTP_TOKEN");
          if (fromEnv != null) {
            secret = checkToken("token ($CONSUL_HTTP_TOKEN)", fromEnv);
          }
        }
      }

      String auth = httpAuth != null ? httpAuth : env(env, "CONSUL_HTTP_AUTH");
      String basic = auth == null ? null
          : "Basic " + Base64.getEncoder().encodeToString((auth.contains(":") ? auth : auth + ":")
              .getBytes(StandardCharsets.UTF_8));

      ConsulTls.Settings tls = new ConsulTls.Settings(
          tlsVerify != null ? tlsVerify : bool(env, "CONSUL_HTTP_SSL_VERIFY", true),
          caCertificate != null ? caCertificate : path(env, "CONSUL_CACERT"),
          caPath != null ? caPath : path(env, "CONSUL_CAPATH"),
          clientCertificate != null ? clientCertificate : path(env, "CONSUL_CLIENT_CERT"),
          clientCertificate != null ? clientKey : path(env, "CONSUL_CLIENT_KEY"),
          tlsServerName != null ? tlsServerName : env(env, "CONSUL_TLS_SERVER_NAME"));
      if ((tls.clientCert() == null) != (tls.clientKey() == null)) {
        throw new IllegalArgumentException("clientCertificate: " + tls.clientCert() + ", clientKey: " + tls.clientKey()
            + " (expected: both or neither; $CONSUL_CLIENT_CERT and $CONSUL_CLIENT_KEY go together)");
      }
      boolean tlsOptions = tlsVerify != null || caCertificate != null || caPath != null || clientCertificate != null
          || tlsServerName != null;
      if (!https && tlsOptions) {
        throw new IllegalArgumentException("consulUrl: " + quote(base)
            + " (expected: an https:// address, since TLS options are set)");
      }
      SSLContext ssl = https ? ConsulTls.context(tls) : null;

      return new AgentConfig(base, secret, basic, ssl, Duration.ofSeconds(10),
          namespace != null ? namespace : env(env, "CONSUL_NAMESPACE"),
          partition != null ? partition : env(env, "CONSUL_PARTITION"));
    }

    private static String readToken(String field, Path file) {
      try {
        String t = Files.readString(file, StandardCharsets.UTF_8).strip();
        requireArgument(!t.isEmpty(), field, file.toString(), "a file holding the ACL token, not an empty one");
        return t;
      } catch (IOException e) {
        throw new IllegalArgumentException(field + ": " + quote(file.toString())
            + " (expected: a readable file holding the ACL token)", e);
      }
    }

    private static @Nullable String env(Map<String, String> env, String name) {
      String v = env.get(name);
      return v == null || v.isBlank() ? null : v.strip();
    }

    private static @Nullable Path path(Map<String, String> env, String name) {
      String v = env(env, name);
      return v == null ? null : Path.of(v);
    }

    /** Go's strconv.ParseBool, as the Consul CLI reads these variables. */
    private static boolean bool(Map<String, String> env, String name, boolean otherwise) {
      String v = env(env, name);
      if (v == null) {
        return otherwise;
      }
      return switch (v) {
        case "1", "t", "T", "true", "TRUE", "True" -> true;
        case "0", "f", "F", "false", "FALSE", "False" -> false;
        default -> throw new IllegalArgumentException("$" + name + ": " + quote(v) + " (expected: true or false)");
      };
    }
  }

  /** A Consul name (namespace, partition, peer, datacenter): non-blank, no surrounding spaces. */
  static String requireName(String field, String value) {
    requireArgument(value != null && !value.isBlank() && value.equals(value.strip()), field, value,
        "a " + field + " name");
    return value;
  }

  /** The token, checked: non-blank, no surrounding spaces. The message never shows the value. */
  static String checkToken(String field, String t) {
    if (t == null || t.isBlank() || !t.equals(t.strip())) {
      throw new IllegalArgumentException(field + ": " + (t == null ? "null" : "blank or padded")
          + " (expected: a non-blank ACL token)");
    }
    return t;
  }

  /** {@code http(s)://host:port} without a trailing slash; a bare {@code host:port} gets http or https. */
  static String normalizeUrl(String field, String url, boolean ssl) {
    String u = url.trim();
    String expected = "http(s)://host:port";
    if (u.toLowerCase(Locale.ROOT).startsWith("unix://")) {
      throw new IllegalArgumentException(field + ": " + quote(url) + " (expected: " + expected
          + "; unix:// agent sockets are not supported, the JDK HTTP client cannot use them:"
          + " set the agent's addresses.http to 127.0.0.1)");
    }
    if (!u.contains("://")) {
      u = (ssl ? "https://" : "http://") + u;
    }
    URI uri;
    try {
      uri = new URI(u);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException(field + ": " + quote(url) + " (expected: " + expected + ")");
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    String path = uri.getRawPath() == null ? "" : uri.getRawPath();
    if (!(scheme.equals("http") || scheme.equals("https")) || uri.getHost() == null
        || uri.getRawQuery() != null || uri.getRawUserInfo() != null || !(path.isEmpty() || path.equals("/"))) {
      throw new IllegalArgumentException(field + ": " + quote(url) + " (expected: " + expected + ")");
    }
    return scheme + "://" + uri.getRawAuthority();
  }

}
