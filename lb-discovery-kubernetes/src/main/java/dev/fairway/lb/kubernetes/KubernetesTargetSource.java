package dev.fairway.lb.kubernetes;

import static dev.fairway.lb.internal.Args.quote;
import static dev.fairway.lb.internal.Args.requireArgument;
import static dev.fairway.lb.internal.Args.requireUnset;
import static dev.fairway.lb.internal.Args.requireUnsetSecret;

import dev.fairway.lb.Target;
import dev.fairway.lb.TargetSource;
import dev.fairway.lb.internal.DiscoveryMetrics;
import dev.fairway.lb.internal.TargetListPublisher;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.File;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A live list of a Kubernetes Service's endpoints, read from its EndpointSlices
 * ({@code discovery.k8s.io/v1}, label {@code kubernetes.io/service-name}) and kept current with a watch.
 *
 * <pre>{@code
 * KubernetesTargetSource orders = KubernetesTargetSource.builder("orders")   // in a pod: its service account
 *     .portName("http")                               // the Service port's name
 *     .build();                                       // starts listing and watching at once
 * orders.whenReady().get(5, TimeUnit.SECONDS);        // optional: the first list, or a 403 explained
 * LoadBalancer lb = LoadBalancer.builder("orders").targets(orders).build();
 * }</pre>
 *
 * <p>Where the API server is: in a pod, as client-go's in-cluster config ({@code
 * $KUBERNETES_SERVICE_HOST}, {@code $KUBERNETES_SERVICE_PORT}, and the service account's {@code token},
 * {@code ca.crt} and {@code namespace} under {@code /var/run/secrets/kubernetes.io/serviceaccount});
 * outside one, a kubeconfig ({@link Builder#kubeconfig(Path)}, else {@code $KUBECONFIG}, else
 * {@code ~/.kube/config}; needs {@code org.yaml:snakeyaml} on the class path); or any URL with
 * {@link Builder#apiServer(String)}, e.g. {@code kubectl proxy}'s. The token is read from its file for
 * every request, so the kubelet's rotation of bound tokens is followed. The service account needs get,
 * list and watch on {@code endpointslices} in API group {@code discovery.k8s.io} (a Role and a
 * RoleBinding); without them {@link #whenReady()} fails with a {@link KubernetesApiException} that says so.
 *
 * <p>What becomes a target (the rules in full, with reasons, are those of kube-proxy):
 *
 * <ul>
 *   <li>Each endpoint's first address with the chosen port ({@link Builder#portName}, {@link Builder#port},
 *       or the slice's only TCP port), weight 1 (EndpointSlices carry no weights: to weight, run a
 *       Service per weight class and a balancer or subset over each, or let load-aware strategies such as
 *       the default adapt to measured capacity), zone = the endpoint's {@code zone}, metadata
 *       {@code zone}, {@code node} and {@code pod}.
 *   <li>Several slices are merged; an address in two slices (while the controller moves it) counts once;
 *       in a dual-stack Service a Pod counts once, in IPv4 unless {@link Builder#preferIpv6()}.
 *       {@code FQDN} slices are skipped with a reason.
 *   <li>Ready endpoints take calls. Serving but terminating ones take calls only when no endpoint is ready.
 *       An endpoint that leaves the list takes no new calls, and the calls already sent to it finish: the
 *       balancer only stops picking it.
 *   <li>Topology hints: with a local zone ({@link Builder#localZone}, else {@code $FAIRWAY_LOCAL_ZONE}, which a
 *       pod can get from the downward API), when every endpoint carries {@code hints.forZones} and some are
 *       for the local zone, a target's zone is the zone it is hinted for (the local zone if among them).
 *       Give the balancer the same zone ({@code LoadBalancer.Builder.localZone}): it keeps calls on the
 *       controller's allocation and spills to other zones when the local side is unhealthy.
 *   <li>A slice or endpoint that cannot be read is skipped on its own with a warning and
 *       {@code fairway.discovery.skipped{reason}}; a slice keeps its last good version.
 *   <li>On errors the last good list stays, {@code fairway.discovery.errors{reason}} counts them, and the
 *       watch backs off exponentially with full jitter (1 s growing to 60 s). {@code 410 Gone} lists again
 *       without dropping the list. {@code fairway.discovery.staleness} is 0 while a watch is open and
 *       otherwise the time since the API server last confirmed the list.
 * </ul>
 *
 * <p>Thread-safe. Each source has a loop thread ({@code fairway-kubernetes-<service>}), one HTTP worker
 * and the JDK HTTP client's selector thread, and one watch connection to the API server. Listeners are
 * called on the loop thread, one change at a time, in order. {@link #close()} closes the watch at once.
 */
public final class KubernetesTargetSource implements TargetSource {
  /** The environment variable read for the local zone when the builder sets none. */
  public static final String LOCAL_ZONE_ENV = "FAIRWAY_LOCAL_ZONE";

  static final Duration DEFAULT_WATCH_TIMEOUT = Duration.ofMinutes(5);
  static final Duration DEFAULT_BACKOFF_INITIAL = Duration.ofSeconds(1);
  static final Duration DEFAULT_BACKOFF_MAX = Duration.ofSeconds(60);
  static final Duration LIST_TIMEOUT = Duration.ofSeconds(30);
  static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
  static final Duration WATCH_GRACE = Duration.ofSeconds(30);
  /** A DNS-1035 label: what Kubernetes accepts as a Service name. */
  private static final Pattern SERVICE_NAME = Pattern.compile("[a-z]([-a-z0-9]{0,61}[a-z0-9])?");
  /** A DNS-1123 label: what Kubernetes accepts as a namespace. */
  private static final Pattern NAMESPACE = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");

  private final String service;
  private final ClusterConnection connection;
  private final String localZone;
  private static final System.Logger LOG = System.getLogger(KubernetesTargetSource.class.getName());

  private final DiscoveryMetrics metrics;
  private final TargetListPublisher publisher;
  private final SliceWatch watch;
  private final ScheduledThreadPoolExecutor loop;
  private final ThreadPoolExecutor httpWorker;
  private final AtomicBoolean closed = new AtomicBoolean();

  private KubernetesTargetSource(Builder b, ClusterConnection connection, String localZone) {
    this.service = b.service;
    this.connection = connection;
    this.localZone = localZone;
    this.loop = new ScheduledThreadPoolExecutor(1, r -> daemon(r, "fairway-kubernetes-" + b.service));
    loop.setRemoveOnCancelPolicy(true);
    this.httpWorker = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
        r -> daemon(r, "fairway-kubernetes-http-" + b.service));
    // Nothing below starts a thread or a request; if it fails, the two executors are all there is to stop.
    try {
      ApiHttp http = new JdkApiHttp(connection, CONNECT_TIMEOUT, httpWorker);
      this.metrics = b.meterRegistry == null
          ? DiscoveryMetrics.NOOP
          : DiscoveryMetrics.micrometer(b.meterRegistry, service, this::stalenessNanos, TimeUnit.NANOSECONDS,
              this::targetCount);
      this.publisher = new TargetListPublisher(service, "KubernetesTargetSource(" + service + ")", LOG, metrics);
      Duration initial = b.backoffInitial == null ? DEFAULT_BACKOFF_INITIAL : b.backoffInitial;
      Duration max = b.backoffMax == null ? DEFAULT_BACKOFF_MAX : b.backoffMax;
      Backoff backoff = new Backoff(initial.toNanos(), max.toNanos(), () -> ThreadLocalRandom.current().nextDouble());
      PortChoice port = b.portName != null ? PortChoice.named(b.portName)
          : b.port != null ? PortChoice.number(b.port) : PortChoice.ONLY;
      Duration watchTimeout = b.watchTimeout == null ? DEFAULT_WATCH_TIMEOUT : b.watchTimeout;
      Duration grace = b.watchGrace == null ? WATCH_GRACE : b.watchGrace;
      SliceWatch.Settings settings = new SliceWatch.Settings(service, connection.namespace(), port, localZone,
          b.preferIpv6, LIST_TIMEOUT.toNanos(), watchTimeout.toSeconds(), grace.toNanos());
      SliceWatch.Scheduler scheduler = new SliceWatch.Scheduler() {
        @Override
        public Future<?> schedule(Runnable task, long delayNanos) {
          return loop.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
        }

        @Override
        public void execute(Runnable task) {
          if (!loop.isShutdown()) {
            loop.execute(task);
          }
        }
      };
      this.watch = new SliceWatch(settings, http, scheduler, System::nanoTime,
          () -> ThreadLocalRandom.current().nextDouble(), backoff, metrics, new SliceWatch.Sink() {
            @Override
            public void publish(List<Target> targets) {
              publisher.publish(targets, "the EndpointSlices now hold no usable endpoint");
            }

            @Override
            public void refused(KubernetesApiException e) {
              publisher.failReady(e);
            }
          });
    } catch (RuntimeException e) {
      loop.shutdownNow();
      httpWorker.shutdownNow();
      throw e;
    }
    watch.start();
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  /** A builder for the source of the Service {@code serviceName} (a DNS-1035 label, as Kubernetes requires). */
  public static Builder builder(String serviceName) {
    return new Builder(serviceName);
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
   * Completes with the first list (also when it is empty: a Service without endpoints). Fails with
   * {@link KubernetesApiException} if the API server refuses access (403, 401) before that; a later
   * successful list makes a new call return a completed future. Fails with
   * {@link CancellationException} if the source is closed first. Await it with a timeout.
   */
  @Override
  public CompletableFuture<List<Target>> whenReady() {
    return publisher.whenReady();
  }

  /** The watched Service's name. */
  public String service() {
    return service;
  }

  /** The namespace read: the builder's, else the pod's, else the kubeconfig context's, else {@code default}. */
  public String namespace() {
    return connection.namespace();
  }

  /** The local zone the hints are followed for; {@code ""} when unknown (hints are then ignored). */
  public String localZone() {
    return localZone;
  }

  /**
   * Stops the watch, drops the listeners, unregisters the meters and stops the threads.
   * {@link #targets()} stays readable. Idempotent.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    watch.close();
    publisher.close();
    metrics.close();
    loop.shutdown(); // after the watch's closing step, which is queued
    httpWorker.shutdown();
  }

  @Override
  public String toString() {
    return "KubernetesTargetSource{service=" + service + ", namespace=" + connection.namespace()
        + ", server=" + connection.server() + (localZone.isEmpty() ? "" : ", localZone=" + localZone)
        + ", targets=" + targets().size() + "}";
  }

  SliceWatch watch() {
    return watch;
  }

  // The gauges may be read before the constructor has finished.
  private double stalenessNanos() {
    SliceWatch w = watch;
    return w == null ? 0 : w.stalenessNanos();
  }

  private double targetCount() {
    TargetListPublisher p = publisher;
    return p == null ? 0 : p.targets().size();
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * Configures a {@link KubernetesTargetSource}. Every setter validates its argument and names it in the
   * message ({@link IllegalArgumentException}); each option may be set once ({@link IllegalStateException}).
   * Not thread-safe.
   */
  public static final class Builder {
    private final String service;
    private @Nullable String namespace;
    private @Nullable String portName;
    private @Nullable Integer port;
    private @Nullable String localZone;
    private boolean preferIpv6;
    private @Nullable String apiServer;
    private @Nullable String token;
    private @Nullable Path tokenFile;
    private @Nullable Path caCertificate;
    private @Nullable Path kubeconfig;
    private @Nullable String kubeconfigContext;
    private @Nullable MeterRegistry meterRegistry;
    private @Nullable Duration backoffInitial;
    private @Nullable Duration backoffMax;
    private @Nullable Duration watchTimeout;
    private @Nullable Duration watchGrace;
    private @Nullable Map<String, String> environment;
    private @Nullable Path serviceAccountDir;

    Builder(String service) {
      requireArgument(service != null && SERVICE_NAME.matcher(service).matches(), "serviceName", service,
          "a Kubernetes Service name: lower-case letters, digits and '-', starting with a letter, at most 63");
      this.service = service;
    }

    /** The Service's namespace. Default: the pod's own (in a pod), the kubeconfig context's, else {@code default}. */
    public Builder namespace(String namespace) {
      requireUnset("namespace", this.namespace);
      requireArgument(namespace != null && NAMESPACE.matcher(namespace).matches(), "namespace", namespace,
          "a Kubernetes namespace name: lower-case letters, digits and '-', at most 63");
      this.namespace = namespace;
      return this;
    }

    /**
     * The Service port to use, by its name ({@code ""} for the unnamed port of a one-port Service). Each
     * slice is read for the port of that name; a slice without it is skipped with reason {@code no_port}.
     * Default: each slice's only TCP port.
     */
    public Builder portName(String name) {
      requireUnset("portName", portName);
      requireUnset("port", port);
      requireArgument(name != null && name.length() <= 63 && !name.isBlank() == !name.isEmpty(), "portName", name,
          "a Service port name, or \"\" for the unnamed port");
      this.portName = name;
      return this;
    }

    /**
     * The endpoints' port by number (the Pods' target port, as the slices list it; also used for slices
     * whose port is unset, "all ports"). Default: each slice's only TCP port.
     */
    public Builder port(int number) {
      requireUnset("port", port);
      requireUnset("portName", portName);
      requireArgument(number >= 1 && number <= 65535, "port", number, "1..65535");
      this.port = number;
      return this;
    }

    /**
     * The zone this client runs in, for topology hints; {@code ""} for none. Default:
     * {@code $FAIRWAY_LOCAL_ZONE} (set it from a Pod label or annotation with the downward API), else none.
     */
    public Builder localZone(String zone) {
      requireUnset("localZone", localZone);
      requireArgument(zone != null && zone.equals(zone.strip()), "localZone", zone,
          "a zone name without surrounding spaces, or \"\" for none");
      this.localZone = zone;
      return this;
    }

    /** In a dual-stack Service, a Pod's IPv6 address instead of its IPv4 one. */
    public Builder preferIpv6() {
      this.preferIpv6 = true;
      return this;
    }

    /**
     * The API server's base URL, instead of the in-cluster configuration or a kubeconfig; e.g.
     * {@code http://127.0.0.1:8001} for {@code kubectl proxy}. With https, the server's certificate is
     * checked against {@link #caCertificate(Path)}, else the JDK's trusted authorities.
     */
    public Builder apiServer(String url) {
      requireUnset("apiServer", apiServer);
      URI uri = null;
      try {
        uri = url == null ? null : URI.create(url);
      } catch (IllegalArgumentException e) {
        // reported below
      }
      requireArgument(uri != null && uri.getHost() != null && ("http".equals(uri.getScheme())
              || "https".equals(uri.getScheme())) && uri.getRawQuery() == null && uri.getUserInfo() == null,
          "apiServer", url, "an http or https URL such as https://10.96.0.1:443, without query or user");
      this.apiServer = url;
      return this;
    }

    /** A bearer token for {@link #apiServer(String)}: sent in the Authorization header, never logged. */
    public Builder token(String bearerToken) {
      requireUnsetSecret("token", token);
      requireUnset("tokenFile", tokenFile);
      requireArgument(bearerToken != null && !bearerToken.isBlank(), "token", bearerToken == null ? null : "(blank)",
          "a non-blank token");
      this.token = bearerToken.strip();
      return this;
    }

    /** A file holding the bearer token for {@link #apiServer(String)}, read again for every request. */
    public Builder tokenFile(Path file) {
      requireUnset("tokenFile", tokenFile);
      requireUnsetSecret("token", token);
      requireArgument(file != null && Files.isReadable(file), "tokenFile", file, "a readable file");
      this.tokenFile = file;
      return this;
    }

    /** The PEM file of the authority that signs the API server's certificate, for {@link #apiServer(String)}. */
    public Builder caCertificate(Path pemFile) {
      requireUnset("caCertificate", caCertificate);
      requireArgument(pemFile != null && Files.isReadable(pemFile), "caCertificate", pemFile, "a readable PEM file");
      this.caCertificate = pemFile;
      return this;
    }

    /** Read this kubeconfig's current context (needs {@code org.yaml:snakeyaml}). */
    public Builder kubeconfig(Path file) {
      return kubeconfig(file, null);
    }

    /** Read this kubeconfig's context {@code context}, or its current one if null (needs {@code org.yaml:snakeyaml}). */
    public Builder kubeconfig(Path file, @Nullable String context) {
      requireUnset("kubeconfig", kubeconfig);
      requireArgument(file != null && Files.isReadable(file), "kubeconfig", file, "a readable kubeconfig file");
      requireArgument(context == null || !context.isBlank(), "kubeconfig context", context, "a context name or null");
      this.kubeconfig = file;
      this.kubeconfigContext = context;
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
     * The shortest {@code timeoutSeconds} of a watch; each watch draws one between it and twice it, as
     * client-go does. Default 5 minutes; whole seconds, 1 s to 1 h.
     */
    public Builder watchTimeout(Duration timeout) {
      requireUnset("watchTimeout", watchTimeout);
      requireArgument(timeout != null && timeout.toSeconds() >= 1 && timeout.compareTo(Duration.ofHours(1)) <= 0
          && timeout.toNanos() % 1_000_000_000L == 0, "watchTimeout", timeout, "whole seconds, PT1S..PT1H");
      this.watchTimeout = timeout;
      return this;
    }

    /** Test hook: how long past its timeoutSeconds a watch stream may stay open before it counts as stalled. */
    Builder watchGrace(Duration grace) {
      this.watchGrace = grace;
      return this;
    }

    /** Test hook: the environment read instead of {@link System#getenv()}. */
    Builder environment(Map<String, String> env) {
      this.environment = Map.copyOf(env);
      return this;
    }

    /** Test hook: where the service account's files are instead of {@link ClusterConnection#SERVICE_ACCOUNT}. */
    Builder serviceAccountDir(Path dir) {
      this.serviceAccountDir = dir;
      return this;
    }

    /** Builds the source and starts listing and watching at once. */
    public KubernetesTargetSource build() {
      Map<String, String> env = environment != null ? environment : System.getenv();
      String zone = localZone != null ? localZone : env.getOrDefault(LOCAL_ZONE_ENV, "").strip();
      return new KubernetesTargetSource(this, connection(env), zone);
    }

    private ClusterConnection connection(Map<String, String> env) {
      if (apiServer != null) {
        if (kubeconfig != null) {
          throw new IllegalStateException("apiServer and kubeconfig were both set (expected: one of them)");
        }
        return new ClusterConnection(apiServer, caCertificate == null ? null
            : ClusterConnection.trusting(caCertificate, "caCertificate"), tokenFile, token,
            namespace != null ? namespace : "default", "apiServer " + apiServer);
      }
      if (token != null || tokenFile != null || caCertificate != null) {
        throw new IllegalStateException("token, tokenFile and caCertificate go with apiServer, which was not set");
      }
      if (kubeconfig != null) {
        return fromKubeconfig(kubeconfig, kubeconfigContext);
      }
      String host = env.get("KUBERNETES_SERVICE_HOST");
      if (host != null && !host.isBlank()) {
        return ClusterConnection.inCluster(env,
            serviceAccountDir != null ? serviceAccountDir : ClusterConnection.SERVICE_ACCOUNT, namespace);
      }
      String list = env.get("KUBECONFIG");
      Path file = null;
      if (list != null && !list.isBlank()) {
        int end = list.indexOf(File.pathSeparatorChar);
        file = Path.of(end < 0 ? list : list.substring(0, end)); // kubectl merges a list; the first file here
      } else {
        String home = System.getProperty("user.home");
        if (home != null && Files.isReadable(Path.of(home, ".kube", "config"))) {
          file = Path.of(home, ".kube", "config");
        }
      }
      if (file == null) {
        throw new IllegalArgumentException("KUBERNETES_SERVICE_HOST: null (expected: running in a pod; outside"
            + " one, set apiServer(url) or kubeconfig(path), or $KUBECONFIG, or create ~/.kube/config)");
      }
      return fromKubeconfig(file, null);
    }

    private ClusterConnection fromKubeconfig(Path file, @Nullable String context) {
      if (!Kubeconfig.available()) {
        throw new IllegalStateException("kubeconfig " + file + ": reading it needs org.yaml:snakeyaml on the class"
            + " path (or use apiServer(url), e.g. with kubectl proxy)");
      }
      return Kubeconfig.load(file, context, namespace);
    }

    @Override
    public String toString() {
      return "KubernetesTargetSource.Builder{service=" + quote(service) + "}";
    }
  }
}
