package dev.fairway.lb.okhttp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Target;
import dev.fairway.lb.testing.Nginx;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.Call;
import okhttp3.EventListener;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestReporter;

/**
 * Issue 12, defect 1, against a real server: nginx closes keep-alive connections idle for 1 s,
 * and clients POST about once a second, so many POSTs reuse a connection nginx is closing or has
 * closed. Plain OkHttp re-sends those on a fresh connection; through Fairway not one may fail.
 *
 * <p>Bounded: {@code fairway.nginx.threads} threads per client (default 3) for {@code
 * fairway.nginx.seconds} (default 12), one POST every 0.7 to 1.5 s each (nginx closes an idle connection 1 s after its last response, or a little later: its timers are lazy). The measurement
 * is {@code -Dfairway.nginx.threads=20 -Dfairway.nginx.seconds=90}.
 */
class NginxStaleConnectionTest {
  private static final MediaType TEXT = MediaType.get("text/plain; charset=utf-8");

  @Test
  void posts_againstNginxClosingIdleConnections_neverFailThroughFairway(TestReporter reporter) throws Exception {
    Nginx.requireInstalled();
    int threads = Integer.getInteger("fairway.nginx.threads", 3);
    int seconds = Integer.getInteger("fairway.nginx.seconds", 12);
    try (Nginx nginx = Nginx.start(2);
        LoadBalancer lb = LoadBalancer.builder("orders")
            .targets(Target.of("127.0.0.1", nginx.ports.get(0)), Target.of("127.0.0.1", nginx.ports.get(1)))
            .build()) {
      Load plain = new Load("plain OkHttp", client(null), "http://127.0.0.1:" + nginx.ports.get(0));
      Load fairway = new Load("OkHttp + Fairway",
          client(LoadBalancingInterceptor.builder().service("orders", lb).build()), "http://orders");

      ExecutorService pool = Executors.newFixedThreadPool(2 * threads);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
      for (int i = 0; i < threads; i++) {
        pool.execute(() -> plain.run(deadline, seconds + 2));
        pool.execute(() -> fairway.run(deadline, seconds + 2));
      }
      pool.shutdown();
      assertThat(pool.awaitTermination(seconds + 60, TimeUnit.SECONDS)).as("load finished").isTrue();

      String summary = String.format("nginx keepalive_timeout 1s, %d threads per client, %d s, a POST every 0.7-1.5 s per thread: %s; %s",
          threads, seconds, plain, fairway);
      reporter.publishEntry("nginx", summary);
      System.out.println(summary);
      assertThat(fairway.calls.get()).as("calls through Fairway").isGreaterThanOrEqualTo(threads * seconds / 2);
      assertThat(fairway.connects.get()).as("connections opened by Fairway's client: some calls reused one")
          .isLessThan(fairway.calls.get());
      assertThat(fairway.failures).as("failures through Fairway (%s)", summary).isEmpty();
      assertThat(LoadBalancingInterceptorTest.inFlight(lb)).isZero();
    }
  }

  private static OkHttpClient client(LoadBalancingInterceptor interceptor) {
    OkHttpClient.Builder builder = new OkHttpClient.Builder()
        .connectTimeout(2, TimeUnit.SECONDS)
        .readTimeout(5, TimeUnit.SECONDS)
        .callTimeout(10, TimeUnit.SECONDS);
    if (interceptor != null) {
      builder.addInterceptor(interceptor);
    }
    return builder.build();
  }

  /** One client's share of the load: POSTs in a loop, counting calls, failures and connections. */
  private static final class Load {
    final String name;
    final OkHttpClient client;
    final String base;
    final AtomicInteger calls = new AtomicInteger();
    final AtomicInteger connects = new AtomicInteger();
    final Queue<String> failures = new ConcurrentLinkedQueue<>();

    Load(String name, OkHttpClient client, String base) {
      this.name = name;
      this.client = client.newBuilder().eventListener(new EventListener() {
        @Override
        public void connectStart(Call call, InetSocketAddress address, Proxy proxy) {
          connects.incrementAndGet();
        }
      }).build();
      this.base = base;
    }

    void run(long deadlineNanos, int maxCalls) {
      for (int n = 0; n < maxCalls && System.nanoTime() < deadlineNanos; n++) {
        Request post = new Request.Builder().url(base + "/orders")
            .post(RequestBody.create("{\"item\":" + n + "}", TEXT)).build();
        calls.incrementAndGet();
        try (Response response = client.newCall(post).execute()) {
          if (response.code() != 200 || !response.body().string().equals("ok")) {
            failures.add("HTTP " + response.code());
          }
        } catch (IOException e) {
          failures.add(e.toString());
        }
        try {
          Thread.sleep(ThreadLocalRandom.current().nextLong(700, 1_501));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }

    @Override
    public String toString() {
      List<String> firstFailures = new ArrayList<>(failures).subList(0, Math.min(3, failures.size()));
      return name + " " + failures.size() + " failures in " + calls + " calls (" + connects + " connections"
          + (firstFailures.isEmpty() ? "" : ", e.g. " + firstFailures) + ")";
    }
  }
}
