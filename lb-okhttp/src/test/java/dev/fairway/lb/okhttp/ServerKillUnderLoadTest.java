package dev.fairway.lb.okhttp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.MockResponse;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.Test;

/**
 * One of three servers is shut down while 8 threads keep calling through the interceptor; counts
 * the errors callers see. Each response waits 2 ms before its headers, so calls are in flight on
 * the server when it dies.
 */
class ServerKillUnderLoadTest {
  private static final System.Logger LOG = System.getLogger(ServerKillUnderLoadTest.class.getName());
  private static final int THREADS = 8;
  private static final int CALLS = 3_000;
  private static final int KILL_AT = 1_000;

  @Test
  void killOneOfThree_underConcurrentGets_callersSeeNoErrors() throws Exception {
    Result result = run("GET");
    assertThat(result.completed).isEqualTo(CALLS);
    assertThat(result.errors).as("caller-visible errors; first: %s", result.firstErrors).isZero();
    assertThat(result.servedAfterKillByDead).isZero();
  }

  @Test
  void killOneOfThree_underConcurrentPosts_onlyCallsThatMayHaveReachedItFail() throws Exception {
    Result result = run("POST");
    assertThat(result.completed).isEqualTo(CALLS);
    // A POST is never re-sent once it may have reached the dead server: the calls in flight on it,
    // and at most one per pooled connection to it that looked alive when reused (at most one per
    // thread each). Connection failures after that are retried.
    assertThat(result.errors).as("caller-visible errors; first: %s", result.firstErrors).isLessThanOrEqualTo(2 * THREADS);
    assertThat(result.servedAfterKillByDead).isZero();
  }

  private Result run(String method) throws Exception {
    try (Backends b = Backends.start(3, i -> request ->
            new MockResponse.Builder().code(200).body("s" + i).headersDelay(2, TimeUnit.MILLISECONDS).build());
        LoadBalancer lb = LoadBalancer.builder("orders").targets(b.targets()).build()) {
      OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb).build());
      AtomicInteger tickets = new AtomicInteger();
      AtomicInteger completed = new AtomicInteger();
      AtomicInteger errors = new AtomicInteger();
      AtomicInteger deadServedAtKill = new AtomicInteger(-1);
      Map<String, AtomicInteger> firstErrors = new ConcurrentHashMap<>();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      ExecutorService pool = Executors.newFixedThreadPool(THREADS);
      try {
        List<Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
          workers.add(pool.submit(() -> {
            for (int n = tickets.getAndIncrement(); n < CALLS && System.nanoTime() < deadline; n = tickets.getAndIncrement()) {
              if (n == KILL_AT) {
                b.kill(1);
                deadServedAtKill.set(b.requests(1));
              }
              Request request = new Request.Builder().url("http://orders/load?n=" + n)
                  .method(method, method.equals("POST") ? RequestBody.create("n=" + n, MediaType.get("text/plain")) : null)
                  .build();
              try (Response response = client.newCall(request).execute()) {
                response.body().string();
                if (response.code() != 200) {
                  errors.incrementAndGet();
                  firstErrors.computeIfAbsent("HTTP " + response.code(), k -> new AtomicInteger()).incrementAndGet();
                }
              } catch (IOException e) {
                errors.incrementAndGet();
                firstErrors.computeIfAbsent(e.toString(), k -> new AtomicInteger()).incrementAndGet();
              }
              completed.incrementAndGet();
            }
            return null;
          }));
        }
        for (Future<?> f : workers) {
          f.get(90, TimeUnit.SECONDS);
        }
      } finally {
        pool.shutdownNow();
      }
      Result result = new Result(completed.get(), errors.get(), b.requests(1) - deadServedAtKill.get(), firstErrors);
      LOG.log(System.Logger.Level.INFO, "{0} x {1} calls, {2} threads, server 1 of 3 killed after {3}: {4} caller-visible errors {5}; "
          + "per server {6}/{7}/{8}", method, CALLS, THREADS, KILL_AT, result.errors, firstErrors,
          b.requests(0), b.requests(1), b.requests(2));
      return result;
    }
  }

  private static final class Result {
    final int completed;
    final int errors;
    final int servedAfterKillByDead;
    final Map<String, AtomicInteger> firstErrors;

    Result(int completed, int errors, int servedAfterKillByDead, Map<String, AtomicInteger> firstErrors) {
      this.completed = completed;
      this.errors = errors;
      this.servedAfterKillByDead = servedAfterKillByDead;
      this.firstErrors = firstErrors;
    }
  }
}
