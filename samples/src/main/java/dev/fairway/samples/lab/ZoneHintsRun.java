package dev.fairway.samples.lab;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.kubernetes.KubernetesTargetSource;
import dev.fairway.lb.kubernetes.fake.EndpointSliceSpec;
import dev.fairway.lb.kubernetes.fake.EndpointSliceSpec.Endpoint;
import dev.fairway.lb.kubernetes.fake.FakeKubernetes;
import dev.fairway.lb.okhttp.LoadBalancingInterceptor;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import okhttp3.ConnectionPool;
import okhttp3.Dispatcher;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * {@link Scenario#KUBERNETES}'s zone-hints run: six Pods over three zones, unevenly (zone a has one,
 * b two, c three), with the hints the EndpointSlice controller would give for zones of equal capacity
 * (each zone two endpoints: zone a gets its own Pod and one of zone c's). A caller in zone a sends GETs
 * through the balancer, in three set-ups: hints followed (source and balancer know the zone), zones
 * without hints (the balancer knows its zone, the source does not follow hints), and no zone at all.
 * Reported per set-up: the share of calls to the endpoints hinted for zone a, the share to Pods
 * physically in zone a, and the calls per Pod, against the allocation (2 of 6 endpoints for zone a, one
 * of them in zone a). Every loop is bounded by a deadline and a call count; everything started is
 * closed before {@link #run} returns.
 */
final class ZoneHintsRun {
  static final int USERS = 12;
  static final Duration WINDOW = Duration.ofSeconds(5);
  static final Duration SERVICE = Duration.ofMillis(20);
  private static final long MAX_CALLS_PER_USER = 2_000_000L;
  /** Zone of each Pod (backend i+1), and the zone its hint gives it. */
  static final String[] ZONES = {"a", "b", "b", "c", "c", "c"};
  static final String[] HINTS = {"a", "b", "b", "a", "c", "c"};

  /** One set-up's numbers. */
  record Result(String setup, long calls, long errors, double hintedShare, double physicalShare, long[] perPod) {}

  private final LabOptions options;

  ZoneHintsRun(LabOptions options) {
    this.options = options;
  }

  List<Result> run() throws IOException, InterruptedException {
    List<Result> results = new ArrayList<>();
    results.add(run("hints followed", true, true));
    results.add(run("zone, no hints", false, true));
    results.add(run("no zone", false, false));
    return results;
  }

  private Result run(String setup, boolean sourceZone, boolean balancerZone) throws IOException, InterruptedException {
    List<AutoCloseable> resources = new ArrayList<>();
    OkHttpClient client = null;
    try {
      FakeKubernetes api = FakeKubernetes.start();
      resources.add(api);
      Backend[] backends = new Backend[ZONES.length];
      for (int i = 0; i < backends.length; i++) {
        backends[i] = new Backend(i + 1, options.scaled(SERVICE).toNanos(), options.workers()).start();
        resources.add(backends[i]);
        api.apply(KubernetesRun.NAMESPACE, EndpointSliceSpec.of(ScenarioRun.SERVICE + "-" + i, ScenarioRun.SERVICE)
            .port("http", backends[i].port())
            .endpoint(Endpoint.readyPod("127.0.0.1", "pod-" + (i + 1), ZONES[i]).forZones(HINTS[i])));
      }
      KubernetesTargetSource.Builder sb = KubernetesTargetSource.builder(ScenarioRun.SERVICE).apiServer(api.url())
          .namespace(KubernetesRun.NAMESPACE).portName("http");
      KubernetesTargetSource source = (sourceZone ? sb.localZone("a") : sb.localZone("")).build();
      resources.add(source);
      source.whenReady().get(30, TimeUnit.SECONDS);
      LoadBalancer.Builder lb = LoadBalancer.builder(ScenarioRun.SERVICE).targets(source);
      LoadBalancer balancer = (balancerZone ? lb.localZone("a") : lb).build();
      resources.add(balancer);
      client = newClient(balancer);
      AtomicLongArray perPod = new AtomicLongArray(ZONES.length);
      long[] errors = new long[1];
      long warm = System.nanoTime() + options.scaled(RollingRun.SETTLE).toNanos();
      long deadline = warm + options.scaled(WINDOW).toNanos();
      Thread[] threads = new Thread[USERS];
      OkHttpClient c = client;
      Object lock = new Object();
      for (int u = 0; u < USERS; u++) {
        threads[u] = new Thread(() -> {
          Request get = new Request.Builder().url("http://" + ScenarioRun.SERVICE + "/work").build();
          for (long n = 0; n < MAX_CALLS_PER_USER && System.nanoTime() < deadline; n++) {
            boolean counted = System.nanoTime() >= warm;
            try (Response r = c.newCall(get).execute()) {
              String body = r.body().string().trim();
              if (counted && r.code() == 200 && body.startsWith("backend-")) {
                perPod.incrementAndGet(Integer.parseInt(body.substring("backend-".length())) - 1);
              } else if (counted) {
                synchronized (lock) {
                  errors[0]++;
                }
              }
            } catch (IOException | RuntimeException e) {
              if (counted) {
                synchronized (lock) {
                  errors[0]++;
                }
              }
            }
          }
        }, "lab-zone-user-" + u);
        threads[u].setDaemon(true);
        threads[u].start();
      }
      for (Thread t : threads) {
        t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()) + 10_000));
      }
      long[] counts = new long[ZONES.length];
      long all = 0;
      long hinted = 0;
      long physical = 0;
      for (int i = 0; i < counts.length; i++) {
        counts[i] = perPod.get(i);
        all += counts[i];
        hinted += "a".equals(HINTS[i]) ? counts[i] : 0;
        physical += "a".equals(ZONES[i]) ? counts[i] : 0;
      }
      synchronized (lock) {
        return new Result(setup, all, errors[0], all == 0 ? Double.NaN : (double) hinted / all,
            all == 0 ? Double.NaN : (double) physical / all, counts);
      }
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new IOException("the Kubernetes source did not get its first list: " + e, e);
    } finally {
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

  private static OkHttpClient newClient(LoadBalancer balancer) {
    Dispatcher dispatcher = new Dispatcher();
    dispatcher.setMaxRequests(USERS + 16);
    dispatcher.setMaxRequestsPerHost(USERS + 16);
    return new OkHttpClient.Builder()
        .dispatcher(dispatcher)
        .connectionPool(new ConnectionPool(USERS + 16, 1, TimeUnit.MINUTES))
        .addInterceptor(LoadBalancingInterceptor.builder().service(ScenarioRun.SERVICE, balancer).build())
        .connectTimeout(Duration.ofSeconds(2))
        .readTimeout(Duration.ofSeconds(30))
        .callTimeout(Duration.ofSeconds(60))
        .build();
  }
}
