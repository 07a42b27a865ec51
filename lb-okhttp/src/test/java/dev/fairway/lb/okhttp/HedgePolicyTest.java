package dev.fairway.lb.okhttp;

import static dev.fairway.lb.testing.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.HedgingPolicy;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.LoadReportHeader;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.internal.hedging.Hedger;
import dev.fairway.lb.internal.hedging.ServiceHedging;
import dev.fairway.lb.internal.hedging.TimerNode;
import dev.fairway.lb.testing.Closer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import mockwebserver3.MockResponse;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 26's hedging policy: the delay is the first copy's own target's percentile, a hedge goes
 * only where a worker may be free ({@code no_capacity} otherwise), and a copy that lost to a hedge
 * still tells the balancer how long it ran. Loopback MockWebServers; time faked where the test asserts it.
 */
class HedgePolicyTest {
  // These tests are about the race; a loser's held slot (HeldLosers) has tests of its own.
  private static final Duration NO_HOLD = Duration.ZERO;

  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  private final Closer closer = new Closer();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final ExecutorService hedgePool = Executors.newCachedThreadPool();
  private final List<Long> scheduledMicros = new CopyOnWriteArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    closer.close();
    hedgePool.shutdownNow();
  }

  private double hedges(String result) {
    Counter counter = registry.find("fairway.hedges").tag("result", result).counter();
    return counter == null ? 0 : counter.count();
  }

  /** A scheduler that calls {@code onArm} with each race and its delay; disarming does nothing. */
  private static Hedger.Scheduler onArm(java.util.function.BiConsumer<TimerNode, Long> onArm) {
    return new Hedger.Scheduler() {
      @Override
      public void arm(TimerNode race, long delayNanos) {
        onArm.accept(race, delayNanos);
      }

      @Override
      public void disarm(TimerNode race) {}
    };
  }


  private static boolean noneInFlight(LoadBalancer lb) {
    return lb.status().stream().mapToInt(TargetStatus::inFlight).sum() == 0;
  }

  private static int get(OkHttpClient client) throws Exception {
    try (Response response = client.newCall(new Request.Builder().url("http://orders/x").build()).execute()) {
      response.body().string();
      return response.request().url().port();
    }
  }

  @Test
  void percentileDelay_isTheFirstCopysOwnTargetsPercentile_notTheServices() throws Exception {
    // On the interceptor's fake clock, every call to server 0 takes 10 ms and every call to server 1
    // 60 ms: the server moves the clock before it answers. The service's p95 is 60 ms.
    AtomicLong now = new AtomicLong();
    Backends b = closer.add(Backends.start(2, i -> request -> {
      now.addAndGet((i == 0 ? 10 : 60) * MS);
      return Backends.ok("s" + i);
    }));
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders").targets(b.targets()).strategy(Strategy.roundRobin())
        .meterRegistry(registry).build());
    Hedger.Scheduler never = onArm((race, delayNanos) -> // records the delay; the hedge never fires
        scheduledMicros.add(TimeUnit.NANOSECONDS.toMicros(delayNanos)));
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb)
        .ticker(now::get).hedgeScheduler(never, hedgePool).hedging(HedgingPolicy.percentile(95.0).withLoserHold(NO_HOLD)).build());

    for (int i = 0; i < 2 * HedgingPolicy.MIN_SAMPLES; i++) { // round robin: 100 on each
      get(client);
    }
    // Meanwhile the service's window filled first: those calls were hedged after its p95, 60 ms.
    assertThat(scheduledMicros).isNotEmpty().allSatisfy(d -> assertThat(d).isBetween(59_000L, 64_000L));
    scheduledMicros.clear();
    now.addAndGet(TimeUnit.SECONDS.toNanos(2)); // every window refreshes on the next call
    int firstPort = get(client);
    int secondPort = get(client);

    assertThat(scheduledMicros).hasSize(2);
    long fastDelay = scheduledMicros.get(firstPort == b.port(0) ? 0 : 1);
    long slowDelay = scheduledMicros.get(secondPort == b.port(1) ? 1 : 0);
    assertThat(List.of(firstPort, secondPort)).containsExactlyInAnyOrder(b.port(0), b.port(1));
    // One significant digit: the 10 ms bucket reads 10.0-10.7 ms; the service's p95 would be 60 ms.
    assertThat(fastDelay).isBetween(10_000L, 10_700L);
    assertThat(slowDelay).isBetween(59_000L, 64_000L);
    eventually("in-flight counts back to 0", () -> noneInFlight(lb));
  }

  @Test
  void hedge_everyOtherTargetReportedBusy_isNotSent_andCountsNoCapacity() throws Exception {
    // Every response reports 8 calls in flight at utilization 1.0: 8 workers, all busy.
    AtomicInteger seen = new AtomicInteger();
    Backends b = closer.add(Backends.start(3, i -> request -> {
      seen.incrementAndGet();
      return new MockResponse.Builder().code(200).body("s" + i)
          .addHeader(LoadReportHeader.NAME, "TEXT application_utilization=1.0, named_metrics.rif=8").build();
    }));
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders").targets(b.targets()).strategy(Strategy.roundRobin())
        .meterRegistry(registry).build());
    AtomicBoolean armed = new AtomicBoolean();
    AtomicInteger fired = new AtomicInteger();
    Hedger.Scheduler firesWhenArmed = onArm((race, delayNanos) -> { // as if the delay had passed, once armed
      if (armed.get()) {
        fired.incrementAndGet();
        race.run(); // before the first copy is sent: the hedge's choice is made first
      }
    });
    // The hedge's choice runs on the caller's thread (a direct executor), inside arm: on a hedge
    // thread it could come after the instant first answer had closed the race, and decide nothing.
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb)
        .hedgeScheduler(firesWhenArmed, Runnable::run).hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(100)).withLoserHold(NO_HOLD)).build());
    for (int i = 0; i < 3; i++) { // one call each: every target's report is now fresh, and busy
      get(client);
    }
    assertThat(lb.status()).allSatisfy(s -> assertThat(s.reportedInFlight()).isEqualTo(8.0));
    armed.set(true);
    int before = seen.get();

    get(client);
    eventually("the hedge was decided", () -> hedges("no_capacity") == 1.0);

    assertThat(fired.get()).isEqualTo(1);
    assertThat(hedges("sent")).isZero();
    assertThat(seen.get() - before).isEqualTo(1); // the first copy alone
    eventually("in-flight counts back to 0", () -> noneInFlight(lb));
  }

  /**
   * Every target reported busy, as above, but with a percentile delay and response times to judge
   * by. Each target's calls: half at 2 ms, 40% at 10 ms and 10% at {@code slowMillis}; the delay is
   * the 90th percentile, about 10 ms, and the median about 2 ms. With a long tail (1 s) the call
   * past the delay is likely stuck behind a slow response, and a hedge that waits behind a 2 ms
   * median pays: it goes although the target is busy. With a tail of mere queueing (11 ms) it
   * would come back no sooner than the first copy: none is sent.
   */
  private void hedgeIntoBusyTargets(int slowMillis) throws Exception {
    Backends b = closer.add(Backends.start(3, i -> request -> new MockResponse.Builder().code(200).body("s" + i)
        .addHeader(LoadReportHeader.NAME, "TEXT application_utilization=1.0, named_metrics.rif=8").build()));
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders").targets(b.targets()).strategy(Strategy.roundRobin())
        .meterRegistry(registry).build());
    AtomicBoolean armed = new AtomicBoolean();
    Hedger.Scheduler firesWhenArmed = onArm((race, delayNanos) -> {
      if (armed.get()) {
        race.run();
      }
    });
    AtomicLong now = new AtomicLong();
    LoadBalancingInterceptor lbi = LoadBalancingInterceptor.builder().service("orders", lb).ticker(now::get)
        .hedgeScheduler(firesWhenArmed, Runnable::run).hedging(HedgingPolicy.percentile(90.0).withLoserHold(NO_HOLD))
        .build();
    OkHttpClient client = b.client(lbi);
    for (int i = 0; i < 3; i++) { // every target's report is now fresh, and busy; no delay known yet
      get(client);
    }
    ServiceHedging hedging = lbi.route("orders").hedging;
    for (int t = 0; t < 3; t++) {
      for (int k = 0; k < 200; k++) {
        int millis = k < 100 ? 2 : k < 180 ? 10 : slowMillis;
        hedging.record(b.target(t), TimeUnit.MILLISECONDS.toNanos(millis));
      }
    }
    now.addAndGet(TimeUnit.SECONDS.toNanos(1));
    for (int t = 0; t < 3; t++) {
      hedging.maintain(b.target(t), now.get());
      assertThat(hedging.delayNanos(b.target(t))).isBetween(
          TimeUnit.MILLISECONDS.toNanos(9), TimeUnit.MILLISECONDS.toNanos(11));
      assertThat(hedging.medianNanos(b.target(t))).isBetween(
          TimeUnit.MICROSECONDS.toNanos(1900), TimeUnit.MICROSECONDS.toNanos(2100));
    }
    assertThat(lb.status()).allSatisfy(s -> assertThat(s.reportedInFlight()).isEqualTo(8.0));
    armed.set(true);

    get(client);
    eventually("the hedge was decided", () -> hedges("sent") + hedges("no_capacity") == 1.0);
    eventually("in-flight counts back to 0", () -> noneInFlight(lb));
  }

  @Test
  void hedge_everyOtherTargetBusy_butTheFirstTargetsTailLong_goesToTheShortQueue() throws Exception {
    hedgeIntoBusyTargets(1_000);
    assertThat(hedges("sent")).isEqualTo(1.0);
    assertThat(hedges("no_capacity")).isZero();
  }

  @Test
  void hedge_everyOtherTargetBusy_andTheTailMereQueueing_isNotSent() throws Exception {
    hedgeIntoBusyTargets(11);
    assertThat(hedges("sent")).isZero();
    assertThat(hedges("no_capacity")).isEqualTo(1.0);
  }

  /**
   * Issue 26, item 3: least response time lost 10-15 points of throughput with hedging in the lab's
   * jitter. A copy that lost to a hedge was only released, so the slow calls of a target never
   * reached its latency average when hedges won them: the average stayed low (here: never measured,
   * cost 0) and the strategy sent that target more calls. Now the loser's running time counts as a
   * lower bound of its latency (Pick#superseded).
   */
  @Test
  void leastResponseTime_aCopyThatLostToTheHedge_stillRaisesItsTargetsLatencyAverage() throws Exception {
    AtomicInteger seen = new AtomicInteger();
    AtomicReference<Runnable> held = new AtomicReference<>();
    Backends b = closer.add(Backends.start(2, i -> request -> {
      int k = seen.getAndIncrement();
      if (k == 0) { // the first copy: lets the hedge go 300 ms later, answers after 5 s (cancelled long before)
        Runnable hedge = held.getAndSet(null);
        if (hedge != null) {
          // The loser then runs at least 300 ms longer than the hedge: its time, not a race between
          // the two copies' bookkeeping on a busy machine, decides which average is the higher.
          CompletableFuture.delayedExecutor(300, TimeUnit.MILLISECONDS).execute(hedge);
        }
        return new MockResponse.Builder().code(200).body("slow").headersDelay(5, TimeUnit.SECONDS).build();
      }
      return Backends.ok("s" + i);
    }));
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders").targets(b.targets())
        .strategy(Strategy.leastResponseTime()).meterRegistry(registry).build());
    Hedger.Scheduler afterFirstArrival = onArm((race, delayNanos) -> held.set(race));
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb)
        .hedgeScheduler(afterFirstArrival, hedgePool).hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(100)).withLoserHold(NO_HOLD)).build());

    int port = get(client);
    eventually("in-flight counts back to 0", () -> noneInFlight(lb));

    assertThat(hedges("won")).isEqualTo(1.0);
    int fast = port == b.port(0) ? 0 : 1;
    TargetStatus fastStatus = lb.status().get(fast);
    TargetStatus slowStatus = lb.status().get(1 - fast);
    assertThat(fastStatus.latencyEwmaMillis()).isPositive();
    // The loser ran from its pick until the hedge had answered: longer than the hedge took.
    assertThat(slowStatus.latencyEwmaMillis()).isGreaterThan(fastStatus.latencyEwmaMillis());
    for (int i = 0; i < 3; i++) { // before the fix the loser's target was unmeasured and idle: cost 0, chosen
      dev.fairway.lb.Pick p = lb.pick();
      assertThat(p.target()).isEqualTo(b.target(fast));
      p.release();
    }
  }
}
