package dev.fairway.lb.okhttp;

import static dev.fairway.lb.okhttp.LoadBalancingInterceptorTest.inFlight;
import static dev.fairway.lb.okhttp.LoadBalancingInterceptorTest.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.MutableTargetSource;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetState;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.testing.Closer;
import io.github.resilience4j.core.IntervalFunction;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.security.cert.CertificateException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import javax.net.ssl.SSLHandshakeException;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestReporter;

/** Issue 12's defects 2 to 6, each named after its bug; each failed on the interceptor before the fix. */
class InterceptorRegressionTest {
  private static final MediaType TEXT = MediaType.get("text/plain; charset=utf-8");

  private final Closer closer = new Closer();

  @AfterEach
  void closeAll() throws Exception {
    closer.close();
  }

  private <T extends AutoCloseable> T closing(T closeable) {
    return closer.add(closeable);
  }

  private static Request get(String url) {
    return new Request.Builder().url(url).build();
  }

  private static Request post(String url) {
    return new Request.Builder().url(url).post(RequestBody.create("amount=5", TEXT)).build();
  }

  private static String body(OkHttpClient client, Request request) throws IOException {
    try (Response response = client.newCall(request).execute()) {
      return response.code() + " " + response.body().string();
    }
  }

  // ---------------------------------------------------------------- defect 2

  @Test
  void meters_doNotLeakUnderChurn_andNoneRemainAfterClose(TestReporter reporter) throws Exception {
    Backends b = closing(Backends.named(1));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Target address = b.target(0);
    MutableTargetSource source = new MutableTargetSource(List.of(address.withId("instance-0")));
    LoadBalancer lb = closing(LoadBalancer.builder("orders").targets(source).meterRegistry(registry).build());
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb).build());

    for (int i = 0; i < 500; i++) {
      source.set(List.of(address.withId("instance-" + i))); // an autoscaled service: a new instance id each time
      assertThat(body(client, get("http://orders/x"))).isEqualTo("200 s0");
    }

    int requestTimers = registry.find("fairway.requests").timers().size();
    int allMeters = registry.getMeters().size();
    long lastInstanceCalls = registry.get("fairway.requests").tag("target", "instance-499").timer().count();
    lb.close();
    List<String> afterClose = registry.getMeters().stream().map(m -> m.getId().getName()).toList();
    String counts = "after 500 instance ids: " + allMeters + " meters (" + requestTimers
        + " fairway.requests timers); after close: " + afterClose.size();
    reporter.publishEntry("meters", counts);
    System.out.println(counts);

    assertThat(requestTimers).isEqualTo(1); // the one live instance's success timer
    assertThat(lastInstanceCalls).isEqualTo(1);
    assertThat(afterClose).isEmpty();
  }

  // ---------------------------------------------------------------- defect 3

  @Test
  void unaddressableTarget_isAFailureOfThatTarget_ejectedAndRetriedElsewhere() throws Exception {
    Backends b = closing(Backends.named(1));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    // A link-local IPv6 literal with a zone id is a valid host, but OkHttp refuses to put it in a URL.
    Target unaddressable = Target.of("fe80::1%eth0", 8080);
    LoadBalancer lb = closing(LoadBalancer.builder("orders").targets(unaddressable, b.target(0))
        .strategy(Strategy.roundRobin()).meterRegistry(registry).build());
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb).build());

    List<String> bodies = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      bodies.add(body(client, post("http://orders/pay"))); // never sent to it: safe to move even a POST
    }

    assertThat(bodies).containsExactly("200 s0", "200 s0", "200 s0", "200 s0");
    assertThat(registry.get("fairway.requests").tags("target", unaddressable.id(), "outcome", "failure").timer().count())
        .isEqualTo(1);
    assertThat(registry.get("fairway.retries").tag("reason", "connect_failure").counter().count()).isEqualTo(1);
    assertThat(lb.status()).extracting(TargetStatus::state).containsExactly(TargetState.EJECTED, TargetState.HEALTHY);
    assertThat(b.requests(0)).isEqualTo(4);
  }

  // ---------------------------------------------------------------- defect 4

  @Test
  void unclosedResponseBody_isReleasedBySafetyNet_countedAndLoggedOnce() throws Exception {
    Backends b = closing(Backends.start(1, i -> request -> Backends.ok("x".repeat(1_000))));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    LoadBalancer lb = closing(LoadBalancer.builder("orders").targets(b.targets()).meterRegistry(registry).build());
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb).build());
    List<LogRecord> warnings = new CopyOnWriteArrayList<>();
    Logger log = Logger.getLogger(LoadBalancingInterceptor.class.getName());
    Handler handler = new Handler() {
      @Override
      public void publish(LogRecord record) {
        if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
          warnings.add(record);
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    log.addHandler(handler);
    closing((AutoCloseable) () -> log.removeHandler(handler));

    executeAndForget(client, get("http://orders/forgotten/1"));
    executeAndForget(client, get("http://orders/forgotten/2"));
    assertThat(inFlight(lb)).isEqualTo(2);

    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while ((inFlight(lb) != 0 || leaked(registry) < 2) && System.nanoTime() < deadline) {
      System.gc();
      Thread.sleep(20);
    }

    assertThat(inFlight(lb)).isZero();
    assertThat(leaked(registry)).isEqualTo(2);
    assertThat(warnings).hasSize(1);
    assertThat(warnings.get(0).getMessage())
        .startsWith("A response to http://orders/forgotten/")
        .contains("was leaked. Did you forget to close a response body?");
  }

  /** Executes the call and drops the response unclosed: only the garbage collector sees it again. */
  private static void executeAndForget(OkHttpClient client, Request request) throws IOException {
    Response response = client.newCall(request).execute();
    assertThat(response.code()).isEqualTo(200);
  }

  private static double leaked(SimpleMeterRegistry registry) {
    io.micrometer.core.instrument.Counter counter = registry.find("fairway.leaked.responses").counter();
    return counter == null ? 0 : counter.count();
  }

  // ---------------------------------------------------------------- defect 5

  @Test
  void backoff_notWhenAnUntriedTargetIsEjected_theStatusIsReturnedAtOnce() throws Exception {
    Backends b = closing(Backends.start(2, i -> request -> status(503)));
    LoadBalancer lb = closing(LoadBalancer.builder("orders").targets(b.targets()).strategy(Strategy.roundRobin())
        .passiveHealth(PassiveHealth.defaults().withConsecutiveFailures(1000)).build());
    List<Integer> rounds = new CopyOnWriteArrayList<>();
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb)
        .backoff(round -> {
          rounds.add(round);
          return 1L;
        })
        .build());
    b.kill(0);
    for (int i = 0; i < 3 && lb.status().get(0).state() != TargetState.EJECTED; i++) {
      client.newCall(get("http://orders/warm-up")).execute().close(); // refused once: ejected
    }
    assertThat(lb.status()).extracting(TargetStatus::state).containsExactly(TargetState.EJECTED, TargetState.HEALTHY);
    rounds.clear();
    int before = b.requests(1);

    assertThat(body(client, get("http://orders/x"))).isEqualTo("503 unavailable");

    // One attempt on the only pickable target; the ejected one was never tried by this call, so
    // waiting and starting a new round would only have asked the same target again.
    assertThat(b.requests(1) - before).isEqualTo(1);
    assertThat(rounds).isEmpty();
  }

  @Test
  void backoff_endsWhenTheCallIsCancelled() throws Exception {
    Backends b = closing(Backends.start(2, i -> request -> status(503)));
    LoadBalancer lb = closing(LoadBalancer.builder("orders").targets(b.targets())
        .passiveHealth(PassiveHealth.disabled()).build());
    CountDownLatch backingOff = new CountDownLatch(1);
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb)
        .backoff(IntervalFunction.of(60_000L)) // far longer than the test may take
        .sleeper((millis, c) -> { // the real cancellable wait, with a signal when it begins
          backingOff.countDown();
          Sleeper.CANCELLABLE.sleep(millis, c);
        })
        .build());
    CountDownLatch failed = new CountDownLatch(1);
    AtomicReference<IOException> failure = new AtomicReference<>();
    Call call = client.newCall(get("http://orders/x"));
    call.enqueue(new Callback() {
      @Override
      public void onFailure(Call c, IOException e) {
        failure.set(e);
        failed.countDown();
      }

      @Override
      public void onResponse(Call c, Response response) {
        response.close();
      }
    });
    // Both targets answered 503: the dispatcher thread now waits out the backoff. Cancelling only
    // once the wait began keeps this about the wait, not about a 503 body still being read.
    assertThat(backingOff.await(10, TimeUnit.SECONDS)).as("the call began its backoff").isTrue();
    assertThat(b.totalRequests()).isEqualTo(2);

    long cancelledAt = System.nanoTime();
    call.cancel();

    assertThat(failed.await(5, TimeUnit.SECONDS)).as("onFailure soon after cancel()").isTrue();
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cancelledAt)).isLessThan(5_000);
    assertThat(failure.get()).hasMessage("Canceled");
    assertThat(b.totalRequests()).isEqualTo(2);
    LoadBalancingInterceptorTest.awaitInFlightZero(lb);
  }

  // ---------------------------------------------------------------- defect 6

  @Test
  void certificateRejection_isNotRetriedOnOtherTargets() throws Exception {
    Backends b = closing(Backends.named(3));
    LoadBalancer lb = closing(LoadBalancer.builder("orders").targets(b.targets()).build());
    AtomicInteger attempts = new AtomicInteger();
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb).build()).newBuilder()
        .addInterceptor(chain -> { // stands in for a TLS handshake whose certificate the client rejects
          attempts.incrementAndGet();
          SSLHandshakeException e = new SSLHandshakeException("PKIX path building failed");
          e.initCause(new CertificateException("unable to find valid certification path to requested target"));
          throw e;
        })
        .build();

    assertThatThrownBy(() -> client.newCall(get("http://orders/x")).execute())
        .isInstanceOf(SSLHandshakeException.class)
        .hasMessage("PKIX path building failed");
    assertThat(attempts.get()).isEqualTo(1);
  }

  @Test
  void noRouteAndConnectTimeout_moveEvenAPostToAnotherTarget_andFailTheTarget() throws Exception {
    Backends b = closing(Backends.named(3));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    LoadBalancer lb = closing(LoadBalancer.builder("orders").targets(b.targets()).strategy(Strategy.roundRobin())
        .passiveHealth(PassiveHealth.disabled()).meterRegistry(registry).build());
    int noRoute = b.port(0);
    int connectTimeout = b.port(1);
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb).build()).newBuilder()
        .addInterceptor(chain -> {
          int port = chain.request().url().port();
          if (port == noRoute) {
            throw new NoRouteToHostException("No route to host");
          }
          if (port == connectTimeout) {
            throw new SocketTimeoutException("Connect timed out");
          }
          return chain.proceed(chain.request());
        })
        .build();

    for (int i = 0; i < 3; i++) {
      assertThat(body(client, post("http://orders/pay"))).isEqualTo("200 s2");
    }

    assertThat(b.requests(2)).isEqualTo(3);
    for (int i = 0; i < 2; i++) {
      assertThat(registry.get("fairway.requests").tags("target", b.target(i).id(), "outcome", "failure").timer().count())
          .as("failures of target %d", i).isPositive();
    }
    assertThat(registry.get("fairway.retries").tag("reason", "connect_failure").counter().count()).isEqualTo(
        registry.get("fairway.requests").tag("outcome", "failure").timers().stream().mapToLong(t -> t.count()).sum());
  }
}
