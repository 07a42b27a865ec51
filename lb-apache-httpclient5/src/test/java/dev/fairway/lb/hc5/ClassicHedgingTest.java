package dev.fairway.lb.hc5;

import static dev.fairway.lb.testing.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.HedgingPolicy;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.TargetState;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.internal.hedging.Hedger;
import dev.fairway.lb.internal.hedging.TimerNode;
import dev.fairway.lb.testing.RaceServers;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.io.entity.StringEntity;
import org.apache.hc.core5.util.Timeout;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/**
 * Hedging in the classic client ({@link ClassicHedgeRace}) over loopback servers that answer by
 * the order requests reach them ({@link RaceServers}). Each call runs on its own caller thread; the
 * hedge timer is fired by hand and the hedge runs on a test pool thread, as on the shared hedge
 * pool. Every race test runs 3 times in the suite (20 times by hand when the race changes).
 */
@org.junit.jupiter.api.Timeout(60)
class ClassicHedgingTest {
  private static final long MS = 1_000_000L;

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final List<AutoCloseable> opened = new ArrayList<>();
  private final List<Long> armed = new CopyOnWriteArrayList<>();
  private final List<TimerNode> disarmed = new CopyOnWriteArrayList<>();
  private final AtomicReference<@Nullable TimerNode> race = new AtomicReference<>();
  private final ExecutorService hedgeThreads = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "test-hedge");
    t.setDaemon(true);
    return t;
  });
  /** Every task the hedge pool was given, so a test can wait until they are done. */
  private final List<Future<?>> hedgeTasks = new CopyOnWriteArrayList<>();
  /** Arms and disarms nothing but records both; {@link #fire} runs the timer's action. */
  private final Hedger.Scheduler byHand = new Hedger.Scheduler() {
    @Override
    public void arm(TimerNode node, long delayNanos) {
      armed.add(delayNanos / MS);
      race.set(node);
    }

    @Override
    public void disarm(TimerNode node) {
      disarmed.add(node);
    }
  };
  private @Nullable PoolingHttpClientConnectionManager pool;

  @AfterEach
  void closeAll() throws Exception {
    for (int i = opened.size() - 1; i >= 0; i--) {
      opened.get(i).close();
    }
    hedgeThreads.shutdownNow();
  }

  private RaceServers servers(int n, RaceServers.Script script) throws Exception {
    RaceServers servers = RaceServers.start(n, script);
    opened.add(servers);
    return servers;
  }

  private LoadBalancer balancer(RaceServers s) {
    LoadBalancer lb = LoadBalancer.builder("orders").targets(s.targets()).strategy(Strategy.roundRobin())
        .meterRegistry(registry).build();
    opened.add(lb);
    return lb;
  }

  private static HedgingPolicy fixed100() {
    return HedgingPolicy.fixedDelay(Duration.ofMillis(100));
  }

  private FairwayHttpClient5 fairway(LoadBalancer lb, HedgingPolicy policy) {
    return fairway(FairwayHttpClient5.builder().service("orders", lb).hedging(policy));
  }

  private FairwayHttpClient5 fairway(FairwayHttpClient5.Builder builder) {
    return builder.hedgeScheduler(byHand, task -> hedgeTasks.add(hedgeThreads.submit(task))).build();
  }

  private CloseableHttpClient client(FairwayHttpClient5 fairway) {
    PoolingHttpClientConnectionManager manager = PoolingHttpClientConnectionManagerBuilder.create()
        .setMaxConnPerRoute(5).setMaxConnTotal(20)
        .setDefaultConnectionConfig(ConnectionConfig.custom()
            .setConnectTimeout(Timeout.ofSeconds(1)).setSocketTimeout(Timeout.ofSeconds(20)).build())
        .build();
    pool = manager;
    CloseableHttpClient client = fairway.customize(HttpClients.custom().setConnectionManager(manager)
        .setDefaultRequestConfig(RequestConfig.custom().setResponseTimeout(Timeout.ofSeconds(20))
            .setConnectionRequestTimeout(Timeout.ofSeconds(5)).build()))
        .build();
    opened.add(client);
    return client;
  }

  /** A call on its own caller thread: "code body", the body read whole and the response closed. */
  private static final class Call {
    final HttpGet request;
    final CompletableFuture<String> result = new CompletableFuture<>();
    final Thread thread;

    Call(CloseableHttpClient client) {
      this(client, new HttpGet("http://orders/items"));
    }

    Call(CloseableHttpClient client, HttpGet request) {
      this.request = request;
      thread = new Thread(() -> {
        try {
          result.complete(client.execute(request,
              response -> response.getCode() + " " + EntityUtils.toString(response.getEntity())));
        } catch (Throwable e) {
          result.completeExceptionally(e);
        }
      }, "test-caller");
      thread.setDaemon(true);
      thread.start();
    }

    String get() throws Exception {
      return result.get(10, TimeUnit.SECONDS);
    }
  }

  /** Fires the race's hedge timer, as if its delay had passed: the hedge goes to the hedge pool. */
  private void fire() {
    TimerNode node = race.get();
    assertThat(node).as("a race armed its hedge timer").isNotNull();
    node.run();
  }

  /** Waits until every task given to the hedge pool so far has ended (a hedge sent ends with its answer). */
  private void hedgeTasksDone() throws Exception {
    for (Future<?> task : hedgeTasks) {
      task.get(10, TimeUnit.SECONDS);
    }
  }

  private double hedges(String result) {
    Counter counter = registry.find("fairway.hedges").tag("result", result).counter();
    return counter == null ? 0 : counter.count();
  }

  private long attempts(RaceServers s, int server, String outcome) {
    Timer timer = registry.find("fairway.requests").tag("target", s.target(server).id()).tag("outcome", outcome).timer();
    return timer == null ? 0 : timer.count();
  }

  private static int inFlight(LoadBalancer lb) {
    return lb.status().stream().mapToInt(TargetStatus::inFlight).sum();
  }

  private int leased() {
    PoolingHttpClientConnectionManager p = pool;
    assertThat(p).isNotNull();
    return p.getTotalStats().getLeased();
  }

  private int available() {
    PoolingHttpClientConnectionManager p = pool;
    assertThat(p).isNotNull();
    return p.getTotalStats().getAvailable();
  }

  // ---- the race

  @RepeatedTest(3)
  void slowFirst_hedgeWins_theCallersThreadReturnsTheHedgesBody_loserClosed_poolClean() throws Exception {
    RaceServers s = servers(2, (arrival, server) -> arrival == 0 ? RaceServers.Reply.HOLD
        : RaceServers.Reply.ok("s" + server));
    LoadBalancer lb = balancer(s);
    CloseableHttpClient client = client(fairway(lb, fixed100().withLoserHold(Duration.ZERO)));

    Call call = new Call(client);
    assertThat(s.awaitArrival(0)).isTrue();
    int slow = s.serverOf(0);
    int fast = 1 - slow;
    fire();

    assertThat(call.get()).isEqualTo("200 s" + fast);
    assertThat(armed).containsExactly(100L);
    assertThat(disarmed).hasSize(1);
    assertThat(hedges("sent")).isEqualTo(1.0);
    assertThat(hedges("won")).isEqualTo(1.0);
    // The caller's thread was blocked reading the first copy: the cancel closed its connection.
    eventually("the slow server saw the loser's connection closed", () -> s.closedByClient(slow) == 1);
    assertThat(inFlight(lb)).as("both slots freed when the call returned").isZero();
    assertThat(attempts(s, fast, "success")).isEqualTo(1);
    assertThat(attempts(s, slow, "cancelled")).as("superseded: not a failure").isEqualTo(1);
    assertThat(attempts(s, slow, "failure")).isZero();
    assertThat(lb.status()).extracting(TargetStatus::state).containsOnly(TargetState.HEALTHY);
    assertThat(List.of(s.requests(0), s.requests(1))).containsExactly(1, 1);
    // The winner's connection went back to the pool through its own runtime; the loser's is gone.
    assertThat(leased()).isZero();
    assertThat(available()).isEqualTo(1);

    // Later calls reuse the pooled connection to the fast server: nothing leaked.
    for (int i = 0; i < 4; i++) {
      Call next = new Call(client);
      assertThat(next.get()).startsWith("200 s");
    }
    assertThat(s.connections(fast)).as("the winner's connection reused").isEqualTo(1);
    assertThat(leased()).isZero();
    assertThat(inFlight(lb)).isZero();
  }

  @RepeatedTest(3)
  void loserCancelledBeforeItsAnswer_keepsItsSlotUnderTheDefaultHold() throws Exception {
    RaceServers s = servers(2, (arrival, server) -> arrival == 0 ? RaceServers.Reply.HOLD
        : RaceServers.Reply.ok("s" + server));
    LoadBalancer lb = balancer(s);
    CloseableHttpClient client = client(fairway(lb, fixed100()));

    Call call = new Call(client);
    assertThat(s.awaitArrival(0)).isTrue();
    int slow = s.serverOf(0);
    fire();

    assertThat(call.get()).isEqualTo("200 s" + (1 - slow));
    eventually("the loser's connection closed", () -> s.closedByClient(slow) == 1);
    assertThat(inFlight(lb)).as("the winner's slot freed").isEqualTo(1);
    assertThat(lb.status().stream().filter(t -> t.target().equals(s.target(slow))).findFirst().orElseThrow().inFlight())
        .as("the loser's slot, held while its server presumably still works on it").isEqualTo(1);
    lb.close(); // nothing held outlives the balancer
    assertThat(inFlight(lb)).isZero();
  }

  @RepeatedTest(3)
  void firstCopyWinsWhileTheHedgeWaits_theHedgeIsCancelled_itsThreadEnds_noTargetCharged() throws Exception {
    AtomicReference<RaceServers> servers = new AtomicReference<>();
    RaceServers s = servers(2, (arrival, server) -> {
      if (arrival == 0) { // answers once the hedge is there
        servers.get().awaitArrival(1);
        return RaceServers.Reply.ok("s" + server);
      }
      return RaceServers.Reply.HOLD;
    });
    servers.set(s);
    LoadBalancer lb = balancer(s);
    CloseableHttpClient client = client(fairway(lb, fixed100().withLoserHold(Duration.ZERO)));

    Call call = new Call(client);
    assertThat(s.awaitArrival(0)).isTrue();
    int first = s.serverOf(0);
    fire();

    assertThat(call.get()).isEqualTo("200 s" + first);
    hedgeTasksDone(); // the hedge's pool thread was blocked reading: the cancel ended it
    eventually("the hedge's server saw its connection closed", () -> s.closedByClient(1 - first) == 1);
    assertThat(hedges("sent")).isEqualTo(1.0);
    assertThat(hedges("won")).isZero();
    assertThat(attempts(s, first, "success")).isEqualTo(1);
    assertThat(attempts(s, 1 - first, "cancelled")).as("superseded: not a failure").isEqualTo(1);
    assertThat(attempts(s, 1 - first, "failure")).isZero();
    assertThat(inFlight(lb)).isZero();
    assertThat(leased()).isZero();
    assertThat(available()).as("the winner's connection back in the pool").isEqualTo(1);
  }

  @RepeatedTest(3)
  void hedgeFailsWithAnIoError_doesNotEndTheRace_theFirstCopyWinsLater() throws Exception {
    CountDownLatch hedgeSettled = new CountDownLatch(1);
    RaceServers s = servers(2, (arrival, server) -> {
      if (arrival == 1) {
        return RaceServers.Reply.RESET;
      }
      hedgeSettled.await(10, TimeUnit.SECONDS); // answers once the client has settled the hedge's failure
      return RaceServers.Reply.ok("s" + server);
    });
    LoadBalancer lb = balancer(s);
    CloseableHttpClient client = client(fairway(lb, fixed100()));

    Call call = new Call(client);
    assertThat(s.awaitArrival(0)).isTrue();
    int first = s.serverOf(0);
    fire();
    eventually("the hedge's reset reached passive health", () -> attempts(s, 1 - first, "failure") == 1);
    hedgeSettled.countDown();

    assertThat(call.get()).isEqualTo("200 s" + first);
    assertThat(hedges("sent")).isEqualTo(1.0);
    assertThat(hedges("won")).isZero();
    assertThat(attempts(s, first, "success")).isEqualTo(1);
    assertThat(s.totalRequests()).isEqualTo(2);
    assertThat(inFlight(lb)).isZero();
    assertThat(leased()).isZero();
  }

  @RepeatedTest(3)
  void callerCancelsBeforeTheTimerFires_noHedgeIsSent() throws Exception {
    RaceServers s = servers(2, (arrival, server) -> RaceServers.Reply.HOLD);
    LoadBalancer lb = balancer(s);
    CloseableHttpClient client = client(fairway(lb, fixed100()));

    Call call = new Call(client);
    assertThat(s.awaitArrival(0)).isTrue();
    assertThat(call.request.cancel()).isTrue();
    assertThatThrownBy(call::get).isInstanceOf(ExecutionException.class).cause().isInstanceOf(IOException.class);
    fire();
    hedgeTasksDone();

    assertThat(s.totalRequests()).isEqualTo(1);
    assertThat(hedges("sent")).isZero();
    assertThat(inFlight(lb)).isZero();
    assertThat(attempts(s, s.serverOf(0), "cancelled")).isEqualTo(1);
    assertThat(attempts(s, s.serverOf(0), "failure")).isZero();
    assertThat(disarmed).hasSize(1);
    eventually("the first copy's connection closed", () -> s.closedByClient(s.serverOf(0)) == 1);
    assertThat(leased()).isZero();
  }

  @RepeatedTest(3)
  void fastFirst_noHedge_theTimerIsDisarmedAndFiringLateSendsNothing() throws Exception {
    RaceServers s = servers(2, (arrival, server) -> RaceServers.Reply.ok("s" + server));
    LoadBalancer lb = balancer(s);
    CloseableHttpClient client = client(fairway(lb, fixed100()));

    String result = new Call(client).get();
    fire(); // the race was decided: no copy is sent
    hedgeTasksDone();

    assertThat(result).startsWith("200 s");
    assertThat(armed).containsExactly(100L);
    assertThat(disarmed).hasSize(1);
    assertThat(s.totalRequests()).isEqualTo(1);
    assertThat(hedges("sent")).isZero();
    assertThat(inFlight(lb)).isZero();
    assertThat(leased()).isZero();
  }

  @RepeatedTest(3)
  void failureStatusFirst_doesNotWinWhileTheHedgeIsPending_theHedgeWins() throws Exception {
    CountDownLatch firstSettled = new CountDownLatch(1);
    AtomicReference<RaceServers> servers = new AtomicReference<>();
    RaceServers s = servers(2, (arrival, server) -> {
      if (arrival == 0) { // answers 503 once the hedge is there
        servers.get().awaitArrival(1);
        return new RaceServers.Reply(503, "unavailable");
      }
      firstSettled.await(10, TimeUnit.SECONDS); // answers once the client has settled the 503
      return RaceServers.Reply.ok("s" + server);
    });
    servers.set(s);
    LoadBalancer lb = balancer(s);
    CloseableHttpClient client = client(fairway(lb, fixed100()));

    Call call = new Call(client);
    assertThat(s.awaitArrival(0)).isTrue();
    int first = s.serverOf(0);
    fire();
    eventually("the 503 reached passive health", () -> attempts(s, first, "failure") == 1);
    firstSettled.countDown();

    assertThat(call.get()).isEqualTo("200 s" + (1 - first));
    assertThat(hedges("won")).isEqualTo(1.0);
    assertThat(attempts(s, 1 - first, "success")).isEqualTo(1);
    assertThat(s.totalRequests()).as("no retry: the hedge answered").isEqualTo(2);
    assertThat(inFlight(lb)).isZero();
    assertThat(leased()).isZero();
  }

  @RepeatedTest(3)
  void bothCopiesFail_theCallerGetsTheLastFailure_andNoTargetIsTriedAgain() throws Exception {
    CountDownLatch firstSettled = new CountDownLatch(1);
    AtomicReference<RaceServers> servers = new AtomicReference<>();
    RaceServers s = servers(2, (arrival, server) -> {
      if (arrival == 0) {
        servers.get().awaitArrival(1);
        return new RaceServers.Reply(503, "first");
      }
      firstSettled.await(10, TimeUnit.SECONDS);
      return new RaceServers.Reply(503, "last");
    });
    servers.set(s);
    LoadBalancer lb = balancer(s);
    CloseableHttpClient client = client(fairway(FairwayHttpClient5.builder().service("orders", lb)
        .hedging(fixed100()).maxAttempts(2)));

    Call call = new Call(client);
    assertThat(s.awaitArrival(0)).isTrue();
    int first = s.serverOf(0);
    fire();
    eventually("the first 503 reached passive health", () -> attempts(s, first, "failure") == 1);
    firstSettled.countDown();

    assertThat(call.get()).isEqualTo("503 last");
    assertThat(attempts(s, 1 - first, "failure")).isEqualTo(1);
    // The hedge was the second attempt: under maxAttempts 2 there is no third.
    assertThat(s.totalRequests()).isEqualTo(2);
    assertThat(hedges("won")).isZero();
    assertThat(inFlight(lb)).isZero();
    assertThat(leased()).isZero();
  }

  /**
   * The two copies of a race are in flight at once, so each has a request of its own: the first is
   * the exchange's request aimed in place, the hedge one built from the request as it came. Each
   * arrives with its own target's {@code Host} and the caller's headers exactly once (a hedge made
   * from the first copy's request after its chain ran would carry the first target's {@code Host});
   * so does the retry after the race, the exchange's request put back as it came and aimed anew.
   */
  @RepeatedTest(3)
  void hedgedCopiesAndTheRetryAfter_eachCarryTheirOwnTargetsHost_andTheCallersHeadersOnce() throws Exception {
    CountDownLatch firstSettled = new CountDownLatch(1);
    AtomicReference<RaceServers> servers = new AtomicReference<>();
    RaceServers s = servers(3, (arrival, server) -> {
      if (arrival == 0) {
        servers.get().awaitArrival(1);
        return new RaceServers.Reply(503, "first");
      }
      if (arrival == 1) {
        firstSettled.await(10, TimeUnit.SECONDS);
        return new RaceServers.Reply(503, "hedge");
      }
      return RaceServers.Reply.ok("s" + server);
    });
    servers.set(s);
    LoadBalancer lb = balancer(s);
    CloseableHttpClient client = client(fairway(FairwayHttpClient5.builder().service("orders", lb)
        .hedging(fixed100()).maxAttempts(3)));

    HttpGet request = new HttpGet("http://orders/items?q=1");
    request.addHeader("X-Test", "caller");
    request.addHeader("X-Trace", "t-1");
    Call call = new Call(client, request);
    assertThat(s.awaitArrival(0)).isTrue();
    int first = s.serverOf(0);
    fire();
    eventually("the first copy's 503 reached passive health", () -> attempts(s, first, "failure") == 1);
    firstSettled.countDown();

    int retried = 3 - first - s.serverOf(1);
    assertThat(call.get()).isEqualTo("200 s" + retried);
    assertThat(hedges("sent")).isEqualTo(1.0);
    assertThat(s.totalRequests()).isEqualTo(3);
    assertThat(List.of(s.serverOf(0), s.serverOf(1), s.serverOf(2))).containsExactlyInAnyOrder(0, 1, 2);
    for (int arrival = 0; arrival < 3; arrival++) {
      String head = s.heads.get(arrival);
      assertThat(head).as("arrival %d", arrival).startsWith("GET /items?q=1 HTTP/1.1\r\n");
      assertThat(headerValues(head, "Host")).as("arrival %d's Host", arrival)
          .containsExactly("127.0.0.1:" + s.port(s.serverOf(arrival)));
      assertThat(headerValues(head, "X-Test")).as("arrival %d", arrival).containsExactly("caller");
      assertThat(headerValues(head, "X-Trace")).as("arrival %d", arrival).containsExactly("t-1");
      assertThat(headerValues(head, "User-Agent")).as("arrival %d", arrival).hasSize(1);
    }
    assertThat(request.getAuthority()).as("the caller's request as it was").hasToString("orders");
    assertThat(inFlight(lb)).isZero();
    assertThat(leased()).isZero();
  }

  /** The values of every {@code name} header line of a request head, in order. */
  private static List<String> headerValues(String head, String name) {
    List<String> values = new ArrayList<>();
    for (String line : head.split("\r\n")) {
      int colon = line.indexOf(':');
      if (colon > 0 && line.substring(0, colon).equalsIgnoreCase(name)) {
        values.add(line.substring(colon + 1).trim());
      }
    }
    return values;
  }

  @RepeatedTest(3)
  void bothCopiesFailWithIoErrors_theCallerGetsTheLastWithTheEarlierSuppressed() throws Exception {
    CountDownLatch firstSettled = new CountDownLatch(1);
    AtomicReference<RaceServers> servers = new AtomicReference<>();
    RaceServers s = servers(2, (arrival, server) -> {
      if (arrival == 0) {
        servers.get().awaitArrival(1);
      } else {
        firstSettled.await(10, TimeUnit.SECONDS);
      }
      return RaceServers.Reply.RESET;
    });
    servers.set(s);
    LoadBalancer lb = balancer(s);
    CloseableHttpClient client = client(fairway(FairwayHttpClient5.builder().service("orders", lb)
        .hedging(fixed100()).maxAttempts(2)));

    Call call = new Call(client);
    assertThat(s.awaitArrival(0)).isTrue();
    int first = s.serverOf(0);
    fire();
    eventually("the first reset reached passive health", () -> attempts(s, first, "failure") == 1);
    firstSettled.countDown();

    assertThatThrownBy(call::get).isInstanceOf(ExecutionException.class)
        .cause().isInstanceOf(IOException.class)
        .satisfies(last -> assertThat(last.getSuppressed()).hasSize(1).allMatch(e -> e instanceof IOException));
    assertThat(attempts(s, 1 - first, "failure")).isEqualTo(1);
    assertThat(s.totalRequests()).as("maxAttempts 2: the hedge was the second").isEqualTo(2);
    assertThat(inFlight(lb)).isZero();
    assertThat(leased()).isZero();
  }

  @RepeatedTest(3)
  void callerCancelsDuringTheRace_bothCopiesEnd_noTargetCharged() throws Exception {
    RaceServers s = servers(2, (arrival, server) -> RaceServers.Reply.HOLD);
    LoadBalancer lb = balancer(s);
    CloseableHttpClient client = client(fairway(lb, fixed100()));

    Call call = new Call(client);
    assertThat(s.awaitArrival(0)).isTrue();
    fire();
    assertThat(s.awaitArrival(1)).isTrue();
    assertThat(call.request.cancel()).isTrue();

    assertThatThrownBy(call::get).isInstanceOf(ExecutionException.class).cause().isInstanceOf(IOException.class);
    eventually("both servers saw their connection closed", () -> s.closedByClient(0) == 1 && s.closedByClient(1) == 1);
    hedgeTasksDone();
    assertThat(inFlight(lb)).as("both slots freed, none held").isZero();
    for (int server = 0; server < 2; server++) {
      assertThat(attempts(s, server, "cancelled")).as("each copy timed as cancelled").isEqualTo(1);
      assertThat(attempts(s, server, "failure")).isZero();
    }
    assertThat(lb.status()).extracting(TargetStatus::state).containsOnly(TargetState.HEALTHY);
    assertThat(hedges("won")).isZero();
    assertThat(disarmed).as("disarmed once, by the cancel").hasSize(1);
    assertThat(s.totalRequests()).isEqualTo(2);
    assertThat(leased()).isZero();
  }

  @RepeatedTest(3)
  void callerInterruptedWhileWaitingForTheHedge_theHedgeEnds_noTargetCharged() throws Exception {
    AtomicReference<RaceServers> servers = new AtomicReference<>();
    RaceServers s = servers(2, (arrival, server) -> {
      if (arrival == 0) { // answers 503 once the hedge is there
        servers.get().awaitArrival(1);
        return new RaceServers.Reply(503, "unavailable");
      }
      return RaceServers.Reply.HOLD;
    });
    servers.set(s);
    LoadBalancer lb = balancer(s);
    CloseableHttpClient client = client(fairway(lb, fixed100()));

    Call call = new Call(client);
    assertThat(s.awaitArrival(0)).isTrue();
    int first = s.serverOf(0);
    fire();
    // The 503 does not end the race: the caller's thread waits for the hedge, interruptibly.
    eventually("the 503 reached passive health", () -> attempts(s, first, "failure") == 1);
    call.thread.interrupt();

    assertThatThrownBy(call::get).isInstanceOf(ExecutionException.class)
        .cause().isInstanceOf(InterruptedIOException.class);
    eventually("the hedge's server saw its connection closed", () -> s.closedByClient(1 - first) == 1);
    hedgeTasksDone();
    assertThat(attempts(s, 1 - first, "cancelled")).as("the caller's, not the target's").isEqualTo(1);
    assertThat(attempts(s, 1 - first, "failure")).isZero();
    assertThat(inFlight(lb)).isZero();
    assertThat(s.totalRequests()).as("no retry for a caller that stopped waiting").isEqualTo(2);
    assertThat(leased()).isZero();
  }

  @RepeatedTest(3)
  void callerInterruptedWhileBlockedInTheFirstCopy_seenWhenItAnswers_bothEnd_noTargetCharged() throws Exception {
    CountDownLatch answerFirst = new CountDownLatch(1);
    RaceServers s = servers(2, (arrival, server) -> {
      if (arrival == 0) {
        answerFirst.await(10, TimeUnit.SECONDS);
        return RaceServers.Reply.ok("s" + server);
      }
      return RaceServers.Reply.HOLD;
    });
    LoadBalancer lb = balancer(s);
    CloseableHttpClient client = client(fairway(lb, fixed100().withLoserHold(Duration.ZERO))); // the hedge may lose to the first copy before the interrupt is seen

    Call call = new Call(client);
    assertThat(s.awaitArrival(0)).isTrue();
    int first = s.serverOf(0);
    fire();
    assertThat(s.awaitArrival(1)).isTrue();
    call.thread.interrupt(); // a blocking socket read does not answer it: seen once the first copy answers
    answerFirst.countDown();

    assertThatThrownBy(call::get).isInstanceOf(ExecutionException.class)
        .cause().isInstanceOf(InterruptedIOException.class);
    eventually("the hedge's server saw its connection closed", () -> s.closedByClient(1 - first) == 1);
    hedgeTasksDone();
    for (int server = 0; server < 2; server++) {
      assertThat(attempts(s, server, "cancelled")).as("the caller's, not the target's").isEqualTo(1);
      assertThat(attempts(s, server, "failure")).isZero();
      assertThat(attempts(s, server, "success")).isZero();
    }
    assertThat(inFlight(lb)).isZero();
    assertThat(leased()).isZero();
  }

  @RepeatedTest(3)
  void sharedTimerAndPool_aSlowFirstCopyIsHedgedByItself() throws Exception {
    RaceServers s = servers(2, (arrival, server) -> arrival == 0 ? RaceServers.Reply.HOLD
        : RaceServers.Reply.ok("s" + server));
    LoadBalancer lb = balancer(s);
    CloseableHttpClient client = client(FairwayHttpClient5.builder().service("orders", lb)
        .hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(20)).withLoserHold(Duration.ZERO)).build());

    String result = new Call(client).get();

    // The request that reached a server first is held; on a cold start the hedge may get there
    // before the first copy, which then wins: either way the held one loses.
    assertThat(result).isEqualTo("200 s" + (1 - s.serverOf(0)));
    assertThat(hedges("sent")).isEqualTo(1.0);
    eventually("the loser's connection closed", () -> s.closedByClient(s.serverOf(0)) == 1);
    eventually("every slot freed", () -> inFlight(lb) == 0);
    eventually("no connection leased", () -> leased() == 0);
  }

  @Test
  void aBugBelowTheFirstCopy_isThrownToTheCaller_noHedge_noTargetCharged() throws Exception {
    RaceServers s = servers(2, (arrival, server) -> RaceServers.Reply.ok("s" + server));
    LoadBalancer lb = balancer(s);
    FairwayHttpClient5 fairway = fairway(lb, fixed100());
    PoolingHttpClientConnectionManager manager = PoolingHttpClientConnectionManagerBuilder.create().build();
    pool = manager;
    CloseableHttpClient client = fairway.customize(HttpClients.custom().setConnectionManager(manager))
        .addExecInterceptorAfter(FairwayHttpClient5.EXEC_NAME, "bug", (request, scope, chain) -> {
          throw new IllegalStateException("a bug below Fairway's element");
        })
        .build();
    opened.add(client);

    Call call = new Call(client);
    assertThatThrownBy(call::get).isInstanceOf(ExecutionException.class)
        .cause().isInstanceOf(IllegalStateException.class).hasMessage("a bug below Fairway's element");
    fire(); // the race ended with the bug: nothing is sent
    hedgeTasksDone();

    assertThat(s.totalRequests()).isZero();
    assertThat(hedges("sent")).isZero();
    assertThat(disarmed).hasSize(1);
    assertThat(inFlight(lb)).isZero();
    assertThat(lb.status()).extracting(TargetStatus::state).containsOnly(TargetState.HEALTHY);
    assertThat(leased()).isZero();
  }

  // ---- what is not hedged

  @Test
  void budgetOfZero_noHedge_countedAsRefused() throws Exception {
    CountDownLatch answer = new CountDownLatch(1);
    RaceServers s = servers(2, (arrival, server) -> {
      answer.await(10, TimeUnit.SECONDS);
      return RaceServers.Reply.ok("s" + server);
    });
    LoadBalancer lb = balancer(s);
    CloseableHttpClient client = client(fairway(lb, fixed100().withBudget(0.0, 0)));

    Call call = new Call(client);
    assertThat(s.awaitArrival(0)).isTrue();
    fire();
    hedgeTasksDone();
    answer.countDown();

    assertThat(call.get()).startsWith("200 s");
    assertThat(hedges("budget_exhausted")).isEqualTo(1.0);
    assertThat(hedges("sent")).isZero();
    assertThat(s.totalRequests()).isEqualTo(1);
    assertThat(inFlight(lb)).isZero();
  }

  @Test
  void requestWithAnEntity_isNeverHedged() throws Exception {
    RaceServers s = servers(2, (arrival, server) -> RaceServers.Reply.ok("s" + server));
    LoadBalancer lb = balancer(s);
    CloseableHttpClient client = client(fairway(lb, fixed100()));

    HttpPost post = new HttpPost("http://orders/items");
    post.setEntity(new StringEntity("x", ContentType.TEXT_PLAIN));
    HttpGet getWithBody = new HttpGet("http://orders/items");
    getWithBody.setEntity(new StringEntity("x", ContentType.TEXT_PLAIN));
    assertThat(Clients.code(client, post)).isEqualTo(200);
    assertThat(Clients.code(client, getWithBody)).isEqualTo(200);

    assertThat(armed).as("no race armed a timer").isEmpty();
    assertThat(s.totalRequests()).isEqualTo(2);
    assertThat(BalancedExchange.isHedgeable("GET", null)).isTrue();
    assertThat(BalancedExchange.isHedgeable("OPTIONS", null)).isTrue();
    assertThat(BalancedExchange.isHedgeable("GET", new StringEntity("x"))).isFalse();
    assertThat(BalancedExchange.isHedgeable("POST", null)).isFalse();
  }

  @Test
  void percentilePolicy_noHedgeUntilTheWindowIsFull_firstAttemptsTeachTheDelay() throws Exception {
    RaceServers s = servers(2, (arrival, server) -> RaceServers.Reply.ok("s" + server));
    LoadBalancer lb = balancer(s);
    CloseableHttpClient client = client(fairway(lb, HedgingPolicy.percentile(95.0)));

    for (int i = 0; i < 5; i++) {
      assertThat(Clients.code(client, new HttpGet("http://orders/items"))).isEqualTo(200);
    }

    assertThat(armed).as("no delay before the window holds enough responses").isEmpty();
    assertThat(s.totalRequests()).isEqualTo(5);
  }
}
