package dev.fairway.samples.lab;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.kubernetes.KubernetesTargetSource;
import dev.fairway.lb.kubernetes.fake.EndpointSliceSpec;
import dev.fairway.lb.kubernetes.fake.EndpointSliceSpec.Endpoint;
import dev.fairway.lb.kubernetes.fake.FakeKubernetes;
import dev.fairway.lb.okhttp.LoadBalancingInterceptor;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import okhttp3.ConnectionPool;
import okhttp3.Dispatcher;
import okhttp3.OkHttpClient;

/**
 * {@link Scenario#KUBERNETES}'s rolling restart for one drain: four backends, each a Pod with an
 * EndpointSlice of its own in the {@link FakeKubernetes} (the EndpointSlice controller puts Pods whose
 * named port resolves to different numbers in different slices, as these loopback backends' ports do),
 * read by a {@link KubernetesTargetSource} behind the balancer. Users send GET and POST in turn
 * ({@link RollingRun.Users}). Each Pod in turn is terminated the way Kubernetes does it:
 *
 * <ol>
 *   <li>the Pod gets SIGTERM and keeps serving for the drain (a {@code preStop} sleep); its endpoint
 *       turns {@code ready=false, serving=true, terminating=true} once the controller has seen it;
 *   <li>after the drain the process exits (listener and connections closed) and the endpoint leaves
 *       its slice once the controller has seen the Pod gone;
 *   <li>{@link RollingRun#RESTART_AFTER} later a new Pod is up and its endpoint is added, ready (the
 *       loopback backend comes back on its port, so the new Pod has the old one's address);
 *   <li>the next Pod is terminated once the balancer has it and {@link RollingRun#SETTLE} has passed.
 * </ol>
 *
 * Each change reaches the API server {@link RollingRun#PROPAGATION} after it happens (kubelet, the
 * EndpointSlice controller); the watch brings it to the balancer at once. The balancer stops picking a
 * terminating endpoint while others are ready and lets the calls already sent finish, so a drain longer
 * than the propagation should cost no call. Every loop is bounded; everything started is closed before
 * {@link #run} returns.
 */
final class KubernetesRun {
  private static final int BACKENDS = 4;
  static final String NAMESPACE = "lab";

  private final LabOptions options;
  private final Duration drain;

  KubernetesRun(LabOptions options, Duration drainAtScaleOne) {
    this.options = options;
    this.drain = drainAtScaleOne;
  }

  RollingRun.Result run() throws IOException, InterruptedException {
    Duration propagation = options.scaled(RollingRun.PROPAGATION);
    long drainNanos = drain.isZero() ? 0 : options.scaled(drain).toNanos();
    List<AutoCloseable> resources = new ArrayList<>();
    Backend[] backends = new Backend[BACKENDS];
    OkHttpClient client = null;
    RollingRun.Users users = null;
    ScheduledThreadPoolExecutor controller = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "lab-endpointslice-controller");
      t.setDaemon(true);
      return t;
    });
    try {
      FakeKubernetes api = FakeKubernetes.start();
      resources.add(api);
      for (int i = 0; i < BACKENDS; i++) {
        backends[i] = new Backend(i + 1, options.scaled(RollingRun.SERVICE).toNanos(), options.workers()).start();
        resources.add(backends[i]);
        api.apply(NAMESPACE, slice(i, backends[i], Endpoint.readyPod("127.0.0.1", pod(i, 0), "z1")));
      }
      KubernetesTargetSource source = KubernetesTargetSource.builder(ScenarioRun.SERVICE).apiServer(api.url())
          .namespace(NAMESPACE).portName("http").backoff(Duration.ofMillis(50), Duration.ofSeconds(1)).build();
      resources.add(source);
      source.whenReady().get(30, TimeUnit.SECONDS);
      // When each Pod's terminating change left the balancer's list, against when it reached the API server.
      long[] appliedAt = new long[BACKENDS];
      long[] seenAt = new long[BACKENDS];
      String[] ids = new String[BACKENDS];
      for (int i = 0; i < BACKENDS; i++) {
        ids[i] = "127.0.0.1:" + backends[i].port();
      }
      resources.add(source.subscribe(list -> {
        long now = System.nanoTime();
        synchronized (seenAt) {
          for (int i = 0; i < BACKENDS; i++) {
            String id = ids[i];
            if (appliedAt[i] != 0 && seenAt[i] == 0 && list.stream().noneMatch(t -> t.id().equals(id))) {
              seenAt[i] = now;
            }
          }
        }
      }));
      MeterRegistry registry = new SimpleMeterRegistry();
      LoadBalancer balancer = LoadBalancer.builder(ScenarioRun.SERVICE).targets(source).meterRegistry(registry).build();
      resources.add(balancer);
      client = newClient(balancer);
      users = new RollingRun.Users(client);
      users.start();
      RollingRun.sleep(options.scaled(RollingRun.SETTLE).toNanos());
      users.count = true;
      long start = System.nanoTime();
      for (int i = 0; i < BACKENDS; i++) {
        int b = i;
        String oldPod = pod(i, 0);
        later(controller, propagation, () -> {
          synchronized (seenAt) {
            appliedAt[b] = System.nanoTime();
          }
          api.apply(NAMESPACE, slice(b, backends[b],
              Endpoint.at("127.0.0.1").pod(oldPod).zone("z1").conditions(false, true, true)));
        });
        RollingRun.sleep(drainNanos);
        backends[i].kill();
        later(controller, propagation, () -> api.apply(NAMESPACE, slice(b, backends[b], null)));
        RollingRun.sleep(options.scaled(RollingRun.RESTART_AFTER).toNanos());
        backends[i].restart();
        later(controller, propagation, () -> api.apply(NAMESPACE, slice(b, backends[b],
            Endpoint.readyPod("127.0.0.1", pod(b, 1), "z1"))));
        RollingRun.sleep(propagation.toNanos() + options.scaled(RollingRun.SETTLE).toNanos());
      }
      users.count = false;
      double seconds = (System.nanoTime() - start) / 1e9;
      users.stop();
      users.join(TimeUnit.SECONDS.toNanos(10));
      long maxWatchNanos = 0;
      synchronized (seenAt) {
        for (int i = 0; i < BACKENDS; i++) {
          maxWatchNanos = Math.max(maxWatchNanos, seenAt[i] == 0 ? Long.MAX_VALUE : seenAt[i] - appliedAt[i]);
        }
      }
      String watch = maxWatchNanos == Long.MAX_VALUE ? "a terminating change never reached the list; "
          : String.format(java.util.Locale.ROOT, "watch delay max %.1f ms; ", maxWatchNanos / 1e6);
      return new RollingRun.Result(drain, RollingRun.PROPAGATION, seconds, users.calls[0].sum(),
          users.errors[0].sum(), users.calls[1].sum(), users.errors[1].sum(), Math.round(RollingRun.retries(registry)),
          watch + RollingRun.summary(users.kinds));
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new IOException("the Kubernetes source did not get its first list: " + e, e);
    } finally {
      controller.shutdownNow();
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

  private static String pod(int backend, int generation) {
    return "orders-" + (generation == 0 ? "7d9f" : "5c2a") + "-" + backend;
  }

  /** The Pod's slice: its port under the name "http", and its endpoint (none while no Pod runs). */
  private static EndpointSliceSpec slice(int index, Backend backend, Endpoint endpoint) {
    EndpointSliceSpec s = EndpointSliceSpec.of(ScenarioRun.SERVICE + "-" + index, ScenarioRun.SERVICE)
        .port("http", backend.port());
    return endpoint == null ? s : s.endpoint(endpoint);
  }

  private static void later(ScheduledThreadPoolExecutor controller, Duration delay, Runnable change) {
    controller.schedule(change, delay.toNanos(), TimeUnit.NANOSECONDS);
  }

  private OkHttpClient newClient(LoadBalancer balancer) {
    Dispatcher dispatcher = new Dispatcher();
    dispatcher.setMaxRequests(RollingRun.USERS + 16);
    dispatcher.setMaxRequestsPerHost(RollingRun.USERS + 16);
    return new OkHttpClient.Builder()
        .dispatcher(dispatcher)
        .connectionPool(new ConnectionPool(RollingRun.USERS + 16, 1, TimeUnit.MINUTES))
        .addInterceptor(LoadBalancingInterceptor.builder().service(ScenarioRun.SERVICE, balancer)
            .maxAttempts(options.maxAttempts()).build())
        .connectTimeout(Duration.ofSeconds(2))
        .readTimeout(Duration.ofSeconds(30))
        .callTimeout(Duration.ofSeconds(60))
        .build();
  }
}
