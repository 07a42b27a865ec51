package dev.fairway.lb.okhttp;

import static dev.fairway.lb.testing.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.HedgingPolicy;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.internal.hedging.Hedger;
import dev.fairway.lb.internal.hedging.ServiceHedging;
import dev.fairway.lb.internal.hedging.TimerNode;
import dev.fairway.lb.testing.Closer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import mockwebserver3.MockResponse;
import okhttp3.Call;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Hedged requests end to end on loopback MockWebServers (real time, generous bounds), with the
 * hedge timer replaced where a test needs an exact count.
 */
class HedgingTest {
  // These tests are about the race; a loser's held slot (HeldLosers) has tests of its own.
  private static final Duration NO_HOLD = Duration.ZERO;

  private static final MediaType TEXT = MediaType.get("text/plain; charset=utf-8");

  private final Closer closer = new Closer();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final ExecutorService hedgePool = Executors.newCachedThreadPool();
  /** The delays the recording scheduler was asked for, in ms. */
  private final List<Long> scheduled = new CopyOnWriteArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    closer.close();
    hedgePool.shutdownNow();
  }

  /** Fires every hedge at once (as if the delay had passed), recording the delay asked for. */
  private final Hedger.Scheduler immediately = new Hedger.Scheduler() {
    @Override
    public void arm(TimerNode task, long delayNanos) {
      scheduled.add(TimeUnit.NANOSECONDS.toMillis(delayNanos));
      task.run();
    }

    @Override
    public void disarm(TimerNode task) {}
  };

  /**
   * Holds the hedge timer until the first copy has reached its server ({@link #arrived}), so the
   * hedge always goes out second. A real 50-100 ms timer can fire before a first copy starved of CPU
   * on a loaded machine reaches its server; the hedge then gets the first copy's scripted answer and
   * the test reads a correct run as wrong.
   */
  private final AtomicReference<Runnable> heldHedge = new AtomicReference<>();
  private final Hedger.Scheduler afterFirstArrival = new Hedger.Scheduler() {
    @Override
    public void arm(TimerNode task, long delayNanos) {
      scheduled.add(TimeUnit.NANOSECONDS.toMillis(delayNanos));
      heldHedge.set(task);
    }

    @Override
    public void disarm(TimerNode task) {
      heldHedge.compareAndSet(task, null);
    }
  };

  private final CountDownLatch hedgeArrived = new CountDownLatch(1);

  /**
   * Request {@code n} reached a server: request 0 (the first copy) lets the held hedge go, request 1
   * (the hedge) opens {@link #hedgeArrived}.
   */
  private void arrived(int n) {
    if (n == 0) {
      Runnable hedge = heldHedge.getAndSet(null);
      if (hedge != null) {
        hedge.run();
      }
    } else if (n == 1) {
      hedgeArrived.countDown();
    }
  }

  /** Waits (bounded) until the hedge has reached its server, then gives {@code response}. */
  private MockResponse onceTheHedgeArrived(MockResponse response) {
    try {
      assertThat(hedgeArrived.await(5, TimeUnit.SECONDS)).as("the hedge reached a server").isTrue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return response;
  }

  /** As {@link #firstSlow}, but the first copy answers only once the hedge has reached its server. */
  private Backends firstAfterTheHedge(int n, MockResponse first, java.util.function.IntFunction<MockResponse> later)
      throws IOException {
    AtomicInteger seen = new AtomicInteger();
    return Backends.start(n, i -> request -> {
      int k = seen.getAndIncrement();
      arrived(k);
      return k == 0 ? onceTheHedgeArrived(first) : later.apply(i);
    });
  }

  /** The first request any server sees gets {@code first}; every later one {@code later}. */
  private Backends firstSlow(int n, MockResponse first, java.util.function.IntFunction<MockResponse> later)
      throws IOException {
    AtomicInteger seen = new AtomicInteger();
    return Backends.start(n, i -> request -> {
      int k = seen.getAndIncrement();
      arrived(k);
      return k == 0 ? first : later.apply(i);
    });
  }

  private static MockResponse slow(int millis, int code, String body) {
    return new MockResponse.Builder().code(code).body(body).headersDelay(millis, TimeUnit.MILLISECONDS).build();
  }

  private LoadBalancer balancer(Backends b) {
    return closer.add(LoadBalancer.builder("orders").targets(b.targets()).strategy(Strategy.roundRobin())
        .meterRegistry(registry).build());
  }

  private double hedges(String result) {
    Counter counter = registry.find("fairway.hedges").tag("result", result).counter();
    return counter == null ? 0 : counter.count();
  }

  private long attempts(Backends b, int server, String outcome) {
    Timer timer = registry.find("fairway.requests").tag("target", b.target(server).id()).tag("outcome", outcome).timer();
    return timer == null ? 0 : timer.count();
  }


  /** GET number {@code i}: a 200 read to the end, then every copy of it settled. */
  private static void getAndSettle(OkHttpClient client, LoadBalancer lb, int i) throws Exception {
    try (Response response = client.newCall(new Request.Builder().url("http://orders/x").build()).execute()) {
      assertThat(response.code()).isEqualTo(200);
      response.body().string();
    }
    eventually("call " + i + " settled", () -> noneInFlight(lb));
  }

  private static boolean noneInFlight(LoadBalancer lb) {
    return lb.status().stream().mapToInt(TargetStatus::inFlight).sum() == 0;
  }

  private static int inFlight(LoadBalancer lb, Backends b, int server) {
    return lb.status().stream().filter(s -> s.target().equals(b.target(server))).mapToInt(TargetStatus::inFlight).sum();
  }

  @Test
  void aLoserCancelledBeforeItsAnswer_keepsItsSlot_untilACallSentLaterToItsTargetAnswers() throws Exception {
    Backends b = closer.add(firstSlow(2, slow(5_000, 200, "slow"), i -> Backends.ok("s" + i)));
    LoadBalancer lb = balancer(b);
    AtomicLong now = new AtomicLong();
    LoadBalancingInterceptor lbi = LoadBalancingInterceptor.builder().service("orders", lb).ticker(now::get)
        .hedgeScheduler(afterFirstArrival, hedgePool).hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(100))).build();
    OkHttpClient client = b.client(lbi);

    int slow;
    try (Response response = client.newCall(new Request.Builder().url("http://orders/x").build()).execute()) {
      slow = response.request().url().port() == b.port(0) ? 1 : 0;
      response.body().string();
    }
    int fast = 1 - slow;
    assertThat(hedges("won")).isEqualTo(1.0);
    eventually("the winner settled", () -> inFlight(lb, b, fast) == 0);
    assertThat(attempts(b, slow, "cancelled")).isEqualTo(1);
    // The slow server still works on the cancelled copy: its slot stays held.
    assertThat(inFlight(lb, b, slow)).isEqualTo(1);
    assertThat(lbi.route("orders").hedging.heldLosers()).isEqualTo(1);

    // Calls sent later: the first one answered by the slow target's server shows it got past the copy.
    for (int i = 0; i < 4 && inFlight(lb, b, slow) > 0; i++) {
      now.addAndGet(TimeUnit.MILLISECONDS.toNanos(1));
      try (Response response = client.newCall(new Request.Builder().url("http://orders/x").build()).execute()) {
        response.body().string();
      }
    }
    assertThat(b.requests(slow)).isGreaterThanOrEqualTo(2);
    eventually("in-flight counts back to 0", () -> noneInFlight(lb));
    assertThat(lbi.route("orders").hedging.heldLosers()).isZero();
    assertThat(attempts(b, slow, "failure")).isZero();
  }

  @Test
  void aLoserThatNoLaterCallGetsPast_isReleasedWhenItsHoldEnds() throws Exception {
    Backends b = closer.add(firstSlow(2, slow(5_000, 200, "slow"), i -> Backends.ok("s" + i)));
    LoadBalancer lb = balancer(b);
    AtomicLong now = new AtomicLong();
    LoadBalancingInterceptor lbi = LoadBalancingInterceptor.builder().service("orders", lb).ticker(now::get)
        .hedgeScheduler(afterFirstArrival, hedgePool)
        .hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(100)).withLoserHold(Duration.ofSeconds(3))).build();
    OkHttpClient client = b.client(lbi);
    try (Response response = client.newCall(new Request.Builder().url("http://orders/x").build()).execute()) {
      response.body().string();
    }
    eventually("the loser held", () -> lbi.route("orders").hedging.heldLosers() == 1);

    ServiceHedging hedging = lbi.route("orders").hedging;
    hedging.maintain(b.target(0), now.addAndGet(TimeUnit.SECONDS.toNanos(3) - 1)); // each hedgeable call's maintenance looks
    assertThat(hedging.heldLosers()).isEqualTo(1);
    hedging.maintain(b.target(0), now.addAndGet(1));
    assertThat(hedging.heldLosers()).isZero();
    assertThat(noneInFlight(lb)).isTrue();
  }

  @Test
  void withLoserHold_isValidated_andZeroReleasesAtTheCancel() {
    assertThatThrownBy(() -> HedgingPolicy.percentile(99).withLoserHold(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxHold").hasMessageContaining("0s..10m");
    assertThatThrownBy(() -> HedgingPolicy.percentile(99).withLoserHold(Duration.ofMinutes(11)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxHold");
    assertThat(HedgingPolicy.percentile(99).loserHoldNanos()).isEqualTo(TimeUnit.SECONDS.toNanos(10));
    assertThat(HedgingPolicy.percentile(99).withLoserHold(Duration.ZERO))
        .isNotEqualTo(HedgingPolicy.percentile(99))
        .hasToString("HedgingPolicy{percentile=99.0, percentCanHedge=0.05, minHedgesPerSecond=1, loserHold=PT0S}");
  }

  @Test
  void hedge_goesToTheOtherTargetAfterTheDelay_winsAndCancelsTheSlowCall() throws Exception {
    Backends b = closer.add(firstSlow(2, slow(5_000, 200, "slow"), i -> Backends.ok("s" + i)));
    LoadBalancer lb = balancer(b);
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb)
        .hedgeScheduler(afterFirstArrival, hedgePool).hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(100)).withLoserHold(NO_HOLD)).build());

    String body;
    String servedBy;
    try (Response response = client.newCall(new Request.Builder().url("http://orders/x").build()).execute()) {
      body = response.body().string();
      servedBy = response.request().url().port() == b.port(0) ? "s0" : "s1";
    }

    assertThat(body).isEqualTo(servedBy); // the fast answer, not "slow"
    int slow = servedBy.equals("s0") ? 1 : 0;
    int fast = 1 - slow;
    assertThat(scheduled).containsExactly(100L);
    assertThat(List.of(b.requests(slow), b.requests(fast))).containsExactly(1, 1);
    assertThat(hedges("sent")).isEqualTo(1.0);
    assertThat(hedges("won")).isEqualTo(1.0);
    assertThat(hedges("budget_exhausted")).isZero();
    assertThat(attempts(b, fast, "success")).isEqualTo(1);
    assertThat(attempts(b, slow, "cancelled")).isEqualTo(1); // released: not a failure
    assertThat(attempts(b, slow, "failure")).isZero();
    eventually("in-flight counts back to 0", () -> noneInFlight(lb));
    // The slow leg's connection was closed by the cancel; the winner's went back to the pool idle.
    eventually("no connection in use", () -> client.connectionPool().connectionCount() == client.connectionPool().idleConnectionCount());
    assertThat(client.connectionPool().connectionCount()).isEqualTo(1);
    assertThat(registry.find("fairway.leaked.responses").counter()).isNull();
    assertThat(registry.get("fairway.hedges.extra.load").gauge().value()).isEqualTo(1.0);
  }

  /** lb-okhttp's former policy type still builds and hedges exactly as lb-core's (issue 35 moved it). */
  @Test
  @SuppressWarnings("deprecation")
  void deprecatedOkHttpPolicy_isTheCorePolicy_andStillHedges() throws Exception {
    dev.fairway.lb.okhttp.HedgingPolicy old = dev.fairway.lb.okhttp.HedgingPolicy.fixedDelay(Duration.ofMillis(100))
        .withBudget(0.1, 2).withLoserHold(NO_HOLD);
    assertThat(old).hasToString(HedgingPolicy.fixedDelay(Duration.ofMillis(100)).withBudget(0.1, 2).withLoserHold(NO_HOLD).toString())
        .isEqualTo(dev.fairway.lb.okhttp.HedgingPolicy.fixedDelay(Duration.ofMillis(100)).withBudget(0.1, 2).withLoserHold(NO_HOLD));
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> dev.fairway.lb.okhttp.HedgingPolicy.percentile(10))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("percentile").hasMessageContaining("50.0..99.99");
    assertThat(dev.fairway.lb.okhttp.HedgingPolicy.MIN_SAMPLES).isEqualTo(HedgingPolicy.MIN_SAMPLES);

    Backends b = closer.add(firstSlow(2, slow(5_000, 200, "slow"), i -> Backends.ok("s" + i)));
    LoadBalancer lb = balancer(b);
    LoadBalancingInterceptor.Builder builder = LoadBalancingInterceptor.builder().service("orders", lb)
        .hedgeScheduler(afterFirstArrival, hedgePool).hedging(old);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> builder.hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(5))))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("hedging");
    OkHttpClient client = b.client(builder.build());
    try (Response response = client.newCall(new Request.Builder().url("http://orders/x").build()).execute()) {
      assertThat(response.body().string()).startsWith("s");
    }
    assertThat(scheduled).containsExactly(100L);
    assertThat(hedges("sent")).isEqualTo(1.0);
    assertThat(hedges("won")).isEqualTo(1.0);
    eventually("in-flight counts back to 0", () -> noneInFlight(lb));
  }

  @Test
  void budget_withEveryCallSlow_hedgesStopAtTheBudget() throws Exception {
    Backends b = closer.add(Backends.start(2, i -> request -> slow(200, 200, "s" + i)));
    LoadBalancer lb = balancer(b);
    // No deposits count (0%), a reserve of 1 per second over the 10 s window: exactly 10 tokens,
    // and the clock stands still so none expires.
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb)
        .retryBudget(0.0, 1).ticker(() -> 0L).hedgeScheduler(immediately, hedgePool)
        .hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(20)).withLoserHold(NO_HOLD)).build());

    for (int i = 0; i < 15; i++) {
      getAndSettle(client, lb, i);
    }

    assertThat(scheduled).hasSize(15).containsOnly(20L);
    assertThat(hedges("sent")).isEqualTo(10.0);
    assertThat(hedges("budget_exhausted")).isEqualTo(5.0);
    // Every first copy reaches its server; a sent hedge may not, on a loaded machine: the first copy
    // can answer (200 ms) and cancel it before its request was read. The meters above count what was sent.
    assertThat(b.totalRequests()).isBetween(15, 25);
    assertThat(registry.get("fairway.hedges.extra.load").gauge().value()).isEqualTo(10 / 15.0);
  }

  @Test
  void hedgeBudget_withEveryCallSlow_allowsItsShareOfHedgeableCallsOnly() throws Exception {
    // The hedge is decided on a hedge thread; a first copy answering before that thread ran (one
    // starved of CPU for 100 ms on a loaded machine) would close the race with no decision at all.
    // So each GET's first copy is held at its server until its call's hedge was decided (sent or
    // refused by the budget); a hedge copy finds its decision already counted.
    AtomicInteger getsStarted = new AtomicInteger();
    Backends b = closer.add(Backends.start(2, i -> request -> {
      if ("GET".equals(request.getMethod())) {
        int calls = getsStarted.get();
        try {
          eventually("hedge of call " + calls + " decided",
              () -> hedges("sent") + hedges("budget_exhausted") >= calls);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return slow(100, 200, "s" + i);
    }));
    LoadBalancer lb = balancer(b);
    // The retry budget could pay for every hedge (10 tokens a second, clock standing still: 100);
    // the hedges' own budget is 10% of hedgeable calls and no reserve: calls 10, 20 and 30 bring
    // its balance to one whole token. A POST deposits nothing.
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb)
        .retryBudget(0.0, 10).ticker(() -> 0L).hedgeScheduler(immediately, hedgePool)
        .hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(20)).withLoserHold(NO_HOLD).withBudget(0.1, 0)).build());

    for (int i = 0; i < 30; i++) {
      if (i == 5) { // not hedgeable: no deposit, no hedge
        client.newCall(new Request.Builder().url("http://orders/x").post(RequestBody.create("x", TEXT)).build())
            .execute().close();
      }
      getsStarted.incrementAndGet();
      getAndSettle(client, lb, i);
    }

    assertThat(scheduled).hasSize(30);
    assertThat(hedges("sent")).isEqualTo(3.0);
    assertThat(hedges("budget_exhausted")).isEqualTo(27.0);
    assertThat(b.totalRequests()).isEqualTo(30 + 1 + 3);
    assertThat(registry.get("fairway.hedges.extra.load").gauge().value()).isEqualTo(3 / 31.0);
  }

  @Test
  void post_isNeverHedged_norPutOrAGetTaggedNonIdempotent() throws Exception {
    Backends b = closer.add(Backends.start(2, i -> request -> slow(50, 200, "s" + i)));
    LoadBalancer lb = balancer(b);
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb)
        .hedgeScheduler(immediately, hedgePool).hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(10)).withLoserHold(NO_HOLD)).build());

    List<Request> requests = List.of(
        new Request.Builder().url("http://orders/x").post(RequestBody.create("a", TEXT)).build(),
        new Request.Builder().url("http://orders/x").put(RequestBody.create("b", TEXT)).build(),
        new Request.Builder().url("http://orders/x").tag(Idempotency.class, Idempotency.NON_IDEMPOTENT).build());
    for (Request request : requests) {
      try (Response response = client.newCall(request).execute()) {
        assertThat(response.code()).isEqualTo(200);
      }
    }

    assertThat(scheduled).isEmpty();
    assertThat(b.totalRequests()).isEqualTo(3);
    assertThat(hedges("sent")).isZero();
  }

  @Test
  void postTaggedIdempotent_isHedged() throws Exception {
    Backends b = closer.add(Backends.start(2, i -> request -> slow(100, 200, "s" + i)));
    LoadBalancer lb = balancer(b);
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb)
        .hedgeScheduler(immediately, hedgePool).hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(10)).withLoserHold(NO_HOLD)).build());

    Request request = new Request.Builder().url("http://orders/x").post(RequestBody.create("a", TEXT))
        .tag(Idempotency.class, Idempotency.IDEMPOTENT).build();
    try (Response response = client.newCall(request).execute()) {
      assertThat(response.code()).isEqualTo(200);
    }

    assertThat(scheduled).containsExactly(10L);
    assertThat(hedges("sent")).isEqualTo(1.0);
    eventually("both copies reached a server", () -> b.totalRequests() == 2);
    assertThat(b.servers.get(0).takeRequest(1, TimeUnit.SECONDS).getBody().utf8()).isEqualTo("a");
    assertThat(b.servers.get(1).takeRequest(1, TimeUnit.SECONDS).getBody().utf8()).isEqualTo("a");
  }

  @Test
  void cancellingTheCallersCall_cancelsTheHedgeToo() throws Exception {
    Backends b = closer.add(Backends.start(2, i -> request -> slow(5_000, 200, "s" + i)));
    LoadBalancer lb = balancer(b);
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb)
        .hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(50)).withLoserHold(NO_HOLD)).build());
    Call call = client.newCall(new Request.Builder().url("http://orders/x").build());
    CompletableFuture<Throwable> failure = CompletableFuture.supplyAsync(() -> {
      try {
        call.execute().close();
        return new AssertionError("the call was not cancelled");
      } catch (IOException e) {
        return e;
      }
    });

    eventually("first copy and hedge both at a server", () -> b.totalRequests() == 2);
    long start = System.nanoTime();
    call.cancel();
    Throwable thrown = failure.get(3, TimeUnit.SECONDS);

    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(2_000);
    // As plain OkHttp: "Socket closed" (cancelled while reading) or "Canceled".
    assertThat(thrown).isInstanceOf(IOException.class).hasMessageMatching("Socket closed|Canceled");
    assertThat(hedges("sent")).isEqualTo(1.0);
    assertThat(hedges("won")).isZero();
    eventually("in-flight counts back to 0", () -> noneInFlight(lb));
    assertThat(attempts(b, 0, "cancelled") + attempts(b, 1, "cancelled")).isEqualTo(2);
    assertThat(attempts(b, 0, "failure") + attempts(b, 1, "failure")).isZero();
    eventually("no connection in use", () -> client.connectionPool().connectionCount() == client.connectionPool().idleConnectionCount());
  }

  @Test
  void failingHedge_doesNotFailTheCall_theFirstCopysResponseIsReturned() throws Exception {
    Backends b = closer.add(firstAfterTheHedge(2, slow(500, 200, "first"), i -> Backends.ok("x").newBuilder().code(503).build()));
    LoadBalancer lb = balancer(b);
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb)
        .hedgeScheduler(afterFirstArrival, hedgePool).hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(50)).withLoserHold(NO_HOLD)).build());

    int firstServer;
    try (Response response = client.newCall(new Request.Builder().url("http://orders/x").build()).execute()) {
      assertThat(response.code()).isEqualTo(200);
      assertThat(response.body().string()).isEqualTo("first");
      firstServer = response.request().url().port() == b.port(0) ? 0 : 1;
    }

    assertThat(hedges("sent")).isEqualTo(1.0);
    assertThat(hedges("won")).isZero();
    assertThat(attempts(b, 1 - firstServer, "failure")).isEqualTo(1); // the hedge's 503 reached passive health
    assertThat(attempts(b, firstServer, "success")).isEqualTo(1);
    assertThat(b.totalRequests()).isEqualTo(2); // no retry after the first copy's success
    eventually("in-flight counts back to 0", () -> noneInFlight(lb));
  }

  @Test
  void failingFirstCopy_afterTheHedgeWasSent_theHedgesResponseIsReturned() throws Exception {
    Backends b = closer.add(firstAfterTheHedge(2, slow(0, 503, "down"), i -> slow(400, 200, "s" + i)));
    LoadBalancer lb = balancer(b);
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb)
        .hedgeScheduler(afterFirstArrival, hedgePool).hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(50)).withLoserHold(NO_HOLD)).build());

    try (Response response = client.newCall(new Request.Builder().url("http://orders/x").build()).execute()) {
      assertThat(response.code()).isEqualTo(200);
      assertThat(response.body().string()).startsWith("s");
    }

    assertThat(hedges("sent")).isEqualTo(1.0);
    assertThat(hedges("won")).isEqualTo(1.0);
    assertThat(b.totalRequests()).isEqualTo(2); // the hedge stood in for the retry
    eventually("in-flight counts back to 0", () -> noneInFlight(lb));
  }

  @Test
  void bothCopiesFail_theRetryGoesToTheThirdTarget() throws Exception {
    AtomicInteger seen = new AtomicInteger();
    // Request 1 (the first copy) answers 503 once the hedge has arrived, request 2 (the hedge) 503
    // at once, request 3 (the retry, which must avoid both) 200.
    Backends b = closer.add(Backends.start(3, i -> request -> {
      int k = seen.getAndIncrement();
      arrived(k);
      return switch (k) {
        case 0 -> onceTheHedgeArrived(new MockResponse.Builder().code(503).body("down").build());
        case 1 -> new MockResponse.Builder().code(503).body("down").build();
        default -> Backends.ok("s" + i);
      };
    }));
    LoadBalancer lb = balancer(b);
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb)
        .hedgeScheduler(afterFirstArrival, hedgePool).hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(50)).withLoserHold(NO_HOLD)).build());

    String body;
    try (Response response = client.newCall(new Request.Builder().url("http://orders/x").build()).execute()) {
      assertThat(response.code()).isEqualTo(200);
      body = response.body().string();
    }

    int third = Integer.parseInt(body.substring(1));
    assertThat(b.requests(third)).isEqualTo(1);
    assertThat(b.totalRequests()).isEqualTo(3);
    assertThat(hedges("sent")).isEqualTo(1.0);
    assertThat(hedges("won")).isZero();
    assertThat(registry.get("fairway.retries").tag("reason", "status_503").counter().count()).isEqualTo(1.0);
    for (int i = 0; i < 3; i++) {
      assertThat(attempts(b, i, i == third ? "success" : "failure")).as("server %d", i).isEqualTo(1);
    }
    eventually("in-flight counts back to 0", () -> noneInFlight(lb));
  }

  @Test
  void asyncCall_isHedgedToo() throws Exception {
    Backends b = closer.add(firstSlow(2, slow(5_000, 200, "slow"), i -> Backends.ok("s" + i)));
    LoadBalancer lb = balancer(b);
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb)
        .hedgeScheduler(afterFirstArrival, hedgePool).hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(100)).withLoserHold(NO_HOLD)).build());
    CompletableFuture<String> body = new CompletableFuture<>();

    client.newCall(new Request.Builder().url("http://orders/x").build()).enqueue(new okhttp3.Callback() {
      @Override
      public void onFailure(Call call, IOException e) {
        body.completeExceptionally(e);
      }

      @Override
      public void onResponse(Call call, Response response) throws IOException {
        try (response) {
          body.complete(response.body().string());
        }
      }
    });

    assertThat(body.get(3, TimeUnit.SECONDS)).matches("s[01]");
    assertThat(hedges("won")).isEqualTo(1.0);
    eventually("in-flight counts back to 0", () -> noneInFlight(lb));
  }

  @Test
  void fastAnswer_beforeTheDelay_sendsNoHedge() throws Exception {
    Backends b = closer.add(Backends.named(2));
    LoadBalancer lb = balancer(b);
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb)
        .hedging(HedgingPolicy.fixedDelay(Duration.ofSeconds(2)).withLoserHold(NO_HOLD)).build());

    for (int i = 0; i < 20; i++) {
      try (Response response = client.newCall(new Request.Builder().url("http://orders/x").build()).execute()) {
        assertThat(response.body().string()).startsWith("s");
      }
    }

    assertThat(b.totalRequests()).isEqualTo(20);
    assertThat(registry.find("fairway.hedges").counters()).isEmpty();
    assertThat(registry.get("fairway.hedges.extra.load").gauge().value()).isZero();
    eventually("in-flight counts back to 0", () -> noneInFlight(lb));
  }

  @Test
  void percentile_noHedgingUntilTheWindowHoldsEnoughCalls_thenItsPercentile() throws Exception {
    Backends b = closer.add(Backends.named(2));
    LoadBalancer lb = balancer(b);
    java.util.concurrent.atomic.AtomicLong offset = new java.util.concurrent.atomic.AtomicLong();
    Hedger.Scheduler never = new Hedger.Scheduler() { // records the delay; the hedge never fires
      @Override
      public void arm(TimerNode task, long delayNanos) {
        scheduled.add(TimeUnit.NANOSECONDS.toMicros(delayNanos));
      }

      @Override
      public void disarm(TimerNode task) {}
    };
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb)
        .ticker(() -> System.nanoTime() + offset.get()).hedgeScheduler(never, hedgePool)
        .hedging(HedgingPolicy.percentile(95.0).withLoserHold(NO_HOLD)).build());

    for (int i = 0; i < HedgingPolicy.MIN_SAMPLES; i++) {
      try (Response response = client.newCall(new Request.Builder().url("http://orders/x").build()).execute()) {
        assertThat(response.body().string()).startsWith("s");
      }
    }
    assertThat(scheduled).isEmpty(); // sent plainly while the window fills
    offset.addAndGet(TimeUnit.SECONDS.toNanos(2)); // the window refreshes on the next call
    try (Response response = client.newCall(new Request.Builder().url("http://orders/x").build()).execute()) {
      assertThat(response.body().string()).startsWith("s");
    }

    assertThat(scheduled).hasSize(1);
    assertThat(scheduled.get(0)).isBetween(1_000L, 3_000_000L); // p95 of loopback calls, at least 1 ms
    assertThat(b.totalRequests()).isEqualTo(HedgingPolicy.MIN_SAMPLES + 1);
    eventually("in-flight counts back to 0", () -> noneInFlight(lb));
  }

  @Test
  void hedgeMeters_areRemovedWhenTheBalancerCloses() throws Exception {
    Backends b = closer.add(Backends.start(2, i -> request -> slow(100, 200, "s" + i)));
    LoadBalancer lb = LoadBalancer.builder("orders").targets(b.targets()).meterRegistry(registry).build();
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb)
        .hedgeScheduler(immediately, hedgePool).retryBudget(0.0, 0).hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(10)).withLoserHold(NO_HOLD)).build());
    try (Response response = client.newCall(new Request.Builder().url("http://orders/x").build()).execute()) {
      assertThat(response.code()).isEqualTo(200);
    }
    assertThat(hedges("budget_exhausted")).isEqualTo(1.0); // a budget of nothing: no hedge at all
    assertThat(b.totalRequests()).isEqualTo(1);

    lb.close();

    assertThat(registry.find("fairway.hedges").counters()).isEmpty();
    assertThat(registry.find("fairway.hedges.extra.load").gauge()).isNull();
  }

  @Test
  void policy_rejectsBadValuesAndASecondSetting() {
    assertThatThrownBy(() -> HedgingPolicy.fixedDelay(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("delay: PT0S (expected: 1ms..1h)");
    assertThatThrownBy(() -> HedgingPolicy.percentile(100.0))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("percentile: 100.0 (expected: 50.0..99.99)");
    LoadBalancingInterceptor.Builder builder = LoadBalancingInterceptor.builder().hedging(HedgingPolicy.percentile(95));
    assertThatThrownBy(() -> builder.hedging(HedgingPolicy.percentile(99)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("hedging was already set to HedgingPolicy{percentile=95.0, percentCanHedge=0.05, minHedgesPerSecond=1}");
    assertThat(HedgingPolicy.fixedDelay(Duration.ofMillis(30)))
        .hasToString("HedgingPolicy{fixedDelay=PT0.03S, percentCanHedge=0.05, minHedgesPerSecond=1}");
    assertThatThrownBy(() -> HedgingPolicy.percentile(95).withBudget(1.5, 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("percentCanHedge: 1.5 (expected: 0.0..1.0)");
    assertThatThrownBy(() -> HedgingPolicy.percentile(95).withBudget(0.05, -1))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("minHedgesPerSecond: -1 (expected: 0..10000)");
    assertThat(HedgingPolicy.percentile(95).withBudget(0.02, 0)).hasToString(
        "HedgingPolicy{percentile=95.0, percentCanHedge=0.02, minHedgesPerSecond=0}")
        .isEqualTo(HedgingPolicy.percentile(95).withBudget(0.02, 0)).isNotEqualTo(HedgingPolicy.percentile(95));
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders").targets(dev.fairway.lb.Target.of("127.0.0.1", 1)).build());
    assertThat(LoadBalancingInterceptor.builder().service("orders", lb).hedging(HedgingPolicy.percentile(99)).build())
        .hasToString("LoadBalancingInterceptor{services=[orders], maxAttempts=3, "
            + "hedging=HedgingPolicy{percentile=99.0, percentCanHedge=0.05, minHedgesPerSecond=1}}");
  }
}
