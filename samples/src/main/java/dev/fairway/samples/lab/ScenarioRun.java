package dev.fairway.samples.lab;

import dev.fairway.lb.ActiveHealth;
import dev.fairway.lb.HealthProbe;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.okhttp.AffinityKey;
import dev.fairway.lb.okhttp.LoadBalancingInterceptor;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig.SlidingWindowType;
import io.github.resilience4j.core.IntervalFunction;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import okhttp3.ConnectionPool;
import okhttp3.Dispatcher;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.HdrHistogram.Recorder;

/**
 * One scenario x strategy: four fresh backends, K fresh clients (each its own balancer and OkHttp
 * client with its own connection pool; K = 1 but for the fleet scenarios), the users spread over
 * them round-robin, a warm-up, the measured window (with the kill and restart of backend-1, the
 * slowdown of backend-1 or the fast failure of backend-2 where the scenario has them), and for
 * {@code recovery} a bounded tail that watches backend-1 win back its share. Everything it starts
 * (server and client threads, pools, balancers and their health checkers) is closed before
 * {@link #run} returns.
 */
final class ScenarioRun {
  /** The logical host the users call: {@code http://backend/work}. */
  static final String SERVICE = "backend";
  static final String USER_HEADER = "X-User";
  /** Target metadata: the backend's admin (health) port. */
  static final String ADMIN_PORT = "admin-port";
  /** Series buckets in the measured window. */
  static final int WINDOW_BUCKETS = 60;
  /** How long after the restart (at time scale 1) recovery watches for backend-1's return. */
  static final Duration RECOVERY_WATCH = Duration.ofSeconds(15);
  /** Recovered: backend-1's share over 3 buckets is at least this fraction of its share before the kill. */
  static final double RECOVERED_FRACTION = 0.8;
  static final int RECOVERY_SMOOTHING_BUCKETS = 3;
  static final int[] WRR_WEIGHTS = {6, 3, 2, 1};
  /**
   * Not scaled: the admin port answers at once, so only a starved machine (a busy CI box at a tiny
   * time scale) makes a probe slow, and that must not take a live backend out of service.
   */
  private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);
  private static final long MAX_CALLS_PER_USER = 50_000_000L;
  /**
   * Every client of a run is derived from this one with {@code newBuilder()}: a client built from
   * scratch loads the platform's trust store for its TLS defaults (tens of milliseconds, fifty times
   * in a fleet), a derived one shares them. It is never called itself; each derived client gets its
   * own dispatcher and connection pool, so it holds no threads or connections.
   */
  private static final OkHttpClient BASE_CLIENT = new OkHttpClient();
  /** A balancer's close waits up to 2 s for each of its two health pools; this bounds all of them together. */
  private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(10);
  /**
   * Active probes go out every second (time scale 1), but not more often than this: at a tiny time
   * scale a fleet's probes (50 balancers x 4 backends) would cost the machine more than its calls.
   */
  private static final Duration MIN_PROBE_INTERVAL = Duration.ofMillis(100);
  /** How long the calls counted in flight get to go to zero once the users have stopped. */
  private static final Duration IN_FLIGHT_DRAIN = Duration.ofSeconds(2);

  /** Called every few milliseconds while a run goes on (the progress line). */
  interface Ticker {
    void tick();
  }

  private final LabOptions options;
  private final Scenario scenario;
  private final String strategy;
  /** Zones: the ports of zone b's backends, where every call pays the cross-zone penalty. */
  private final Set<Integer> crossZonePorts = ConcurrentHashMap.newKeySet();

  ScenarioRun(LabOptions options, Scenario scenario, String strategy) {
    this.options = options;
    this.scenario = scenario;
    this.strategy = strategy;
  }

  /** User {@code user}'s name (0-based): its {@value #USER_HEADER} header, the key strategies' affinity key. */
  static String userName(int user) {
    return "user-" + user;
  }

  static boolean usesKeys(String strategy) {
    return strategy.equals("key-affinity") || strategy.equals("consistent-hash");
  }

  RunResult run(Ticker ticker) throws IOException, InterruptedException {
    double[] serviceSeconds = scenario == Scenario.ZONES ? zoneServiceSeconds() : options.serviceSeconds();
    int users = options.users(scenario);
    long windowNanos = options.duration().toNanos();
    long bucketNanos = windowNanos / WINDOW_BUCKETS;
    // Recovery keeps the load on after the window (outside the measured numbers) until backend-1 is
    // back, for at most half a window or 15 s of the article's clock (the target) after the restart.
    long tailNanos =
        scenario == Scenario.RECOVERY
            ? Math.max(windowNanos / 2, windowNanos * 2 / 3 + options.scaled(RECOVERY_WATCH).toNanos() - windowNanos)
            : 0;
    int buckets = (int) ((windowNanos + tailNanos) / bucketNanos) + 1;
    int clientCount = options.clients(scenario);

    FaultScript faults = scenario.faultScript();
    List<AutoCloseable> resources = new ArrayList<>();
    try {
      Backend[] backends = new Backend[serviceSeconds.length];
      for (int i = 0; i < backends.length; i++) {
        backends[i] =
            new Backend(i + 1, (long) (serviceSeconds[i] * 1e9), options.workers(), options.loadReports()).start();
        resources.add(backends[i]);
        backends[i].reportStyle(LoadReportStyle.of(options, scenario, i));
      }
      faults.prepare(backends);
      if (scenario == Scenario.ZONES) {
        for (int i = Scenario.ZONE_A_BACKENDS; i < backends.length; i++) {
          crossZonePorts.add(backends[i].port());
        }
      }
      // One prober for all balancers: it stands for the health checks, not for a caller. Its pool
      // keeps a connection for every probe that can be out at once (each balancer probes the four
      // backends together): with OkHttp's default of 5 idle connections a fleet's probes would open
      // new connections all the time and overflow the admin port's accept queue.
      OkHttpClient probeClient =
          BASE_CLIENT.newBuilder()
              .callTimeout(PROBE_TIMEOUT)
              .connectionPool(new ConnectionPool(backends.length * clientCount + 8, 1, TimeUnit.MINUTES))
              .build();
      resources.add(() -> shutdown(probeClient));
      LabClient[] clients = new LabClient[clientCount];
      int usersPerClient = (users + clientCount - 1) / clientCount;
      resources.add(() -> closeAll(clients));
      if (options.client() == LabClient.Kind.SPRING) {
        SpringLabClient.startAll(clients, strategy, backends, options);
      } else {
        for (int k = 0; k < clientCount; k++) {
          clients[k] = newFairwayLabClient(backends, usersPerClient, probeClient);
        }
      }

      Users pool = new Users(users, clients, bucketNanos, buckets, windowNanos);
      resources.add(pool::stop);
      pool.setActive(scenario.warmUpUsers(users));
      pool.start();
      sleepUntil(System.nanoTime() + options.warmUp().toNanos(), ticker);

      long start = System.nanoTime();
      long end = start + windowNanos;
      pool.openWindow(start, end);
      long retriesAtStart = retries(clients);
      long hedgesAtStart = hedgesSent(clients);
      FaultScript.Run faultRun = new FaultScript.Run(backends, clients, options, start);
      for (long now = start; now < end; now = System.nanoTime()) {
        double f = (double) (now - start) / windowNanos;
        pool.setActive(scenario.usersAt(f, users));
        faults.step(f, faultRun);
        ticker.tick();
        LockSupport.parkNanos(Math.min(2_000_000L, Math.max(0, end - System.nanoTime())));
      }
      double failingShare = faults.failingShare(backends);
      long retries = retries(clients) - retriesAtStart;
      long hedges = hedgesSent(clients) - hedgesAtStart;

      double bucketSeconds = bucketNanos / 1e9;
      double baseline = Double.NaN;
      double recovery = Double.NaN;
      double faultAt = faults.faultAtSeconds();
      double restartAt = faults.restartAtSeconds();
      if (scenario.killsBackend()) {
        baseline = baselineShare(pool.seriesPerBackend(), bucketSeconds, faultAt);
      }
      if (scenario == Scenario.RECOVERY) {
        watchRecovery(pool, start, end + tailNanos, bucketNanos, restartAt, baseline, ticker);
      }
      double observedSeconds = (System.nanoTime() - start) / 1e9;
      if (scenario == Scenario.RECOVERY) {
        recovery = recoverySeconds(pool.seriesPerBackend(), (int) (observedSeconds / bucketSeconds), bucketSeconds,
            restartAt, baseline);
      }
      pool.stop();
      pool.join(TimeUnit.SECONDS.toNanos(150)); // the calls still out belong to the window: let them end
      int leftInFlight = awaitNothingInFlight(clients, backends);

      long[] perBackend = new long[backends.length];
      long completed = 0;
      for (int i = 0; i < perBackend.length; i++) {
        perBackend[i] = pool.perBackend[i].sum();
        completed += perBackend[i];
      }
      double limit = scenario == Scenario.ZONES
          ? Limit.averagedZonesRps(users, options.workers(), serviceSeconds[0], crossZonePenaltyNanos() / 1e9)
          : Limit.averagedRps(scenario, users, options.workers(), serviceSeconds);
      return new RunResult(scenario, strategy, options.client(), users, clientCount, windowNanos / 1e9, limit,
          new RunResult.Calls(completed, pool.errors.sum(), retries, hedges, perBackend, errorSummary(pool.errorKinds),
              leftInFlight),
          RunResult.Latency.of(pool.latency.getIntervalHistogram()),
          new RunResult.Series(bucketSeconds, pool.seriesPerBackend(), pool.seriesErrors(), observedSeconds),
          new RunResult.Faults(faultAt, restartAt, faults.inFlightAtKill(), recovery, baseline, failingShare));
    } finally {
      for (int i = resources.size() - 1; i >= 0; i--) {
        try {
          resources.get(i).close();
        } catch (Exception e) {
          // Teardown of one part must not keep the others open.
        }
      }
    }
  }

  /**
   * Recovery's tail: keeps the load on (outside the measured window) until backend-1 carries its
   * share again ({@link #recoverySeconds}) or {@code tailEnd}, whichever comes first.
   */
  private static void watchRecovery(Users pool, long start, long tailEnd, long bucketNanos, double restartAt,
      double baseline, Ticker ticker) {
    double bucketSeconds = bucketNanos / 1e9;
    while (System.nanoTime() < tailEnd) {
      int complete = (int) ((System.nanoTime() - start) / bucketNanos);
      if (!Double.isNaN(recoverySeconds(pool.seriesPerBackend(), complete, bucketSeconds, restartAt, baseline))) {
        return;
      }
      ticker.tick();
      LockSupport.parkNanos(bucketNanos);
    }
  }

  /**
   * One client of {@code --client okhttp}, {@code jdk} or {@code hc5}: its own registry and balancer
   * (the same for the three), and its own HTTP client of that kind.
   */
  LabClient newFairwayLabClient(Backend[] backends, int usersPerClient, OkHttpClient probeClient) {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    LoadBalancer balancer = newBalancer(backends, registry, probeClient);
    try {
      return switch (options.client()) {
        case OKHTTP -> new OkHttpLabClient(balancer, newClient(usersPerClient, balancer), registry);
        case JDK -> new JdkLabClient(balancer, registry, options.maxAttempts(), usesKeys(strategy), options.hedging());
        case HC5 -> new Hc5LabClient(balancer, registry, usersPerClient, options.maxAttempts(), usesKeys(strategy),
            options.hedging());
        case SPRING -> throw new IllegalStateException("Spring clients start through SpringLabClient.startAll");
      };
    } catch (RuntimeException e) {
      balancer.close();
      throw e;
    }
  }

  /** Calls in flight now to the backend listening on {@code port}, as {@code balancer} counts them. */
  static int inFlight(LoadBalancer balancer, int port) {
    int sum = 0;
    for (TargetStatus s : balancer.status()) {
      if (s.target().port() == port) {
        sum += s.inFlight();
      }
    }
    return sum;
  }

  /**
   * The balancer of one client. Its targets are the backends at {@code 127.0.0.1:<port>}, each with
   * its admin port in the metadata and the id {@code backend-1} .. {@code backend-N} in backend order
   * ({@link Backend#name}): the ports are new in every run, and {@code consistent-hash} places a key
   * on a ring by target id, so with the default {@code host:port} ids every run (and every client of
   * {@code --client okhttp,jdk,hc5}) would spread the users over the backends, 6:3:2:1 apart in speed,
   * in a new way. The clients route by the target's host and port, never by its id; the lab finds a
   * backend by its port ({@link #inFlight}) or its {@value Backend#BACKEND_HEADER} reply.
   */
  LoadBalancer newBalancer(Backend[] backends, MeterRegistry registry, OkHttpClient probeClient) {
    Target[] targets = new Target[backends.length];
    for (int i = 0; i < backends.length; i++) {
      Target t =
          Target.of("127.0.0.1", backends[i].port())
              .withId(backends[i].name())
              .withMetadata(Map.of(ADMIN_PORT, Integer.toString(backends[i].adminPort())));
      targets[i] = strategy.equals("weighted-round-robin") ? t.withWeight(WRR_WEIGHTS[i]) : t;
      if (scenario == Scenario.ZONES) {
        // Equal backends in two zones: the weights would only blur what the zones do.
        targets[i] = t.withZone(i < Scenario.ZONE_A_BACKENDS ? "a" : "b");
      }
    }
    Strategy s =
        strategy.equals("concurrency-limited")
            ? Strategy.concurrencyLimited(options.workers(), 2 * options.workers())
            : Strategy.named(strategy);
    HealthProbe probe = target -> {
      String url = "http://" + target.host() + ":" + target.metadata().get(ADMIN_PORT) + "/health";
      Request request = new Request.Builder().url(url).build();
      try (Response r = probeClient.newCall(request).execute()) {
        return r.isSuccessful();
      }
    };
    LoadBalancer.Builder builder = LoadBalancer.builder(SERVICE);
    if (scenario == Scenario.ZONES) {
      builder.localZone("a");
    }
    return builder
        .targets(targets)
        .strategy(s)
        .passiveHealth(passiveHealth())
        .activeHealth(
            ActiveHealth.of(probe, max(options.scaled(Duration.ofSeconds(1)), MIN_PROBE_INTERVAL))
                .withTimeout(PROBE_TIMEOUT))
        .slowStart(options.scaled(Duration.ofSeconds(5)))
        .meterRegistry(registry)
        .build();
  }

  /** PassiveHealth.defaults() with its ejection times (10 s doubling to 5 min) on the lab's time scale. */
  private PassiveHealth passiveHealth() {
    CircuitBreakerConfig config =
        CircuitBreakerConfig.custom()
            // slidingWindow(size, minimumCalls, type) is missing from Resilience4j 2.3.0 (only its
            // 4-argument form, new in 2.3.0, is there), so the three setters that every supported version has
            .slidingWindowType(SlidingWindowType.COUNT_BASED)
            .slidingWindowSize(20)
            .minimumNumberOfCalls(10)
            .failureRateThreshold(50)
            .permittedNumberOfCallsInHalfOpenState(3)
            .waitIntervalFunctionInOpenState(
                IntervalFunction.ofExponentialBackoff(
                    options.scaled(Duration.ofSeconds(10)), 2.0, options.scaled(Duration.ofMinutes(5))))
            .build();
    return PassiveHealth.of(config).withConsecutiveFailures(5);
  }

  private OkHttpClient newClient(int users, LoadBalancer balancer) {
    Dispatcher dispatcher = new Dispatcher();
    dispatcher.setMaxRequests(users + 64);
    dispatcher.setMaxRequestsPerHost(users + 64);
    LoadBalancingInterceptor.Builder interceptor =
        LoadBalancingInterceptor.builder().service(SERVICE, balancer).maxAttempts(options.maxAttempts());
    if (usesKeys(strategy)) {
      interceptor.affinityKey(AffinityKey.header(USER_HEADER));
    }
    if (options.hedging() != null) {
      interceptor.hedging(options.hedging());
    }
    OkHttpClient.Builder builder = BASE_CLIENT.newBuilder();
    if (scenario == Scenario.ZONES) {
      long penalty = crossZonePenaltyNanos();
      builder.addNetworkInterceptor(chain -> {
        if (crossZonePorts.contains(chain.request().url().port())) {
          crossZoneHop(penalty);
        }
        return chain.proceed(chain.request());
      });
    }
    return builder
        .dispatcher(dispatcher)
        .connectionPool(new ConnectionPool(users + 64, 1, TimeUnit.MINUTES))
        .addInterceptor(interceptor.build())
        .connectTimeout(Duration.ofSeconds(2))
        .readTimeout(Duration.ofSeconds(60))
        .callTimeout(Duration.ofSeconds(120))
        .build();
  }

  /**
   * The calls the clients still count in flight once every user has stopped, polled until there are
   * none or {@link #IN_FLIGHT_DRAIN} has passed: every call path releases its pick, but a client may
   * do it on one of its own threads just after the user's call returned.
   */
  private static int awaitNothingInFlight(LabClient[] clients, Backend[] backends) {
    long deadline = System.nanoTime() + IN_FLIGHT_DRAIN.toNanos();
    for (;;) {
      int sum = 0;
      for (Backend b : backends) {
        sum += FaultScript.inFlight(clients, b);
      }
      if (sum == 0 || System.nanoTime() - deadline >= 0) {
        return sum;
      }
      LockSupport.parkNanos(5_000_000L);
    }
  }

  /**
   * Closes every client (and its balancer), all at once: a balancer's close waits for the health
   * probes it has out (up to their timeout), and fifty of those one after the other would take
   * longer than the run.
   */
  private static void closeAll(LabClient[] clients) throws InterruptedException {
    Thread[] closers = new Thread[clients.length];
    for (int k = 0; k < clients.length; k++) {
      LabClient client = clients[k];
      closers[k] = new Thread(() -> {
        if (client != null) {
          client.close();
        }
      }, "lab-close-" + k);
      closers[k].start();
    }
    long deadline = System.nanoTime() + CLOSE_TIMEOUT.toNanos();
    for (Thread closer : closers) {
      closer.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
    }
  }

  static void shutdown(OkHttpClient client) {
    client.dispatcher().cancelAll();
    client.dispatcher().executorService().shutdownNow();
    client.connectionPool().evictAll();
  }

  /** Retries over every client (the interceptors' {@code fairway.retries}, or Spring's counted attempts). */
  private static long retries(LabClient[] clients) {
    long sum = 0;
    for (LabClient client : clients) {
      sum += client.retries();
    }
    return sum;
  }

  /** Every backend at {@link Scenario#ZONE_SERVICE}, scaled. */
  private double[] zoneServiceSeconds() {
    double[] s = new double[4];
    java.util.Arrays.fill(s, options.scaled(Scenario.ZONE_SERVICE).toNanos() / 1e9);
    return s;
  }

  private long crossZonePenaltyNanos() {
    return options.scaled(Scenario.CROSS_ZONE_PENALTY).toNanos();
  }

  /** The cross-zone hop: the caller waits {@code nanos} before the request leaves; a cancel ends it. */
  private static void crossZoneHop(long nanos) throws java.io.InterruptedIOException {
    long deadline = System.nanoTime() + nanos;
    for (long left = nanos; left > 0; left = deadline - System.nanoTime()) {
      LockSupport.parkNanos(left);
      if (Thread.interrupted()) {
        Thread.currentThread().interrupt();
        throw new java.io.InterruptedIOException("cancelled during the cross-zone hop");
      }
    }
  }

  /**
   * A Fairway client's retries, from its balancer's registry: {@code fairway.retries}, which
   * lb-okhttp, lb-jdk-httpclient and lb-apache-httpclient5 record alike (lb-core's call meters).
   */
  static long retriesCounted(MeterRegistry registry) {
    double sum = 0;
    for (Counter c : registry.find("fairway.retries").counters()) {
      sum += c.count();
    }
    return Math.round(sum);
  }

  /** A Fairway client's hedges, from its balancer's registry: {@code fairway.hedges{result=sent}}. */
  static long hedgesCounted(MeterRegistry registry) {
    double sum = 0;
    for (Counter c : registry.find("fairway.hedges").tag("result", "sent").counters()) {
      sum += c.count();
    }
    return Math.round(sum);
  }

  /** Hedges the clients sent ({@code fairway.hedges{result=sent}}), over every client. */
  private static long hedgesSent(LabClient[] clients) {
    long sum = 0;
    for (LabClient client : clients) {
      sum += client.hedgesSent();
    }
    return sum;
  }

  private static Duration max(Duration a, Duration b) {
    return a.compareTo(b) >= 0 ? a : b;
  }

  /** "3 x SocketException: Connection reset; 1 x ..." , most frequent first. */
  private static String errorSummary(Map<String, LongAdder> kinds) {
    StringBuilder sb = new StringBuilder();
    kinds.entrySet().stream()
        .sorted((a, b) -> Long.compare(b.getValue().sum(), a.getValue().sum()))
        .limit(3)
        .forEach(e -> sb.append(sb.length() == 0 ? "" : "; ").append(e.getValue().sum()).append(" x ").append(e.getKey()));
    return sb.toString();
  }

  private static void sleepUntil(long deadline, Ticker ticker) {
    for (long left = deadline - System.nanoTime(); left > 0; left = deadline - System.nanoTime()) {
      ticker.tick();
      LockSupport.parkNanos(Math.min(left, 20_000_000L));
    }
  }

  /** Backend-1's share of successful completions before the kill. */
  static double baselineShare(long[][] series, double bucketSeconds, double killAt) {
    int last = (int) Math.floor(killAt / bucketSeconds);
    long one = 0;
    long all = 0;
    for (int b = 0; b < last && b < series.length; b++) {
      one += series[b][0];
      for (long n : series[b]) {
        all += n;
      }
    }
    return all == 0 ? Double.NaN : (double) one / all;
  }

  /**
   * Seconds from the restart to the end of the first span of {@value #RECOVERY_SMOOTHING_BUCKETS}
   * buckets (all after the restart, among the first {@code complete}: a bucket still filling could
   * cross the line and fall back) in which backend-1 served at least {@value #RECOVERED_FRACTION} of
   * its share before the kill; NaN if there is none yet.
   */
  static double recoverySeconds(long[][] series, int complete, double bucketSeconds, double restartAt, double baseline) {
    if (Double.isNaN(restartAt) || Double.isNaN(baseline)) {
      return Double.NaN;
    }
    int first = (int) Math.ceil(restartAt / bucketSeconds);
    for (int k = first + RECOVERY_SMOOTHING_BUCKETS - 1; k < Math.min(complete, series.length); k++) {
      long one = 0;
      long all = 0;
      for (int b = k - RECOVERY_SMOOTHING_BUCKETS + 1; b <= k; b++) {
        one += series[b][0];
        for (long n : series[b]) {
          all += n;
        }
      }
      if (all > 0 && (double) one / all >= RECOVERED_FRACTION * baseline) {
        return (k + 1) * bucketSeconds - restartAt;
      }
    }
    return Double.NaN;
  }

  /**
   * N closed-loop users, each a thread that sends GETs back to back (no think time) through client
   * {@code user % K}. Only the first {@link #setActive} of them send; the others wait on a monitor,
   * so burst changes N without starting threads. Every loop is bounded by a call count and by
   * {@link #stop}.
   */
  static final class Users {
    private final Thread[] threads;
    private final LabClient[] clients;
    private final Object gate = new Object();
    private final long bucketNanos;
    private final int buckets;
    private volatile int active;
    private volatile boolean running = true;
    private volatile long windowStart = Long.MAX_VALUE;
    private volatile long windowEnd = Long.MAX_VALUE;
    final Recorder latency = new Recorder(3);
    final LongAdder[] perBackend = new LongAdder[4];
    final LongAdder errors = new LongAdder();
    /** Caller-visible errors in the window by exception and message. */
    final Map<String, LongAdder> errorKinds = new ConcurrentHashMap<>();
    /** [bucket * 5 + backend] successes, [bucket * 5 + 4] errors, by completion time. */
    private final AtomicLongArray series;

    Users(int count, LabClient[] clients, long bucketNanos, int buckets, long windowNanos) {
      this.clients = clients;
      this.bucketNanos = bucketNanos;
      this.buckets = buckets;
      this.series = new AtomicLongArray(buckets * 5);
      for (int i = 0; i < perBackend.length; i++) {
        perBackend[i] = new LongAdder();
      }
      threads = new Thread[count];
      for (int i = 0; i < count; i++) {
        int user = i;
        threads[i] = new Thread(() -> loop(user), "lab-user-" + i);
        threads[i].setDaemon(true);
      }
    }

    void start() {
      for (Thread t : threads) {
        t.start();
      }
    }

    void setActive(int n) {
      int clamped = Math.min(n, threads.length);
      if (clamped != active) {
        synchronized (gate) {
          active = clamped;
          gate.notifyAll();
        }
      }
    }

    void openWindow(long start, long end) {
      windowEnd = end;
      windowStart = start;
    }

    void stop() {
      running = false;
      synchronized (gate) {
        gate.notifyAll();
      }
    }

    void join(long timeoutNanos) throws InterruptedException {
      long deadline = System.nanoTime() + timeoutNanos;
      for (Thread t : threads) {
        long left = deadline - System.nanoTime();
        if (left > 0) {
          t.join(Math.max(1, left / 1_000_000));
        }
      }
    }

    private void loop(int user) {
      LabClient.Call call = clients[user % clients.length].caller(userName(user));
      for (long calls = 0; running && calls < MAX_CALLS_PER_USER; ) {
        if (user >= active) {
          synchronized (gate) {
            while (running && user >= active) {
              try {
                gate.wait(100);
              } catch (InterruptedException e) {
                return;
              }
            }
          }
          continue;
        }
        calls++;
        long start = System.nanoTime();
        int backend = -1;
        String failure = null;
        try {
          LabClient.Reply r = call.get();
          if (r.status() == 200 && r.backend() != null) {
            backend = Integer.parseInt(r.backend()) - 1;
          } else {
            failure = "HTTP " + r.status();
          }
        } catch (IOException | RuntimeException e) {
          failure = e.getClass().getSimpleName() + ": " + e.getMessage();
        }
        long end = System.nanoTime();
        // A call belongs to the window it started in and is followed to its end: the per-backend split
        // is then exactly the balancer's choices (round robin's is even to the call), and the
        // slowest calls at the window's edge are not left out of the percentiles.
        boolean counted = start >= windowStart && start < windowEnd;
        boolean ok = backend >= 0 && backend < 4;
        if (counted) {
          if (ok) {
            latency.recordValue(Math.max(1, (end - start) / 1000));
            perBackend[backend].increment();
          } else {
            errors.increment();
            errorKinds.computeIfAbsent(String.valueOf(failure), k -> new LongAdder()).increment();
          }
        }
        long ws = windowStart;
        if (running && end >= ws) {
          long bucket = (end - ws) / bucketNanos;
          if (bucket < buckets) {
            series.incrementAndGet((int) bucket * 5 + (ok ? backend : 4));
          }
        }
      }
    }

    long[][] seriesPerBackend() {
      long[][] out = new long[buckets][4];
      for (int b = 0; b < buckets; b++) {
        for (int i = 0; i < 4; i++) {
          out[b][i] = series.get(b * 5 + i);
        }
      }
      return out;
    }

    long[] seriesErrors() {
      long[] out = new long[buckets];
      for (int b = 0; b < buckets; b++) {
        out[b] = series.get(b * 5 + 4);
      }
      return out;
    }
  }
}
