package dev.fairway.lb.okhttp;

import static dev.fairway.lb.testing.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.HedgingPolicy;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.TargetState;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.internal.AttemptBudget;
import dev.fairway.lb.internal.hedging.HedgeMeters;
import dev.fairway.lb.internal.hedging.HedgeTimer;
import dev.fairway.lb.internal.hedging.Hedger;
import dev.fairway.lb.internal.hedging.ServiceHedging;
import dev.fairway.lb.internal.hedging.TimerNode;
import dev.fairway.lb.testing.Closer;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import okhttp3.Call;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Calls that end early (issue 32): an interrupted caller and a cancelled call, at every point
 * where the interrupt or the cancel can land, on loopback. Each call's picks are released, never
 * failed: afterwards every target is idle and healthy (passive health ejects at the first failure,
 * so a counted failure shows), and the next call succeeds. Hedge timers are fired by hand where the
 * test needs to know whether a hedge was sent.
 */
class CallsEndTest {
  private static final Request GET = new Request.Builder().url("http://orders/x").build();

  private final Closer closer = new Closer();
  /** The races armed by {@link #byHand}, in order. */
  private final List<TimerNode> armed = new ArrayList<>();
  private final List<Thread> callers = new ArrayList<>();

  /** Arms nothing: the test fires a race's hedge itself ({@link #fireHedge}), on its own thread. */
  private final Hedger.Scheduler byHand = new Hedger.Scheduler() {
    @Override
    public synchronized void arm(TimerNode race, long delayNanos) {
      armed.add(race);
    }

    @Override
    public void disarm(TimerNode race) {}
  };
  private static final Executor DIRECT = Runnable::run;

  @AfterEach
  void closeAll() throws Exception {
    Thread.interrupted(); // never leak an interrupt into the next test
    for (Thread t : callers) {
      t.interrupt();
      t.join(5_000);
    }
    closer.close();
  }

  private LoadBalancer balancer(Backends b, Strategy strategy) {
    return closer.add(LoadBalancer.builder("orders").targets(b.targets()).strategy(strategy)
        .passiveHealth(PassiveHealth.defaults().withConsecutiveFailures(1)).build());
  }

  private static LoadBalancingInterceptor.Builder interceptor(LoadBalancer lb) {
    return LoadBalancingInterceptor.builder().service("orders", lb);
  }

  private LoadBalancingInterceptor hedging(LoadBalancer lb, Duration hold) {
    return interceptor(lb).hedgeScheduler(byHand, DIRECT)
        .hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(50)).withLoserHold(hold)).build();
  }

  /** Fires the hedge timer of the {@code i}th hedgeable call, as if its delay had passed, on this thread. */
  private void fireHedge(int i) {
    TimerNode race;
    synchronized (byHand) {
      race = armed.get(i);
    }
    race.run();
  }

  private int armedCount() {
    synchronized (byHand) {
      return armed.size();
    }
  }

  /** Every target idle (eventually: a hedge's copy settles on its own thread) and healthy. */
  private static void assertIdleAndHealthy(LoadBalancer lb) throws InterruptedException {
    eventually("every target idle: " + lb.status(),
        () -> lb.status().stream().mapToInt(TargetStatus::inFlight).sum() == 0);
    assertThat(lb.status()).allSatisfy(s -> assertThat(s.state()).as(s.target().id()).isEqualTo(TargetState.HEALTHY));
  }

  private static void assertNextCallSucceeds(OkHttpClient client) throws IOException {
    try (Response response = client.newCall(GET).execute()) {
      assertThat(response.code()).isEqualTo(200);
      response.body().string();
    }
  }

  /** Executes {@code call} interrupted, and returns what it threw; the interrupt flag must be kept. */
  private static Throwable executeInterrupted(Call call) {
    Thread.currentThread().interrupt();
    return executeExpectingAnInterrupt(call);
  }

  /** Executes {@code call}, which something interrupts, and returns what it threw; the interrupt flag must be kept. */
  private static Throwable executeExpectingAnInterrupt(Call call) {
    Throwable thrown = null;
    boolean flagKept;
    try {
      call.execute().close();
    } catch (Throwable t) { // on main OkHttp's checked InterruptedException came out too
      thrown = t;
    } finally {
      flagKept = Thread.interrupted();
    }
    assertThat(thrown).as("what the interrupted call threw").isInstanceOf(InterruptedIOException.class);
    assertThat(flagKept).as("the thread's interrupt flag after the call").isTrue();
    return thrown;
  }

  /** An application interceptor, added after the balancer's: interrupts the calling thread once. */
  private static Interceptor interruptOnce() {
    AtomicBoolean done = new AtomicBoolean();
    return chain -> {
      if (done.compareAndSet(false, true)) {
        Thread.currentThread().interrupt();
      }
      return chain.proceed(chain.request());
    };
  }

  private static OkHttpClient withInterceptorAfter(OkHttpClient client, Interceptor after) {
    return client.newBuilder().addInterceptor(after).build();
  }

  /** Runs {@code call} on a thread of its own; what it threw (or null) lands in {@code thrown}. */
  private Thread start(Call call, AtomicReference<Throwable> thrown, AtomicBoolean flagAfter) {
    Thread t = new Thread(() -> {
      try (Response response = call.execute()) {
        response.body().string();
      } catch (Throwable e) {
        thrown.set(e);
      } finally {
        flagAfter.set(Thread.currentThread().isInterrupted());
      }
    }, "caller");
    t.setDaemon(true);
    callers.add(t);
    t.start();
    return t;
  }

  /** Servers whose answer to a request waits until {@code gate} opens (bounded); {@code arrived} counts down per request. */
  private static Function<RecordedRequest, MockResponse> heldUntil(CountDownLatch gate, CountDownLatch arrived, String body) {
    return request -> {
      arrived.countDown();
      try {
        gate.await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return Backends.ok(body);
    };
  }

  // --- Interrupts ---------------------------------------------------------------------------

  @Test
  void issue32_why1_interruptedBeforeExecute_threeTargetsRoundRobin_throwsInterruptedIOException_andHoldsNoSlot()
      throws Exception {
    Backends b = closer.add(Backends.named(3));
    LoadBalancer lb = balancer(b, Strategy.roundRobin());
    OkHttpClient client = b.client(interceptor(lb).build());

    executeInterrupted(client.newCall(GET));

    assertIdleAndHealthy(lb);
    assertThat(b.totalRequests()).isZero();
    assertNextCallSucceeds(client);
  }

  @Test
  void issue32_why1_interruptedBeforeExecute_withHedging_sendsNoHedge() throws Exception {
    Backends b = closer.add(Backends.named(3));
    LoadBalancer lb = balancer(b, Strategy.roundRobin());
    OkHttpClient client = b.client(hedging(lb, Duration.ofSeconds(10)));

    executeInterrupted(client.newCall(GET));
    if (armedCount() > 0) {
      fireHedge(0); // its delay passed: a race still pending would send the hedge now
    }

    assertThat(b.totalRequests()).as("requests sent for the interrupted call").isZero();
    assertIdleAndHealthy(lb);
    assertNextCallSucceeds(client);
  }

  @Test
  void issue32_why2_interruptedWithPooledConnections_isNeitherRetriedNorAFailure() throws Exception {
    Backends b = closer.add(Backends.named(3));
    LoadBalancer lb = balancer(b, Strategy.roundRobin());
    OkHttpClient client = b.client(interceptor(lb).build());
    for (int i = 0; i < 3; i++) {
      assertNextCallSucceeds(client); // one pooled connection to each target
    }

    Throwable thrown = executeInterrupted(client.newCall(GET));

    assertThat(thrown.getSuppressed()).as("earlier attempts").isEmpty();
    assertThat(b.totalRequests()).isEqualTo(3);
    assertIdleAndHealthy(lb);
    assertNextCallSucceeds(client);
  }

  @Test
  void interruptedAfterThePick_whileConnecting_releasesThePick() throws Exception {
    // OkHttp 5's connect step throws a plain InterruptedException: not an IOException.
    Backends b = closer.add(Backends.named(3));
    LoadBalancer lb = balancer(b, Strategy.roundRobin());
    OkHttpClient plain = b.client(interceptor(lb).build());
    OkHttpClient client = withInterceptorAfter(plain, interruptOnce());

    executeExpectingAnInterrupt(client.newCall(GET));

    assertThat(b.totalRequests()).isZero();
    assertIdleAndHealthy(lb);
    assertNextCallSucceeds(client);
  }

  @Test
  void interruptedAfterThePick_onAPooledConnection_releasesThePick_andIsNotRetried() throws Exception {
    // Okio finds the flag set before it writes: an InterruptedIOException, which used to count as
    // the target's failure and was retried on every other target.
    Backends b = closer.add(Backends.named(3));
    LoadBalancer lb = balancer(b, Strategy.roundRobin());
    OkHttpClient plain = b.client(interceptor(lb).build());
    for (int i = 0; i < 3; i++) {
      assertNextCallSucceeds(plain);
    }
    OkHttpClient client = withInterceptorAfter(plain, interruptOnce());

    executeExpectingAnInterrupt(client.newCall(GET)); // OkHttp may attach its own try on the same target

    assertThat(b.totalRequests()).as("requests to any target after the warm-up").isEqualTo(3);
    assertIdleAndHealthy(lb);
    assertNextCallSucceeds(client);
  }

  @Test
  void interruptedAfterThePick_withHedging_endsTheRace_andSendsNoHedge() throws Exception {
    Backends b = closer.add(Backends.named(3));
    LoadBalancer lb = balancer(b, Strategy.roundRobin());
    OkHttpClient plain = b.client(hedging(lb, Duration.ofSeconds(10)));
    OkHttpClient client = withInterceptorAfter(plain, interruptOnce()); // the first leg passes it first

    executeExpectingAnInterrupt(client.newCall(GET));
    assertThat(armedCount()).isEqualTo(1);
    fireHedge(0);

    assertThat(b.totalRequests()).isZero();
    assertIdleAndHealthy(lb);
    assertNextCallSucceeds(client);
  }

  @Test
  void interruptedWhileReadingTheBody_releasesThePick() throws Exception {
    // 512 KiB: more than is buffered before the read, and more than the interceptor reads ahead.
    String big = "x".repeat(512 * 1024);
    Backends b = closer.add(Backends.start(3, i -> request -> Backends.ok(big)));
    LoadBalancer lb = balancer(b, Strategy.roundRobin());
    OkHttpClient client = b.client(interceptor(lb).build());

    Throwable thrown = null;
    boolean flagKept;
    try (Response response = client.newCall(GET).execute()) {
      response.body().source().readByte();
      Thread.currentThread().interrupt();
      response.body().source().readUtf8();
    } catch (InterruptedIOException e) {
      thrown = e;
    } finally {
      flagKept = Thread.interrupted();
    }
    assertThat(thrown).isNotNull();
    assertThat(flagKept).isTrue();

    assertIdleAndHealthy(lb);
    assertNextCallSucceeds(client);
  }

  @Test
  void interruptedWhileWaitingForAHedge_cancelsAndReleasesBothCopies() throws Exception {
    // The first copy answers 503 once the hedge is in flight; the hedge's server holds its answer,
    // so the caller waits for it in the race, and is interrupted there (Future.cancel(true)).
    CountDownLatch hedgeGate = new CountDownLatch(1);
    CountDownLatch hedgeArrived = new CountDownLatch(1);
    AtomicInteger seen = new AtomicInteger();
    Backends b = closer.add(Backends.start(2, i -> request -> {
      int k = seen.getAndIncrement();
      if (k == 0) {
        try {
          hedgeArrived.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        return new MockResponse.Builder().code(503).body("busy").build();
      }
      if (k == 1) {
        return heldUntil(hedgeGate, hedgeArrived, "hedge").apply(request);
      }
      return Backends.ok("s" + i);
    }));
    LoadBalancer lb = balancer(b, Strategy.roundRobin());
    OkHttpClient client = b.client(hedging(lb, Duration.ofSeconds(10)));
    try {
      AtomicReference<Throwable> thrown = new AtomicReference<>();
      AtomicBoolean flagAfter = new AtomicBoolean();
      Thread caller = start(client.newCall(GET), thrown, flagAfter);
      eventually("the first copy reached its server", () -> seen.get() >= 1 && armedCount() == 1);
      new Thread(() -> fireHedge(0), "hedge").start();
      assertThat(hedgeArrived.await(5, TimeUnit.SECONDS)).isTrue();
      eventually("the caller waits for the hedge", () -> caller.getState() == Thread.State.TIMED_WAITING);

      caller.interrupt();
      caller.join(5_000);

      assertThat(thrown.get()).isInstanceOf(InterruptedIOException.class);
      assertThat(flagAfter.get()).isTrue();
      assertIdleAndHealthy(lb);
    } finally {
      hedgeGate.countDown();
    }
    assertThat(lbi(client).route("orders").hedging.heldLosers()).isZero();
    assertNextCallSucceeds(client);
  }

  @Test
  void interruptedWhileTheFirstCopyIsInFlight_theHedgeTimerSendsNoHedge_andEndsTheCall() throws Exception {
    // A blocking socket read ignores interrupts; when the hedge timer fires for an interrupted
    // caller, it sends nothing and cancels the call, so the caller's read ends.
    CountDownLatch gate = new CountDownLatch(1);
    CountDownLatch arrived = new CountDownLatch(1);
    Backends b = closer.add(Backends.start(2, i -> heldUntil(gate, arrived, "s" + i)));
    LoadBalancer lb = balancer(b, Strategy.roundRobin());
    OkHttpClient client = b.client(hedging(lb, Duration.ofSeconds(10)));
    try {
      AtomicReference<Throwable> thrown = new AtomicReference<>();
      AtomicBoolean flagAfter = new AtomicBoolean();
      Thread caller = start(client.newCall(GET), thrown, flagAfter);
      assertThat(arrived.await(5, TimeUnit.SECONDS)).isTrue();
      caller.interrupt();
      eventually("armed", () -> armedCount() == 1);

      fireHedge(0);
      caller.join(5_000);

      assertThat(caller.isAlive()).isFalse();
      assertThat(thrown.get()).isInstanceOf(InterruptedIOException.class);
      assertThat(flagAfter.get()).isTrue();
      assertThat(b.totalRequests()).as("requests, the first copy's included").isEqualTo(1);
      assertIdleAndHealthy(lb);
    } finally {
      gate.countDown();
    }
    assertNextCallSucceeds(client);
  }

  private static LoadBalancingInterceptor lbi(OkHttpClient client) {
    return (LoadBalancingInterceptor) client.interceptors().get(0);
  }

  // --- Cancels ------------------------------------------------------------------------------

  @Test
  void cancelledBeforeExecute_releasesEveryPick_withAndWithoutHedging() throws Exception {
    for (boolean hedged : new boolean[] {false, true}) {
      Backends b = closer.add(Backends.named(3));
      LoadBalancer lb = balancer(b, Strategy.roundRobin());
      OkHttpClient client = b.client(hedged ? hedging(lb, Duration.ofSeconds(10)) : interceptor(lb).build());
      Call call = client.newCall(GET);
      call.cancel();

      assertThatThrownBy(call::execute).isInstanceOf(IOException.class);
      if (hedged && armedCount() > 0) {
        fireHedge(armedCount() - 1);
      }

      assertThat(b.totalRequests()).isZero();
      assertIdleAndHealthy(lb);
      assertNextCallSucceeds(client);
    }
  }

  @Test
  void cancelledDuringTheExchange_releasesThePick_andIsNotRetried() throws Exception {
    CountDownLatch gate = new CountDownLatch(1);
    CountDownLatch arrived = new CountDownLatch(1);
    AtomicInteger seen = new AtomicInteger();
    Backends b = closer.add(Backends.start(3, i -> request ->
        seen.getAndIncrement() == 0 ? heldUntil(gate, arrived, "slow").apply(request) : Backends.ok("s" + i)));
    LoadBalancer lb = balancer(b, Strategy.roundRobin());
    OkHttpClient client = b.client(interceptor(lb).build());
    try {
      Call call = client.newCall(GET);
      AtomicReference<Throwable> thrown = new AtomicReference<>();
      Thread caller = start(call, thrown, new AtomicBoolean());
      assertThat(arrived.await(5, TimeUnit.SECONDS)).isTrue();

      call.cancel();
      caller.join(5_000);

      assertThat(thrown.get()).isInstanceOf(IOException.class);
      assertThat(thrown.get().getSuppressed()).isEmpty();
      assertThat(b.totalRequests()).isEqualTo(1);
      assertIdleAndHealthy(lb);
    } finally {
      gate.countDown();
    }
    assertNextCallSucceeds(client);
  }

  @Test
  void cancelledWhileWaitingForAHedge_cancelsAndReleasesBothCopies() throws Exception {
    CountDownLatch gate = new CountDownLatch(1);
    CountDownLatch arrived = new CountDownLatch(2);
    AtomicInteger seen = new AtomicInteger();
    Backends b = closer.add(Backends.start(2, i -> request ->
        seen.getAndIncrement() < 2 ? heldUntil(gate, arrived, "slow").apply(request) : Backends.ok("s" + i)));
    LoadBalancer lb = balancer(b, Strategy.roundRobin());
    OkHttpClient client = b.client(hedging(lb, Duration.ofSeconds(10)));
    try {
      Call call = client.newCall(GET);
      AtomicReference<Throwable> thrown = new AtomicReference<>();
      Thread caller = start(call, thrown, new AtomicBoolean());
      eventually("armed", () -> armedCount() == 1);
      Thread hedge = new Thread(() -> fireHedge(0), "hedge");
      hedge.start();
      assertThat(arrived.await(5, TimeUnit.SECONDS)).as("both copies reached their servers").isTrue();

      call.cancel();
      caller.join(5_000);
      hedge.join(5_000);

      assertThat(thrown.get()).isInstanceOf(IOException.class);
      assertIdleAndHealthy(lb);
      assertThat(lbi(client).route("orders").hedging.heldLosers()).as("copies held").isZero();
    } finally {
      gate.countDown();
    }
    assertNextCallSucceeds(client);
  }

  // --- Held slots end on time ---------------------------------------------------------------

  @Test
  void issue32_why4_aLosingCopysSlot_isReleasedWhenItsHoldEnds_withNoLaterCall() throws Exception {
    // The real hedge timer (50 ms) and a 300 ms hold; the slow server answers only after the test.
    CountDownLatch gate = new CountDownLatch(1);
    CountDownLatch arrived = new CountDownLatch(1);
    AtomicInteger seen = new AtomicInteger();
    Backends b = closer.add(Backends.start(2, i -> request ->
        seen.getAndIncrement() == 0 ? heldUntil(gate, arrived, "slow").apply(request) : Backends.ok("s" + i)));
    LoadBalancer lb = balancer(b, Strategy.roundRobin());
    LoadBalancingInterceptor lbi = interceptor(lb)
        .hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(50)).withLoserHold(Duration.ofMillis(300))).build();
    OkHttpClient client = b.client(lbi);
    try {
      try (Response response = client.newCall(GET).execute()) {
        assertThat(response.body().string()).as("the hedge won").startsWith("s").isNotEqualTo("slow");
      }
      // No call after this one: only the timer can end the hold.
      eventually("the held copy released", () -> lbi.route("orders").hedging.heldLosers() == 0);
      assertIdleAndHealthy(lb);
    } finally {
      gate.countDown();
    }
  }

  @Test
  void aHeldCopy_isReleasedWhenTheBalancerCloses() throws Exception {
    CountDownLatch gate = new CountDownLatch(1);
    CountDownLatch arrived = new CountDownLatch(1);
    AtomicInteger seen = new AtomicInteger();
    Backends b = closer.add(Backends.start(2, i -> request ->
        seen.getAndIncrement() == 0 ? heldUntil(gate, arrived, "slow").apply(request) : Backends.ok("s" + i)));
    LoadBalancer lb = balancer(b, Strategy.roundRobin());
    LoadBalancingInterceptor lbi = hedging(lb, Duration.ofMinutes(1));
    OkHttpClient client = b.client(lbi);
    try {
      AtomicReference<Throwable> thrown = new AtomicReference<>();
      Thread caller = start(client.newCall(GET), thrown, new AtomicBoolean());
      assertThat(arrived.await(5, TimeUnit.SECONDS)).isTrue();
      eventually("armed", () -> armedCount() == 1);
      fireHedge(0); // the hedge wins; the first copy is cancelled and held
      caller.join(5_000);
      assertThat(thrown.get()).isNull();
      ServiceHedging hedging = lbi.route("orders").hedging;
      assertThat(hedging.heldLosers()).isEqualTo(1);
      assertThat(lb.status().stream().mapToInt(TargetStatus::inFlight).sum()).isEqualTo(1);

      lb.close();

      assertThat(hedging.heldLosers()).isZero();
    } finally {
      gate.countDown();
    }
  }

  @Test
  void heldCopies_expireOnTheTimersTicks_onFakeTime() {
    long hold = TimeUnit.MILLISECONDS.toNanos(300);
    AtomicInteger now = new AtomicInteger(); // ms
    HedgeTimer timer = new HedgeTimer(null, () -> TimeUnit.MILLISECONDS.toNanos(now.get()));
    java.util.function.LongSupplier ticker = () -> TimeUnit.MILLISECONDS.toNanos(now.get());
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders").targets(dev.fairway.lb.Target.of("127.0.0.1", 8081)).build());
    ServiceHedging hedging = new ServiceHedging("orders", HedgingPolicy.fixedDelay(Duration.ofMillis(50)).withLoserHold(Duration.ofNanos(hold)),
        lb, HedgeMeters.NOOP, new AttemptBudget(0.2, 10, ticker), timer, DIRECT, ticker);
    List<String> released = new ArrayList<>();
    assertThat(timer.watching()).isZero();

    hedging.hold(dev.fairway.lb.Target.of("127.0.0.1", 8081), () -> released.add("a"), 0);
    now.set(100);
    hedging.hold(dev.fairway.lb.Target.of("127.0.0.1", 8082), () -> released.add("b"), 0);
    assertThat(timer.watching()).isEqualTo(1);

    now.set(299);
    timer.runDue(TimeUnit.MILLISECONDS.toNanos(now.get()));
    assertThat(released).isEmpty();
    now.set(300);
    timer.runDue(TimeUnit.MILLISECONDS.toNanos(now.get()));
    assertThat(released).containsExactly("a");
    assertThat(timer.watching()).isEqualTo(1);
    now.set(400);
    timer.runDue(TimeUnit.MILLISECONDS.toNanos(now.get()));
    assertThat(released).containsExactly("a", "b");
    assertThat(timer.watching()).as("nothing held: not watched").isZero();

    hedging.hold(dev.fairway.lb.Target.of("127.0.0.1", 8081), () -> released.add("c"), 0);
    assertThat(timer.watching()).as("held again: watched again").isEqualTo(1);
    hedging.closed();
    assertThat(released).containsExactly("a", "b", "c");
    hedging.hold(dev.fairway.lb.Target.of("127.0.0.1", 8081), () -> released.add("d"), 0);
    assertThat(released).as("closed: a later loser is not held").containsExactly("a", "b", "c", "d");
    timer.runDue(TimeUnit.MILLISECONDS.toNanos(now.get()));
    assertThat(timer.watching()).isZero();
  }

  // --- Hedges and affinity ------------------------------------------------------------------

  @Test
  void issue32_why3_aWinningHedge_doesNotMoveTheKeyOffItsHome() throws Exception {
    CountDownLatch gate = new CountDownLatch(1);
    CountDownLatch slowArrived = new CountDownLatch(1);
    AtomicInteger seen = new AtomicInteger();
    Backends b = closer.add(Backends.start(3, i -> request ->
        seen.incrementAndGet() == 4 ? heldUntil(gate, slowArrived, "slow").apply(request) : Backends.ok("s" + i)));
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders").targets(b.targets()).strategy(Strategy.keyAffinity()).build());
    LoadBalancingInterceptor lbi = interceptor(lb).affinityKey(AffinityKey.header("X-Key"))
        .hedgeScheduler(byHand, DIRECT).hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(150)).withLoserHold(Duration.ZERO))
        .build();
    OkHttpClient client = b.client(lbi);
    Request keyed = GET.newBuilder().header("X-Key", "alice").build();
    List<String> answeredBy = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      try (Response response = client.newCall(keyed).execute()) {
        answeredBy.add(response.body().string());
      }
    }
    assertThat(answeredBy).hasSize(3).containsOnly(answeredBy.get(0));
    String home = answeredBy.get(0);

    try {
      AtomicReference<Throwable> thrown = new AtomicReference<>();
      Call slow = client.newCall(keyed);
      Thread caller = new Thread(() -> {
        try (Response response = slow.execute()) {
          answeredBy.add(response.body().string());
        } catch (Throwable e) {
          thrown.set(e);
        }
      });
      callers.add(caller);
      caller.start();
      assertThat(slowArrived.await(5, TimeUnit.SECONDS)).isTrue(); // the home answers slowly, once
      fireHedge(3);
      caller.join(5_000);
      assertThat(thrown.get()).isNull();
    } finally {
      gate.countDown();
    }
    assertThat(answeredBy.get(3)).as("the hedge won").isNotEqualTo(home).isNotEqualTo("slow");

    for (int i = 0; i < 3; i++) {
      try (Response response = client.newCall(keyed).execute()) {
        assertThat(response.body().string()).as("call %d after the hedge won", i).isEqualTo(home);
      }
    }
  }

  @Test
  void consistentHash_aWinningHedge_leavesTheKeyAtItsPlaceOnTheRing() throws Exception {
    CountDownLatch gate = new CountDownLatch(1);
    CountDownLatch slowArrived = new CountDownLatch(1);
    AtomicInteger seen = new AtomicInteger();
    Backends b = closer.add(Backends.start(3, i -> request ->
        seen.incrementAndGet() == 2 ? heldUntil(gate, slowArrived, "slow").apply(request) : Backends.ok("s" + i)));
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders").targets(b.targets()).strategy(Strategy.consistentHash()).build());
    LoadBalancingInterceptor lbi = interceptor(lb).affinityKey(AffinityKey.header("X-Key"))
        .hedgeScheduler(byHand, DIRECT).hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(150))).build();
    OkHttpClient client = b.client(lbi);
    Request keyed = GET.newBuilder().header("X-Key", "bob").build();
    String home;
    try (Response response = client.newCall(keyed).execute()) {
      home = response.body().string();
    }
    AtomicReference<String> winner = new AtomicReference<>();
    try {
      Thread caller = new Thread(() -> {
        try (Response response = client.newCall(keyed).execute()) {
          winner.set(response.body().string());
        } catch (IOException e) {
          winner.set(e.toString());
        }
      });
      callers.add(caller);
      caller.start();
      assertThat(slowArrived.await(5, TimeUnit.SECONDS)).isTrue();
      fireHedge(1);
      caller.join(5_000);
    } finally {
      gate.countDown();
    }
    assertThat(winner.get()).isNotEqualTo(home).startsWith("s");
    for (int i = 0; i < 3; i++) {
      try (Response response = client.newCall(keyed).execute()) {
        assertThat(response.body().string()).isEqualTo(home);
      }
    }
  }
}
