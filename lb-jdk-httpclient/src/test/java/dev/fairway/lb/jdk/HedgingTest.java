package dev.fairway.lb.jdk;

import static dev.fairway.lb.testing.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.HedgingPolicy;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetState;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.internal.hedging.Hedger;
import dev.fairway.lb.internal.hedging.ServiceHedging;
import dev.fairway.lb.internal.hedging.TimerNode;
import dev.fairway.lb.testing.RaceServers;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Hedging through {@link FairwayHttpClient} (issue 35): lb-core's decisions, the JDK's async
 * exchanges, real loopback servers ({@link RaceServers}). The hedge timer is fired by hand once the
 * first copy reached its server, so no test sleeps for a delay. The race tests repeat 3 times in
 * the suite (10 times, by hand, when the race changes).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HedgingTest {
  // These tests are about the race; a held loser has tests of its own (and lb-core's HeldLosersTest).
  private static final Duration NO_HOLD = Duration.ZERO;
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  private final List<AutoCloseable> opened = new ArrayList<>();
  private final HttpClient plain = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  /** The delays the races armed their timers with, in ms. */
  private final List<Long> armed = new CopyOnWriteArrayList<>();
  private final AtomicReference<TimerNode> race = new AtomicReference<>();
  private final List<TimerNode> disarmed = new CopyOnWriteArrayList<>();
  /** Keeps each armed race; the test fires it ({@link #fireHedge}). Hedges are sent on the firing thread. */
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
        .passiveHealth(PassiveHealth.defaults().withConsecutiveFailures(1).withMaxEjectionPercent(100))
        .meterRegistry(registry).build();
    opened.add(lb);
    return lb;
  }

  private FairwayHttpClient client(LoadBalancer lb, HedgingPolicy policy) {
    return FairwayHttpClient.builder(plain).service("orders", lb).hedgeScheduler(byHand, Runnable::run)
        .hedging(policy).build();
  }

  private static HedgingPolicy fixed100() {
    return HedgingPolicy.fixedDelay(Duration.ofMillis(100)).withLoserHold(NO_HOLD);
  }

  /** Fires the armed race's timer as if its delay had passed; the hedge is sent on this thread. */
  private void fireHedge() {
    TimerNode node = race.get();
    assertThat(node).as("a race armed its timer").isNotNull();
    if (node.pending()) {
      node.run();
    }
  }

  private static HttpRequest get() {
    return HttpRequest.newBuilder(URI.create("http://orders/x")).build();
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
    assertThat(latch.await(5, TimeUnit.SECONDS)).isTrue();
  }

  /** The first request to arrive anywhere is held, never answered; every later one gets 200 "s<server>". */
  private static RaceServers.Script firstHeld() {
    return (arrival, server) -> arrival == 0 ? RaceServers.Reply.HOLD : RaceServers.Reply.ok("s" + server);
  }

  // ---- the race

  @RepeatedTest(3)
  void hedge_goesToTheOtherTargetAfterTheDelay_winsAndCancelsTheSlowCopy_async() throws Exception {
    RaceServers s = servers(2, firstHeld());
    LoadBalancer lb = balancer(s);
    FairwayHttpClient client = client(lb, fixed100());

    CompletableFuture<HttpResponse<String>> future = client.sendAsync(get(), BodyHandlers.ofString());
    assertThat(s.awaitArrival(0)).isTrue();
    int slow = s.serverOf(0);
    int fast = 1 - slow;
    fireHedge();
    HttpResponse<String> response = future.get(10, TimeUnit.SECONDS);

    assertThat(response.body()).isEqualTo("s" + fast);
    assertThat(armed).containsExactly(100L);
    assertThat(s.requests(slow)).isEqualTo(1);
    assertThat(s.requests(fast)).isEqualTo(1);
    assertThat(hedges("sent")).isEqualTo(1.0);
    assertThat(hedges("won")).isEqualTo(1.0);
    assertThat(hedges("budget_exhausted")).isZero();
    // The loser was settled before its exchange was cancelled: its slot is free by the time the caller has the winner.
    assertThat(inFlight(lb)).isZero();
    assertThat(attempts(s, fast, "success")).isEqualTo(1);
    assertThat(attempts(s, slow, "cancelled")).as("released: not a failure").isEqualTo(1);
    assertThat(attempts(s, slow, "failure")).isZero();
    assertThat(lb.status()).extracting(TargetStatus::state).containsOnly(TargetState.HEALTHY);
    assertThat(disarmed).hasSize(1);
    // The JDK really stops the losing HTTP/1.1 exchange: its server sees the connection closed.
    eventually("the slow server saw the client close the loser's connection", () -> s.closedByClient(slow) == 1);
    assertThat(registry.get("fairway.hedges.extra.load").gauge().value()).isEqualTo(1.0);
  }

  @RepeatedTest(3)
  void hedge_winsForSend_too_theRaceRunsOnTheAsyncPath() throws Exception {
    RaceServers s = servers(2, firstHeld());
    LoadBalancer lb = balancer(s);
    FairwayHttpClient client = client(lb, fixed100());

    CompletableFuture<HttpResponse<String>> sent = CompletableFuture.supplyAsync(() -> {
      try {
        return client.send(get(), BodyHandlers.ofString());
      } catch (Exception e) {
        throw new AssertionError(e);
      }
    });
    assertThat(s.awaitArrival(0)).isTrue();
    int fast = 1 - s.serverOf(0);
    fireHedge();

    assertThat(sent.get(10, TimeUnit.SECONDS).body()).isEqualTo("s" + fast);
    assertThat(hedges("won")).isEqualTo(1.0);
    assertThat(inFlight(lb)).isZero();
    assertThat(attempts(s, 1 - fast, "cancelled")).isEqualTo(1);
    eventually("the loser's connection closed", () -> s.closedByClient(1 - fast) == 1);
  }

  @RepeatedTest(3)
  void firstCopyAnswersBeforeTheHedgeIsSent_noHedge_theTimerIsDisarmed() throws Exception {
    RaceServers s = servers(2, (arrival, server) -> RaceServers.Reply.ok("s" + server));
    LoadBalancer lb = balancer(s);
    FairwayHttpClient client = client(lb, fixed100());

    HttpResponse<String> response = client.send(get(), BodyHandlers.ofString());
    fireHedge(); // too late: the race was decided

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(s.totalRequests()).isEqualTo(1);
    assertThat(disarmed).hasSize(1);
    assertThat(hedges("sent")).isZero();
    assertThat(inFlight(lb)).isZero();
  }

  @RepeatedTest(3)
  void failureStatusFromTheFirstCopy_doesNotWinWhileTheHedgeIsPending_theHedgeDoes() throws Exception {
    CountDownLatch hedgeArrived = new CountDownLatch(1);
    CountDownLatch firstPosted = new CountDownLatch(1);
    RaceServers s = servers(2, (arrival, server) -> {
      if (arrival == 0) {
        await(hedgeArrived); // the hedge is on its way before the first copy answers
        return new RaceServers.Reply(500, "broken"); // 500: a failure, not retried by default
      }
      hedgeArrived.countDown();
      await(firstPosted); // the hedge answers only once the first copy's 500 was read whole
      return RaceServers.Reply.ok("hedge");
    });
    LoadBalancer lb = balancer(s);
    FairwayHttpClient client = client(lb, fixed100());

    CompletableFuture<HttpResponse<String>> future = client.sendAsync(get(), BodyHandlers.ofString());
    assertThat(s.awaitArrival(0)).isTrue();
    int first = s.serverOf(0);
    fireHedge();
    HedgeRace<?> hedgeRace = (HedgeRace<?>) race.get();
    eventually("the first copy's 500 was read whole", hedgeRace::firstPosted);
    assertThat(future).as("a failure status does not win while the hedge may answer").isNotDone();
    firstPosted.countDown();

    HttpResponse<String> response = future.get(10, TimeUnit.SECONDS);
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).isEqualTo("hedge");
    assertThat(hedges("won")).isEqualTo(1.0);
    assertThat(attempts(s, first, "failure")).as("the 500 reached passive health").isEqualTo(1);
    assertThat(attempts(s, 1 - first, "success")).isEqualTo(1);
    assertThat(inFlight(lb)).isZero();
  }

  @RepeatedTest(3)
  void bothCopiesFail_theRetryGoesToTheThirdTarget() throws Exception {
    RaceServers s = servers(3, (arrival, server) -> arrival < 2 ? new RaceServers.Reply(503, "busy") : RaceServers.Reply.ok("s" + server));
    LoadBalancer lb = LoadBalancer.builder("orders").targets(s.targets()).strategy(Strategy.roundRobin())
        .passiveHealth(PassiveHealth.disabled()).meterRegistry(registry).build();
    opened.add(lb);
    CountDownLatch hedgeSent = new CountDownLatch(1);
    // The first copy's 503 must not end the race before the hedge is sent: fire it on the first arrival.
    FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb)
        .hedgeScheduler(new Hedger.Scheduler() {
          @Override
          public void arm(TimerNode node, long delayNanos) {
            node.run(); // as if the delay had passed at once
            hedgeSent.countDown();
          }

          @Override
          public void disarm(TimerNode node) {}
        }, Runnable::run)
        .hedging(fixed100()).build();

    HttpResponse<String> response = client.sendAsync(get(), BodyHandlers.ofString()).get(10, TimeUnit.SECONDS);
    await(hedgeSent);

    assertThat(response.statusCode()).isEqualTo(200);
    int third = s.serverOf(2);
    assertThat(response.body()).isEqualTo("s" + third);
    assertThat(List.of(s.requests(0), s.requests(1), s.requests(2))).containsExactly(1, 1, 1);
    assertThat(hedges("sent")).isEqualTo(1.0);
    assertThat(hedges("won")).isZero();
    assertThat(attempts(s, s.serverOf(0), "failure") + attempts(s, s.serverOf(1), "failure")).isEqualTo(2);
    assertThat(inFlight(lb)).isZero();
  }

  // ---- what is not hedged

  @RepeatedTest(3)
  void budgetRefusal_noHedgeIsSent_theFirstCopyAnswers() throws Exception {
    CountDownLatch fired = new CountDownLatch(1);
    RaceServers s = servers(2, (arrival, server) -> {
      await(fired);
      return RaceServers.Reply.ok("s" + server);
    });
    LoadBalancer lb = balancer(s);
    FairwayHttpClient client = client(lb, HedgingPolicy.fixedDelay(Duration.ofMillis(100)).withBudget(0.0, 0));

    CompletableFuture<HttpResponse<String>> future = client.sendAsync(get(), BodyHandlers.ofString());
    assertThat(s.awaitArrival(0)).isTrue();
    fireHedge();
    fired.countDown();

    assertThat(future.get(10, TimeUnit.SECONDS).body()).isEqualTo("s" + s.serverOf(0));
    assertThat(s.totalRequests()).isEqualTo(1);
    assertThat(hedges("budget_exhausted")).isEqualTo(1.0);
    assertThat(hedges("sent")).isZero();
    assertThat(inFlight(lb)).isZero();
  }

  @Test
  void post_isNeverHedged_norAGetMarkedNonIdempotent_butAPostMarkedIdempotentIs() throws Exception {
    RaceServers s = servers(2, (arrival, server) -> RaceServers.Reply.ok("s" + server));
    LoadBalancer lb = balancer(s);
    FairwayHttpClient client = client(lb, fixed100());
    HttpRequest post = HttpRequest.newBuilder(URI.create("http://orders/x")).POST(BodyPublishers.ofString("a")).build();

    assertThat(client.send(post, BodyHandlers.ofString()).statusCode()).isEqualTo(200);
    assertThat(client.send(FairwayHttpClient.nonIdempotent(get()), BodyHandlers.ofString()).statusCode()).isEqualTo(200);
    assertThat(armed).as("no race for a POST or a GET marked non-idempotent").isEmpty();

    assertThat(client.send(FairwayHttpClient.idempotent(post), BodyHandlers.ofString()).statusCode()).isEqualTo(200);
    assertThat(armed).as("a POST marked idempotent races").containsExactly(100L);
    assertThat(inFlight(lb)).isZero();
  }

  @Test
  void percentile_noHedgingUntilTheWindowHoldsEnoughCalls() throws Exception {
    RaceServers s = servers(2, (arrival, server) -> RaceServers.Reply.ok("s" + server));
    LoadBalancer lb = balancer(s);
    FairwayHttpClient client = client(lb, HedgingPolicy.percentile(95.0).withLoserHold(NO_HOLD));

    for (int i = 0; i < 10; i++) {
      assertThat(client.send(get(), BodyHandlers.ofString()).statusCode()).isEqualTo(200);
    }

    assertThat(armed).as("no delay known yet: no race").isEmpty();
    ServiceHedging hedging = client.route("orders").hedging;
    assertThat(hedging).isNotNull();
    assertThat(inFlight(lb)).isZero();
  }

  @Test
  void percentile_onceTheWindowHoldsEnoughResponses_theRaceArmsWithItsPercentile() throws Exception {
    RaceServers s = servers(2, (arrival, server) -> RaceServers.Reply.ok("s" + server));
    LoadBalancer lb = balancer(s);
    java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong();
    FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb).hedgeScheduler(byHand, Runnable::run)
        .ticker(now::get).hedging(HedgingPolicy.percentile(95.0).withLoserHold(NO_HOLD)).build();

    for (int i = 0; i < HedgingPolicy.MIN_SAMPLES; i++) { // each answers in 0 ns of fake time: 1 us in the window
      assertThat(client.send(get(), BodyHandlers.ofString()).statusCode()).isEqualTo(200);
    }
    assertThat(armed).isEmpty();
    now.addAndGet(250 * MS); // the window is looked at again: it holds 100 responses now

    assertThat(client.send(get(), BodyHandlers.ofString()).statusCode()).isEqualTo(200);

    assertThat(armed).as("the percentile, at least 1 ms").containsExactly(1L);
    assertThat(inFlight(lb)).isZero();
  }

  // ---- the caller stops waiting

  @RepeatedTest(3)
  void callerCancel_cancelsBothCopies_chargesNoTarget() throws Exception {
    RaceServers s = servers(2, (arrival, server) -> RaceServers.Reply.HOLD);
    LoadBalancer lb = balancer(s);
    FairwayHttpClient client = client(lb, fixed100());

    CompletableFuture<HttpResponse<String>> future = client.sendAsync(get(), BodyHandlers.ofString());
    assertThat(s.awaitArrival(0)).isTrue();
    fireHedge();
    assertThat(s.awaitArrival(1)).isTrue();
    assertThat(inFlight(lb)).isEqualTo(2);

    assertThat(future.cancel(true)).isTrue();

    assertThat(inFlight(lb)).as("both freed by the cancel itself").isZero();
    assertThatThrownBy(future::join).isInstanceOf(CancellationException.class);
    assertThat(attempts(s, 0, "cancelled") + attempts(s, 1, "cancelled")).isEqualTo(2);
    assertThat(attempts(s, 0, "failure") + attempts(s, 1, "failure")).isZero();
    assertThat(lb.status()).extracting(TargetStatus::state).containsOnly(TargetState.HEALTHY);
    eventually("both servers saw their connection closed", () -> s.closedByClient(0) == 1 && s.closedByClient(1) == 1);
    assertThat(inFlight(lb)).isZero();
  }

  @RepeatedTest(3)
  void interruptedSend_cancelsBothCopies_throwsInterruptedException_chargesNoTarget() throws Exception {
    RaceServers s = servers(2, (arrival, server) -> RaceServers.Reply.HOLD);
    LoadBalancer lb = balancer(s);
    FairwayHttpClient client = client(lb, fixed100());
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    Thread caller = new Thread(() -> {
      try {
        client.send(get(), BodyHandlers.ofString());
      } catch (Throwable e) {
        thrown.set(e);
      }
    }, "hedged-caller");
    caller.start();
    assertThat(s.awaitArrival(0)).isTrue();
    fireHedge();
    assertThat(s.awaitArrival(1)).isTrue();

    caller.interrupt();
    caller.join(TimeUnit.SECONDS.toMillis(10));

    assertThat(caller.isAlive()).isFalse();
    assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
    assertThat(inFlight(lb)).isZero();
    assertThat(attempts(s, 0, "failure") + attempts(s, 1, "failure")).isZero();
    assertThat(lb.status()).extracting(TargetStatus::state).containsOnly(TargetState.HEALTHY);
    eventually("both servers saw their connection closed", () -> s.closedByClient(0) == 1 && s.closedByClient(1) == 1);
  }

  // ---- the held loser

  @RepeatedTest(3)
  void loserCancelledBeforeItsAnswer_keepsItsSlot_untilTheBalancerCloses() throws Exception {
    RaceServers s = servers(2, firstHeld());
    LoadBalancer lb = balancer(s);
    FairwayHttpClient client = client(lb, HedgingPolicy.fixedDelay(Duration.ofMillis(100))); // default hold: 10 s

    CompletableFuture<HttpResponse<String>> future = client.sendAsync(get(), BodyHandlers.ofString());
    assertThat(s.awaitArrival(0)).isTrue();
    int slow = s.serverOf(0);
    fireHedge();
    assertThat(future.get(10, TimeUnit.SECONDS).body()).isEqualTo("s" + (1 - slow));

    ServiceHedging hedging = client.route("orders").hedging;
    assertThat(hedging).isNotNull();
    assertThat(hedging.heldLosers()).isEqualTo(1);
    assertThat(lb.status()).filteredOn(t -> t.target().equals(s.target(slow))).extracting(TargetStatus::inFlight)
        .as("its server presumably still works on it").containsExactly(1);
    assertThat(attempts(s, slow, "cancelled")).isEqualTo(1);
    eventually("the loser's exchange was stopped all the same", () -> s.closedByClient(slow) == 1);

    lb.close();
    assertThat(hedging.heldLosers()).isZero();
    assertThat(inFlight(lb)).isZero();
    assertThat(registry.find("fairway.hedges").meters()).as("the hedging meters go with the balancer").isEmpty();
    assertThat(registry.find("fairway.hedges.extra.load").meters()).isEmpty();
  }

  @RepeatedTest(3)
  void heldLoser_isReleasedWhenACopySentLaterToItsTargetAnswers() throws Exception {
    RaceServers s = servers(2, firstHeld());
    LoadBalancer lb = balancer(s);
    FairwayHttpClient client = client(lb, HedgingPolicy.fixedDelay(Duration.ofMillis(100))); // default hold: 10 s

    CompletableFuture<HttpResponse<String>> future = client.sendAsync(get(), BodyHandlers.ofString());
    assertThat(s.awaitArrival(0)).isTrue();
    int slow = s.serverOf(0);
    fireHedge();
    assertThat(future.get(10, TimeUnit.SECONDS).body()).isEqualTo("s" + (1 - slow));
    ServiceHedging hedging = client.route("orders").hedging;
    assertThat(hedging).isNotNull();
    assertThat(hedging.heldLosers()).isEqualTo(1);

    // Round robin: of the next two calls one goes to the slow target, whose server answers it.
    for (int i = 0; i < 2; i++) {
      assertThat(client.send(get(), BodyHandlers.ofString()).statusCode()).isEqualTo(200);
    }

    assertThat(s.requests(slow)).isEqualTo(2);
    assertThat(hedging.heldLosers()).as("its server got past the loser").isZero();
    assertThat(inFlight(lb)).isZero();
  }

  @Test
  void hedging_isValidated_andSetOnce() {
    FairwayHttpClient.Builder builder = FairwayHttpClient.builder(plain);
    assertThatThrownBy(() -> builder.hedging(null)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("hedging");
    builder.hedging(fixed100());
    assertThatThrownBy(() -> builder.hedging(fixed100())).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("hedging");
    LoadBalancer lb = LoadBalancer.builder("orders").targets(Target.of("127.0.0.1", 1)).build();
    opened.add(lb);
    assertThat(builder.service("orders", lb).build().toString()).contains("hedging=HedgingPolicy{fixedDelay=PT0.1S");
  }
}
