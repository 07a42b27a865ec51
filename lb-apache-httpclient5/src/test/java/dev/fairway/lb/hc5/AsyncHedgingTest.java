package dev.fairway.lb.hc5;

import static dev.fairway.lb.testing.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.HedgingPolicy;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetState;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.internal.hedging.Hedger;
import dev.fairway.lb.internal.hedging.TimerNode;
import dev.fairway.lb.testing.FaultServer;
import dev.fairway.lb.testing.RaceServers;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.hc.client5.http.async.methods.SimpleHttpRequest;
import org.apache.hc.client5.http.async.methods.SimpleHttpResponse;
import org.apache.hc.client5.http.async.methods.SimpleRequestBuilder;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.async.CloseableHttpAsyncClient;
import org.apache.hc.client5.http.impl.async.HttpAsyncClients;
import org.apache.hc.client5.http.impl.nio.PoolingAsyncClientConnectionManager;
import org.apache.hc.client5.http.impl.nio.PoolingAsyncClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.util.Timeout;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/**
 * Hedging in the async client ({@link FairwayHttpClient5.Builder#hedging}) over loopback servers
 * that answer by the order requests reach them ({@link RaceServers}). The hedge timer is fired by
 * hand and the hedge is sent on the test's thread, so each race runs in a known order; every race
 * test runs 3 times in the suite (20 times by hand when it changes).
 */
@org.junit.jupiter.api.Timeout(60)
class AsyncHedgingTest {
  private static final long MS = 1_000_000L;

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final List<AutoCloseable> opened = new ArrayList<>();
  private final List<Long> armed = new CopyOnWriteArrayList<>();
  private final List<TimerNode> disarmed = new CopyOnWriteArrayList<>();
  private final AtomicReference<@Nullable TimerNode> race = new AtomicReference<>();
  /** Arms and disarms nothing but records both; {@link #fire} runs the hedge on the calling thread. */
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

  @AfterEach
  void closeAll() throws Exception {
    for (int i = opened.size() - 1; i >= 0; i--) {
      opened.get(i).close();
    }
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
    return FairwayHttpClient5.builder().service("orders", lb).hedgeScheduler(byHand, Runnable::run)
        .hedging(policy).build();
  }

  private static PoolingAsyncClientConnectionManager pool() {
    return PoolingAsyncClientConnectionManagerBuilder.create()
        .setDefaultConnectionConfig(ConnectionConfig.custom()
            .setConnectTimeout(Timeout.ofSeconds(1)).setSocketTimeout(Timeout.ofSeconds(20)).build())
        .build();
  }

  private CloseableHttpAsyncClient client(FairwayHttpClient5 fairway) {
    return client(fairway, pool());
  }

  private CloseableHttpAsyncClient client(FairwayHttpClient5 fairway, PoolingAsyncClientConnectionManager pool) {
    CloseableHttpAsyncClient client = fairway.customize(HttpAsyncClients.custom()
        .setConnectionManager(pool)
        .setDefaultRequestConfig(RequestConfig.custom().setResponseTimeout(Timeout.ofSeconds(20)).build()))
        .build();
    client.start();
    opened.add(client);
    return client;
  }

  private static SimpleHttpRequest get() {
    return SimpleRequestBuilder.get("http://orders/items").build();
  }

  /** Fires the race's hedge timer, as if its delay had passed: the hedge is picked and sent on this thread. */
  private void fire() {
    TimerNode node = race.get();
    assertThat(node).as("a race armed its hedge timer").isNotNull();
    node.run();
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

  private static void await(CountDownLatch latch) throws InterruptedException {
    assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
  }

  // ---- the race

  @RepeatedTest(3)
  void slowFirst_hedgeToTheOtherTargetWins_loserCancelledItsConnectionClosedAndItsSlotFreed() throws Exception {
    RaceServers s = servers(2, (arrival, server) -> arrival == 0 ? RaceServers.Reply.HOLD
        : RaceServers.Reply.ok("s" + server));
    LoadBalancer lb = balancer(s);
    CloseableHttpAsyncClient client = client(fairway(lb, fixed100().withLoserHold(Duration.ZERO)));

    Future<SimpleHttpResponse> call = client.execute(get(), null);
    assertThat(s.awaitArrival(0)).isTrue();
    int slow = s.serverOf(0);
    int fast = 1 - slow;
    fire();
    SimpleHttpResponse response = call.get(10, TimeUnit.SECONDS);

    assertThat(response.getCode()).isEqualTo(200);
    assertThat(response.getBodyText()).isEqualTo("s" + fast);
    assertThat(armed).containsExactly(100L);
    assertThat(disarmed).hasSize(1);
    assertThat(hedges("sent")).isEqualTo(1.0);
    assertThat(hedges("won")).isEqualTo(1.0);
    // HttpClient really stops the losing exchange: its server sees the connection closed.
    eventually("the slow server saw the loser's connection closed", () -> s.closedByClient(slow) == 1);
    eventually("every slot freed", () -> inFlight(lb) == 0);
    eventually("the winner's success counted", () -> attempts(s, fast, "success") == 1);
    assertThat(attempts(s, slow, "cancelled")).as("superseded: not a failure").isEqualTo(1);
    assertThat(attempts(s, slow, "failure")).isZero();
    assertThat(lb.status()).extracting(TargetStatus::state).containsOnly(TargetState.HEALTHY);
    assertThat(List.of(s.requests(0), s.requests(1))).containsExactly(1, 1);
  }

  @RepeatedTest(3)
  void raceOnPooledConnections_theLoserOnAPooledConnectionIsStoppedToo_theWinnerReusesItsOwn() throws Exception {
    RaceServers s = servers(2, (arrival, server) -> arrival == 2 ? RaceServers.Reply.HOLD
        : RaceServers.Reply.ok("s" + server));
    LoadBalancer lb = balancer(s);
    PoolingAsyncClientConnectionManager pool = pool();
    CloseableHttpAsyncClient client = client(fairway(lb, fixed100().withLoserHold(Duration.ZERO)), pool);
    for (int i = 0; i < 2; i++) { // one pooled connection to each server (round robin)
      assertThat(client.execute(get(), null).get(10, TimeUnit.SECONDS).getCode()).isEqualTo(200);
      fire(); // decided already: nothing is sent
    }
    // Each warm-up's connection goes back to the pool just after its future completed.
    eventually("both warm-up connections back in the pool", () -> pool.getTotalStats().getAvailable() == 2);
    assertThat(s.totalRequests()).isEqualTo(2);

    Future<SimpleHttpResponse> call = client.execute(get(), null);
    assertThat(s.awaitArrival(2)).isTrue();
    int slow = s.serverOf(2);
    int fast = 1 - slow;
    fire();
    SimpleHttpResponse response = call.get(10, TimeUnit.SECONDS);

    assertThat(response.getBodyText()).isEqualTo("s" + fast);
    eventually("the slow server saw its pooled connection closed", () -> s.closedByClient(slow) == 1);
    eventually("every slot freed", () -> inFlight(lb) == 0);
    assertThat(List.of(s.connections(0), s.connections(1))).as("both copies went out on pooled connections")
        .containsExactly(1, 1);
    eventually("the winner's connection back in the pool, the loser's gone",
        () -> pool.getTotalStats().getAvailable() == 1 && pool.getTotalStats().getLeased() == 0);
  }

  @RepeatedTest(5)
  void sharedTimerAndPool_aSlowFirstCopyIsHedgedByItself() throws Exception {
    RaceServers s = servers(2, (arrival, server) -> arrival == 0 ? RaceServers.Reply.HOLD
        : RaceServers.Reply.ok("s" + server));
    LoadBalancer lb = balancer(s);
    CloseableHttpAsyncClient client = client(FairwayHttpClient5.builder().service("orders", lb)
        .hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(20)).withLoserHold(Duration.ZERO)).build());

    SimpleHttpResponse response = client.execute(get(), null).get(10, TimeUnit.SECONDS);

    // The request that reached a server first is held; on a cold start the hedge may get there
    // before the first copy, which then wins: either way the held one loses.
    assertThat(response.getBodyText()).isEqualTo("s" + (1 - s.serverOf(0)));
    assertThat(hedges("sent")).isEqualTo(1.0);
    eventually("the loser's connection closed", () -> s.closedByClient(s.serverOf(0)) == 1);
    eventually("every slot freed", () -> inFlight(lb) == 0);
  }

  @RepeatedTest(3)
  void firstCopyRefusedBeforeTheTimer_noRace_retriedOnTheOtherTarget() throws Exception {
    RaceServers s = servers(1, (arrival, server) -> RaceServers.Reply.ok("s" + server));
    LoadBalancer lb = LoadBalancer.builder("orders")
        .targets(Target.of("127.0.0.1", FaultServer.refusedPort()), s.target(0))
        .strategy(Strategy.roundRobin()).meterRegistry(registry).build();
    opened.add(lb);
    CloseableHttpAsyncClient client = client(fairway(lb, fixed100()));

    for (int i = 0; i < 2; i++) { // one of the two goes first to the refused target
      SimpleHttpResponse response = client.execute(get(), null).get(10, TimeUnit.SECONDS);
      assertThat(response.getBodyText()).isEqualTo("s0");
      fire(); // decided: nothing is sent
    }

    assertThat(s.totalRequests()).isEqualTo(2);
    assertThat(hedges("sent")).isZero();
    assertThat(armed).hasSize(2);
    assertThat(disarmed).hasSize(2);
    eventually("every slot freed", () -> inFlight(lb) == 0);
  }

  @RepeatedTest(3)
  void loserCancelledBeforeItsAnswer_keepsItsSlotUnderTheDefaultHold() throws Exception {
    RaceServers s = servers(2, (arrival, server) -> arrival == 0 ? RaceServers.Reply.HOLD
        : RaceServers.Reply.ok("s" + server));
    LoadBalancer lb = balancer(s);
    CloseableHttpAsyncClient client = client(fairway(lb, fixed100()));

    Future<SimpleHttpResponse> call = client.execute(get(), null);
    assertThat(s.awaitArrival(0)).isTrue();
    int slow = s.serverOf(0);
    fire();

    assertThat(call.get(10, TimeUnit.SECONDS).getCode()).isEqualTo(200);
    eventually("the loser's connection closed", () -> s.closedByClient(slow) == 1);
    eventually("the winner's slot freed", () -> inFlight(lb) == 1);
    assertThat(lb.status().stream().filter(t -> t.target().equals(s.target(slow))).findFirst().orElseThrow().inFlight())
        .as("the loser's slot, held while its server presumably still works on it").isEqualTo(1);
    lb.close(); // nothing held outlives the balancer
    assertThat(inFlight(lb)).isZero();
  }

  @RepeatedTest(3)
  void fastFirst_noHedge_theTimerIsDisarmedAndFiringLateSendsNothing() throws Exception {
    RaceServers s = servers(2, (arrival, server) -> RaceServers.Reply.ok("s" + server));
    LoadBalancer lb = balancer(s);
    CloseableHttpAsyncClient client = client(fairway(lb, fixed100()));

    SimpleHttpResponse response = client.execute(get(), null).get(10, TimeUnit.SECONDS);
    fire(); // the race was decided: no copy is sent

    assertThat(response.getCode()).isEqualTo(200);
    assertThat(armed).containsExactly(100L);
    assertThat(disarmed).hasSize(1);
    assertThat(s.totalRequests()).isEqualTo(1);
    assertThat(hedges("sent")).isZero();
    // The caller's future completes when its consumer has the body, a moment before the exchange ends.
    eventually("its slot freed", () -> inFlight(lb) == 0);
  }

  @RepeatedTest(3)
  void failureStatusFirst_doesNotWinWhileTheHedgeIsPending_theHedgeWins() throws Exception {
    CountDownLatch firstSettled = new CountDownLatch(1);
    AtomicReference<RaceServers> servers = new AtomicReference<>();
    RaceServers s = servers(2, (arrival, server) -> {
      RaceServers self = servers.get();
      if (arrival == 0) { // answers 503 once the hedge is there
        self.awaitArrival(1);
        return new RaceServers.Reply(503, "unavailable");
      }
      firstSettled.await(10, TimeUnit.SECONDS); // answers once the client has settled the 503
      return RaceServers.Reply.ok("s" + server);
    });
    servers.set(s);
    LoadBalancer lb = balancer(s);
    CloseableHttpAsyncClient client = client(fairway(lb, fixed100()));

    Future<SimpleHttpResponse> call = client.execute(get(), null);
    assertThat(s.awaitArrival(0)).isTrue();
    int first = s.serverOf(0);
    fire();
    eventually("the 503 reached passive health", () -> attempts(s, first, "failure") == 1);
    firstSettled.countDown();
    SimpleHttpResponse response = call.get(10, TimeUnit.SECONDS);

    assertThat(response.getCode()).isEqualTo(200);
    assertThat(response.getBodyText()).isEqualTo("s" + (1 - first));
    assertThat(hedges("won")).isEqualTo(1.0);
    eventually("the hedge's success counted", () -> attempts(s, 1 - first, "success") == 1);
    assertThat(s.totalRequests()).as("no retry: the hedge answered").isEqualTo(2);
    eventually("every slot freed", () -> inFlight(lb) == 0);
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
    CloseableHttpAsyncClient client = client(fairway(lb, fixed100()));

    Future<SimpleHttpResponse> call = client.execute(get(), null);
    assertThat(s.awaitArrival(0)).isTrue();
    int first = s.serverOf(0);
    fire();
    eventually("the first 503 reached passive health", () -> attempts(s, first, "failure") == 1);
    firstSettled.countDown();
    SimpleHttpResponse response = call.get(10, TimeUnit.SECONDS);

    assertThat(response.getCode()).isEqualTo(503);
    assertThat(response.getBodyText()).isEqualTo("last");
    eventually("the last 503 counted", () -> attempts(s, 1 - first, "failure") == 1);
    // maxAttempts 3 leaves a retry, but both targets were tried: the retry of a 503 needs an untried one.
    assertThat(s.totalRequests()).isEqualTo(2);
    assertThat(hedges("won")).isZero();
    eventually("every slot freed", () -> inFlight(lb) == 0);
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
    CloseableHttpAsyncClient client = client(fairway(lb, fixed100()));

    Future<SimpleHttpResponse> call = client.execute(get(), null);
    assertThat(s.awaitArrival(0)).isTrue();
    int first = s.serverOf(0);
    fire();
    eventually("the hedge's reset reached passive health", () -> attempts(s, 1 - first, "failure") == 1);
    hedgeSettled.countDown();
    SimpleHttpResponse response = call.get(10, TimeUnit.SECONDS);

    assertThat(response.getBodyText()).isEqualTo("s" + first);
    assertThat(hedges("sent")).isEqualTo(1.0);
    assertThat(hedges("won")).isZero();
    eventually("the first copy's success counted", () -> attempts(s, first, "success") == 1);
    assertThat(s.totalRequests()).isEqualTo(2);
    eventually("every slot freed", () -> inFlight(lb) == 0);
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
    CloseableHttpAsyncClient client = client(FairwayHttpClient5.builder().service("orders", lb)
        .hedgeScheduler(byHand, Runnable::run).hedging(fixed100()).maxAttempts(2).build());

    Future<SimpleHttpResponse> call = client.execute(get(), null);
    assertThat(s.awaitArrival(0)).isTrue();
    int first = s.serverOf(0);
    fire();
    eventually("the first reset reached passive health", () -> attempts(s, first, "failure") == 1);
    firstSettled.countDown();

    assertThatThrownBy(() -> call.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
        .cause().isInstanceOf(IOException.class)
        .satisfies(last -> assertThat(last.getSuppressed()).hasSize(1).allMatch(e -> e instanceof IOException));
    eventually("the hedge's reset counted", () -> attempts(s, 1 - first, "failure") == 1);
    assertThat(s.totalRequests()).as("maxAttempts 2: the hedge was the second").isEqualTo(2);
    eventually("every slot freed", () -> inFlight(lb) == 0);
  }

  @RepeatedTest(3)
  void callerCancelsDuringTheRace_bothCopiesEnd_noTargetCharged() throws Exception {
    RaceServers s = servers(2, (arrival, server) -> RaceServers.Reply.HOLD);
    LoadBalancer lb = balancer(s);
    CloseableHttpAsyncClient client = client(fairway(lb, fixed100()));

    Future<SimpleHttpResponse> call = client.execute(get(), null);
    assertThat(s.awaitArrival(0)).isTrue();
    fire();
    assertThat(s.awaitArrival(1)).isTrue();
    assertThat(call.cancel(true)).isTrue();

    assertThatThrownBy(() -> call.get(10, TimeUnit.SECONDS)).isInstanceOf(CancellationException.class);
    eventually("both servers saw their connection closed", () -> s.closedByClient(0) == 1 && s.closedByClient(1) == 1);
    eventually("both slots freed, none held", () -> inFlight(lb) == 0);
    for (int server = 0; server < 2; server++) {
      int target = server;
      eventually("each copy timed as cancelled", () -> attempts(s, target, "cancelled") == 1);
      assertThat(attempts(s, server, "failure")).isZero();
    }
    assertThat(lb.status()).extracting(TargetStatus::state).containsOnly(TargetState.HEALTHY);
    assertThat(hedges("won")).isZero();
    assertThat(disarmed).as("disarmed once, by the cancel").hasSize(1);
  }

  @RepeatedTest(3)
  void callerCancelsBeforeTheTimerFires_noHedgeIsSent() throws Exception {
    RaceServers s = servers(2, (arrival, server) -> RaceServers.Reply.HOLD);
    LoadBalancer lb = balancer(s);
    CloseableHttpAsyncClient client = client(fairway(lb, fixed100()));

    Future<SimpleHttpResponse> call = client.execute(get(), null);
    assertThat(s.awaitArrival(0)).isTrue();
    assertThat(call.cancel(true)).isTrue();
    eventually("the first copy's connection closed", () -> s.closedByClient(s.serverOf(0)) == 1);
    fire();

    eventually("its slot freed", () -> inFlight(lb) == 0);
    assertThat(s.totalRequests()).isEqualTo(1);
    assertThat(hedges("sent")).isZero();
    assertThat(attempts(s, s.serverOf(0), "failure")).isZero();
    assertThat(disarmed).hasSize(1);
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
    CloseableHttpAsyncClient client = client(fairway(lb, fixed100().withBudget(0.0, 0)));

    Future<SimpleHttpResponse> call = client.execute(get(), null);
    assertThat(s.awaitArrival(0)).isTrue();
    fire();
    answer.countDown();

    assertThat(call.get(10, TimeUnit.SECONDS).getCode()).isEqualTo(200);
    assertThat(hedges("budget_exhausted")).isEqualTo(1.0);
    assertThat(hedges("sent")).isZero();
    assertThat(s.totalRequests()).isEqualTo(1);
    eventually("its slot freed", () -> inFlight(lb) == 0);
  }

  @Test
  void requestWithAnEntity_isNeverHedged_whateverItsMethod() throws Exception {
    RaceServers s = servers(2, (arrival, server) -> RaceServers.Reply.ok("s" + server));
    LoadBalancer lb = balancer(s);
    CloseableHttpAsyncClient client = client(fairway(lb, fixed100()));

    SimpleHttpRequest post = SimpleRequestBuilder.post("http://orders/items").setBody("x", ContentType.TEXT_PLAIN).build();
    SimpleHttpRequest getWithBody = SimpleRequestBuilder.get("http://orders/items").setBody("x", ContentType.TEXT_PLAIN).build();
    SimpleHttpRequest put = SimpleRequestBuilder.put("http://orders/items").build();
    assertThat(client.execute(post, null).get(10, TimeUnit.SECONDS).getCode()).isEqualTo(200);
    assertThat(client.execute(getWithBody, null).get(10, TimeUnit.SECONDS).getCode()).isEqualTo(200);
    assertThat(client.execute(put, null).get(10, TimeUnit.SECONDS).getCode()).isEqualTo(200);

    assertThat(armed).as("no race armed a timer").isEmpty();
    assertThat(s.totalRequests()).isEqualTo(3);
    assertThat(AsyncBalancedExchange.isHedgeable("GET", null)).isTrue();
    assertThat(AsyncBalancedExchange.isHedgeable("HEAD", null)).isTrue();
    assertThat(AsyncBalancedExchange.isHedgeable("PUT", null)).isFalse();
    assertThat(AsyncBalancedExchange.isHedgeable("POST", null)).isFalse();
  }

  @Test
  void percentilePolicy_noHedgeUntilTheWindowIsFull_firstAttemptsTeachTheDelay() throws Exception {
    RaceServers s = servers(2, (arrival, server) -> RaceServers.Reply.ok("s" + server));
    LoadBalancer lb = balancer(s);
    CloseableHttpAsyncClient client = client(fairway(lb, HedgingPolicy.percentile(95.0)));

    for (int i = 0; i < 5; i++) {
      assertThat(client.execute(get(), null).get(10, TimeUnit.SECONDS).getCode()).isEqualTo(200);
    }

    assertThat(armed).as("no delay before the window holds enough responses").isEmpty();
    assertThat(s.totalRequests()).isEqualTo(5);
  }

  @Test
  void hedging_setTwiceOrNull_failsNamingTheField() {
    FairwayHttpClient5.Builder builder = FairwayHttpClient5.builder().hedging(fixed100());
    assertThatThrownBy(() -> builder.hedging(fixed100()))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("hedging");
    assertThatThrownBy(() -> FairwayHttpClient5.builder().hedging(null))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("hedging");
  }
}
