package dev.fairway.samples.lab;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Target;
import dev.fairway.lb.okhttp.LoadBalancingInterceptor;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import okhttp3.ConnectionPool;
import okhttp3.Dispatcher;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * {@link Scenario#ROLLING} for one drain period: four backends behind a {@link PropagatingSource};
 * users send GET and POST in turn. Each backend in turn leaves discovery, keeps serving for the
 * drain, is killed (listener and connections closed), starts again on its port {@link #RESTART_AFTER}
 * later and rejoins; the next one leaves once the balancer has seen it back and {@link #SETTLE} has
 * passed. The balancer (Fairway's default strategy) stops picking a backend when the list without it
 * arrives, and lets the calls it already sent finish. The interceptor retries a POST only when it was
 * surely not sent (connect failure), a GET also after it may have been. Every loop is bounded by a
 * call count and by the schedule; everything started is closed before {@link #run} returns.
 */
final class RollingRun {
  /** How long a change takes to reach the balancer, at time scale 1. */
  static final Duration PROPAGATION = Duration.ofSeconds(1);
  /** The drains of the table's rows, at time scale 1: longer than the propagation, shorter, none. */
  static final List<Duration> DRAINS = List.of(Duration.ofSeconds(2), Duration.ofMillis(500), Duration.ZERO);
  static final Duration RESTART_AFTER = Duration.ofSeconds(1);
  static final Duration SETTLE = Duration.ofSeconds(1);
  /** Every backend's service time, at time scale 1: the same for all, the drain is what varies. */
  static final Duration SERVICE = Duration.ofMillis(50);
  static final int USERS = 20;
  private static final int BACKENDS = 4;
  private static final long MAX_CALLS_PER_USER = 5_000_000L;
  private static final MediaType TEXT = MediaType.get("text/plain; charset=utf-8");
  private static final OkHttpClient BASE_CLIENT = new OkHttpClient();

  /** What one drain period measured. */
  record Result(Duration drain, Duration propagation, double seconds, long getCalls, long getErrors, long postCalls,
      long postErrors, long retries, String errorSummary) {}

  private final LabOptions options;
  private final Duration drain;

  RollingRun(LabOptions options, Duration drainAtScaleOne) {
    this.options = options;
    this.drain = drainAtScaleOne;
  }

  Result run() throws IOException, InterruptedException {
    Duration propagation = options.scaled(PROPAGATION);
    long drainNanos = drain.isZero() ? 0 : options.scaled(drain).toNanos();
    List<AutoCloseable> resources = new ArrayList<>();
    Backend[] backends = new Backend[BACKENDS];
    Target[] targets = new Target[BACKENDS];
    OkHttpClient client = null;
    Users users = null;
    try {
      for (int i = 0; i < BACKENDS; i++) {
        backends[i] = new Backend(i + 1, options.scaled(SERVICE).toNanos(), options.workers()).start();
        resources.add(backends[i]);
        targets[i] = Target.of("127.0.0.1", backends[i].port());
      }
      PropagatingSource discovery = new PropagatingSource(List.of(targets), propagation);
      resources.add(discovery);
      MeterRegistry registry = new SimpleMeterRegistry();
      LoadBalancer balancer = LoadBalancer.builder(ScenarioRun.SERVICE).targets(discovery.balancerView())
          .meterRegistry(registry).build();
      resources.add(balancer);
      client = newClient(balancer);
      users = new Users(client);
      users.start();
      sleep(options.scaled(SETTLE).toNanos()); // connections open, the JIT warm
      users.count = true;
      long start = System.nanoTime();
      for (int i = 0; i < BACKENDS; i++) {
        discovery.leave(targets[i]);
        sleep(drainNanos);
        backends[i].kill();
        sleep(options.scaled(RESTART_AFTER).toNanos());
        backends[i].restart();
        discovery.join(targets[i]);
        sleep(propagation.toNanos() + options.scaled(SETTLE).toNanos());
      }
      users.count = false;
      double seconds = (System.nanoTime() - start) / 1e9;
      users.stop();
      users.join(TimeUnit.SECONDS.toNanos(10));
      return new Result(drain, PROPAGATION, seconds, users.calls[0].sum(), users.errors[0].sum(), users.calls[1].sum(),
          users.errors[1].sum(), Math.round(retries(registry)), summary(users.kinds));
    } finally {
      if (users != null) {
        users.stop();
      }
      if (client != null) {
        client.dispatcher().cancelAll();
        client.dispatcher().executorService().shutdownNow();
        client.connectionPool().evictAll();
      }
      for (int i = resources.size() - 1; i >= 0; i--) {
        try {
          resources.get(i).close();
        } catch (Exception e) {
          // closing what the run started; one failure must not leave the rest open
        }
      }
    }
  }

  private OkHttpClient newClient(LoadBalancer balancer) {
    Dispatcher dispatcher = new Dispatcher();
    dispatcher.setMaxRequests(USERS + 16);
    dispatcher.setMaxRequestsPerHost(USERS + 16);
    return BASE_CLIENT.newBuilder()
        .dispatcher(dispatcher)
        .connectionPool(new ConnectionPool(USERS + 16, 1, TimeUnit.MINUTES))
        .addInterceptor(LoadBalancingInterceptor.builder().service(ScenarioRun.SERVICE, balancer)
            .maxAttempts(options.maxAttempts()).build())
        .connectTimeout(Duration.ofSeconds(2))
        .readTimeout(Duration.ofSeconds(30))
        .callTimeout(Duration.ofSeconds(60))
        .build();
  }

  /** The interceptor's retries ({@code fairway.retries}, on the balancer's registry). */
  static double retries(MeterRegistry registry) {
    double sum = 0;
    for (Counter c : registry.find("fairway.retries").counters()) {
      sum += c.count();
    }
    return sum;
  }

  static void sleep(long nanos) {
    long deadline = System.nanoTime() + nanos;
    for (long left = nanos; left > 0; left = deadline - System.nanoTime()) {
      LockSupport.parkNanos(left);
    }
  }

  static String summary(Map<String, LongAdder> kinds) {
    StringBuilder sb = new StringBuilder();
    kinds.entrySet().stream()
        .sorted((a, b) -> Long.compare(b.getValue().sum(), a.getValue().sum()))
        .limit(3)
        .forEach(e -> sb.append(sb.length() == 0 ? "" : "; ").append(e.getValue().sum()).append(" x ")
            .append(e.getKey().replaceAll("/127\\.0\\.0\\.1:\\d+", "a backend")));
    return sb.toString();
  }

  /** Closed-loop users, each sending GET and POST in turn; [0] counts GET, [1] POST. Also used by {@link KubernetesRun}. */
  static final class Users {
    private final OkHttpClient client;
    private final Thread[] threads = new Thread[USERS];
    final LongAdder[] calls = {new LongAdder(), new LongAdder()};
    final LongAdder[] errors = {new LongAdder(), new LongAdder()};
    final Map<String, LongAdder> kinds = new ConcurrentHashMap<>();
    volatile boolean count;
    private volatile boolean running = true;

    Users(OkHttpClient client) {
      this.client = client;
      for (int i = 0; i < USERS; i++) {
        int user = i;
        threads[i] = new Thread(() -> loop(user), "lab-rolling-user-" + i);
        threads[i].setDaemon(true);
      }
    }

    void start() {
      for (Thread t : threads) {
        t.start();
      }
    }

    void stop() {
      running = false;
    }

    void join(long timeoutNanos) throws InterruptedException {
      long deadline = System.nanoTime() + timeoutNanos;
      for (Thread t : threads) {
        t.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
      }
    }

    private void loop(int user) {
      Request get = new Request.Builder().url("http://" + ScenarioRun.SERVICE + "/work").build();
      Request post = new Request.Builder().url("http://" + ScenarioRun.SERVICE + "/work")
          .post(RequestBody.create("order from user-" + user, TEXT)).build();
      for (long n = 0; running && n < MAX_CALLS_PER_USER; n++) {
        int method = (int) ((n + user) % 2);
        boolean counted = count;
        String failure = null;
        try (Response r = client.newCall(method == 0 ? get : post).execute()) {
          r.body().bytes();
          if (r.code() != 200) {
            failure = "HTTP " + r.code();
          }
        } catch (IOException | RuntimeException e) {
          failure = e.getClass().getSimpleName() + ": " + e.getMessage();
          // OkHttp attaches its earlier tries of the call: they tell why a POST was not sent again.
          for (Throwable earlier : e.getSuppressed()) {
            failure += " (after " + earlier.getClass().getSimpleName() + ")";
          }
        }
        if (counted && running) {
          calls[method].increment();
          if (failure != null) {
            errors[method].increment();
            kinds.computeIfAbsent((method == 0 ? "GET " : "POST ") + failure, k -> new LongAdder()).increment();
          }
        }
      }
    }
  }
}
