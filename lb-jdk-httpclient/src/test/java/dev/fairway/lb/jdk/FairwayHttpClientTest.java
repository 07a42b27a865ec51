package dev.fairway.lb.jdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetState;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.testing.FaultServer;
import io.github.resilience4j.core.IntervalFunction;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link FairwayHttpClient} against real loopback servers ({@link FaultServer}, and the JDK's own
 * {@link HttpServer} where a test reads what arrived): routing, retries, outcomes, and that every
 * call path frees its in-flight slot.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class FairwayHttpClientTest {
  private final List<AutoCloseable> opened = new ArrayList<>();
  private final HttpClient plain = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = opened.size() - 1; i >= 0; i--) {
      opened.get(i).close();
    }
  }

  private FaultServer server(FaultServer.Behaviour behaviour) throws IOException {
    FaultServer server = FaultServer.start(behaviour);
    opened.add(server);
    return server;
  }

  private LoadBalancer balancer(int... ports) {
    List<Target> targets = new ArrayList<>();
    for (int port : ports) {
      targets.add(Target.of("127.0.0.1", port));
    }
    LoadBalancer lb = LoadBalancer.builder("orders")
        .targets(targets.toArray(new Target[0]))
        .strategy(Strategy.roundRobin())
        .passiveHealth(PassiveHealth.defaults().withConsecutiveFailures(1).withMaxEjectionPercent(100))
        .build();
    opened.add(lb);
    return lb;
  }

  static int inFlight(LoadBalancer lb) {
    return lb.status().stream().mapToInt(TargetStatus::inFlight).sum();
  }

  private static TargetState state(LoadBalancer lb, int port) {
    return lb.status().stream().filter(s -> s.target().port() == port).findFirst().orElseThrow().state();
  }

  private static HttpRequest get(String id) {
    return HttpRequest.newBuilder(URI.create("http://orders/work?x=1")).header(FaultServer.CALL_HEADER, id).build();
  }

  private static HttpRequest post(String id) {
    return HttpRequest.newBuilder(URI.create("http://orders/work"))
        .header(FaultServer.CALL_HEADER, id)
        .POST(BodyPublishers.ofString("amount=5"))
        .build();
  }

  // ---- routing

  @Test
  void send_rewritesHostAndPort_keepsSchemePathQueryAndHeaders() throws Exception {
    HttpServer echo = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    echo.createContext("/", exchange -> {
      byte[] body = (exchange.getRequestMethod() + " " + exchange.getRequestURI() + " host="
          + exchange.getRequestHeaders().getFirst("Host") + " x=" + exchange.getRequestHeaders().getFirst("X-Test")
          + " body=" + new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8))
          .getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(200, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    });
    echo.start();
    opened.add(() -> echo.stop(0));
    int port = echo.getAddress().getPort();
    LoadBalancer lb = balancer(port);
    FairwayHttpClient client = FairwayHttpClient.builder(plain).service("Orders", lb).build();

    HttpResponse<String> response = client.send(HttpRequest.newBuilder(URI.create("http://ORDERS/api/a%20b?q=1&r=%2F"))
        .header("X-Test", "kept").PUT(BodyPublishers.ofString("payload")).build(), BodyHandlers.ofString());

    assertThat(response.body()).isEqualTo("PUT /api/a%20b?q=1&r=%2F host=127.0.0.1:" + port + " x=kept body=payload");
    assertThat(response.uri()).isEqualTo(URI.create("http://127.0.0.1:" + port + "/api/a%20b?q=1&r=%2F"));
    assertThat(inFlight(lb)).isZero();
  }

  @Test
  void send_toAnotherHost_goesToTheDelegateUntouched() throws Exception {
    FaultServer healthy = server(FaultServer.Behaviour.HEALTHY);
    LoadBalancer lb = balancer(FaultServer.refusedPort());
    FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb).build();

    HttpResponse<String> response = client.send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + healthy.port() + "/x")).header(FaultServer.CALL_HEADER, "direct").build(),
        BodyHandlers.ofString());

    assertThat(response.body()).isEqualTo("ok");
    assertThat(healthy.received("direct")).isEqualTo(1);
    assertThat(lb.status().get(0).state()).isEqualTo(TargetState.HEALTHY); // never picked
  }

  // ---- retries

  @Test
  void refusedConnect_isRetriedOnAnotherTarget_evenForAPost_syncAndAsync() throws Exception {
    FaultServer healthy = server(FaultServer.Behaviour.HEALTHY);
    int refused = FaultServer.refusedPort();
    LoadBalancer lb = balancer(refused, healthy.port());
    FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb).build();

    for (int i = 0; i < 2; i++) { // round robin: one of the two picks the refused target first
      assertThat(client.send(post("sync-" + i), BodyHandlers.ofString()).body()).isEqualTo("ok");
    }
    assertThat(state(lb, refused)).as("tried, refused, ejected").isEqualTo(TargetState.EJECTED);

    LoadBalancer lb2 = LoadBalancer.builder("orders").targets(Target.of("127.0.0.1", refused),
        Target.of("127.0.0.1", healthy.port())).strategy(Strategy.roundRobin()).passiveHealth(PassiveHealth.disabled()).build();
    opened.add(lb2);
    FairwayHttpClient client2 = FairwayHttpClient.builder(plain).service("orders", lb2).build();
    for (int i = 0; i < 2; i++) {
      assertThat(client2.sendAsync(post("async-" + i), BodyHandlers.ofString()).get(10, TimeUnit.SECONDS).body())
          .isEqualTo("ok");
    }
    for (String id : List.of("sync-0", "sync-1", "async-0", "async-1")) {
      assertThat(healthy.received(id)).as(id).isEqualTo(1);
    }
    assertThat(inFlight(lb)).isZero();
    assertThat(inFlight(lb2)).isZero();
  }

  @Test
  void retryableStatus_retriesAGetOnAnotherTarget_notAPost() throws Exception {
    FaultServer unavailable = server(FaultServer.Behaviour.UNAVAILABLE);
    FaultServer healthy = server(FaultServer.Behaviour.HEALTHY);
    LoadBalancer lb = balancer(unavailable.port(), healthy.port());
    FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb).build();

    for (int i = 0; i < 3; i++) { // round robin: some pick the unavailable target first
      assertThat(client.send(get("get-" + i), BodyHandlers.ofString()).statusCode()).isEqualTo(200);
      assertThat(healthy.received("get-" + i)).isEqualTo(1);
    }
    assertThat(unavailable.receivedWithPrefix("get-")).as("503s retried").isPositive();

    LoadBalancer lb2 = LoadBalancer.builder("orders2").targets(Target.of("127.0.0.1", unavailable.port()),
        Target.of("127.0.0.1", healthy.port())).strategy(Strategy.roundRobin()).passiveHealth(PassiveHealth.disabled()).build();
    opened.add(lb2);
    FairwayHttpClient client2 = FairwayHttpClient.builder(plain).service("orders", lb2).build();
    HttpResponse<String> first = client2.send(post("post-0"), BodyHandlers.ofString());
    HttpResponse<String> second = client2.send(post("post-1"), BodyHandlers.ofString());
    assertThat(List.of(first.statusCode(), second.statusCode())).containsExactlyInAnyOrder(200, 503);
    assertThat(unavailable.receivedWithPrefix("post-") + healthy.receivedWithPrefix("post-")).isEqualTo(2);
    HttpResponse<String> failed = first.statusCode() == 503 ? first : second;
    assertThat(failed.body()).isEqualTo("unavailable"); // handed on, not kept
    assertThat(inFlight(lb)).isZero();
    assertThat(inFlight(lb2)).isZero();
  }

  @Test
  void everyTargetAnswersARetryableStatus_theLastResponseIsReplayedToTheCallersHandler() throws Exception {
    FaultServer a = server(FaultServer.Behaviour.UNAVAILABLE);
    FaultServer b = server(FaultServer.Behaviour.UNAVAILABLE);
    LoadBalancer lb = LoadBalancer.builder("orders").targets(Target.of("127.0.0.1", a.port()),
        Target.of("127.0.0.1", b.port())).passiveHealth(PassiveHealth.disabled()).build();
    opened.add(lb);
    FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb).maxAttempts(2).build();

    HttpResponse<String> sync = client.send(get("sync"), BodyHandlers.ofString());
    HttpResponse<InputStream> async = client.sendAsync(get("async"), BodyHandlers.ofInputStream()).get(10, TimeUnit.SECONDS);

    assertThat(sync.statusCode()).isEqualTo(503);
    assertThat(sync.body()).isEqualTo("unavailable");
    assertThat(sync.headers().firstValue("endpoint-load-metrics")).contains(FaultServer.LOAD_REPORT);
    try (InputStream in = async.body()) {
      assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("unavailable");
    }
    assertThat(a.received("sync") + b.received("sync")).isEqualTo(2);
    assertThat(a.received("async") + b.received("async")).isEqualTo(2);
    assertThat(inFlight(lb)).isZero();
  }

  @Test
  void idempotencyMark_overridesTheMethod() throws Exception {
    FaultServer unavailable = server(FaultServer.Behaviour.UNAVAILABLE);
    FaultServer healthy = server(FaultServer.Behaviour.HEALTHY);
    LoadBalancer lb = LoadBalancer.builder("orders").targets(Target.of("127.0.0.1", unavailable.port()),
        Target.of("127.0.0.1", healthy.port())).strategy(Strategy.roundRobin()).passiveHealth(PassiveHealth.disabled()).build();
    opened.add(lb);
    FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb).build();

    List<Integer> markedGets = new ArrayList<>();
    for (int i = 0; i < 2; i++) { // round robin: one on each target
      markedGets.add(client.send(FairwayHttpClient.nonIdempotent(get("get-" + i)), BodyHandlers.ofString()).statusCode());
    }
    List<Integer> markedPosts = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      markedPosts.add(client.send(FairwayHttpClient.idempotent(post("post-" + i)), BodyHandlers.ofString()).statusCode());
    }

    assertThat(markedPosts).containsExactly(200, 200); // the 503 was retried on the other target
    assertThat(markedGets).containsExactlyInAnyOrder(200, 503); // never retried after a send
    assertThat(unavailable.receivedWithPrefix("get-") + healthy.receivedWithPrefix("get-")).isEqualTo(2);
    assertThat(FairwayHttpClient.idempotent(FairwayHttpClient.nonIdempotent(get("x"))).toString()).endsWith("(marked idempotent)");
    assertThat(inFlight(lb)).isZero();
  }

  @Test
  void retryBudgetSpent_theRetryableResponseReachesTheCaller() throws Exception {
    FaultServer a = server(FaultServer.Behaviour.UNAVAILABLE);
    FaultServer b = server(FaultServer.Behaviour.UNAVAILABLE);
    LoadBalancer lb = LoadBalancer.builder("orders").targets(Target.of("127.0.0.1", a.port()),
        Target.of("127.0.0.1", b.port())).passiveHealth(PassiveHealth.disabled()).build();
    opened.add(lb);
    FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb).retryBudget(0.0, 0).build();

    HttpResponse<String> response = client.send(get("g"), BodyHandlers.ofString());

    assertThat(response.statusCode()).isEqualTo(503);
    assertThat(response.body()).isEqualTo("unavailable");
    assertThat(a.received("g") + b.received("g")).isEqualTo(1);
    assertThat(inFlight(lb)).isZero();
  }

  @Test
  void everyTargetTried_nextRoundWaitsTheBackoff_syncAndAsync() throws Exception {
    int refused = FaultServer.refusedPort();
    LoadBalancer lb = LoadBalancer.builder("orders").targets(Target.of("127.0.0.1", refused))
        .passiveHealth(PassiveHealth.disabled()).build();
    opened.add(lb);
    List<String> waits = new ArrayList<>();
    Sleeper recording = new Sleeper() {
      @Override
      public void sleep(long millis) {
        waits.add("sleep " + millis);
      }

      @Override
      public Executor after(long millis, Executor executor) {
        waits.add("after " + millis);
        return executor;
      }
    };
    FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb)
        .backoff(IntervalFunction.of(Duration.ofMillis(7), n -> n * 10L))
        .sleeper(recording)
        .build();

    assertThatThrownBy(() -> client.send(get("s"), BodyHandlers.ofString())).isInstanceOf(ConnectException.class)
        .satisfies(e -> assertThat(e.getSuppressed()).hasSize(2));
    CompletableFuture<HttpResponse<String>> async = client.sendAsync(get("a"), BodyHandlers.ofString());
    assertThatThrownBy(() -> async.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(ConnectException.class);

    assertThat(waits).containsExactly("sleep 7", "sleep 70", "after 7", "after 70");
    assertThat(inFlight(lb)).isZero();
  }

  // ---- outcomes and the body

  @Test
  void loadReports_reachTheBalancer_andAreCounted() throws Exception {
    FaultServer healthy = server(FaultServer.Behaviour.HEALTHY_WITH_LOAD_REPORT);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    LoadBalancer lb = LoadBalancer.builder("orders").targets(Target.of("127.0.0.1", healthy.port()))
        .meterRegistry(registry).build();
    opened.add(lb);
    FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb).build();

    client.send(get("g"), BodyHandlers.ofString());

    assertThat(lb.status().get(0).reportedInFlight()).isEqualTo(3.0);
    assertThat(registry.get("fairway.load.reports").tag("result", "parsed").counter().count()).isEqualTo(1.0);
  }

  @Test
  void inputStreamBody_holdsTheSlotUntilReadToTheEnd_orClosed() throws Exception {
    FaultServer slow = server(FaultServer.Behaviour.SLOW_BODY);
    LoadBalancer lb = balancer(slow.port());
    FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb).build();

    HttpResponse<InputStream> read = client.send(get("read"), BodyHandlers.ofInputStream());
    assertThat(inFlight(lb)).as("after the headers").isEqualTo(1);
    try (InputStream in = read.body()) {
      assertThat(new String(in.readAllBytes(), StandardCharsets.US_ASCII)).isEqualTo(FaultServer.SLOW_BODY);
      assertThat(inFlight(lb)).as("read to the end").isZero();
    }

    HttpResponse<InputStream> closed = client.sendAsync(get("closed"), BodyHandlers.ofInputStream()).get(10, TimeUnit.SECONDS);
    assertThat(inFlight(lb)).as("after the headers").isEqualTo(1);
    assertThat(closed.body().read()).isEqualTo('s');
    closed.body().close();
    assertThat(inFlight(lb)).as("closed early").isZero();
    assertThat(lb.status().get(0).state()).isEqualTo(TargetState.HEALTHY);
  }

  @Test
  void failureStatus_isReportedAsAFailure_theResponseStillReachesTheCaller() throws Exception {
    FaultServer unavailable = server(FaultServer.Behaviour.UNAVAILABLE);
    LoadBalancer lb = balancer(unavailable.port());
    FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb).build();

    HttpResponse<String> response = client.send(post("p"), BodyHandlers.ofString());

    assertThat(response.statusCode()).isEqualTo(503);
    assertThat(response.body()).isEqualTo("unavailable");
    assertThat(lb.status().get(0).state()).isEqualTo(TargetState.EJECTED); // one failure ejects in this balancer
    assertThat(inFlight(lb)).isZero();
  }

  @Test
  void headAndNoContent_completeTheAttempt() throws Exception {
    FaultServer healthy = server(FaultServer.Behaviour.HEALTHY);
    LoadBalancer lb = balancer(healthy.port());
    FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb).build();

    HttpResponse<String> head = client.send(HttpRequest.newBuilder(URI.create("http://orders/h"))
        .method("HEAD", BodyPublishers.noBody()).build(), BodyHandlers.ofString());
    HttpResponse<Void> discarded = client.send(get("d"), BodyHandlers.discarding());

    assertThat(head.statusCode()).isEqualTo(200);
    assertThat(discarded.statusCode()).isEqualTo(200);
    assertThat(inFlight(lb)).isZero();
  }

  @Test
  void aHandlerThatThrows_freesTheSlot_andChargesNoTarget() throws Exception {
    FaultServer healthy = server(FaultServer.Behaviour.HEALTHY);
    LoadBalancer lb = balancer(healthy.port());
    FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb).build();

    assertThatThrownBy(() -> client.send(get("t"), info -> {
      throw new IllegalStateException("handler bug");
    })).hasRootCauseMessage("handler bug");

    assertThat(inFlight(lb)).isZero();
    assertThat(lb.status().get(0).state()).isEqualTo(TargetState.HEALTHY);
  }

  @Test
  void anInterruptedCaller_takesNoSlot_andTheFlagIsCleared_asTheJdksSendDoes() throws Exception {
    FaultServer healthy = server(FaultServer.Behaviour.HEALTHY);
    LoadBalancer lb = balancer(healthy.port());
    FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb).build();

    Thread.currentThread().interrupt();
    assertThatThrownBy(() -> client.send(get("early"), BodyHandlers.ofString())).isInstanceOf(InterruptedException.class);

    assertThat(Thread.currentThread().isInterrupted()).isFalse();
    assertThat(healthy.received("early")).isZero();
    assertThat(inFlight(lb)).isZero();
  }

  @Test
  void sendAsyncWithAPushPromiseHandler_isBalancedToo() throws Exception {
    FaultServer healthy = server(FaultServer.Behaviour.HEALTHY);
    LoadBalancer lb = balancer(healthy.port());
    FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb).build();

    HttpResponse<String> response = client.sendAsync(get("push"), BodyHandlers.ofString(),
        (initiating, pushPromise, acceptor) -> { }).get(10, TimeUnit.SECONDS);

    assertThat(response.body()).isEqualTo("ok");
    assertThat(healthy.received("push")).isEqualTo(1);
    assertThat(inFlight(lb)).isZero();
  }

  @Test
  void manyThreads_syncAndAsync_leaveNothingInFlight() throws Exception {
    FaultServer a = server(FaultServer.Behaviour.HEALTHY);
    FaultServer b = server(FaultServer.Behaviour.UNAVAILABLE);
    LoadBalancer lb = LoadBalancer.builder("orders").targets(Target.of("127.0.0.1", a.port()),
        Target.of("127.0.0.1", b.port())).passiveHealth(PassiveHealth.disabled()).build();
    opened.add(lb);
    FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb).retryBudget(10.0, 10_000).build();
    int threads = 8;
    int calls = 40;
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
    opened.add(pool::shutdownNow);
    List<java.util.concurrent.Future<Integer>> oks = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int thread = t;
      oks.add(pool.submit(() -> {
        int ok = 0;
        for (int i = 0; i < calls; i++) {
          HttpRequest request = get("t" + thread + "-" + i);
          HttpResponse<String> response = i % 2 == 0
              ? client.send(request, BodyHandlers.ofString())
              : client.sendAsync(request, BodyHandlers.ofString()).get(10, TimeUnit.SECONDS);
          ok += response.statusCode() == 200 ? 1 : 0;
        }
        return ok;
      }));
    }
    int total = 0;
    for (java.util.concurrent.Future<Integer> ok : oks) {
      total += ok.get(60, TimeUnit.SECONDS);
    }

    assertThat(total).as("every 503 retried on the healthy target").isEqualTo(threads * calls);
    assertThat(a.receivedTotal()).isEqualTo(threads * calls);
    assertThat(inFlight(lb)).isZero();
  }

  // ---- the builder

  @Test
  void builder_rejectsBadValues_namingFieldAndValue() {
    LoadBalancer lb = balancer(1);
    assertThatThrownBy(() -> FairwayHttpClient.builder(null)).hasMessage(
        "delegate: null (expected: the HttpClient that sends the requests)");
    assertThatThrownBy(() -> FairwayHttpClient.builder(plain).build())
        .hasMessage("services: \"none\" (expected: at least one service(logicalHost, loadBalancer))");
    assertThatThrownBy(() -> FairwayHttpClient.builder(plain).service("or ders", lb))
        .hasMessage("logicalHost: \"or ders\" (expected: a host name such as \"orders\")");
    assertThatThrownBy(() -> FairwayHttpClient.builder(plain).service("orders", lb).service("ORDERS", lb))
        .isInstanceOf(IllegalStateException.class).hasMessageStartingWith("service \"orders\" was already set to");
    assertThatThrownBy(() -> FairwayHttpClient.builder(plain).maxAttempts(0))
        .hasMessage("maxAttempts: 0 (expected: 1..10)");
    assertThatThrownBy(() -> FairwayHttpClient.builder(plain).maxAttempts(2).maxAttempts(3))
        .isInstanceOf(IllegalStateException.class).hasMessage("maxAttempts was already set to 2");
    assertThatThrownBy(() -> FairwayHttpClient.builder(plain).failureStatusCodes(500, 600))
        .hasMessage("failureStatusCodes: 600 (expected: 100..599)");
    assertThatThrownBy(() -> FairwayHttpClient.builder(plain).retryBudget(-0.1, 10))
        .hasMessage("percentCanRetry: -0.1 (expected: 0.0..10.0)");
    assertThatThrownBy(() -> FairwayHttpClient.builder(plain).retryBudget(0.1, 10_001))
        .hasMessage("minRetriesPerSecond: 10001 (expected: 0..10000)");
    assertThatThrownBy(() -> FairwayHttpClient.builder(plain).backoff(null))
        .hasMessage("backoff: null (expected: an IntervalFunction)");
    assertThatThrownBy(() -> FairwayHttpClient.builder(plain).service("orders", lb).failureStatusCodes(500).build())
        .hasMessage("retryStatusCodes: 502 (expected: each also in failureStatusCodes [500])");
    FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb).build();
    assertThatThrownBy(() -> FairwayHttpClient.builder(client))
        .hasMessageStartingWith("delegate: FairwayHttpClient{services=[orders]");
  }

  @Test
  void everyOtherMethod_isTheDelegates() {
    HttpClient delegate = HttpClient.newBuilder().connectTimeout(Duration.ofMillis(1234))
        .followRedirects(HttpClient.Redirect.NORMAL).version(HttpClient.Version.HTTP_1_1).build();
    FairwayHttpClient client = FairwayHttpClient.builder(delegate).service("orders", balancer(1)).build();

    assertThat(client.connectTimeout()).contains(Duration.ofMillis(1234));
    assertThat(client.followRedirects()).isEqualTo(HttpClient.Redirect.NORMAL);
    assertThat(client.version()).isEqualTo(HttpClient.Version.HTTP_1_1);
    assertThat(client.sslContext()).isSameAs(delegate.sslContext());
    assertThat(client.executor()).isEqualTo(delegate.executor());
    assertThat(client.proxy()).isEqualTo(delegate.proxy());
    assertThat(client.cookieHandler()).isEqualTo(delegate.cookieHandler());
    assertThat(client.authenticator()).isEqualTo(delegate.authenticator());
    assertThat(client.newWebSocketBuilder()).isNotNull();
    client.close(); // Java 17: nothing to pass on
    assertThat(client.isTerminated()).isEqualTo(Runtime.version().feature() >= 21);
  }
}
